#include <cuda_runtime.h>

void drain(cudaStream_t s) { cudaStreamSynchronize(s); }

void poll(cudaEvent_t e) { cudaEventQuery(e); }

void step(cudaStream_t s, cudaEvent_t e, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  drain(s);
  poll(e);
  cudaStreamEndCapture(s, g);
}
