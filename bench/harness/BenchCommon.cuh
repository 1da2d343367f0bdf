//===--- BenchCommon.cuh - shared pieces of the overhead benchmarks -------===//

#ifndef CUDAGRAPH_BENCH_HARNESS_COMMON_CUH
#define CUDAGRAPH_BENCH_HARNESS_COMMON_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#define BENCH_CHECK(Expr)                                                      \
  do {                                                                         \
    cudaError_t E = (Expr);                                                    \
    if (E != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #Expr,       \
                   cudaGetErrorString(E));                                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// A small kernel: the benchmarks measure launch cost, not arithmetic.
__global__ void benchAxpy(float *Y, const float *X, float A, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Y[I] = A * X[I] + Y[I];
}

inline double secondsSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       Start)
      .count();
}

#endif // CUDAGRAPH_BENCH_HARNESS_COMMON_CUH
