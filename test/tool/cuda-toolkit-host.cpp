// Host C++ that includes the CUDA 13 toolkit's libcu++ headers (they live
// under include/cccl there) parses with the toolkit's include directory
// alone: the tool adds the cccl directory next to it, as it does for CUDA
// sources.
// REQUIRES: cuda13
// RUN: not %cudagraph_tidy %s -- -std=c++17 -isystem %cuda_root/include > %t.out 2>&1
// RUN: FileCheck %s --input-file %t.out --implicit-check-not="{{[0-9]+:[0-9]+: (warning|error)}}:"

#include <cuda/atomic>
#include <cuda_runtime.h>

cuda::atomic<int> Pending{0};

void capture(cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  cudaDeviceSynchronize();
  // CHECK: cuda-toolkit-host.cpp:[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host{{.*}}[cudagraph-host-sync]
  cudaStreamEndCapture(stream, &graph);
  Pending.fetch_add(1);
}
