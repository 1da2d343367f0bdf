//===--- BranchFacts.h - cudagraph analysis ---------------------*- C++ -*-===//
//
// What the caller's constant arguments decide about a callee's branches:
// edges no path takes, and loops whose condition holds when first reached.
// Made by ValueFacts, used by the capture flow of the callee.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_BRANCHFACTS_H
#define CUDAGRAPH_ANALYSIS_BRANCHFACTS_H

#include "llvm/ADT/DenseSet.h"
#include <utility>

namespace clang {
class Stmt;
namespace cudagraph {

/// Branch edges by terminator statement and successor index.
using DeadEdgeSet = llvm::DenseSet<std::pair<const Stmt *, unsigned>>;

struct BranchFacts {
  /// Two-way branches (terminator, 0 for true / 1 for false) no path takes.
  DeadEdgeSet DeadEdges;
  /// `while` statements whose condition is true on every way in (not the
  /// back edge): the body runs before the loop can exit.
  llvm::DenseSet<const Stmt *> EnteredLoops;

  bool empty() const { return DeadEdges.empty() && EnteredLoops.empty(); }
};

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_BRANCHFACTS_H
