// RUN: %check_cudagraph_tidy %s cudagraph-capture-left-open %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <cstdlib>
#include <stdexcept>

cudaError_t launchAll(cudaStream_t s);

// Positive: an early return between begin and end.
cudaError_t earlyReturn(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  if (launchAll(s) != cudaSuccess)
    return cudaErrorUnknown;
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: this path returns while the capture it began is still open: the stream stays in capture mode
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: CUDA graph capture begins here (global mode)
  return cudaStreamEndCapture(s, g);
}

// Positive: an error-check macro that returns.
#define RETURN_IF_ERROR(call)                                                  \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess)                                                     \
      return e_;                                                               \
  } while (0)

cudaError_t macroReturn(cudaStream_t s, cudaGraph_t *g) {
  RETURN_IF_ERROR(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  RETURN_IF_ERROR(launchAll(s));
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: this path returns while the capture it began is still open
  RETURN_IF_ERROR(cudaStreamEndCapture(s, g));
  return cudaSuccess;
}

// Positive, reported once: every exit of one capture has the same fix, so the
// first carries the warning and the others are notes.
cudaError_t manyExits(cudaStream_t s, cudaGraph_t *g) {
  RETURN_IF_ERROR(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  RETURN_IF_ERROR(launchAll(s));
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: this path returns while the capture it began is still open
  RETURN_IF_ERROR(launchAll(s));
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: this path also returns with the capture open
  if (launchAll(s) != cudaSuccess)
    return cudaErrorUnknown;
  // CHECK-MESSAGES: :[[@LINE-1]]:5: note: this path also returns with the capture open
  // CHECK-MESSAGES: :[[@LINE-8]]:19: note: CUDA graph capture begins here (global mode)
  RETURN_IF_ERROR(cudaStreamEndCapture(s, g));
  return cudaSuccess;
}

// Positive: libtorch.
bool torchEarlyReturn(at::cuda::CUDAGraph &graph, bool ready) {
  graph.capture_begin();
  if (!ready)
    return false;
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: this path returns while the capture it began is still open
  graph.capture_end();
  return true;
}

// Negative: the error path ends the capture first.
cudaError_t endsFirst(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  if (launchAll(s) != cudaSuccess) {
    cudaGraph_t partial;
    cudaStreamEndCapture(s, &partial);
    return cudaErrorUnknown;
  }
  return cudaStreamEndCapture(s, g);
}

// Negative: paths that end the program, and an error-check macro that
// throws (taken as fatal; a throw written out is reported, below).
void exitsOrThrows(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  if (launchAll(s) != cudaSuccess)
    exit(1);
  C10_CUDA_CHECK(launchAll(s));
  cudaStreamEndCapture(s, g);
}

// Negative: a wrapper that only begins (its caller ends the capture), and a
// return before the begin.
void beginOnly(cudaStream_t s) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
}

cudaError_t returnBeforeBegin(cudaStream_t s, cudaGraph_t *g, bool skip) {
  if (skip)
    return cudaSuccess;
  beginOnly(s);
  launchAll(s);
  return cudaStreamEndCapture(s, g);
}

// Negative: a return after the end.
cudaError_t returnAfterEnd(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launchAll(s);
  cudaError_t err = cudaStreamEndCapture(s, g);
  if (err != cudaSuccess)
    return err;
  return cudaGraphLaunch(nullptr, s);
}

// Negative: the begin's result reaches the test through a checking function,
// a variable, or a wrapper that returns false when its begin failed.
enum class Status { kSuccess, kErrorInternal };
Status toStatus(cudaError_t e);

Status checkedBegin(cudaStream_t s, cudaGraph_t *g) {
  Status status = Status::kSuccess;
  status = toStatus(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  if (status != Status::kSuccess)
    return status;
  launchAll(s);
  return toStatus(cudaStreamEndCapture(s, g));
}

bool beginWrapper(cudaStream_t s) {
  return cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess;
}

bool viaWrapper(cudaStream_t s, cudaGraph_t *g) {
  if (!beginWrapper(s))
    return false;
  launchAll(s);
  return cudaStreamEndCapture(s, g) == cudaSuccess;
}

// Positive: a begin in a loop that fails after the first stream leaves the
// earlier streams capturing.
cudaError_t beginEach(cudaStream_t *streams, cudaGraph_t *graphs, int n) {
  for (int i = 0; i < n; i++)
    RETURN_IF_ERROR(cudaStreamBeginCapture(streams[i],
                                           cudaStreamCaptureModeGlobal));
  // CHECK-MESSAGES: :[[@LINE-2]]:5: warning: this path returns while the capture it began is still open
  for (int i = 0; i < n; i++)
    launchAll(streams[i]);
  for (int i = 0; i < n; i++)
    RETURN_IF_ERROR(cudaStreamEndCapture(streams[i], &graphs[i]));
  return cudaSuccess;
}

// Positive: the status an earlier check tested is assigned by the begin: the
// earlier exit says nothing about the checks after the begin.
cudaError_t statusReused(cudaStream_t s, cudaGraph_t *g) {
  cudaError_t status = cudaStreamSynchronize(s);
  if (status != cudaSuccess)
    return status;
  status = cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  if (status != cudaSuccess)
    return status;
  status = launchAll(s);
  if (status != cudaSuccess)
    return status;
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: this path returns while the capture it began is still open
  return cudaStreamEndCapture(s, g);
}

bool enqueue(cudaStream_t s);
bool graphsEnabled = true;

// Negative: a flag set after the begin says whether the capture is open;
// the failure path ends it when the flag is set, and the return after it
// runs with no capture (the shape of a TensorRT runner that falls back to
// eager work when the captured enqueue fails).
bool flagAfterBegin(cudaStream_t s, cudaGraph_t *g) {
  bool capturing = false;
  if (graphsEnabled) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    capturing = true;
  }
  bool ok = enqueue(s);
  if (!ok) {
    if (capturing) {
      cudaStreamEndCapture(s, g);
      capturing = false;
      ok = enqueue(s);
    }
    if (!ok)
      return false;
  }
  if (capturing)
    cudaStreamEndCapture(s, g);
  return true;
}

// Positive: the flag is set before the begin, so it says nothing of it.
bool flagBeforeBegin(cudaStream_t s, cudaGraph_t *g, bool other) {
  bool capturing = false;
  if (graphsEnabled) {
    capturing = true;
    if (other)
      capturing = false;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  }
  bool ok = enqueue(s);
  if (!ok) {
    if (capturing) {
      cudaStreamEndCapture(s, g);
      ok = enqueue(s);
    }
    if (!ok)
      return false;
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: this path returns while the capture it began is still open
  }
  if (capturing)
    cudaStreamEndCapture(s, g);
  return true;
}

// A checking function that is true on failure: the begin's failure edge
// has no capture open, the return after the captured work does.
template <typename T> bool statusIsOk(const T &status) {
  return status == cudaSuccess;
}
template <typename T>
bool reportIfFailed(const T &status, const char *what, const char *file,
                    int line) {
  if (statusIsOk(status))
    return false;
  (void)what, (void)file, (void)line;
  return true;
}
#define SKIP_ON_FAILURE(call)                                                  \
  if (reportIfFailed((call), #call, __FILE__, __LINE__)) {                     \
    return;                                                                    \
  }

void skipAfterBegin(cudaStream_t s, cudaGraph_t *g) {
  SKIP_ON_FAILURE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaError_t last = launchAll(s);
  SKIP_ON_FAILURE(last);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: this path returns while the capture it began is still open
  // CHECK-MESSAGES: :[[@LINE-4]]:19: note: CUDA graph capture begins here (global mode)
  SKIP_ON_FAILURE(cudaStreamEndCapture(s, g));
}

// Negative: the same checks with nothing between begin and end that returns.
void skipClean(cudaStream_t s, cudaGraph_t *g) {
  SKIP_ON_FAILURE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  launchAll(s);
  SKIP_ON_FAILURE(cudaStreamEndCapture(s, g));
}

// Negative: a checker that is true on success (`if (!ok(...)) return`).
template <typename T> bool succeeded(const T &status, int line) {
  if (status != cudaSuccess)
    return false;
  (void)line;
  return true;
}
void okChecked(cudaStream_t s, cudaGraph_t *g) {
  if (!succeeded(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal),
                 __LINE__))
    return;
  launchAll(s);
  cudaStreamEndCapture(s, g);
}

// Negative: a bool begin wrapper whose first test is of the stream it is
// given, not of a status: `false` is its failure, the capture not begun.
struct GuardedCapture {
  cudaStream_t stream_ = nullptr;
  bool begin(cudaStream_t stream) {
    if (!stream)
      return false;
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) !=
        cudaSuccess)
      return false;
    stream_ = stream;
    return true;
  }
  void end(cudaGraph_t *g) { cudaStreamEndCapture(stream_, g); }
};
bool wrapperFallback(GuardedCapture &capture, cudaStream_t s,
                     cudaGraph_t *g) {
  if (!capture.begin(s)) {
    launchAll(s);
    return true;
  }
  launchAll(s);
  capture.end(g);
  return true;
}

