// RUN: %check_cudagraph_tidy %s cudagraph-pinned-alloc %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <torch/torch.h>

// ---------------------------------------------------------------------------
// Positive: raw runtime and driver pinned allocation inside a region.
void raw(cudaStream_t s, size_t n) {
  cudaGraph_t g;
  float *host = nullptr;
  void *raw = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMallocHost(&host, n * sizeof(float));
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMallocHost' allocates page-locked host memory during CUDA graph capture: the call fails with cudaErrorStreamCaptureUnsupported (900)
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here
  cudaHostAlloc(&raw, n, cudaHostAllocDefault);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaHostAlloc' allocates page-locked host memory
  cudaHostRegister(raw, n, cudaHostRegisterDefault);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaHostRegister' pins or unpins host memory
  cudaHostUnregister(raw);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaHostUnregister' pins or unpins host memory
  cudaFreeHost(host);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaFreeHost' releases page-locked host memory
  cudaStreamEndCapture(s, &g);
  cudaFreeHost(raw); // after capture: fine
}

void driver(CUstream s, size_t n) {
  CUgraph g;
  void *p = nullptr;
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  cuMemAllocHost(&p, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuMemAllocHost' allocates page-locked host memory
  cuMemHostAlloc(&p, n, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuMemHostAlloc' allocates page-locked host memory
  cuMemHostRegister(p, n, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuMemHostRegister' pins or unpins host memory
  cuMemFreeHost(p);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuMemFreeHost' releases page-locked host memory
  cuStreamEndCapture(s, &g);
}

// Positive: libtorch pinned tensors. The message says what libtorch 2.11 does.
void torchPinned(at::cuda::CUDAGraph &graph, at::Tensor t) {
  graph.capture_begin();
  auto staged = t.pin_memory();
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: 'Tensor::pin_memory' allocates a pinned host tensor during CUDA graph capture: libtorch 2.11's pinned allocator is capture-aware and this is captured there, but older releases query events while allocating and fail with cudaErrorStreamCaptureUnsupported (900), and raw cudaHostAlloc always fails
  auto buf = torch::empty({16}, torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
  // CHECK-MESSAGES: :[[@LINE-1]]:77: warning: 'TensorOptions::pinned_memory' creates a tensor in pinned host memory
  auto buf2 = at::empty({16}, at::kFloat, std::nullopt, at::kCPU, true, std::nullopt);
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'empty' creates a tensor in pinned host memory
  // Capture-safe: ordinary tensors, explicit pinned_memory(false).
  auto plain = torch::empty({16}, torch::TensorOptions().pinned_memory(false));
  auto dev = torch::zeros({16}, torch::TensorOptions().device(torch::kCUDA));
  graph.capture_end();
}

// ---------------------------------------------------------------------------
// Negative: staging buffers allocated before capture and reused.
struct Stager {
  at::Tensor pinned;
  float *raw = nullptr;
  void init(size_t n) {
    pinned = torch::empty({(int64_t)n}, torch::TensorOptions().pinned_memory(true));
    cudaMallocHost(&raw, n * sizeof(float));
  }
  void capture(at::cuda::CUDAGraph &graph, at::Tensor out) {
    graph.capture_begin();
    pinned.copy_(out, /*non_blocking=*/true);
    graph.capture_end();
  }
};

// ---------------------------------------------------------------------------
// Macro, template, lambda and interprocedural.
template <typename T> T *allocStaging(size_t n) {
  T *p = nullptr;
  C10_CUDA_CHECK(cudaMallocHost(&p, n * sizeof(T)));
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'cudaMallocHost' allocates page-locked host memory
  return p;
}

namespace detail {
void *grow(size_t n) {
  void *p = nullptr;
  cudaHostAlloc(&p, n, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaHostAlloc' allocates page-locked host memory
  // CHECK-MESSAGES: :[[@LINE+11]]:27: note: 'grow' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+11]]:3: note: the lambda runs during capture
  // CHECK-MESSAGES: :[[@LINE+7]]:3: note: CUDA graph capture begins here
  return p;
}
} // namespace detail

void helpers(cudaStream_t s) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  allocStaging<float>(64);
  auto lazy = [] { return detail::grow(128); };
  lazy();
  cudaStreamEndCapture(s, &g);
}

// A release chosen per pointer by the kind recorded at allocation: one arm
// frees on the stream, so which arm a capture runs is the program's choice,
// not reported; a constant kind passed by the caller decides it.
enum class HostKind { Pinned, StreamOrdered };

void releaseByKind(void *p, HostKind kind, cudaStream_t s) {
  if (kind == HostKind::Pinned)
    cudaFreeHost(p);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaFreeHost' releases page-locked host memory
  else
    cudaFreeAsync(p, s);
}

struct Registry {
  HostKind kindOf(void *p) const { return kinds[reinterpret_cast<unsigned long>(p) & 1]; }
  HostKind kinds[2];
};

void releaseRecorded(cudaStream_t s, const Registry &reg, void *a, void *b) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  releaseByKind(a, reg.kindOf(a), s);
  releaseByKind(b, HostKind::StreamOrdered, s);
  cudaStreamEndCapture(s, &g);
}

void releasePinned(cudaStream_t s, void *a) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  releaseByKind(a, HostKind::Pinned, s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'releaseByKind' is called here during capture
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here (global mode)
  cudaStreamEndCapture(s, &g);
}

// A call through a function pointer reaches its target's body; the call
// itself is not an API call (its arguments are the target's, not an API's).
static void stageRows(float *rows, bool pinned) {
  if (pinned)
    cudaMallocHost(&rows, 64);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaMallocHost' allocates page-locked host memory
}

void capturedThroughPointer(cudaStream_t s, cudaGraph_t *g, float *rows) {
  void (*stage)(float *, bool) = &stageRows;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  stage(rows, true);
  cudaStreamEndCapture(s, g);
}
