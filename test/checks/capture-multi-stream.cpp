// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-capture-left-open %t -- -- -std=c++17 -isystem %cuda_stubs

// Two captures open at once, on two streams: an end that names one of them
// ends that one only.

#include <cuda_runtime.h>

void launchOn(cudaStream_t s);

// Positive: s2's capture is still open after s1's end, and never ended.
void twoCaptures(cudaStream_t s1, cudaStream_t s2, cudaGraph_t *g) {
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal);
  launchOn(s1);
  launchOn(s2);
  cudaStreamEndCapture(s1, g);
  cudaStreamSynchronize(s1);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE-6]]:3: note: CUDA graph capture begins here (global mode)
  return;
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: this path returns while the capture it began is still open
  // CHECK-MESSAGES: :[[@LINE-9]]:3: note: CUDA graph capture begins here (global mode)
}

// Negative: both ended, in either order.
void bothEnded(cudaStream_t s1, cudaStream_t s2, cudaGraph_t *g1,
               cudaGraph_t *g2) {
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal);
  launchOn(s1);
  cudaStreamEndCapture(s2, g2);
  launchOn(s1);
  cudaStreamEndCapture(s1, g1);
  cudaStreamSynchronize(s1);
}

// Positive: work between the two ends is still captured by s1's capture.
void nested(cudaStream_t s1, cudaStream_t s2, cudaGraph_t *g1,
            cudaGraph_t *g2) {
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal);
  cudaStreamEndCapture(s2, g2);
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host until all work on the device finishes during CUDA graph capture
  cudaStreamEndCapture(s1, g1);
}

// Negative: the end names a stream no open capture began on (another
// variable that may hold the same stream): it ends every capture, as before.
void otherName(cudaStream_t s1, cudaGraph_t *g) {
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  launchOn(s1);
  cudaStream_t same = s1;
  cudaStreamEndCapture(same, g);
  cudaStreamSynchronize(s1);
}

// Negative: the second begin is on the same stream (a loop re-begins): it
// replaces the capture, and the end closes it.
void again(cudaStream_t s, cudaGraph_t *g, int n) {
  for (int i = 0; i < n; ++i) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    launchOn(s);
    cudaStreamEndCapture(s, g);
  }
  cudaStreamSynchronize(s);
}
