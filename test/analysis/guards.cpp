// Capture-status guards as real code writes them: through locals, members,
// out-parameters, libtorch's status query, the project's own "am I
// capturing" helpers (inferred from their bodies, or named by the
// CaptureStatusFunctions option when their bodies are not visible). A test
// of one stream does not cover a wait on the whole device; a listed helper
// or a registry of open captures answers for every capture of the thread.
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-status-query %t -- -config="{CheckOptions: {CaptureStatusFunctions: 'rt::inCapture'}}" -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAGraphsUtils.cuh>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime.h>

void viaLocal(cudaStream_t s) {
  cudaStreamCaptureStatus st;
  cudaStreamIsCapturing(s, &st);
  bool live = st != cudaStreamCaptureStatusNone;
  if (live)
    return;
  cudaStreamSynchronize(s);
}

// A local that is changed afterwards is not a guard.
void viaChangedLocal(cudaStream_t s, bool force) {
  cudaStreamCaptureStatus st;
  cudaStreamIsCapturing(s, &st);
  bool idle = st == cudaStreamCaptureStatusNone;
  if (force)
    idle = true;
  if (idle)
    cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamSynchronize' blocks the host
}

void viaOutParam(cudaStream_t s, cudaEvent_t e) {
  cudaStreamCaptureStatus st;
  unsigned long long id;
  cudaStreamGetCaptureInfo(s, &st, &id);
  if (st == cudaStreamCaptureStatusActive) {
    cudaEventQuery(e);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaEventQuery' asks the host
  } else {
    cudaEventQuery(e);
  }
}

void viaStatusAsBool(cudaStream_t s) {
  cudaStreamCaptureStatus st;
  cudaStreamIsCapturing(s, &st);
  if (!st)
    cudaStreamSynchronize(s);
}

struct Pipeline {
  cudaStream_t stream;
  cudaStreamCaptureStatus status_ = cudaStreamCaptureStatusNone;
  void refresh() { cudaStreamIsCapturing(stream, &status_); }
  void drain() {
    if (status_ != cudaStreamCaptureStatusNone)
      return;
    cudaStreamSynchronize(stream);
  }
};

void viaTorchStatus() {
  if (at::cuda::currentStreamCaptureStatus() == at::cuda::CaptureStatus::None)
    c10::cuda::stream_synchronize(nullptr);
}

// The project's own helpers: inferred from what their bodies return.
bool streamIsCapturing(cudaStream_t s) {
  cudaStreamCaptureStatus st;
  cudaStreamIsCapturing(s, &st);
  return st == cudaStreamCaptureStatusActive;
}

void viaHelper(cudaStream_t s) {
  if (!streamIsCapturing(s))
    cudaStreamSynchronize(s);
  if (streamIsCapturing(s))
    return;
  cudaStreamSynchronize(s);
}

// A helper whose body is elsewhere (a thread-local counter): named by the
// CaptureStatusFunctions option.
namespace rt {
bool inCapture();
}
void viaListedHelper(cudaStream_t s) {
  if (rt::inCapture())
    return;
  cudaStreamSynchronize(s);
}

// A stream test does not make a device-wide wait safe.
void deviceWide(cudaStream_t s) {
  if (!streamIsCapturing(s))
    cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaDeviceSynchronize' blocks the host
  // CHECK-MESSAGES: :[[@LINE-2]]:5: note: a capture-status test guards this call, but it waits on every stream
  // A listed helper answers for every capture of the thread.
  if (rt::inCapture())
    return;
  cudaDeviceSynchronize();
}

// A registry of open captures (no stream argument) answers for all of them.
struct CaptureRecord;
CaptureRecord *current_capture();
void viaRegistry() {
  if (current_capture())
    return;
  cudaDeviceSynchronize();
}

void captureAll(cudaStream_t s, cudaEvent_t e, Pipeline &p) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  viaLocal(s);
  viaChangedLocal(s, true);
  viaOutParam(s, e);
  viaStatusAsBool(s);
  p.drain();
  viaTorchStatus();
  viaHelper(s);
  viaListedHelper(s);
  deviceWide(s);
  viaRegistry();
  cudaStreamEndCapture(s, &g);
}

// The condition a capture began under holds in the callee it is passed to:
// `evaluate` ends the capture exactly when `compute` began one, so the work
// after its end runs uncaptured; without the begin's guard it would not.
void finishGraph(cudaStream_t s, bool useGraph, bool update) {
  cudaGraph_t g;
  if (useGraph && update)
    cudaStreamEndCapture(s, &g);
  if (useGraph)
    cudaStreamSynchronize(s);
}

void compute(cudaStream_t s, bool useGraph, bool update) {
  if (useGraph && update)
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  finishGraph(s, useGraph, update);
}

void finishAlways(cudaStream_t s, bool update) {
  cudaGraph_t g;
  if (update)
    cudaStreamEndCapture(s, &g);
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
}

void computeUnguarded(cudaStream_t s, bool update) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  finishAlways(s, update);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'finishAlways' is called here during capture
}

// A loop entered with its condition true runs its body at least once: the
// capture ends in the first iteration, before the code after the loop.
void drainLoop(cudaStream_t s, bool useGraph, bool update) {
  cudaGraph_t g;
  bool done = false;
  while (!done) {
    if (useGraph && update) {
      cudaStreamEndCapture(s, &g);
      done = true;
    } else {
      done = true;
    }
  }
  cudaStreamSynchronize(s);
}

// ... but not when the flag may already be set on the way in.
void maybeSkipped(cudaStream_t s, bool skip) {
  cudaGraph_t g;
  bool done = skip;
  while (!done) {
    cudaStreamEndCapture(s, &g);
    done = true;
  }
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
}

void loops(cudaStream_t s, bool useGraph, bool update, bool skip) {
  if (useGraph && update) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    drainLoop(s, useGraph, update);
  }
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  maybeSkipped(s, skip);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'maybeSkipped' is called here during capture
}

// The same with the flags passed by reference to locals the caller owns:
// `done` starts false and only the callee writes it, and the begin's guard
// still holds for `useGraph` and `update`.
void drainByRef(cudaStream_t s, bool &done, bool &useGraph, bool &update) {
  cudaGraph_t g;
  while (!done) {
    if (useGraph && update) {
      cudaStreamEndCapture(s, &g);
      done = true;
    } else {
      done = true;
    }
  }
  if (useGraph)
    cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
}

void loopsByRef(cudaStream_t s, bool enabled, bool changed) {
  bool useGraph = enabled;
  bool update = false;
  if (useGraph)
    update = changed;
  if (useGraph && update)
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  bool done = false;
  drainByRef(s, done, useGraph, update);
}

// A flag another call may already have set says nothing about the loop.
void markDone(bool &flag);

void loopsShared(cudaStream_t s, bool update) {
  bool useGraph = true;
  bool done = false;
  markDone(done);
  if (update)
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  drainByRef(s, done, useGraph, update);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'drainByRef' is called here during capture
}
