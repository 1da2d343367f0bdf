// Device values follow statement order: a branch before the read, or on a
// variable overwritten with a host value since, is not a finding; device
// data copied into a std::vector or an array taints it; reads of tensors
// known to be on the CPU are host work.
// RUN: %check_cudagraph_tidy %s cudagraph-data-dependent-branch,cudagraph-host-sync %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAGraph.h>
#include <cuda_runtime.h>
#include <torch/torch.h>
#include <vector>

void branchBeforeRead(at::Tensor t) {
  float x = 0;
  if (x > 0)
    t.add_(1);
  x = t.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: 'Tensor::item' copies a device value
}

void overwritten(at::Tensor t) {
  float y = t.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'Tensor::item' copies a device value
  y = 1;
  if (y > 0)
    t.add_(1);
}

void stillTainted(at::Tensor t, bool reset) {
  float z = t.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'Tensor::item' copies a device value
  if (reset)
    z = 0;
  if (z > 0)
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value read on the host during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE-6]]:15: note: the device value is read on the host here
    t.add_(1);
}

void intoVector(cudaStream_t s, const int *devCounts, int n) {
  std::vector<int> counts(n);
  cudaMemcpyAsync(counts.data(), devCounts, n * sizeof(int),
                  cudaMemcpyDeviceToHost, s);
  if (counts[0] > 0)
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: the host variable is filled from the device here
    cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamSynchronize' blocks the host
  int total[4];
  cudaMemcpyAsync(total, devCounts, sizeof(total), cudaMemcpyDeviceToHost, s);
  for (int i = 0; i < total[1]; ++i)
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    counts.push_back(i);
}

void cpuTensors(at::Tensor t) {
  auto host = torch::zeros({4});
  if (host.sum().item<float>() > 0)
    t.add_(1);
  auto fromDevice = torch::ones({2}, torch::kCPU);
  float v = fromDevice.item<float>();
  if (v > 1)
    t.add_(1);
}

void captureAll(at::cuda::CUDAGraph &graph, at::Tensor t, cudaStream_t s,
                const int *dev) {
  graph.capture_begin();
  branchBeforeRead(t);
  overwritten(t);
  stillTainted(t, true);
  intoVector(s, dev, 4);
  cpuTensors(t);
  graph.capture_end();
}
