// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t -- --header-filter=.* -- -std=c++17 -isystem %cuda_stubs -I %S/../Inputs/project/cuda/include

// A helper in the project's cuda/include directory is the project's code:
// its sync is reported where it is, in the header.
#include "stepper.h"
// CHECK-MESSAGES: stepper.h:6:38: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture

void step(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  settle(s);
  cudaStreamEndCapture(s, g);
}
