// RUN: %check_cudagraph_tidy %s cudagraph-exec-update-error %t -- -- -std=c++17 -isystem %cuda_stubs

#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#define DIE_ON_ERROR(call)                                                     \
  do {                                                                         \
    cudaError_t status_ = (call);                                              \
    if (status_ != cudaSuccess) {                                              \
      std::fprintf(stderr, "%s failed\n", #call);                              \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

#define THROW_ON_ERROR(call)                                                   \
  do {                                                                         \
    CUresult result_ = (call);                                                 \
    if (result_ != CUDA_SUCCESS)                                               \
      throw std::runtime_error(#call);                                         \
  } while (0)

#define CHECK_OR_DIE(cond)                                                     \
  ((cond) ? (void)0 : std::abort())

#define TOLERATE_UPDATE_FAILURE()                                              \
  do {                                                                         \
    cudaError_t e = cudaGetLastError();                                        \
    if (e != cudaSuccess && e != cudaErrorGraphExecUpdateFailure)              \
      std::exit(1);                                                            \
  } while (0)

#define LAST_ERROR_OR_DIE()                                                    \
  do {                                                                         \
    cudaError_t e = cudaGetLastError();                                        \
    if (e != cudaSuccess)                                                      \
      std::exit(1);                                                            \
  } while (0)

void launchWork(cudaStream_t s);

bool useGraphs = true;
bool launchNow = true;
bool peerCopies = false;
int device = 0;

struct Replayer {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  // Positive: the check ends the program on the failure the fallback below
  // is written for.
  void refreshChecked() {
    cudaGraphExecUpdateResultInfo info;
    DIE_ON_ERROR(cudaGraphExecUpdate(exec, graph, &info));
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'cudaGraphExecUpdate' goes through an error check that ends the program (or throws) when the update fails, so the fallback below it never runs: an update from a graph of another topology returns cudaErrorGraphExecUpdateFailure (910): the check stops the program there instead of instantiating the new graph; compare the returned status {{.*}} (hazard: exec-update-fatal-check)
    if (info.result != cudaGraphExecUpdateSuccess) {
      // CHECK-MESSAGES: :[[@LINE-1]]:9: note: the fallback for a failed update, which no failed update reaches
      DIE_ON_ERROR(cudaGraphExecDestroy(exec));
      DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
    }
  }

  // Negative: no fallback; stopping on a failed update is the intent.
  void refreshStrict() {
    cudaGraphExecUpdateResultInfo info;
    DIE_ON_ERROR(cudaGraphExecUpdate(exec, graph, &info));
    DIE_ON_ERROR(cudaGraphLaunch(exec, nullptr));
  }

  // Positive: the failure is handled, but its error stays for the launch
  // check at the end.
  void refreshThenCheckLaunch(cudaStream_t s) {
    if (cudaGraphExecUpdate(exec, graph, nullptr) != cudaSuccess) {
      // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: 'cudaGraphExecUpdate' leaves its failure in the runtime's last error on a path that goes on: a failed update (a changed topology) records cudaErrorGraphExecUpdateFailure (910), which stays through later calls that succeed, so the next cudaGetLastError() or cudaPeekAtLastError() check reports it as a failure of unrelated work; call cudaGetLastError() once the failed update is handled, before the next error check (hazard: exec-update-error-left)
      DIE_ON_ERROR(cudaGraphExecDestroy(exec));
      DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
    }
    DIE_ON_ERROR(cudaGraphLaunch(exec, s));
    DIE_ON_ERROR(cudaGetLastError());
    // CHECK-MESSAGES: :[[@LINE-1]]:18: note: this check of the last error reports 910 from the failed update
  }

  // Negative: the same, clearing the error once the failure is handled.
  void refreshClearsError(cudaStream_t s) {
    if (cudaGraphExecUpdate(exec, graph, nullptr) != cudaSuccess) {
      (void)cudaGetLastError();
      DIE_ON_ERROR(cudaGraphExecDestroy(exec));
      DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
    }
    DIE_ON_ERROR(cudaGraphLaunch(exec, s));
    DIE_ON_ERROR(cudaGetLastError());
  }

  // Negative: a status kept in a local, the expected failure cleared with
  // a variable nobody reads; any other failure stops the program.
  void refreshKeepsStatus(cudaStream_t s) {
    cudaError_t st = cudaGraphExecUpdate(exec, graph, nullptr);
    if (st == cudaErrorGraphExecUpdateFailure) {
      [[maybe_unused]] cudaError_t dropped = cudaGetLastError();
      st = cudaSuccess;
      DIE_ON_ERROR(cudaGraphExecDestroy(exec));
      DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
    }
    DIE_ON_ERROR(st);
    launchWork(s);
    DIE_ON_ERROR(cudaPeekAtLastError());
  }

  // Negative: a boolean made from the update's status decides the way.
  void refreshWithFlag(cudaStream_t s) {
    bool updated = cudaGraphExecUpdate(exec, graph, nullptr) == cudaSuccess;
    if (!updated) {
      cudaGetLastError();
      DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
    }
    DIE_ON_ERROR(cudaGetLastError());
  }

  // Negative: the status goes back to the caller.
  cudaError_t refreshForCaller() {
    return cudaGraphExecUpdate(exec, graph, nullptr);
  }

  // Negative: an assert on the result after the check is a second check,
  // not a fallback.
  void refreshAsserted() {
    cudaGraphExecUpdateResultInfo info;
    DIE_ON_ERROR(cudaGraphExecUpdate(exec, graph, &info));
    CHECK_OR_DIE(info.result == cudaGraphExecUpdateSuccess);
    DIE_ON_ERROR(cudaGraphLaunch(exec, nullptr));
  }

  // Negative: the first check after the failure reads the last error and
  // lets the update failure pass: the error is taken away.
  void refreshTolerant(cudaStream_t s) {
    if (cudaGraphExecUpdate(exec, graph, nullptr) != cudaSuccess) {
      TOLERATE_UPDATE_FAILURE();
      DIE_ON_ERROR(cudaGraphExecDestroy(exec));
      DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
    }
    DIE_ON_ERROR(cudaGraphLaunch(exec, s));
    DIE_ON_ERROR(cudaGetLastError());
  }

  // Positive: the same check without the exception reads the 910.
  void refreshIntolerant(cudaStream_t s) {
    if (cudaGraphExecUpdate(exec, graph, nullptr) != cudaSuccess) {
      // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: 'cudaGraphExecUpdate' leaves its failure in the runtime's last error {{.*}} (hazard: exec-update-error-left)
      LAST_ERROR_OR_DIE();
      // CHECK-MESSAGES: :[[@LINE-1]]:7: note: this check of the last error reports 910 from the failed update
      DIE_ON_ERROR(cudaGraphExecDestroy(exec));
      DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
    }
    DIE_ON_ERROR(cudaGraphLaunch(exec, s));
  }

  // Negative: the function leaves with the error set only where the second
  // test of `useGraphs` goes the other way from the first, which no path does.
  void refreshCorrelated(cudaStream_t s) {
    if (useGraphs) {
      if (cudaGraphExecUpdate(exec, graph, nullptr) != cudaSuccess) {
        DIE_ON_ERROR(cudaGraphExecDestroy(exec));
        DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
      }
    }
    if (useGraphs) {
      TOLERATE_UPDATE_FAILURE();
      DIE_ON_ERROR(cudaGraphLaunch(exec, s));
    }
  }

  // Negative: the same with a condition of several operands joined by `||`:
  // the second `if` holds wherever the first did.
  void refreshUnderDisjunction(cudaStream_t s) {
    if ((peerCopies && useGraphs && device == 0) || (!peerCopies && useGraphs)) {
      if (cudaGraphExecUpdate(exec, graph, nullptr) != cudaSuccess) {
        DIE_ON_ERROR(cudaGraphExecDestroy(exec));
        DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
      }
    }
    if ((peerCopies && useGraphs && device == 0) || (!peerCopies && useGraphs)) {
      TOLERATE_UPDATE_FAILURE();
      DIE_ON_ERROR(cudaGraphLaunch(exec, s));
    }
  }

  // Positive: the second test reads another flag, so a failed update can
  // leave the function with its error set.
  void refreshUncorrelated(cudaStream_t s) {
    if (useGraphs) {
      if (cudaGraphExecUpdate(exec, graph, nullptr) != cudaSuccess) {
        // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: 'cudaGraphExecUpdate' leaves its failure in the runtime's last error {{.*}} (hazard: exec-update-error-left)
        DIE_ON_ERROR(cudaGraphExecDestroy(exec));
        DIE_ON_ERROR(cudaGraphInstantiate(&exec, graph, 0));
      }
    }
    if (launchNow) {
      TOLERATE_UPDATE_FAILURE();
      DIE_ON_ERROR(cudaGraphLaunch(exec, s));
    }
  }
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: a path where the update failed leaves 'Replayer::refreshUncorrelated' with the error still set
  // CHECK-MESSAGES: :{{[0-9]+}}:{{[0-9]+}}: note: a later check of the last error, such as this one, reports 910 from the failed update

  // Negative: a failed update returns false and the caller instantiates
  // anew; the failed status and the result are tested in one condition.
  bool tryRefresh() {
    cudaGraphExecUpdateResultInfo info;
    cudaError_t err = cudaGraphExecUpdate(exec, graph, &info);
    if (err != cudaSuccess || info.result != cudaGraphExecUpdateSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return true;
  }
};

// Positive: the update's status goes to a checking function that exits on
// failure; the fallback after it is dead.
static void checkOrExit(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s\n", what);
    std::exit(1);
  }
}

void refreshThroughChecker(cudaGraphExec_t &exec, cudaGraph_t graph) {
  cudaGraphExecUpdateResultInfo info;
  checkOrExit(cudaGraphExecUpdate(exec, graph, &info), "update");
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'cudaGraphExecUpdate' goes through an error check
  if (info.result == cudaGraphExecUpdateErrorTopologyChanged) {
    // CHECK-MESSAGES: :[[@LINE-1]]:7: note: the fallback for a failed update
    checkOrExit(cudaGraphExecDestroy(exec), "destroy");
    checkOrExit(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  }
}

// Positive: the driver's update behind a throwing check, with a fallback.
void refreshDriver(CUgraphExec &exec, CUgraph graph) {
  CUgraphExecUpdateResultInfo info;
  THROW_ON_ERROR(cuGraphExecUpdate(exec, graph, &info));
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'cuGraphExecUpdate' goes through an error check
  if (info.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) {
    // CHECK-MESSAGES: :[[@LINE-1]]:7: note: the fallback for a failed update
    THROW_ON_ERROR(cuGraphExecDestroy(exec));
    THROW_ON_ERROR(cuGraphInstantiate(&exec, graph, 0));
  }
}

// Negative: the driver's update does not set the runtime's last error
// (measured), so the runtime check after its handled failure is fine.
void refreshDriverHandled(CUgraphExec &exec, CUgraph graph) {
  CUgraphExecUpdateResultInfo info;
  if (cuGraphExecUpdate(exec, graph, &info) != CUDA_SUCCESS) {
    THROW_ON_ERROR(cuGraphExecDestroy(exec));
    THROW_ON_ERROR(cuGraphInstantiate(&exec, graph, 0));
  }
  DIE_ON_ERROR(cudaGetLastError());
}

// Positive: the status is ignored, the result tested, and the function
// returns with the error set; the unit checks the last error elsewhere.
struct Pipeline {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool made = false;
  enum cudaGraphExecUpdateResult outcome;
  cudaGraphNode_t failedNode;

  void finish(cudaStream_t s) {
    cudaStreamEndCapture(s, &graph);
    cudaGraphExecUpdateResultInfo info;
    if (made)
      cudaGraphExecUpdate(exec, graph, &info);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaGraphExecUpdate' leaves its failure in the runtime's last error
    if (!made || info.result != cudaGraphExecUpdateSuccess) {
      if (made)
        cudaGraphExecDestroy(exec);
      cudaGraphInstantiate(&exec, graph, 0);
      made = true;
    }
  }
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: a path where the update failed leaves 'Pipeline::finish' with the error still set
  // CHECK-MESSAGES: exec-update-error.cpp:{{[0-9]+}}:18: note: a later check of the last error, such as this one, reports 910 from the failed update
};

// Positive: the read is in a function the failure path calls.
void stepAndCheck(cudaStream_t s) {
  launchWork(s);
  if (cudaPeekAtLastError() != cudaSuccess)
    std::abort();
}

void refreshThenStep(cudaGraphExec_t &exec, cudaGraph_t graph,
                     cudaStream_t s) {
  cudaGraphExecUpdateResultInfo info;
  if (cudaGraphExecUpdate(exec, graph, &info) != cudaSuccess) {
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaGraphExecUpdate' leaves its failure in the runtime's last error
    cudaGraphExecDestroy(exec);
    cudaGraphInstantiate(&exec, graph, 0);
  }
  stepAndCheck(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'stepAndCheck' is called here after the failed update
  // CHECK-MESSAGES: exec-update-error.cpp:{{[0-9]+}}:7: note: this check of the last error reports 910 from the failed update
}
