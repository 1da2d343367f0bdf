// CUDA sources parse against the real CUDA 13 toolkit with ordinary flags:
// the tool supplies clang 19's missing texture_fetch_functions.h, the cccl
// include directory, -Wno-unknown-cuda-version and clang's own resource
// directory (its CUDA wrapper headers: without them Thrust's sort, through
// CUB's placement new, does not parse) itself.
// REQUIRES: cuda13
// RUN: not %cudagraph_tidy %s -- -std=c++17 --cuda-path=%cuda_root > %t.out 2>&1
// RUN: FileCheck %s --input-file %t.out --implicit-check-not="{{[0-9]+:[0-9]+: (warning|error)}}:"
// Parsing does not depend on the checks: a configuration that turns every
// cudagraph check off still parses (and says no cudagraph check ran).
// RUN: %cudagraph_tidy --config="{Checks: '-*,-cudagraph-*,bugprone-use-after-move'}" %s -- -std=c++17 --cuda-path=%cuda_root > %t.off 2>&1
// RUN: FileCheck %s --check-prefix=OFF --input-file %t.off --implicit-check-not="error:"
// OFF: cudagraph-tidy: warning: no cudagraph check is enabled for this file
// The plugin in Debian's clang-tidy-19 does the same.
// RUN: %if clang-tidy-19 %{ %clang_tidy_19 --load=%cudagraph_plugin --checks='-*,cudagraph-*' %s -- -std=c++17 --cuda-path=%cuda_root > %t.plugin 2>&1 %}
// RUN: %if clang-tidy-19 %{ FileCheck %s --input-file %t.plugin --implicit-check-not="{{[0-9]+:[0-9]+: (warning|error)}}:" %}

#include <cuda_runtime.h>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>

__global__ void scale(float *p, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] *= s;
}

cudaGraph_t capture(cudaStream_t stream, float *dev, float *host, int n) {
  cudaGraph_t graph = nullptr;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  scale<<<(n + 255) / 256, 256, 0, stream>>>(dev, 2.0f, n);
  cudaMemcpyAsync(host, dev, sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  // CHECK: cuda-toolkit.cu:[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture{{.*}}[cudagraph-host-sync]
  float *staging = nullptr;
  cudaMallocHost(&staging, 64);
  // CHECK: cuda-toolkit.cu:[[@LINE-1]]:3: warning: 'cudaMallocHost' allocates page-locked host memory{{.*}}[cudagraph-pinned-alloc]
  cudaStreamEndCapture(stream, &graph);
  cudaDeviceSynchronize();
  return graph;
}

// A Thrust algorithm returning to the host is reported as that call, not
// again for the cudaStreamSynchronize it reaches inside the library.
float sum(thrust::device_vector<float> &v) {
  return thrust::reduce(v.begin(), v.end());
  // CHECK: cuda-toolkit.cu:[[@LINE-1]]:10: warning: 'reduce' runs a Thrust algorithm that returns its result to the host{{.*}}[cudagraph-capture-unsafe-call]
}

float captureSum(cudaStream_t stream, thrust::device_vector<float> &v) {
  cudaGraph_t graph = nullptr;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  float s = sum(v);
  cudaStreamEndCapture(stream, &graph);
  return s + thrust::reduce(v.begin(), v.end());
}

// Instantiating Thrust's sort pulls in CUB's radix sort agents.
void sortBeforeCapture(float *dev, int n) {
  thrust::sort(thrust::device, dev, dev + n);
}
