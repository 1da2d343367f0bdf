// A worker whose dispatch recurses before it reaches the function that
// captures: the pool started on `dispatch` captures too, however the
// recursion is entered first. The single thread on `serve` counts only
// against other captures (there are none besides its own).
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t -- -- -std=c++17 -isystem %cuda_stubs

#include <thread>
#include <vector>
#include <cuda_runtime.h>

void captureStep(cudaStream_t s) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaStreamEndCapture(s, &g);
}

void serve(cudaStream_t s, int n);

void dispatch(cudaStream_t s, int n) {
  if (n > 0)
    serve(s, n - 1);
}

void serve(cudaStream_t s, int n) {
  dispatch(s, n);
  captureStep(s);
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains on a thread that may run while a global-mode CUDA graph capture is open
}

struct Workers {
  void startOne(cudaStream_t s) {
    one_ = std::thread([s] { serve(s, 2); });
  }
  void startPool(cudaStream_t s) {
    for (int i = 0; i < 4; ++i)
      pool_.emplace_back([s] { dispatch(s, 2); });
    // CHECK-MESSAGES: :[[@LINE-1]]:26: note: a loop starts 'lambda' here on several threads
  }
  std::thread one_;
  std::vector<std::thread> pool_;
};
