// RUN: %check_cudagraph_tidy %s cudagraph-exec-update-error %t -- -- -std=c++17 -isystem %cuda_stubs -isystem %catch2_stubs

// Catch2 test code checks CUDA calls with FAIL, which throws the
// test-failure exception from an out-of-line function: a failed update
// there ends the test. FAIL_CHECK records the failure and goes on.

#include <cuda_runtime.h>
#include <catch2/catch_test_macros.hpp>

#define CUDA_CHECK(status)                                                     \
  {                                                                            \
    cudaError_t err = status;                                                  \
    if (err != cudaSuccess) {                                                  \
      FAIL(cudaGetErrorString(err));                                           \
    }                                                                          \
  }

#define CUDA_CHECK_SOFT(status)                                                \
  {                                                                            \
    cudaError_t err = status;                                                  \
    if (err != cudaSuccess) {                                                  \
      FAIL_CHECK(cudaGetErrorString(err));                                     \
    }                                                                          \
  }

#define CUDA_CHECK_LAST()                                                      \
  {                                                                            \
    cudaError_t err = cudaGetLastError();                                      \
    if (err != cudaSuccess) {                                                  \
      FAIL(cudaGetErrorString(err));                                           \
    }                                                                          \
  }

// Negative: a failed update ends the test at its check.
void updateThenReplay(cudaGraphExec_t exec, cudaGraph_t graph) {
  cudaGraphExecUpdateResultInfo info;
  CUDA_CHECK(cudaGraphExecUpdate(exec, graph, &info));
  CUDA_CHECK(cudaGraphLaunch(exec, 0));
  CUDA_CHECK_LAST();
}

// Positive: FAIL_CHECK goes on, and the last-error check after the launch
// reports the update's 910.
void updateSoftly(cudaGraphExec_t exec, cudaGraph_t graph) {
  cudaGraphExecUpdateResultInfo info;
  CUDA_CHECK_SOFT(cudaGraphExecUpdate(exec, graph, &info));
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: 'cudaGraphExecUpdate' leaves its failure in the runtime's last error {{.*}} (hazard: exec-update-error-left)
  CUDA_CHECK(cudaGraphLaunch(exec, 0));
  CUDA_CHECK_LAST();
}
