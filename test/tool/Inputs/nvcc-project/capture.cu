#include "graphs.h"

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= 2.0f;
}

#if !defined(GRAPHS_USE_CAPTURE) || __CUDACC_VER_MAJOR__ < 12
#error "the build's macros did not reach the analysis"
#endif

bool buildGraph(float *data, int n, cudaStream_t s, cudaGraphExec_t *exec) {
  cudaGraph_t graph;
  GRAPHS_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  scale<<<(n + 255) / 256, 256, 0, s>>>(data, n);
  // With --default-stream per-thread this launch goes to the per-thread
  // stream, which is not the capturing one either.
  scale<<<1, 32>>>(data, n);
  float *scratch = nullptr;
  cudaMalloc(&scratch, n * sizeof(float));
  cudaStreamSynchronize(s);
  GRAPHS_CHECK(cudaStreamEndCapture(s, &graph));
  GRAPHS_CHECK(cudaGraphInstantiate(exec, graph, 0));
  return true;
}
