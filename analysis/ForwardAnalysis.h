//===--- ForwardAnalysis.h - cudagraph analysis -----------------*- C++ -*-===//
//
// A forward dataflow solver over one CFG on clang's ForwardDataflowWorklist
// (blocks in reverse post order), with a transfer per block and a transfer
// per edge that may refine the state or find the edge infeasible.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_FORWARDANALYSIS_H
#define CUDAGRAPH_ANALYSIS_FORWARDANALYSIS_H

#include "clang/Analysis/Analyses/PostOrderCFGView.h"
#include "clang/Analysis/CFG.h"
#include "clang/Analysis/FlowSensitive/DataflowWorklist.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <optional>
#include <vector>

namespace clang::cudagraph {

/// Solves for the state at the entry of every block. \p State needs
/// `bool join(const State &)` (returns whether it changed). \p Transfer maps
/// a block's entry state to its exit state; \p Edge maps the exit state of
/// a block to what flows along one edge (nullopt: the edge cannot be taken).
/// Unreached blocks have no state.
template <typename State>
std::vector<std::optional<State>> solveForward(
    const CFG &Cfg, const State &Entry,
    llvm::function_ref<State(const CFGBlock &, const State &)> Transfer,
    llvm::function_ref<std::optional<State>(const CFGBlock &From,
                                            const CFGBlock &To, unsigned Succ,
                                            const State &Out)>
        Edge,
    llvm::function_ref<const CFGBlock *(const CFGBlock &From,
                                        const CFGBlock &To)>
        Redirect = nullptr) {
  std::vector<std::optional<State>> In(Cfg.getNumBlockIDs());
  PostOrderCFGView Order(&Cfg);
  ForwardDataflowWorklist Worklist(Cfg, &Order);
  In[Cfg.getEntry().getBlockID()] = Entry;
  Worklist.enqueueBlock(&Cfg.getEntry());
  while (const CFGBlock *B = Worklist.dequeue()) {
    State Out = Transfer(*B, *In[B->getBlockID()]);
    unsigned Index = 0;
    for (const CFGBlock::AdjacentBlock &Succ : B->succs()) {
      unsigned I = Index++;
      const CFGBlock *To = Succ.getReachableBlock();
      if (!To)
        continue;
      if (Redirect)
        To = Redirect(*B, *To);
      std::optional<State> Along = Edge(*B, *To, I, Out);
      if (!Along)
        continue;
      std::optional<State> &Slot = In[To->getBlockID()];
      if (!Slot) {
        Slot = std::move(*Along);
        Worklist.enqueueBlock(To);
      } else if (Slot->join(*Along)) {
        Worklist.enqueueBlock(To);
      }
    }
  }
  return In;
}

} // namespace clang::cudagraph

#endif // CUDAGRAPH_ANALYSIS_FORWARDANALYSIS_H
