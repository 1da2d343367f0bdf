// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-capture-unsafe-call %t -- -- -std=c++17 -isystem %cuda_stubs

// Calls that name a stream which is not capturing while this function has a
// capture open on another stream it made. Measured on an H200
// (runtime-harness/tools/other-stream-probe.cu): a graph launch on the idle
// stream runs eagerly and leaves the capture intact; synchronizing the idle
// stream fails with 900 in global and thread-local modes; in relaxed mode
// both succeed.

#include <cuda_runtime.h>


// Negative: the first capture ended; its graph is launched on its own
// stream, which is idle, while the second stream still captures.
void launchBeside(float *x, cudaGraph_t *g2) {
  cudaStream_t first, second;
  cudaStreamCreate(&first);
  cudaStreamCreate(&second);
  cudaGraph_t g;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(first, cudaStreamCaptureModeGlobal);
  cudaStreamBeginCapture(second, cudaStreamCaptureModeGlobal);
  cudaMemsetAsync(x, 0, sizeof(float), first);
  cudaMemsetAsync(x, 0, sizeof(float), second);
  cudaStreamEndCapture(first, &g);
  cudaGraphInstantiate(&exec, g, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaGraphInstantiate' instantiates a graph during CUDA graph capture
  cudaGraphLaunch(exec, first);
  cudaStreamEndCapture(second, g2);
}

// Positive: synchronizing the idle stream still fails while the other
// capture is open in global mode.
void syncBeside(float *x, cudaGraph_t *g1, cudaGraph_t *g2) {
  cudaStream_t first, second;
  cudaStreamCreate(&first);
  cudaStreamCreate(&second);
  cudaStreamBeginCapture(first, cudaStreamCaptureModeGlobal);
  cudaStreamBeginCapture(second, cudaStreamCaptureModeGlobal);
  cudaMemsetAsync(x, 0, sizeof(float), first);
  cudaStreamEndCapture(first, g1);
  cudaStreamSynchronize(first);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE-2]]:3: note: the stream it names is not the one being captured, but a global or thread-local capture prohibits this call on every stream of the thread
  cudaStreamEndCapture(second, g2);
}

// Negative: a relaxed capture allows synchronizing another stream.
void syncBesideRelaxed(float *x, cudaGraph_t *g) {
  cudaStream_t idle, capturing;
  cudaStreamCreate(&idle);
  cudaStreamCreate(&capturing);
  cudaStreamBeginCapture(capturing, cudaStreamCaptureModeRelaxed);
  cudaMemsetAsync(x, 0, sizeof(float), capturing);
  cudaStreamSynchronize(idle);
  cudaStreamEndCapture(capturing, g);
}

// Positive: the launch names the capturing stream itself.
void launchIntoCapture(cudaGraphExec_t exec, float *x, cudaGraph_t *g) {
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaGraphLaunch(exec, s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaGraphLaunch' launches another graph during CUDA graph capture
  cudaStreamEndCapture(s, g);
}

// Positive: the other variable is assigned the capturing stream, so the
// names do not tell the streams apart.
void aliasedStream(cudaGraphExec_t exec, cudaGraph_t *g) {
  cudaStream_t s, other;
  cudaStreamCreate(&s);
  cudaStreamCreate(&other);
  other = s;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaGraphLaunch(exec, other);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaGraphLaunch' launches another graph during CUDA graph capture
  cudaStreamEndCapture(s, g);
}

// Positive: streams the function is given may be one stream.
void givenStreams(cudaStream_t a, cudaStream_t b, cudaGraphExec_t exec,
                  cudaGraph_t *g) {
  cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
  cudaGraphLaunch(exec, b);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaGraphLaunch' launches another graph during CUDA graph capture
  cudaStreamEndCapture(a, g);
}

// Positive: a helper's stream parameter is not known to differ from the
// caller's capturing stream.
static void launchHelper(cudaGraphExec_t exec, cudaStream_t s) {
  cudaGraphLaunch(exec, s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaGraphLaunch' launches another graph during CUDA graph capture
}

void throughHelper(cudaGraphExec_t exec, cudaGraph_t *g) {
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launchHelper(exec, s);
  cudaStreamEndCapture(s, g);
}
