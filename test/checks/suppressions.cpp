// Suppressions that follow call chains: a no-lint comment on the call site in the user's
// capture region that leads to the hazard, the next-line form, begin/end blocks
// around a region, the capture_safe annotation, the CaptureSafeFunctions
// option, and long chains capped in the notes.
//
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-status-query %t -- -- -std=c++17 -isystem %cuda_stubs -I %srcroot/include
// RUN: %check_cudagraph_tidy --prefix=SAFE-MESSAGES %s cudagraph-host-sync,cudagraph-status-query %t.safe -- --config="{CheckOptions: {CaptureSafeFunctions: 'wait_quietly;ns::*'}}" -- -std=c++17 -isystem %cuda_stubs -I %srcroot/include
// RUN: %check_cudagraph_tidy --prefix=CAP-MESSAGES %s cudagraph-host-sync %t.cap -- --config="{CheckOptions: {MaxChainNotes: 3}}" -- -std=c++17 -isystem %cuda_stubs -I %srcroot/include
//
// The summary line counts each hidden finding once, and a finding reached
// both through a suppressed call site and another one is not hidden.
// RUN: not %cudagraph_tidy --checks='-*,cudagraph-host-sync,cudagraph-status-query' %s -- -std=c++17 -isystem %cuda_stubs -I %srcroot/include > /dev/null 2> %t.err
// RUN: FileCheck --check-prefix=SUMMARY %s --input-file %t.err
// SUMMARY: cudagraph-tidy: 5 findings in 1 file; 0 of 1 file failed to analyze; 4 suppressed by NOLINT on their call chain

#include <cuda_runtime.h>
#include <cudagraph/annotations.h>

// A no-lint comment on the call site in the region: the helper's hazard is not
// reported through it.
void drain_a(cudaStream_t s) { cudaStreamSynchronize(s); }
void call_site(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  drain_a(s); // NOLINT(cudagraph-host-sync)
  cudaStreamEndCapture(s, g);
}

