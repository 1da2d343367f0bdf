#include "engine.h"

__global__ void scale(float *x, int n) {}

void encode_step(cudaStream_t s, float *x, int n) {
  scale<<<1, 32, 0, s>>>(x, n);
}

// A global-mode capture: every thread of the process is held to it while
// it is open.
void capture_step(cudaStream_t s, float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  encode_step(s, x, n);
  cudaStreamEndCapture(s, &g);
}
