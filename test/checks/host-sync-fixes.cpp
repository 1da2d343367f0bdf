// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs
//
// Fix-its of cudagraph-host-sync: only rewrites that are mechanical and keep
// the program's meaning under capture.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <cuda_runtime.h>

// Synchronous copies and memsets become their Async forms on the capturing
// stream when it is in scope.
void copies(cudaStream_t stream, float *dev, float *host, size_t n, cudaGraph_t *g) {
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemcpy' copies synchronously
  // CHECK-FIXES: cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost, stream);
  cudaMemset(dev, 0, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemset' sets memory synchronously
  // CHECK-FIXES: cudaMemsetAsync(dev, 0, n, stream);
  cudaStreamEndCapture(stream, g);
}

// In a helper the capturing stream is not in scope: no fix-it.
void helper(float *dev, size_t n) {
  cudaMemset(dev, 0, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemset' sets memory synchronously
  // CHECK-FIXES: {{^}}  cudaMemset(dev, 0, n);
}
void calls_helper(cudaStream_t stream, float *dev, size_t n, cudaGraph_t *g) {
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  helper(dev, n);
  cudaStreamEndCapture(stream, g);
}

// A blocking copy into pinned host memory gets non_blocking; into pageable
// memory nothing helps, so nothing changes.
void tensors(at::Tensor device, at::cuda::CUDAGraph &graph) {
  at::Tensor pinned = at::empty({4}, at::TensorOptions().pinned_memory(true));
  at::Tensor pageable = at::empty({4});
  graph.capture_begin();
  pinned.copy_(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:{{[0-9]+}}: warning: 'Tensor::copy_'
  // CHECK-FIXES: pinned.copy_(device, /*non_blocking=*/true);
  pageable.copy_(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:{{[0-9]+}}: warning: 'Tensor::copy_'
  // CHECK-FIXES: {{^}}  pageable.copy_(device);
  at::Tensor idx = device.nonzero();
  // CHECK-MESSAGES: :[[@LINE-1]]:{{[0-9]+}}: warning: 'Tensor::nonzero'
  // CHECK-FIXES: at::Tensor idx = device.nonzero_static(/*size=*/ /* TODO: the largest number of nonzero elements; the rest is filled with fill_value */);
  graph.capture_end();
}
