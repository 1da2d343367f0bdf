// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t -- -- -std=c++17 -isystem %cuda_stubs
// RUN: %check_cudagraph_tidy --prefix=FEW-MESSAGES %s cudagraph-host-sync %t.few -- --config="{CheckOptions: {MaxCallSiteNotes: 1}}" -- -std=c++17 -isystem %cuda_stubs

// The other calls of a helper that holds a finding, made under the same
// capture, are notes (each is a place the fix may go): up to
// MaxCallSiteNotes (default 8) after the call the chain shows.

#include <cuda_runtime.h>

static void drain() {
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host
  // FEW-MESSAGES: :[[@LINE-2]]:3: warning: 'cudaDeviceSynchronize' blocks the host
}

void tenStages(cudaStream_t s, float *dev, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  // CHECK-MESSAGES: :[[@LINE+12]]:3: note: 'drain' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+12]]:3: note: 'drain' is also called here during capture
  // CHECK-MESSAGES: :[[@LINE+12]]:3: note: 'drain' is also called here during capture
  // CHECK-MESSAGES: :[[@LINE+12]]:3: note: 'drain' is also called here during capture
  // CHECK-MESSAGES: :[[@LINE+12]]:3: note: 'drain' is also called here during capture
  // CHECK-MESSAGES: :[[@LINE+12]]:3: note: 'drain' is also called here during capture
  // CHECK-MESSAGES: :[[@LINE+12]]:3: note: 'drain' is also called here during capture
  // CHECK-MESSAGES: :[[@LINE+12]]:3: note: 'drain' is also called here during capture
  // CHECK-MESSAGES: :[[@LINE+12]]:3: note: 'drain' is also called here during capture
  // CHECK-MESSAGES-NOT: :[[@LINE+12]]:3: note:
  // FEW-MESSAGES: :[[@LINE+2]]:3: note: 'drain' is called here during capture
  // FEW-MESSAGES: :[[@LINE+2]]:3: note: 'drain' is also called here during capture
  drain();
  drain();
  drain();
  drain();
  drain();
  drain();
  drain();
  drain();
  drain();
  drain();
  // FEW-MESSAGES-NOT: :[[@LINE-8]]:3: note:
  // FEW-MESSAGES: :[[@LINE-24]]:3: note: CUDA graph capture begins here
  // CHECK-MESSAGES: :[[@LINE-25]]:3: note: CUDA graph capture begins here
  cudaMemsetAsync(dev, 0, 4, s);
  cudaStreamEndCapture(s, g);
}
