//===--- GraphUpdates.h - cudagraph analysis --------------------*- C++ -*-===//
//
// What a function does when updating an executable graph fails.
// cudaGraphExecUpdate and cuGraphExecUpdate return
// cudaErrorGraphExecUpdateFailure (910) whenever the new graph cannot be
// applied (a changed topology), and the runtime call also leaves that error
// in the thread's last error, where it stays through later calls that
// succeed until cudaGetLastError() reads it (measured:
// runtime-harness/results/exec-update-2026-11-25.txt). Two mistakes follow:
//
// - FatalCheck: the update's status goes through an error check that leaves
//   on failure (exit, abort, throw, return), while code after the check
//   tests the update for a fallback (re-instantiation): no failed update
//   ever reaches the fallback.
// - ErrorLeft: the runtime update failed, the function goes on, and a path
//   reaches a read of the last error whose value is used
//   (`CHECK(cudaGetLastError())`, `cudaPeekAtLastError()`), here or in a
//   function called here, with no discarding `cudaGetLastError()` before it;
//   or the path returns with the error still set (the unit's next check of
//   the last error on this thread reports it).
//
// Paths are followed on the CFG assuming the update failed: a test of its
// status or of its result (`!= cudaSuccess`, `.result !=
// cudaGraphExecUpdateSuccess`) takes its failure edge, other tests both.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_GRAPHUPDATES_H
#define CUDAGRAPH_ANALYSIS_GRAPHUPDATES_H

#include "UserCode.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include <optional>
#include <vector>

namespace clang {
class ASTContext;
class CallExpr;
class FunctionDecl;
class Stmt;
namespace cudagraph {

struct GraphUpdateIssue {
  enum class Kind { FatalCheck, ErrorLeft };
  Kind K = Kind::ErrorLeft;
  const FunctionDecl *Function = nullptr;
  /// The cudaGraphExecUpdate / cuGraphExecUpdate call.
  const CallExpr *Update = nullptr;
  /// FatalCheck: the test of the update that no failed update reaches.
  const Stmt *Fallback = nullptr;
  /// ErrorLeft: the read that reports the failed update (null: the path
  /// returns with the error set).
  const CallExpr *Read = nullptr;
  /// ErrorLeft: the call of this function that leads to Read, when Read is
  /// in a function it calls.
  const CallExpr *Via = nullptr;
};

class GraphUpdateFacts {
public:
  GraphUpdateFacts(ASTContext &Ctx, const CodeClassifier &Code)
      : Ctx(Ctx), Code(Code) {}
  /// The mishandled failures of the graph updates \p FD makes.
  std::vector<GraphUpdateIssue> issuesIn(const FunctionDecl *FD);
  /// Whether \p Call is cudaGraphExecUpdate or cuGraphExecUpdate.
  static bool isUpdate(const CallExpr *Call);
  /// A read of the last error in \p Functions whose value is used, the
  /// first in source order (null: none).
  const CallExpr *
  firstCheckedRead(llvm::ArrayRef<const FunctionDecl *> Functions);

  /// The values that carry one update's outcome (GraphUpdates.cpp).
  struct Tracked;

private:
  /// What a call of \p FD does to the last error first: clears it (a
  /// discarding cudaGetLastError()), reads it (returns that call), or
  /// neither (nullopt). Flow-insensitive: the first such call in source
  /// order, in \p FD or, two calls deep, in the user functions it calls.
  struct FirstUse {
    bool Clears = false;
    const CallExpr *Read = nullptr;
  };
  std::optional<FirstUse> firstUseIn(const FunctionDecl *FD, unsigned Depth);
  /// Whether a call of \p FD given a failed status for parameter \p Index
  /// never returns (every path where the parameter says failure ends the
  /// program or throws): a checking function such as `check(result, ...)`.
  bool neverReturnsOnFailure(const FunctionDecl *FD, unsigned Index);
  /// Whether \p Call hands the outcome in \p T to a checking function that
  /// never returns on failure.
  bool leavesOnFailure(const CallExpr *Call, const Tracked &T);

  ASTContext &Ctx;
  const CodeClassifier &Code;
  llvm::DenseMap<const FunctionDecl *, std::optional<FirstUse>> FirstUses;
  llvm::DenseMap<std::pair<const FunctionDecl *, unsigned>, bool> Checkers;
  const CallExpr *CheckedRead = nullptr;
  bool CheckedReadDone = false;
};

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_GRAPHUPDATES_H
