// RUN: %check_cudagraph_tidy %s cudagraph-legacy-stream %t -- -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %cuda_stubs

// Kernel launches written the way Visual Studio's formatter leaves them
// (`k << <grid, block >> >(args)`): nvcc accepts them, and so does the
// analysis, at the same lines and columns, in the main file and in the
// project's headers.

#include <cuda_runtime.h>
#include "Inputs/spaced-launch.cuh"
// CHECK-MESSAGES: spaced-launch.cuh:7:47: warning: 'scale' sends work to the legacy default stream during CUDA graph capture

__global__ void fill(float *x, int n) {}
template <typename T> struct Box {};

void headerLaunch(cudaStream_t s, float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  scaleOnDefault(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'scaleOnDefault' is called here during capture
  cudaStreamEndCapture(s, &g);
}

void spacedLaunches(cudaStream_t s, float *x, int n) {
  Box<Box<Box<int>> > nested;
  (void)nested;
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  fill << <1, 32, 0, s >> > (x, n);
  fill << <1, 32 >> > (x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'fill' sends work to the legacy default stream during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: CUDA graph capture begins here (global mode)
  // CHECK-FIXES: fill << <1, 32, 0, s >> > (x, n);
  cudaStreamEndCapture(s, &g);
}
