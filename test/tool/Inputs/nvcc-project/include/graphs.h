#pragma once
#include <cuda_runtime.h>

// Checked calls as the project writes them.
#define GRAPHS_CHECK(call)                                                     \
  do {                                                                         \
    if ((call) != cudaSuccess)                                                 \
      return false;                                                            \
  } while (0)

bool buildGraph(float *data, int n, cudaStream_t s, cudaGraphExec_t *exec);
bool stage(float *host, float *dev, int n, cudaStream_t s);
