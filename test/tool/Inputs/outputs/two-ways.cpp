#include <cuda_runtime.h>

void drain(cudaStream_t s) { cudaStreamSynchronize(s); }

void first(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  drain(s);
  cudaStreamEndCapture(s, g);
}

void second(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  drain(s);
  cudaStreamEndCapture(s, g);
}
