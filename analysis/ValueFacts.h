//===--- ValueFacts.h - cudagraph analysis ----------------------*- C++ -*-===//
//
// Constant arguments and the branches they decide. A call that passes a
// constant (an enumerator, a literal, a default argument) binds the callee's
// parameter to it; inside the callee, `switch (space)` and `if (kind == X)`
// on a bound parameter take one way only, and the statements on the other
// ways do not run for that call. Bindings follow the parameter through plain
// assignments and travel on into calls that pass the parameter along.
//
// Members of the object work the same way: the conditions a capture began
// under (`if (!enabled_ || cfg_.type != 0) return;` before the begin) hold in
// the methods the region calls on the same object. A parameter given the
// stream a capture runs on is known to be set: that stream is never 0.
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
class Expr;
class FieldDecl;
class ParentMap;
namespace cudagraph {

/// What is known of one value: a constant, or only that it is not zero
/// (a stream a capture runs on, a pointer a guard tested).
struct Known {
  int64_t Value = 0;
  bool NonZero = false; // Value is meaningless then

  static Known nonZero() { return {0, true}; }
  /// The value as a condition: whether it is true.
  bool truth() const { return NonZero || Value != 0; }
  bool operator==(const Known &O) const {
    return NonZero == O.NonZero && (NonZero || Value == O.Value);
  }
  bool operator!=(const Known &O) const { return !(*this == O); }
};

/// A member of the object a method runs on, as the fields from `this`:
/// `config_.cfg_type` is {config_, cfg_type}.
using MemberPath = llvm::SmallVector<const FieldDecl *, 2>;

/// The member \p E denotes through `this` (`x`, `this->x`, `cfg_.kind`), or
/// an empty path. A member reached through another pointer has none.
MemberPath memberPathOf(const Expr *E);

/// Parameters (by index) and members of `this` known to hold a value,
/// sorted by index.
struct Bindings {
  llvm::SmallVector<std::pair<unsigned, Known>, 2> Values;
  llvm::SmallVector<std::pair<MemberPath, Known>, 1> Members;

  bool empty() const { return Values.empty() && Members.empty(); }
  std::string key() const;
  /// The value of parameter \p Index, or null.
  const Known *find(unsigned Index) const;
  /// The value of member \p Path, or null.
  const Known *findMember(llvm::ArrayRef<const FieldDecl *> Path) const;
  /// Binds \p Path to \p Value (none: forgets it).
  void bindMember(llvm::ArrayRef<const FieldDecl *> Path,
                  std::optional<Known> Value);
};

/// The facts \p Cond evaluating to \p Value gives about members of `this`
/// (`!enabled_ || cfg_.type != 0` false: enabled_ is 1, cfg_.type is 0),
/// added to \p Out unless Out already knows the member.
void memberFacts(const Expr *Cond, bool Value, const ASTContext &Ctx,
                 Bindings &Out);

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
  /// \p Held: facts that hold at the call besides the caller's own (the
  /// conditions the capture began under, in the function that began it);
  /// members reach a method called on the same object (`this->run()`).
  using KnownArgFn = llvm::function_ref<std::optional<Known>(const Expr *)>;
  Bindings passed(const CallSite &Site, const FunctionDecl *Def,
                  const FunctionDecl *CallerFn, const ValueResult *Caller,
                  KnownArgFn Known = nullptr,
                  const Bindings *Held = nullptr);

  /// Whether calling \p Method on an object may change its member \p Path:
  /// a non-const method that writes a field of the path, calls other
  /// methods on the object, or whose body is not visible.
  bool mayChangeMember(const FunctionDecl *Method, const MemberPath &Path);

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
    /// Fields read in a condition or passed to a call, changed only by
    /// plain assignment in the body.
    llvm::SmallVector<const FieldDecl *, 4> Fields;
    /// Fields changed other than by plain assignment (`++n_`, `&cfg_`).
    llvm::SmallVector<const FieldDecl *, 2> ChangedFields;
    /// Fields written in any way, plain assignments and non-const method
    /// calls on them included.
    llvm::SmallVector<const FieldDecl *, 2> WrittenFields;
    /// Calls methods on `this`: every member binding may matter there.
    bool CallsOnThis = false;
  };
  const ParamInfo &paramInfo(const FunctionDecl *Def);
  /// The member bindings of \p In that \p Def reads or passes on.
  void relevantMembers(const FunctionDecl *Def, const Bindings &In,
                       Bindings &Out);
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
