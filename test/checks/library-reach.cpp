// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-status-query %t -- -- -std=c++17 -isystem %S/Inputs/vendor -isystem %cuda_stubs

#include <fastlib/fastlib.h>

bool helper(cudaEvent_t e);

// A hazard inside library code is reported at the user call leading into it,
// never inside the library.
void capture(cudaStream_t s, cudaEvent_t e) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  fastlib::launch(s);
  fastlib::flush(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: call to 'flush' reaches 'cudaStreamSynchronize' in library code, which blocks the host until a stream drains during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: CUDA graph capture begins here
  helper(e);
  cudaStreamEndCapture(s, &g);
  fastlib::flush(s);
}

// Through a user helper: reported at the helper's library call, with the chain.
bool helper(cudaEvent_t e) {
  return fastlib::poll(e);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: call to 'poll' reaches 'cudaEventQuery' in library code, which asks the host whether an event completed
  // CHECK-MESSAGES: :[[@LINE-9]]:3: note: 'helper' is called here during capture
}
