//===--- CaptureAnalysis.h - cudagraph-tidy ---------------------*- C++ -*-===//
//
// Answers, once per translation unit and for every check, "can this statement
// run while a CUDA stream is being captured?".
//
// 1. Capture regions. A begin event (capture_begin, cudaStreamBeginCapture,
//    cuStreamBeginCapture, a user-listed function, or a user function or
//    guard constructor that leaves a capture open) starts a region; an end
//    event closes it. A statement is in a region when some CFG path from a
//    begin reaches it without passing an end. A begin under `if (flag)` is
//    ended by an end under the same flag; a capture-status test
//    (`status == cudaStreamCaptureStatusNone`) keeps its branch out.
// 2. Reach. Functions called from a region (free functions, methods, lambdas,
//    template instantiations, constructors and destructors) run under capture,
//    transitively within the translation unit. Library functions with bodies
//    in headers are walked too, so a hazard inside them can be reported at the
//    user call that leads into them.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_CAPTUREANALYSIS_H
#define CUDAGRAPH_TIDY_CAPTUREANALYSIS_H

#include "HazardCatalog.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/StringSaver.h"
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class SourceManager;
namespace tidy::cudagraph {

/// Options shared by every cudagraph check (read with getLocalOrGlobal).
struct CaptureOptions {
  std::string BeginFunctions;    // extra begin functions (globs)
  std::string EndFunctions;      // extra end functions (globs)
  std::string CapturedFunctions; // functions whose whole body runs captured
  std::string LibraryHeaderRegex;

  std::string key() const {
    return BeginFunctions + '\n' + EndFunctions + '\n' + CapturedFunctions +
           '\n' + LibraryHeaderRegex;
  }
};

extern const char DefaultLibraryHeaderRegex[];

/// A boolean flag that a begin call is conditional on (`if (use_graph)`).
struct RegionGuard {
  const ValueDecl *Base = nullptr; // the object of `opts.use_graph`, if any
  const ValueDecl *Decl = nullptr; // the flag; null: no guard
  bool Value = true;               // the flag's value when capture begins
};

/// Where a capture region starts: a begin call, a call of a function that
/// leaves a capture open, or a function listed in CapturedFunctions.
struct RegionRoot {
  SourceLocation Loc;
  std::string Note;
  RegionGuard Guard;
};

/// A call (or constructor, destructor, lambda) inside a function.
struct CallSite {
  const Stmt *S = nullptr; // CallExpr, CXXConstructExpr, LambdaExpr; null for
                           // the destructor of a local variable
  SourceLocation Loc;
  const FunctionDecl *Callee = nullptr;
  /// A capture-status test keeps this call out of capture.
  bool OutsideCapture = false;
};

/// How a function came to run under capture: reached through Site from the
/// function of Parent (or from the region of Root when Parent is null).
struct Reach {
  const FunctionDecl *Function = nullptr;
  CallSite Site;
  const Reach *Parent = nullptr;
  const RegionRoot *Root = nullptr;
  bool InLibrary = false; // an entry into library code (Function)
};

/// A call that runs under capture.
struct ReachedSite {
  CallSite Site;
  const Reach *Context = nullptr; // null: lexically inside a region
  const RegionRoot *Root = nullptr;
};

/// A function body, or part of one, that runs under capture.
struct CapturedScope {
  const FunctionDecl *Function = nullptr;
  const Reach *Context = nullptr; // null for a function with a region
  const RegionRoot *Root = nullptr;
  /// For a function with a region: the statements in it and their root;
  /// null when the whole body runs under capture.
  const llvm::DenseMap<const Stmt *, const RegionRoot *> *RegionStmts = nullptr;

  /// The root that \p S runs under, or null when it runs outside capture.
  const RegionRoot *rootOf(const Stmt *S) const;
};

class CaptureAnalysis {
public:
  /// The analysis of \p Ctx's translation unit, computed on first use.
  static CaptureAnalysis &get(ASTContext &Ctx, const CaptureOptions &Opts);
  /// Drops the cached analysis (at the end of each translation unit).
  static void reset();

  llvm::ArrayRef<ReachedSite> sites() const { return Sites; }
  llvm::ArrayRef<CapturedScope> scopes() const { return Scopes; }

  ASTContext &context() const { return Ctx; }
  /// True when \p Loc is in the user's code (not a system or library header).
  bool isUserLocation(SourceLocation Loc) const;
  /// \p Loc, or where a library macro that spells it is used.
  SourceLocation visibleLoc(SourceLocation Loc) const;
  /// True when a capture-status test in \p FD keeps \p S out of capture
  /// (`if (status == cudaStreamCaptureStatusNone) ...`).
  bool runsOutsideCapture(const FunctionDecl *FD, const Stmt *S);
  /// The calls made directly in \p FD's body (not in nested lambdas).
  llvm::ArrayRef<CallSite> callsIn(const FunctionDecl *FD);

  /// The qualified name used for matching, without CUDA API suffixes.
  static std::string matchName(const FunctionDecl *FD);
  /// matchName, cached for the translation unit.
  llvm::StringRef nameOf(const FunctionDecl *FD);

private:
  CaptureAnalysis(ASTContext &Ctx, const CaptureOptions &Opts);
  void run();

  enum class Event { None, Begin, End };
  Event apiEvent(const FunctionDecl *FD);
  Event summaryEvent(const FunctionDecl *FD);
  bool hasCaptureEvents(const FunctionDecl *FD);
  void analyzeRegions(const FunctionDecl *FD);
  void addSite(const CallSite &Site, const Reach *Context,
               const RegionRoot *Root);
  void reachUserFunction(const FunctionDecl *Def, const CallSite &Site,
                         const Reach *Context, const RegionRoot *Root);
  /// Every call inside the library code that \p Def (a library function)
  /// reaches, following library callees up to a depth limit.
  llvm::ArrayRef<CallSite> librarySites(const FunctionDecl *Def);
  const RegionRoot *newRoot(SourceLocation Loc, std::string Note);
  bool isUserFile(FileID FID) const;

  ASTContext &Ctx;
  const SourceManager &SM;
  NamePatterns BeginPatterns, EndPatterns, CapturedPatterns;
  llvm::Regex LibraryRegex;

  std::vector<const FunctionDecl *> UserFunctions;
  llvm::DenseMap<const FunctionDecl *, std::vector<CallSite>> CallsCache;
  llvm::DenseMap<const FunctionDecl *, std::vector<SourceRange>> OutsideCache;
  llvm::DenseMap<const FunctionDecl *, std::vector<CallSite>> LibraryCache;
  llvm::DenseMap<const FunctionDecl *, int> EventsCache; // -1 in progress
  llvm::DenseMap<const FunctionDecl *, Event> SummaryCache;
  llvm::DenseMap<const FunctionDecl *, llvm::StringRef> NameCache;
  llvm::BumpPtrAllocator NameAlloc;
  llvm::StringSaver Saver{NameAlloc};
  mutable llvm::DenseMap<FileID, bool> UserFileCache;

  std::deque<RegionRoot> Roots;
  std::deque<Reach> Reaches;
  std::deque<llvm::DenseMap<const Stmt *, const RegionRoot *>> RegionSets;
  llvm::DenseMap<const FunctionDecl *, const Reach *> ReachedFunctions;
  std::deque<const Reach *> Worklist;
  std::vector<ReachedSite> Sites;
  std::vector<CapturedScope> Scopes;
};

} // namespace tidy::cudagraph
} // namespace clang

#endif // CUDAGRAPH_TIDY_CAPTUREANALYSIS_H