// Reached through a suppressed call site and through a plain one: reported, with
// the plain one's chain.
void drain_b(cudaStream_t s) { cudaStreamSynchronize(s); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:32: warning: 'cudaStreamSynchronize' blocks the host
// SAFE-MESSAGES-DAG: :[[@LINE-2]]:32: warning: 'cudaStreamSynchronize' blocks the host
// CAP-MESSAGES-DAG: :[[@LINE-3]]:32: warning: 'cudaStreamSynchronize' blocks the host
void both(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  drain_b(s); // NOLINT
  drain_b(s);
  // CHECK-MESSAGES-DAG: :[[@LINE-1]]:3: note: 'drain_b' is called here during capture
  // SAFE-MESSAGES-DAG: :[[@LINE-2]]:3: note: 'drain_b' is called here during capture
  // CAP-MESSAGES-DAG: :[[@LINE-3]]:3: note: 'drain_b' is called here during capture
  cudaStreamEndCapture(s, g);
}

// A comment naming another check does not hide this one; the next-line form does.
void poll_a(cudaEvent_t e) { cudaEventQuery(e); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:30: warning: 'cudaEventQuery' asks the host
// SAFE-MESSAGES-DAG: :[[@LINE-2]]:30: warning: 'cudaEventQuery' asks the host
void poll_b(cudaEvent_t e) { cudaEventQuery(e); }
void other_check(cudaStream_t s, cudaEvent_t e, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  poll_a(e); // NOLINT(cudagraph-host-sync)
  // CHECK-MESSAGES-DAG: :[[@LINE-1]]:3: note: 'poll_a' is called here during capture
  // SAFE-MESSAGES-DAG: :[[@LINE-2]]:3: note: 'poll_a' is called here during capture
  // NOLINTNEXTLINE(cudagraph-status-query)
  poll_b(e);
  cudaStreamEndCapture(s, g);
}

// A begin/end block around a whole region hides what its calls reach.
void drain_c(cudaStream_t s) { cudaStreamSynchronize(s); }
void poll_c(cudaEvent_t e) { cudaEventQuery(e); }
// NOLINTBEGIN(cudagraph-*)
void whole_region(cudaStream_t s, cudaEvent_t e, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  drain_c(s);
  poll_c(e);
  cudaStreamEndCapture(s, g);
}
// NOLINTEND(cudagraph-*)

// Functions declared safe to run under capture (they test the capture
// status themselves, say): nothing is followed into them.
void drain_d(cudaStream_t s) { cudaStreamSynchronize(s); }
CUDAGRAPH_CAPTURE_SAFE void checked_drain(cudaStream_t s) {
  drain_d(s);
}
void drain_e(cudaStream_t s) { cudaStreamSynchronize(s); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:32: warning: 'cudaStreamSynchronize' blocks the host
// CAP-MESSAGES-DAG: :[[@LINE-2]]:32: warning: 'cudaStreamSynchronize' blocks the host
void wait_quietly(cudaStream_t s) { drain_e(s); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:37: note: 'drain_e' is called here during capture
// CAP-MESSAGES-DAG: :[[@LINE-2]]:37: note: 'drain_e' is called here during capture
namespace ns {
void flush(cudaStream_t s) { cudaStreamSynchronize(s); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:30: warning: 'cudaStreamSynchronize' blocks the host
// CAP-MESSAGES-DAG: :[[@LINE-2]]:30: warning: 'cudaStreamSynchronize' blocks the host
} // namespace ns

void safe_functions(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  // CHECK-MESSAGES-DAG: :[[@LINE-1]]:3: note: CUDA graph capture begins here
  // CHECK-MESSAGES-DAG: :[[@LINE-2]]:3: note: CUDA graph capture begins here
  // CAP-MESSAGES-DAG: :[[@LINE-3]]:3: note: CUDA graph capture begins here
  // CAP-MESSAGES-DAG: :[[@LINE-4]]:3: note: CUDA graph capture begins here
  checked_drain(s);
  wait_quietly(s);
  // CHECK-MESSAGES-DAG: :[[@LINE-1]]:3: note: 'wait_quietly' is called here during capture
  // CAP-MESSAGES-DAG: :[[@LINE-2]]:3: note: 'wait_quietly' is called here during capture
  ns::flush(s);
  // CHECK-MESSAGES-DAG: :[[@LINE-1]]:3: note: 'flush' is called here during capture
  // CAP-MESSAGES-DAG: :[[@LINE-2]]:3: note: 'flush' is called here during capture
  cudaStreamEndCapture(s, g);
}

// A long chain: with MaxChainNotes 3 the notes keep the two calls nearest
// the hazard and the call in the region, and count the rest.
void level5(cudaStream_t s) { cudaStreamSynchronize(s); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:31: warning: 'cudaStreamSynchronize' blocks the host
// SAFE-MESSAGES-DAG: :[[@LINE-2]]:31: warning: 'cudaStreamSynchronize' blocks the host
// CAP-MESSAGES-DAG: :[[@LINE-3]]:31: warning: 'cudaStreamSynchronize' blocks the host
void level4(cudaStream_t s) { level5(s); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:31: note: 'level5' is called here during capture
// SAFE-MESSAGES-DAG: :[[@LINE-2]]:31: note: 'level5' is called here during capture
// CAP-MESSAGES-DAG: :[[@LINE-3]]:31: note: 'level5' is called here during capture
void level3(cudaStream_t s) { level4(s); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:31: note: 'level4' is called here during capture
// SAFE-MESSAGES-DAG: :[[@LINE-2]]:31: note: 'level4' is called here during capture
// CAP-MESSAGES-DAG: :[[@LINE-3]]:31: note: 'level4' is called here during capture
void level2(cudaStream_t s) { level3(s); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:31: note: 'level3' is called here during capture
// SAFE-MESSAGES-DAG: :[[@LINE-2]]:31: note: 'level3' is called here during capture
void level1(cudaStream_t s) { level2(s); }
// CHECK-MESSAGES-DAG: :[[@LINE-1]]:31: note: 'level2' is called here during capture
// SAFE-MESSAGES-DAG: :[[@LINE-2]]:31: note: 'level2' is called here during capture
void long_chain(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  level1(s);
  // CHECK-MESSAGES-DAG: :[[@LINE-1]]:3: note: 'level1' is called here during capture
  // SAFE-MESSAGES-DAG: :[[@LINE-2]]:3: note: 'level1' is called here during capture
  // CAP-MESSAGES-DAG: :[[@LINE-3]]:3: note: ... (2 more calls)
  // CAP-MESSAGES-DAG: :[[@LINE-4]]:3: note: 'level1' is called here during capture
  cudaStreamEndCapture(s, g);
}