// An exception from the captured work lands in a handler with the capture
// still open: a handler that neither ends it nor leaves by a throw goes on
// with the stream capturing.
void runModel();
void handlerFallsBack(at::cuda::CUDAGraph &graph, bool &useGraph) {
  try {
    graph.capture_begin();
    runModel();
    graph.capture_end();
  } catch (...) {
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: this path returns while the capture it began is still open
    // CHECK-MESSAGES: :[[@LINE-5]]:11: note: CUDA graph capture begins here (global mode)
    useGraph = false;
  }
}

// Negative: the handler ends the capture, or throws again.
void handlerEnds(at::cuda::CUDAGraph &graph, bool &useGraph) {
  try {
    graph.capture_begin();
    runModel();
    graph.capture_end();
  } catch (...) {
    graph.capture_end();
    useGraph = false;
  }
}
void handlerRethrows(at::cuda::CUDAGraph &graph) {
  try {
    graph.capture_begin();
    runModel();
    graph.capture_end();
  } catch (...) {
    throw;
  }
}

// Negative: nothing between the begin and the end can throw (a runtime API
// call, a launch, an engine method declared noexcept): the handler only
// catches what failed before the capture began.
struct Engine {
  bool enqueue(cudaStream_t s) noexcept;
  void prepare();
};
bool captureNoexceptWork(Engine &engine, cudaStream_t s, cudaGraph_t *g) {
  bool ok = false;
  try {
    engine.prepare();
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
      return false;
    engine.enqueue(s);
    if (cudaStreamEndCapture(s, g) != cudaSuccess)
      return false;
    ok = true;
  } catch (...) {
    ok = false;
  }
  return ok;
}
// ... while work that may throw makes the handler an exit with it open.
bool captureThrowingWork(Engine &engine, cudaStream_t s, cudaGraph_t *g) {
  try {
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
      return false;
    engine.enqueue(s);
    engine.prepare();
    cudaStreamEndCapture(s, g);
  } catch (...) {
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: this path returns while the capture it began is still open
    return false;
  }
  return true;
}

