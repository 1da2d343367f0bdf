// RUN: %check_cudagraph_tidy %s cudagraph-status-query %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#include <cuda_runtime.h>

// ---------------------------------------------------------------------------
// Positive: raw runtime and driver queries inside a region.
void raw(cudaStream_t s, cudaEvent_t e) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventQuery(e);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaEventQuery' asks the host whether an event completed during CUDA graph capture: in global and thread-local capture modes the call fails with cudaErrorStreamCaptureUnsupported (900)
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here
  if (cudaStreamQuery(s) == cudaSuccess) {
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaStreamQuery' asks the host whether a stream is idle
  }
  cudaStreamEndCapture(s, &g);
  cudaEventQuery(e); // after capture: fine
}

void driver(CUstream s, CUevent e) {
  CUgraph g;
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  cuEventQuery(e);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuEventQuery' asks the host whether an event completed
  cuStreamQuery(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuStreamQuery' asks the host whether a stream is idle
  cuStreamEndCapture(s, &g);
}

// Positive: libtorch event and stream objects.
void torchObjects(at::cuda::CUDAGraph &graph, at::cuda::CUDAEvent &ev) {
  graph.capture_begin();
  bool done = ev.query();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'CUDAEvent::query' asks the host whether work completed during CUDA graph capture: libtorch throws c10::Error
  auto stream = c10::cuda::getCurrentCUDAStream();
  while (!stream.query()) {
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'CUDAStream::query' asks the host whether work completed
  }
  // Capture-safe: recording and blocking on events.
  ev.record(stream);
  ev.block(stream);
  graph.capture_end();
  (void)done;
}

// ---------------------------------------------------------------------------
// Negative: polling before capture and in functions never reached.
void pollBefore(at::cuda::CUDAGraph &graph, at::cuda::CUDAEvent &ev) {
  while (!ev.query()) {
  }
  graph.capture_begin();
  graph.capture_end();
  ev.query();
}

bool pollOnlyOutside(cudaEvent_t e) { return cudaEventQuery(e) == cudaSuccess; }

// ---------------------------------------------------------------------------
// Macro argument.
void macro(cudaStream_t s, cudaEvent_t e) {
  cudaGraph_t g;
  C10_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  C10_CUDA_CHECK(cudaEventQuery(e));
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'cudaEventQuery' asks the host
  C10_CUDA_CHECK(cudaStreamEndCapture(s, &g));
}

// ---------------------------------------------------------------------------
// Template and lambda.
template <typename Event> bool ready(Event &e) { return e.query(); }
// CHECK-MESSAGES: :[[@LINE-1]]:59: warning: 'CUDAEvent::query' asks the host

void templateAndLambda(at::cuda::CUDAGraph &graph, at::cuda::CUDAEvent &ev,
                       cudaEvent_t raw) {
  auto poll = [raw] { return cudaEventQuery(raw); };
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: 'cudaEventQuery' asks the host
  graph.capture_begin();
  ready(ev);
  poll();
  graph.capture_end();
}

// ---------------------------------------------------------------------------
// Interprocedural: a watchdog helper two levels down.
struct Watchdog {
  cudaEvent_t last;
  bool idle() const { return cudaEventQuery(last) == cudaSuccess; }
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: 'cudaEventQuery' asks the host
  // CHECK-MESSAGES: :[[@LINE+4]]:34: note: 'Watchdog::idle' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+8]]:3: note: 'step' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+6]]:3: note: CUDA graph capture begins here
};
void step(Watchdog &w) { (void)w.idle(); }

void captureStep(cudaStream_t s, Watchdog &w) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  step(w);
  cudaStreamEndCapture(s, &g);
}
