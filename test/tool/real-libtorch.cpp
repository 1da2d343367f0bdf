// The checks against real headers: Debian's libtorch-dev (1.13, whose
// c10/cuda headers lack cuda_cmake_macros.h: the tool stands in for it) and
// the CUDA 13 toolkit.
// REQUIRES: libtorch-debian, cuda13
// RUN: not %cudagraph_tidy %s -- -std=c++17 -I/usr/include/torch/csrc/api/include -isystem %cuda_root/include > %t.out 2>&1
// RUN: FileCheck %s --input-file %t.out --implicit-check-not="{{[0-9]+:[0-9]+: (warning|error)}}:"

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>
#include <iostream>

namespace {
float peak(const torch::Tensor &x) { return x.abs().max().item<float>(); }
// CHECK: real-libtorch.cpp:[[@LINE-1]]:59: warning: 'Tensor::item' copies a device value to the host{{.*}}[cudagraph-host-sync]

void step(torch::Tensor &x, at::cuda::CUDAEvent &ev) {
  if (peak(x) > 4.0f)
    // CHECK: real-libtorch.cpp:[[@LINE-1]]:3: warning: branch condition depends on a device value{{.*}}[cudagraph-data-dependent-branch]
    x.div_(2);
  while (!ev.query()) {
    // CHECK: real-libtorch.cpp:[[@LINE-1]]:14: warning: 'CUDAEvent::query' asks the host whether work completed{{.*}}[cudagraph-status-query]
  }
  auto staging = torch::empty({8}, torch::TensorOptions().pinned_memory(true));
  // CHECK: real-libtorch.cpp:[[@LINE-1]]:59: warning: 'TensorOptions::pinned_memory' creates a tensor in pinned host memory{{.*}}[cudagraph-pinned-alloc]
  auto host = x.to(torch::kCPU);
  // CHECK: real-libtorch.cpp:[[@LINE-1]]:17: warning: 'Tensor::to' copies a tensor to the host{{.*}}[cudagraph-host-sync]
  std::cout << x << std::endl;
  // CHECK: real-libtorch.cpp:[[@LINE-1]]:13: warning: 'operator<<' on a tensor copies the tensor to the host{{.*}}[cudagraph-host-sync]
  auto idx = x.nonzero();
  // CHECK: real-libtorch.cpp:[[@LINE-1]]:16: warning: 'Tensor::nonzero' waits for the device{{.*}}[cudagraph-host-sync]
  x.add_(1);
}
} // namespace

void run(torch::Tensor x) {
  at::cuda::CUDAEvent ev;
  at::cuda::CUDAGraph graph;
  auto side = c10::cuda::getStreamFromPool();
  step(x, ev); // warm-up, outside capture
  {
    c10::cuda::CUDAStreamGuard guard(side);
    graph.capture_begin();
    step(x, ev);
    c10::cuda::getCurrentCUDAStream().synchronize();
    // CHECK: real-libtorch.cpp:[[@LINE-1]]:39: warning: 'CUDAStream::synchronize' blocks the host until the stream drains{{.*}}[cudagraph-host-sync]
    graph.capture_end();
  }
  graph.replay();
  torch::cuda::synchronize();
}