// Negative: the try sits inside the capture and the handler falls through
// to its end.
void handlerBeforeEnd(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  try {
    runModel();
  } catch (...) {
  }
  cudaStreamEndCapture(s, g);
}

// Negative: the try block calls a helper that may end the capture itself,
// and the handler falls through to the end after the try statement.
void evaluateOrEnd(cudaStream_t s, bool capture, cudaGraph_t *g) {
  runModel();
  if (!capture)
    cudaStreamEndCapture(s, g);
}
int handlerThenEnd(cudaStream_t s, bool capture, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  int result = 0;
  try {
    evaluateOrEnd(s, capture, g);
  } catch (...) {
    result = 1;
  }
  cudaStreamEndCapture(s, g);
  return result;
}

// Negative: returning from main ends the program, like exit().
int main(int argc, char **argv) {
  cudaStream_t s = nullptr;
  cudaGraph_t g;
  cudaStreamCreate(&s);
  RETURN_IF_ERROR(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  if (launchAll(s) != cudaSuccess)
    return 1;
  cudaStreamEndCapture(s, &g);
  return 0;
}

// A begin wrapper that reports how it went: it returns success with the
// capture open (its caller ends it), and a failure after the begin leaves
// the capture open, since the caller takes it for never begun.
enum RetCode { RC_SUCCESS = 0, RC_OTHER_ERROR = 1 };
RetCode joinStream(cudaStream_t from, cudaStream_t to);

struct Runner {
  cudaStream_t stream_;
  cudaStream_t side_[2];
  RetCode beginForked() {
    cudaError_t err = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal);
    if (err != cudaSuccess)
      return RC_OTHER_ERROR;
    for (cudaStream_t side : side_) {
      RetCode status = joinStream(stream_, side);
      if (status != RC_SUCCESS) {
        return status;
        // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: this path returns while the capture it began is still open
      }
    }
    return RC_SUCCESS;
  }
  bool beginFlagged() {
    if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal) != cudaSuccess)
      return false;
    if (joinStream(stream_, side_[0]) != RC_SUCCESS)
      return false;
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: this path returns while the capture it began is still open
    return true;
  }
  // Negative: every return after the begin reports success (or says
  // nothing of it).
  RetCode beginPlain() {
    if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal) != cudaSuccess)
      return RC_OTHER_ERROR;
    return RC_SUCCESS;
  }
  // The checking function is defined in another file: its one status
  // argument is the begin's, and a false result is the begin's failure.
  bool beginChecked() {
    if (!checkResult(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal),
                     __FILE__, __LINE__))
      return false;
    return true;
  }
  static bool checkResult(cudaError_t code, const char *file, int line);
  RetCode beginChained() {
    cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal);
    RetCode status = joinStream(stream_, side_[1]);
    return status;
  }
  // An end wrapper: a failure it returns before its end leaves the
  // caller's capture open (the caller takes it for ended, or gives up).
  bool built_ = false;
  RetCode endJoined(cudaGraph_t *graph) {
    if (built_)
      return RC_SUCCESS;
    for (cudaStream_t side : side_) {
      RetCode status = joinStream(side, stream_);
      if (status != RC_SUCCESS)
        return status;
      // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: this path returns a failure before the end-capture call below it, leaving open the capture its caller began: the stream stays in capture mode
    }
    if (cudaStreamEndCapture(stream_, graph) != cudaSuccess)
      return RC_OTHER_ERROR;
    return RC_SUCCESS;
  }
  // Negative: the failure is returned when the stream is not capturing,
  // after the end, or when the wrapper's own bookkeeping says there is no
  // capture of its own to end.
  void *info_ = nullptr;
  RetCode endKnown(cudaGraph_t *graph) {
    if (!info_) {
      return RC_OTHER_ERROR;
    }
    if (cudaStreamEndCapture(stream_, graph) != cudaSuccess)
      return RC_OTHER_ERROR;
    return RC_SUCCESS;
  }
  RetCode endChecked(cudaGraph_t *graph) {
    cudaStreamCaptureStatus status;
    cudaStreamIsCapturing(stream_, &status);
    if (status != cudaStreamCaptureStatusActive)
      return RC_OTHER_ERROR;
    cudaError_t err = cudaStreamEndCapture(stream_, graph);
    if (err != cudaSuccess)
      return RC_OTHER_ERROR;
    return RC_SUCCESS;
  }
};

