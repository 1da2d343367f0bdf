// Capture modes: a region carries the mode its begin passes (a constant, or
// any mode when it is not one); a hazard that every possible mode allows is
// not reported (relaxed mode allows event queries and cudaMallocHost,
// measured). A helper reached from regions of different modes is judged in
// each.
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-status-query,cudagraph-pinned-alloc %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAGraph.h>
#include <cuda_runtime.h>

void relaxed(cudaStream_t s, cudaEvent_t e, void **p) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  cudaEventQuery(e);
  cudaMallocHost(p, 64);
  cudaHostAlloc(p, 64, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaHostAlloc' allocates page-locked host memory
  // CHECK-MESSAGES: :[[@LINE-5]]:3: note: CUDA graph capture begins here (relaxed mode)
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host
  cudaStreamEndCapture(s, &g);
}

void threadLocal(cudaStream_t s, cudaEvent_t e) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  cudaEventQuery(e);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaEventQuery' asks the host
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here (thread-local mode)
  cudaStreamEndCapture(s, &g);
}

void unknownMode(cudaStream_t s, cudaEvent_t e, cudaStreamCaptureMode mode) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, mode);
  cudaEventQuery(e);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaEventQuery' asks the host
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here{{$}}
  cudaStreamEndCapture(s, &g);
}

void torchRelaxed(at::cuda::CUDAGraph &graph, cudaEvent_t e) {
  graph.capture_begin({0, 0}, cudaStreamCaptureModeRelaxed);
  cudaEventQuery(e);
  graph.capture_end();
  graph.capture_begin();
  cudaEventQuery(e);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaEventQuery' asks the host
  // CHECK-MESSAGES: :[[@LINE-3]]:9: note: CUDA graph capture begins here (global mode)
  graph.capture_end();
}

// A wrapper's mode is its begin's.
void beginRelaxed(cudaStream_t s) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
}

void viaWrapper(cudaStream_t s, cudaEvent_t e) {
  cudaGraph_t g;
  beginRelaxed(s);
  cudaEventQuery(e);
  cudaStreamEndCapture(s, &g);
}

// One helper, two regions: reported for the global one only.
void poll(cudaEvent_t e) {
  cudaEventQuery(e);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaEventQuery' asks the host
  // CHECK-MESSAGES: :[[@LINE+10]]:3: note: 'poll' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+8]]:3: note: CUDA graph capture begins here (global mode)
}

void twoRegions(cudaStream_t s, cudaEvent_t e) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  poll(e);
  cudaStreamEndCapture(s, &g);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  poll(e);
  cudaStreamEndCapture(s, &g);
}

// Work another thread does while this one captures: it breaks a global-mode
// capture, not a thread-local or relaxed one.
#include <thread>
void otherThread(cudaStream_t s, cudaEvent_t e) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  std::thread quiet([&] { cudaEventQuery(e); });
  quiet.join();
  cudaStreamEndCapture(s, &g);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  std::thread poller([&] { cudaEventQuery(e); });
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: 'cudaEventQuery' asks the host
  poller.join();
  cudaStreamEndCapture(s, &g);
}
