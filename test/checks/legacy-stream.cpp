// RUN: %check_cudagraph_tidy %s cudagraph-legacy-stream %t -- -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs
// RUN: %check_cudagraph_tidy --prefix=CHECK-MESSAGES-PTDS %s cudagraph-legacy-stream %t -- -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs -DCUDA_API_PER_THREAD_DEFAULT_STREAM
// Every check on the same code, for launches through pointers (a crash once):
// RUN: not %cudagraph_tidy --checks=-*,cudagraph-* %s -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs > %t.all 2>&1

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cub/device/device_segmented_sort.cuh>
#include <cuda.h>
#include <cuda_runtime.h>
#include <torch/torch.h>

__global__ void scale(float *x, int n) {}
__global__ void shift(float *x, int n) {}

using kernel_fn = void (*)(float *, int);
static kernel_fn pick_kernel(int n) {
  if (n > 1024)
    return shift;
  return scale;
}

// Launches and Async calls without the capturing stream go to the legacy
// stream: they run at once and are missing from the graph.
void launches(cudaStream_t s, float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  scale<<<1, 32>>>(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'scale' sends work to the legacy default stream during CUDA graph capture: the work runs eagerly and is missing from the graph, so replays never repeat it (no error){{.*}}(hazard: legacy-stream-work)
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here (global mode)
  // CHECK-FIXES: scale<<<1, 32, 0, s>>>(x, n);
  scale<<<1, 32, 128>>>(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'scale' sends work to the legacy default stream
  // CHECK-FIXES: scale<<<1, 32, 128, s>>>(x, n);
  scale<<<1, 32, 0, 0>>>(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'scale' sends work to the legacy default stream
  // CHECK-FIXES: scale<<<1, 32, 0, s>>>(x, n);
  cudaMemsetAsync(x, 0, n * sizeof(float));
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemsetAsync' sends work to the legacy default stream
  cudaMemcpyAsync(x, x + n, n, cudaMemcpyDeviceToDevice, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemcpyAsync' sends work to the legacy default stream
  // CHECK-FIXES: cudaMemcpyAsync(x, x + n, n, cudaMemcpyDeviceToDevice, s);
  cudaMemsetAsync(x, 0, n, cudaStreamLegacy);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemsetAsync' sends work to the legacy default stream
  // CHECK-MESSAGES-PTDS: :[[@LINE-2]]:3: warning: 'cudaMemsetAsync' sends work to the legacy default stream
  // A kernel chosen into a variable first (template dispatch code does).
  auto kernel = scale;
  kernel<<<1, 32, 0>>>(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'scale' sends work to the legacy default stream
  // CHECK-FIXES: kernel<<<1, 32, 0, s>>>(x, n);
  kernel<<<1, 32, 0, s>>>(x, n);
  // ... or returned by a function that picks one.
  auto picked = pick_kernel(n);
  picked<<<1, 32>>>(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: '{{scale|shift}}' sends work to the legacy default stream
  // Negative: the capturing stream, and the per-thread stream by name.
  scale<<<1, 32, 0, s>>>(x, n);
  cudaMemsetAsync(x, 0, n, s);
  cudaMemsetAsync(x, 0, n, cudaStreamPerThread);
  // Stream-ordered allocation there fails instead (cudagraph-device-alloc).
  void *tmp = nullptr;
  cudaMallocAsync(&tmp, n, 0);
  cudaFreeAsync(tmp, cudaStreamLegacy);
  cudaStreamEndCapture(s, &g);
  // Negative: after capture, the legacy stream is fine.
  scale<<<1, 32>>>(x, n);
}

// Through reach: a helper that launches without a stream; no fix-it there
// (the capturing stream is not in scope).
void helper(float *x, int n) {
  scale<<<1, 32>>>(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'scale' sends work to the legacy default stream
}

void viaHelper(cudaStream_t s, float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  helper(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'helper' is called here during capture
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here (thread-local mode)
  cudaStreamEndCapture(s, &g);
}

// Capture begun on the default stream.
void beginOnDefault(float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamBeginCapture' begins capture on the default stream: the legacy stream cannot be captured{{.*}}(hazard: default-stream-capture)
  cudaStreamEndCapture(0, &g);
}

void beginOnLegacy(float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamBeginCapture' begins capture on the default stream
  // CHECK-MESSAGES-PTDS: :[[@LINE-2]]:3: warning: 'cudaStreamBeginCapture' begins capture on the default stream
  cudaStreamEndCapture(cudaStreamLegacy, &g);
}

// With the per-thread default stream (-DCUDA_API_PER_THREAD_DEFAULT_STREAM,
// nvcc --default-stream per-thread) stream 0 is this thread's stream, which
// can be captured, and a stream-less launch in its capture is captured.
void perThread(float *x, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal);
  scale<<<1, 32>>>(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'scale' sends work to the legacy default stream
  cudaStreamEndCapture(cudaStreamPerThread, &g);
}

// libtorch: a guard for the default stream inside the region sends the work
// under it to the legacy stream; capture_begin with the default stream
// current fails.
void torchGuard(at::cuda::CUDAGraph &graph, torch::Tensor &y,
                const torch::Tensor &x) {
  graph.capture_begin();
  {
    c10::cuda::CUDAStreamGuard onDefault(c10::cuda::getDefaultCUDAStream());
    // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: 'CUDAStreamGuard' sends work to the legacy default stream during CUDA graph capture{{.*}}keep the capturing stream current
    y.copy_(x * 2);
  }
  graph.capture_end();
}

void torchBeginOnDefault(at::cuda::CUDAGraph &graph, const torch::Tensor &x) {
  c10::cuda::CUDAStreamGuard onDefault(c10::cuda::getDefaultCUDAStream());
  graph.capture_begin();
  // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: 'CUDAGraph::capture_begin' begins capture on the default stream{{.*}}capture under a CUDAStreamGuard on a stream from getStreamFromPool()
  auto y = x * 2;
  graph.capture_end();
}

// Negative: a pool stream made current, or a caller that chose the stream.
void torchBeginOnPool(at::cuda::CUDAGraph &graph, const torch::Tensor &x) {
  c10::cuda::CUDAStreamGuard onPool(c10::cuda::getStreamFromPool());
  graph.capture_begin();
  auto y = x * 2;
  graph.capture_end();
}

void torchBeginCallerStream(at::cuda::CUDAGraph &graph, const torch::Tensor &x) {
  graph.capture_begin();
  auto y = x * 2;
  graph.capture_end();
}

// First-use work behind a cache test: a begin wrapper that calls the lazy
// initializer before capture begins has done it, so its branch stays cold
// under capture; without that warm-up the first use may be the captured one.
struct DeviceState {
  bool ready = false;
};
DeviceState *lookup(int device);

DeviceState *stateFor(int device) {
  DeviceState *st = lookup(device);
  if (!st->ready) {
    void *p = nullptr;
    cudaMemsetAsync(p, 0, 1, 0);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaMemsetAsync' sends work to the legacy default stream
    st->ready = true;
  }
  return st;
}

bool beginWarm(cudaStream_t s, int device) {
  if (!stateFor(device))
    return false;
  return cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess;
}

bool beginCold(cudaStream_t s) {
  return cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess;
}

void warmCapture(cudaStream_t s, int device) {
  cudaGraph_t g;
  if (!beginWarm(s, device))
    return;
  stateFor(device);
  cudaStreamEndCapture(s, &g);
}

void coldCapture(cudaStream_t s, int device) {
  cudaGraph_t g;
  if (!beginCold(s))
    return;
  stateFor(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'stateFor' is called here during capture
  // CHECK-MESSAGES: :[[@LINE-4]]:8: note: CUDA graph capture begins in 'beginCold', called here
  cudaStreamEndCapture(s, &g);
}

// A warm-up call does not make every branch of the callee cold: a branch
// whose condition reads only parameters runs again on every call.
struct Session {
  bool bind(int slot);
  void stage(int slot);
};

void submit(Session *session, int slot, bool fanOut) {
  if (session->bind(slot)) {
    session->stage(slot);
    if (fanOut) {
      void *p = nullptr;
      cudaMemsetAsync(p, 0, 64, 0);
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaMemsetAsync' sends work to the legacy default stream
    }
  }
}

void warmThenCapture(cudaStream_t s, Session *session, bool fanOut) {
  cudaGraph_t g;
  submit(session, 0, fanOut); // warm-up before capture
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  submit(session, 0, fanOut);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'submit' is called here during capture
  cudaStreamEndCapture(s, &g);
}

// Nor does a branch that reads fields and calls a method through a pointer
// field: the call does not change what the condition reads.
struct Engine {
  bool multi = false;
  bool fanOut() {
    void *p = nullptr;
    return cudaMemsetAsync(p, 0, 64, 0) == cudaSuccess;
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: 'cudaMemsetAsync' sends work to the legacy default stream
  }
};
struct Runner {
  Engine *engine = nullptr;
  bool enqueue() {
    if (engine->multi)
      return engine->fanOut();
    return true;
  }
  void capture(cudaStream_t s) {
    cudaGraph_t g;
    enqueue(); // warm-up before capture
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    enqueue();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: 'Runner::enqueue' is called here during capture
    cudaStreamEndCapture(s, &g);
  }
};

// The fallback for "no stream set" drops the new stream (the result of the
// getter is discarded): on that path the capture begins on stream 0, and the
// work the region meant to record on that stream runs eagerly (a note each;
// not the work on another stream, nor the end).
cudaStream_t solverStream();
cudaStream_t makeStream(int);
extern bool allowGraph;
__global__ void relax(float *d);
void solveCaptured(float *d, cudaStream_t copies) {
  bool localStream = false;
  cudaStream_t stream = solverStream();
  if (stream == 0) {
    localStream = true;
    makeStream(0);
  }
  cudaGraph_t graph;
  if (allowGraph) {
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamBeginCapture' may begin capture on the default stream: the legacy stream cannot be captured
    // CHECK-MESSAGES: :[[@LINE-8]]:3: note: 'stream' is the default stream on the path through this test, whose branch does not assign it
    cudaMemsetAsync(d, 0, 4, stream);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: on that path this work on 'stream' runs eagerly on the legacy stream and is missing from the graph
    relax<<<1, 32, 0, stream>>>(d);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: on that path this work on 'stream' runs eagerly on the legacy stream and is missing from the graph
    cudaMemsetAsync(d, 0, 4, copies);
    // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{[0-9]+}}: note: on that path
    cudaStreamCaptureStatus status;
    cudaStreamIsCapturing(stream, &status);
    // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{[0-9]+}}: note: on that path
    cudaStreamEndCapture(stream, &graph);
    // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{[0-9]+}}: note: on that path
  }
}
// Negatives: the fallback assigns the stream, leaves, or a later exit (or
// the begin's own condition) reads what it set.
void solveAssigned(float *d) {
  cudaStream_t stream = solverStream();
  if (stream == 0)
    stream = makeStream(0);
  cudaGraph_t graph;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  cudaStreamEndCapture(stream, &graph);
}
void solveCreated(float *d) {
  cudaStream_t stream = solverStream();
  if (!stream) {
    cudaStreamCreate(&stream);
  }
  cudaGraph_t graph;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  cudaStreamEndCapture(stream, &graph);
}
void solveLeaves(float *d) {
  cudaStream_t stream = solverStream();
  if (stream == nullptr)
    return;
  cudaGraph_t graph;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  cudaStreamEndCapture(stream, &graph);
}
void solveFlagged(float *d) {
  bool eager = false;
  cudaStream_t stream = solverStream();
  if (stream == 0) {
    eager = true;
  }
  if (eager)
    return;
  cudaGraph_t graph;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  cudaStreamEndCapture(stream, &graph);
}
void solveGuarded(float *d) {
  bool eager = false;
  cudaStream_t stream = solverStream();
  if (stream == 0)
    eager = true;
  cudaGraph_t graph;
  if (!eager) {
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    cudaStreamEndCapture(stream, &graph);
  }
}

// CUB's device algorithms take the stream as their last argument, 0 when
// it is left out; called with no temporary storage they only compute its
// size and launch nothing.
void segmentedRadixSorts(cudaStream_t s, const float *in, float *out,
                         const int *offsets, int n, int segments) {
  void *temp = nullptr;
  std::size_t bytes = 0;
  cudaGraph_t graph;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, in, out, n, segments,
                                          offsets, offsets + 1);
  cudaMallocAsync(&temp, bytes, s);
  cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, in, out, n, segments,
                                          offsets, offsets + 1);
  // CHECK-MESSAGES: :[[@LINE-2]]:3: warning: 'DeviceSegmentedRadixSort::SortKeys' sends work to the legacy default stream during CUDA graph capture
  cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, in, out, n, segments,
                                          offsets, offsets + 1, 0, 32, s);
  cudaFreeAsync(temp, s);
  cudaStreamEndCapture(s, &graph);
}

// A launcher given its stream by the caller: the stream is what the captured
// caller passes. A literal 0 passed down sends the launch to the legacy
// stream ("using the default stream here" in an extension op).
// The finding is the call that passes it: the launcher is right for its
// other callers.
static void launchScale(cudaStream_t stream, float *x, int n) {
  scale<<<1, 32, 0, stream>>>(x, n);
}
template <int Block>
static void launchShift(float *x, int n, cudaStream_t stream = 0) {
  shift<<<1, Block, 0, stream>>>(x, n);
}
static void launchDriver(CUfunction f, void **args, CUstream stream) {
  cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr);
}
// Negative: a launcher that falls back to a stream of its own.
static void launchOrOwn(cudaStream_t stream, float *x, int n) {
  if (!stream)
    stream = at::cuda::getCurrentCUDAStream();
  scale<<<1, 32, 0, stream>>>(x, n);
}
void passedDown(cudaStream_t s, float *x, int n, CUfunction f, void **args) {
  cudaGraph_t graph;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launchScale(0, x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'scale', launched in 'launchScale' on the stream this call passes, sends work to the legacy default stream
  // CHECK-MESSAGES: :[[@LINE-20]]:3: note: 'scale' is launched here on 'stream'
  launchShift<64>(x, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'shift', launched in 'launchShift' on the stream this call leaves to its default, sends work to the legacy default stream
  launchOrOwn(0, x, n);
  launchDriver(f, args, at::cuda::getDefaultCUDAStream().stream());
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: 'cuLaunchKernel', called in 'launchDriver' on the stream this call passes, sends work to the legacy default stream
  // CHECK-MESSAGES: :[[@LINE-19]]:3: note: 'cuLaunchKernel' is called here on 'stream'
  launchDriver(f, args, at::cuda::getCurrentCUDAStream().stream());
  // Negative: the capturing stream passed down.
  launchScale(s, x, n);
  launchShift<32>(x, n, s);
  cudaStreamEndCapture(s, &graph);
}

// A stream variable that is never created: the begin reads an indeterminate
// handle (zero on many runs, the legacy stream); the work meant for the
// graph runs eagerly.
void neverCreatedStream(float *d) {
  cudaStream_t stream;
  cudaGraph_t graph;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamBeginCapture' begins capture on a stream that is never created (an indeterminate handle; zero is the default stream)
  // CHECK-MESSAGES: :[[@LINE-4]]:16: note: 'stream' is declared here and no stream is ever created into it or assigned to it
  cudaMemsetAsync(d, 0, 64, stream);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: on that path this work on 'stream' runs eagerly on the legacy stream and is missing from the graph
  cudaStreamEndCapture(stream, &graph);
}
// The same with a zero initializer that nothing replaces.
void zeroStream(float *d) {
  cudaStream_t stream = nullptr;
  cudaGraph_t graph;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamBeginCapture' begins capture on the default stream
  // CHECK-MESSAGES: :[[@LINE-4]]:16: note: 'stream' is declared here and no stream is ever created into it or assigned to it
  cudaMemsetAsync(d, 0, 64, stream);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: on that path this work on 'stream' runs eagerly on the legacy stream and is missing from the graph
  cudaStreamEndCapture(stream, &graph);
}
// Negative: created through its address, or assigned from a pool.
cudaStream_t poolStream();
void createdStream(float *d) {
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaGraph_t graph;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  cudaMemsetAsync(d, 0, 64, stream);
  cudaStreamEndCapture(stream, &graph);
}
void assignedStream(float *d) {
  cudaStream_t stream;
  stream = poolStream();
  cudaGraph_t graph;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  cudaMemsetAsync(d, 0, 64, stream);
  cudaStreamEndCapture(stream, &graph);
}