// A slot of a graph cache, looked up and dereferenced before the begin: it
// is not null where the region ends, so the way that skips the end for a
// null slot is not taken with the capture open.
struct GraphSlot {
  bool valid;
  cudaGraphExec_t exec;
};
GraphSlot *lookupSlot(int key);
int runStep(cudaStream_t s);
int cachedCapture(cudaStream_t s, int key) {
  GraphSlot *slot = lookupSlot(key);
  bool capturing = false;
  if (slot->valid)
    return cudaGraphLaunch(slot->exec, s) == cudaSuccess;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) ==
      cudaSuccess)
    capturing = true;
  if (runStep(s) != 0)
    goto bail;
  if (capturing && slot) {
    cudaGraph_t graph;
    cudaStreamEndCapture(s, &graph);
    slot->valid = cudaGraphInstantiate(&slot->exec, graph, 0) == cudaSuccess;
  }
  return 1;
bail:
  if (capturing) {
    cudaGraph_t partial;
    cudaStreamEndCapture(s, &partial);
    cudaGraphDestroy(partial);
  }
  return 0;
}
// Positive: looked up again after the begin, the slot may be null there.
int relookedCapture(cudaStream_t s, int key) {
  GraphSlot *slot = lookupSlot(key);
  bool capturing = false;
  if (slot->valid)
    return cudaGraphLaunch(slot->exec, s) == cudaSuccess;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) ==
      cudaSuccess)
    capturing = true;
  if (runStep(s) != 0)
    goto bail;
  slot = lookupSlot(key + 1);
  if (capturing && slot) {
    cudaGraph_t graph;
    cudaStreamEndCapture(s, &graph);
    slot->valid = cudaGraphInstantiate(&slot->exec, graph, 0) == cudaSuccess;
  }
  return 1;
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: this path returns while the capture it began is still open
bail:
  if (capturing) {
    cudaGraph_t partial;
    cudaStreamEndCapture(s, &partial);
    cudaGraphDestroy(partial);
  }
  return 0;
}

