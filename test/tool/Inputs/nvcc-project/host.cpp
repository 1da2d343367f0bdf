#include "graphs.h"

bool stage(float *host, float *dev, int n, cudaStream_t s) {
  cudaGraph_t graph;
  GRAPHS_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  cudaMemcpyAsync(dev, host, n * sizeof(float), cudaMemcpyHostToDevice, s);
  cudaEventQuery(nullptr);
  GRAPHS_CHECK(cudaStreamEndCapture(s, &graph));
  return true;
}
