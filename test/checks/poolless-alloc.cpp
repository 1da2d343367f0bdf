// RUN: %check_cudagraph_tidy %s cudagraph-device-alloc %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

// libtorch work inside a capture begun with the raw CUDA API: no private
// memory pool holds the graph's tensors, so temporaries go back to the
// shared pool and later tensors get memory the replays keep writing.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <pybind11/pybind11.h>

static at::Tensor scaled(const at::Tensor &x) { return x * 2; }

void rawCapture(at::Tensor x, at::Tensor out, cudaGraph_t *graph) {
  cudaStream_t s = at::cuda::getCurrentCUDAStream().stream();
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  // Reported once for the capture: at the first tensor it allocates.
  at::Tensor doubled = scaled(x);
  // CHECK-MESSAGES: :[[@LINE-7]]:58: warning: 'operator*' allocates a CUDA tensor outside any private memory pool during CUDA graph capture: captured, but a capture begun with the raw CUDA API registers no pool for libtorch
  // CHECK-MESSAGES: :[[@LINE-2]]:24: note: 'scaled' is called here during capture
  out.copy_(doubled);
  cudaStreamEndCapture(s, graph);
}

// Views, in-place and out= forms, and a host tensor allocate nothing on the
// device.
void rawCaptureInPlace(at::Tensor x, at::Tensor out, cudaGraph_t *graph) {
  cudaStream_t s = at::cuda::getCurrentCUDAStream().stream();
  at::Tensor host = at::zeros({4});
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  at::Tensor head = x.narrow(0, 0, 4);
  head.mul_(2);
  out.copy_(head);
  at::Tensor more = host + 1;
  cudaStreamEndCapture(s, graph);
}

// The driver API's begin is raw too; a factory naming the device allocates.
void driverCapture(CUstream s, at::Tensor x, CUgraph *graph) {
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  at::Tensor scratch = at::empty({16}, x.options());
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: 'empty' allocates a CUDA tensor outside any private memory pool
  at::Tensor again = at::zeros({16}, x.options());
  cuStreamEndCapture(s, graph);
}

// libtorch's own capture registers a private pool.
void torchCapture(at::Tensor x, at::Tensor &out) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  out = x * 2 + 1;
  graph.capture_end();
}

// So does a raw capture that registers one first.
void pooledRawCapture(at::Tensor x, at::Tensor out, cudaGraph_t *graph,
                      c10::cuda::MempoolId_t pool) {
  cudaStream_t s = at::cuda::getCurrentCUDAStream().stream();
  c10::cuda::CUDACachingAllocator::beginAllocateToPool(0, pool);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  out.copy_(x * 2);
  cudaStreamEndCapture(s, graph);
  c10::cuda::CUDACachingAllocator::endAllocateToPool(0, pool);
}

// A Python model called with a tensor runs libtorch operators, which
// allocate.
void capturePython(pybind11::object model, at::Tensor in, at::Tensor out,
                   cudaStream_t s, cudaGraph_t *graph) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  out.copy_(model(in).cast<at::Tensor>());
  // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: 'object_api::operator()' allocates a CUDA tensor outside any private memory pool
  cudaStreamEndCapture(s, graph);
}