// Throws written in the function between begin and end.
bool enqueueAll(cudaStream_t s);

// Positive: the exception leaves with the stream capturing.
void throwsOpen(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  if (!enqueueAll(s))
    throw std::runtime_error("enqueue failed");
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: this path throws while the capture it began is still open
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: CUDA graph capture begins here (global mode)
  cudaStreamEndCapture(s, g);
}

// Negative: the throw is in a try block whose handler ends the capture.
void throwsCaught(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  try {
    if (!enqueueAll(s))
      throw std::runtime_error("enqueue failed");
  } catch (...) {
    cudaStreamEndCapture(s, g);
    throw;
  }
  cudaStreamEndCapture(s, g);
}

// Negative: a throw spelled by an error-check macro is taken as fatal.
#define THROW_IF(cond)                                                         \
  do {                                                                         \
    if (cond)                                                                  \
      throw std::runtime_error(#cond);                                         \
  } while (0)

void macroThrows(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  THROW_IF(!enqueueAll(s));
  cudaStreamEndCapture(s, g);
}

// Negative: a throw before the begin or after the end.
void throwsOutside(cudaStream_t s, cudaGraph_t *g) {
  if (!enqueueAll(s))
    throw std::runtime_error("warm-up failed");
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  enqueueAll(s);
  if (cudaStreamEndCapture(s, g) != cudaSuccess)
    throw std::runtime_error("capture failed");
}

// Negative: a guard object whose destructor ends the capture unwinds.
struct EndOnExit {
  cudaStream_t s;
  cudaGraph_t g = nullptr;
  ~EndOnExit() { cudaStreamEndCapture(s, &g); }
};

void throwsUnderGuard(cudaStream_t s) {
  EndOnExit guard{s};
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  if (!enqueueAll(s))
    throw std::runtime_error("enqueue failed");
  cudaStreamEndCapture(s, &guard.g);
}

// Negative: a throw in a function called between begin and end (input
// validation a warm-up call has passed, or an error check like a macro's).
static void validateCount(int n) {
  if (n <= 0)
    throw std::invalid_argument("n must be positive");
}

void calleeThrows(cudaStream_t s, cudaGraph_t *g, int n) {
  validateCount(n);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  validateCount(n);
  enqueueAll(s);
  cudaStreamEndCapture(s, g);
}

// Capture hooks behind an interface: one implementation begins and ends the
// capture, the other does nothing. A virtual call of the hook may begin it.
struct EnqueueHooks {
  virtual ~EnqueueHooks() = default;
  virtual int before(cudaStream_t s) = 0;
  virtual int after(cudaStream_t s) = 0;
};
struct CaptureHooks final : EnqueueHooks {
  cudaGraph_t graph = nullptr;
  int before(cudaStream_t s) override {
    return cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  }
  int after(cudaStream_t s) override { return cudaStreamEndCapture(s, &graph); }
};
struct NoHooks final : EnqueueHooks {
  int before(cudaStream_t) override { return 0; }
  int after(cudaStream_t) override { return 0; }
};

struct HookedEngine {
  EnqueueHooks *hooks;
  int warmup(cudaStream_t s) {
    if (hooks->before(s) != 0)
      return 1;
    if (!enqueueAll(s))
      return 2;
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: this path returns while the capture it began is still open
    // CHECK-MESSAGES: :[[@LINE-5]]:16: note: CUDA graph capture begins in 'CaptureHooks::before', which this virtual call of 'EnqueueHooks::before' may run (global mode)
    if (hooks->after(s) != 0)
      return 3;
    return 0;
  }
};

// Negative: hooks whose implementations disagree (one begins, one ends) say
// nothing about the call.
struct MixedHook {
  virtual ~MixedHook() = default;
  virtual void step(cudaStream_t s) = 0;
};
struct BeginStep final : MixedHook {
  void step(cudaStream_t s) override {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  }
};
struct EndStep final : MixedHook {
  cudaGraph_t graph = nullptr;
  void step(cudaStream_t s) override { cudaStreamEndCapture(s, &graph); }
};

int mixedSteps(MixedHook &h, cudaStream_t s) {
  h.step(s);
  if (!enqueueAll(s))
    return 1;
  h.step(s);
  return 0;
}

// The end inside a short-circuit condition: when a stage failed, `!ok` is
// true and the end is never called, so the return leaves the capture open.
bool shortCircuitEnd(cudaStream_t s, cudaGraph_t *g, int stages) {
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
    return false;
  bool ok = true;
  for (int i = 0; i < stages && ok; ++i)
    ok = enqueueAll(s);
  if (!ok || cudaStreamEndCapture(s, g) != cudaSuccess)
    return false;
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: this path returns while the capture it began is still open
  return true;
}

// The same through an interface whose implementation begins and ends.
struct StageCapture {
  virtual ~StageCapture() = default;
  virtual bool beginCapture() = 0;
  virtual bool endCapture() = 0;
};
struct StreamStageCapture final : StageCapture {
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  bool beginCapture() override {
    return cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) ==
           cudaSuccess;
  }
  bool endCapture() override {
    return cudaStreamEndCapture(stream, &graph) == cudaSuccess;
  }
};
bool captureThroughInterface(StageCapture *capture, cudaStream_t s) {
  if (!capture->beginCapture())
    return false;
  bool ok = enqueueAll(s);
  if (!ok || !capture->endCapture())
    return false;
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: this path returns while the capture it began is still open
  return true;
}

// Negative: every path to the return runs the end first (a failed end ends
// the capture too), or the end runs only when the first test passed.
bool endChecked(cudaStream_t s, cudaGraph_t *g) {
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
    return false;
  enqueueAll(s);
  if (cudaStreamEndCapture(s, g) != cudaSuccess)
    return false;
  return true;
}
bool endCheckedAfterWork(cudaStream_t s, cudaGraph_t *g) {
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
    return false;
  bool ok = enqueueAll(s);
  if (cudaStreamEndCapture(s, g) != cudaSuccess || !ok)
    return false;
  return true;
}
