//===--- ValueFacts.h - cudagraph analysis ----------------------*- C++ -*-===//
//
// Constant arguments and the branches they decide. A call that passes a
// constant (an enumerator, a literal, a default argument) binds the callee's
// parameter to it; inside the callee, `switch (space)` and `if (kind == X)`
// on a bound parameter take one way only, and the statements on the other
// ways do not run for that call. Bindings follow the parameter through plain
// assignments and travel on into calls that pass the parameter along.
//
// A dispatch on a value no call fixes (`switch (entry.kind)`) may take any
// arm; when one arm does the capture-safe form of what another arm does
// (cudaFreeAsync next to cudaFree), the code chooses per value, and which
// arm a capture runs is not visible to the analysis.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_VALUEFACTS_H
#define CUDAGRAPH_ANALYSIS_VALUEFACTS_H

#include "BranchFacts.h"
#include "CallSites.h"
#include "HazardCatalog.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <cstdint>
#include <optional>
#include <map>
#include <memory>
#include <string>

namespace clang {
class ASTContext;
class ParentMap;
namespace cudagraph {

/// Parameters (by index) known to hold a constant, sorted by index.
struct Bindings {
  llvm::SmallVector<std::pair<unsigned, int64_t>, 2> Values;

  bool empty() const { return Values.empty(); }
  std::string key() const;
  /// The value of parameter \p Index, or null.
  const int64_t *find(unsigned Index) const;
};

/// What a function body does when its parameters hold some constants.
struct ValueResult {
  const FunctionDecl *Function = nullptr;
  /// Statements (and local variables) no path reaches.
  llvm::DenseSet<const Stmt *> Dead;
  llvm::DenseSet<const VarDecl *> DeadVars;
  /// The bindings in effect before each call or construction.
  llvm::DenseMap<const Stmt *, Bindings> AtCall;
  /// Branches the bindings decide.
  BranchFacts Branches;

  bool isDead(const CallSite &Site) const;
};

class ValueFacts {
public:
  explicit ValueFacts(ASTContext &Ctx);
  ~ValueFacts();

  /// The facts of \p Def's body under \p In; null when no bound parameter
  /// decides anything there.
  const ValueResult *under(const FunctionDecl *Def, const Bindings &In);

  /// The constants \p Site, a call in \p CallerFn, passes to the
  /// parameters of \p Def that decide a branch there or are passed on;
  /// \p Caller holds the facts of the calling body (null: none known).
  /// A reference parameter is bound only to a local of the caller that
  /// nothing else reaches (`bool done = false; run(done);`).
  /// \p Known answers for an argument no constant decides (a condition
  /// the capture began under, say).
  using KnownArgFn = llvm::function_ref<std::optional<int64_t>(const Expr *)>;
  Bindings passed(const CallSite &Site, const FunctionDecl *Def,
                  const FunctionDecl *CallerFn, const ValueResult *Caller,
                  KnownArgFn Known = nullptr);

  /// Whether \p S, a statement of \p FD, sits in one arm of a switch or an
  /// if/else whose other arm, live under \p Values, calls a function that
  /// \p SafeForms matches.
  bool hasSafeSibling(const FunctionDecl *FD, const Stmt *S,
                      const NamePatterns &SafeForms,
                      const ValueResult *Values);

private:
  struct ParamInfo {
    /// Parameters whose value decides a branch or is passed to a call,
    /// and that change only by plain assignment.
    llvm::SmallVector<unsigned, 4> Relevant;
  };
  const ParamInfo &paramInfo(const FunctionDecl *Def);
  ParentMap &parents(const FunctionDecl *FD);

  ASTContext &Ctx;
  llvm::DenseMap<const FunctionDecl *, ParamInfo> Params;
  std::map<std::pair<const FunctionDecl *, std::string>,
           std::unique_ptr<ValueResult>>
      Results;
  llvm::DenseMap<const FunctionDecl *, std::unique_ptr<ParentMap>> Parents;
};

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_VALUEFACTS_H
