// RUN: %check_cudagraph_tidy %s cudagraph-capture-left-open %t -- -- -std=c++17 -isystem %cuda_stubs
// With the per-thread default stream, stream 0 may be the capturing one and
// only cudaStreamLegacy is reported:
// RUN: %check_cudagraph_tidy --prefix=CHECK-MESSAGES-PTDS %s cudagraph-capture-left-open %t -- -- -std=c++17 -isystem %cuda_stubs -DCUDA_API_PER_THREAD_DEFAULT_STREAM

// An end-capture call given the legacy stream ends nothing: no capture can
// be open there, so the call fails and the stream the capture began on
// stays capturing.

#include <cuda.h>
#include <cuda_runtime.h>

cudaError_t launchAll(cudaStream_t s);
void beginOn(cudaStream_t s) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
}

// Positive: the error path drops "the partial graph" on stream 0.
cudaError_t bailOnLegacy(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (launchAll(s) != cudaSuccess) {
    cudaGraph_t partial;
    if (cudaStreamEndCapture(0, &partial) == cudaSuccess)
      // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: this call ends a capture on the legacy stream, not on the stream this capture began on: it fails with cudaErrorIllegalState (401) and ends nothing: the stream stays in capture mode{{.*}}; pass the stream the capture began on (the one given to the begin call) (hazard: capture-left-open)
      // CHECK-MESSAGES: :[[@LINE-5]]:3: note: CUDA graph capture begins here (thread-local mode)
      // CHECK-FIXES: if (cudaStreamEndCapture(s, &partial) == cudaSuccess)
      cudaGraphDestroy(partial);
    return cudaErrorUnknown;
  }
  return cudaStreamEndCapture(s, g);
}

// Positive: cudaStreamLegacy, spelled out; the stream variable is declared in
// a block the end is outside of, so no fix is offered.
void namedLegacy(bool on, cudaGraph_t *g) {
  if (on) {
    cudaStream_t local;
    cudaStreamCreate(&local);
    cudaStreamBeginCapture(local, cudaStreamCaptureModeGlobal);
    launchAll(local);
  }
  if (on)
    cudaStreamEndCapture(cudaStreamLegacy, g);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: this call ends a capture on the legacy stream
  // CHECK-MESSAGES-PTDS: :[[@LINE-2]]:5: warning: this call ends a capture on the legacy stream
  // CHECK-FIXES: cudaStreamEndCapture(cudaStreamLegacy, g);
}

// Positive: the capture a begin wrapper left open; the driver API.
void wrapperThenLegacy(cudaStream_t s, CUgraph *g) {
  beginOn(s);
  launchAll(s);
  cuStreamEndCapture(nullptr, g);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: this call ends a capture on the legacy stream
}

// Negative: the end names the capturing stream.
void sameStream(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launchAll(s);
  cudaStreamEndCapture(s, g);
}

// Negative here (the legacy-stream check reports the begin): a begin on the
// legacy stream fails too, so neither call does anything.
void bothOnLegacy(cudaGraph_t *g) {
  cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal);
  launchAll(0);
  cudaStreamEndCapture(0, g);
}

// Negative: no capture is open at the end.
void noCapture(cudaGraph_t *g) { cudaStreamEndCapture(0, g); }
