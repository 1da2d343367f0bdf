// Capture regions in the shapes real code writes them: begin and end inside
// error-check macros, begin and end under the same condition, captures
// ended in a callee, guard objects returned from begin wrappers, and work
// passed to capture helpers.
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <functional>

void launch(cudaStream_t s);

// ---------------------------------------------------------------------------
// Error-check macros around begin and end. Work after the end is not
// captured, whichever macro wraps the end.
#define EXIT_ON_ERROR(call)                                                    \
  do {                                                                         \
    if ((call) != cudaSuccess) {                                               \
      fprintf(stderr, "%s failed\n", #call);                                   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

void checkCuda(cudaError_t err, const char *what);
#define CHECK_CALL(call) checkCuda((call), #call)

#define RETURN_ON_ERROR(call)                                                  \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess)                                                   \
      return err_;                                                             \
  } while (0)

void exitMacro(cudaStream_t s, cudaGraph_t *g) {
  EXIT_ON_ERROR(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  launch(s);
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host
  // CHECK-MESSAGES: :[[@LINE-4]]:17: note: CUDA graph capture begins here (global mode)
  EXIT_ON_ERROR(cudaStreamEndCapture(s, g));
  cudaStreamSynchronize(s);
}

void functionMacro(cudaStream_t s, cudaGraph_t *g) {
  CHECK_CALL(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host
  CHECK_CALL(cudaStreamEndCapture(s, g));
  cudaDeviceSynchronize();
}

void torchMacro(cudaStream_t s, cudaGraph_t *g) {
  C10_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  launch(s);
  C10_CUDA_CHECK(cudaStreamEndCapture(s, g));
  C10_CUDA_CHECK(cudaStreamSynchronize(s));
}

cudaError_t returnMacro(cudaStream_t s, cudaGraph_t *g) {
  RETURN_ON_ERROR(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  launch(s);
  RETURN_ON_ERROR(cudaStreamEndCapture(s, g));
  return cudaStreamSynchronize(s);
}

// ---------------------------------------------------------------------------
// Begin and end under the same side-effect-free condition.
struct Config {
  bool graphs = false;
  int capture_after = 0;
  bool use_graphs() const { return graphs; }
};

void sameComparison(cudaStream_t s, cudaGraph_t *g, int n) {
  if (n >= 1)
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launch(s);
  if (n >= 1)
    cudaStreamEndCapture(s, g);
  cudaStreamSynchronize(s);
}

void sameConjunction(cudaStream_t s, cudaGraph_t *g, const Config &cfg,
                     bool warmup) {
  if (cfg.graphs && !warmup) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  }
  launch(s);
  if (cfg.graphs && !warmup) {
    cudaStreamEndCapture(s, g);
  }
  cudaStreamSynchronize(s);
}

struct Runner {
  Config cfg;
  cudaStream_t stream;
  bool capture_ = false;
  void step(cudaGraph_t *g) {
    if (cfg.use_graphs())
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    launch(stream);
    if (cfg.use_graphs())
      cudaStreamEndCapture(stream, g);
    cudaStreamSynchronize(stream);
    if (capture_)
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    launch(stream);
    if (this->capture_)
      cudaStreamEndCapture(stream, g);
    cudaStreamSynchronize(stream);
  }
};

// A different condition does not close the region.
void differentCondition(cudaStream_t s, cudaGraph_t *g, int n) {
  if (n >= 1)
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launch(s);
  if (n > 2)
    cudaStreamEndCapture(s, g);
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host
}

// ---------------------------------------------------------------------------
// A callee that does captured work, then ends the capture.
void evaluateAndEnd(cudaStream_t s, cudaGraph_t *g) {
  launch(s);
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host
  // CHECK-MESSAGES: :[[@LINE+9]]:3: note: 'evaluateAndEnd' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+6]]:3: note: CUDA graph capture begins here
  cudaStreamEndCapture(s, g);
  cudaStreamSynchronize(s);
}

void capturesThroughCallee(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  launch(s);
  evaluateAndEnd(s, g);
  cudaStreamSynchronize(s);
}

// ---------------------------------------------------------------------------
// Begin wrappers that return a guard object which ends the capture.
struct EndOnDestroy {
  cudaStream_t stream;
  cudaGraph_t *graph;
  ~EndOnDestroy() { cudaStreamEndCapture(stream, graph); }
};

EndOnDestroy beginGuarded(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  return EndOnDestroy{s, g};
}

struct ScopeExit {
  std::function<void()> fn;
  ~ScopeExit() { fn(); }
};

ScopeExit beginWithCallback(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  return ScopeExit{[s, g] { cudaStreamEndCapture(s, g); }};
}

void returnedGuards(cudaStream_t s, cudaGraph_t *g) {
  {
    auto guard = beginGuarded(s, g);
    launch(s);
    cudaEventSynchronize(nullptr);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaEventSynchronize' blocks the host
    // CHECK-MESSAGES: :[[@LINE-4]]:18: note: CUDA graph capture begins in 'beginGuarded', called here
  }
  cudaStreamSynchronize(s);
  {
    auto guard = beginWithCallback(s, g);
    launch(s);
    cudaDeviceSynchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaDeviceSynchronize' blocks the host
  }
  cudaDeviceSynchronize();
  {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    ScopeExit end{[&] { cudaStreamEndCapture(s, g); }};
    launch(s);
  }
  cudaStreamSynchronize(s);
}

// ---------------------------------------------------------------------------
// Work passed to a helper that captures it: by reference, pointer,
// std::function or template parameter.
void runCaptured(cudaStream_t s, const std::function<void()> &work) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  work();
  cudaStreamEndCapture(s, &g);
}

void runCapturedPtr(cudaStream_t s, void (*work)(cudaStream_t)) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  work(s);
  cudaStreamEndCapture(s, &g);
}

template <typename F> void runCapturedT(cudaStream_t s, F &&work) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  work();
  cudaStreamEndCapture(s, &g);
}

void stepWithSync() {
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host
  // CHECK-MESSAGES: :[[@LINE+15]]:18: note: 'stepWithSync' is passed here to 'runCaptured', which calls it during capture
}

void stepWithStreamSync(cudaStream_t s) {
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host
  // CHECK-MESSAGES: :[[@LINE+15]]:21: note: 'stepWithStreamSync' is passed here to 'runCapturedPtr', which calls it during capture
}

void eventStep() {
  cudaEventSynchronize(nullptr);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaEventSynchronize' blocks the host
}

void passesWork(cudaStream_t s) {
  runCaptured(s, stepWithSync);
  std::function<void()> lambda = [s] {
    cudaStreamSynchronize(s);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamSynchronize' blocks the host
  };
  runCaptured(s, lambda);
  runCapturedPtr(s, &stepWithStreamSync);
  runCapturedT(s, eventStep);
}

// Outside every capture: the helpers are not called.
void notCaptured(cudaStream_t s) {
  auto w = [] { cudaDeviceSynchronize(); };
  w();
}

// ---------------------------------------------------------------------------
// One capture per device: begin and end each in a loop over the devices,
// under the same flag, inside checking macros. The end loop runs as often
// as the begin loop did.
void perDevice(cudaStream_t *streams, cudaGraph_t *graphs, int nDev,
               int graphLaunches) {
  if (graphLaunches >= 1)
    for (int i = 0; i < nDev; i++)
      CHECK_CALL(cudaStreamBeginCapture(streams[i],
                                        cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < nDev; i++)
    launch(streams[i]);
  if (graphLaunches >= 1)
    for (int i = 0; i < nDev; i++)
      CHECK_CALL(cudaStreamEndCapture(streams[i], &graphs[i]));
  for (int i = 0; i < nDev; i++)
    cudaStreamSynchronize(streams[i]);
}

// ---------------------------------------------------------------------------
// A virtual call under capture may run any override defined here.
struct Pool {
  virtual void *alloc(unsigned long n) = 0;
  virtual ~Pool() = default;
};
struct LegacyPool : Pool {
  void *alloc(unsigned long n) override {
    cudaDeviceSynchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaDeviceSynchronize' blocks the host
    // CHECK-MESSAGES: :[[@LINE+10]]:8: note: 'LegacyPool::alloc' is called here during capture
    return nullptr;
  }
};
struct VmmPool : Pool {
  void *alloc(unsigned long n) override { return nullptr; }
};

void capturedAlloc(Pool &pool, cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  pool.alloc(16);
  pool.Pool::alloc(16);
  cudaStreamEndCapture(s, g);
}

// ---------------------------------------------------------------------------
// A checked call that always fails under capture and throws on failure:
// the code after it never runs while capturing (it is reported once fixed).
#define THROW_ON_ERROR(call)                                                   \
  do {                                                                         \
    cudaError_t r_ = (call);                                                   \
    if (r_ != cudaSuccess)                                                     \
      throw r_;                                                                \
  } while (0)

void growArena(cudaStream_t s) {
  THROW_ON_ERROR(cudaDeviceSynchronize());
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'cudaDeviceSynchronize' blocks the host
  cudaStreamSynchronize(s);
  // A check that only logs goes on under capture.
  CHECK_CALL(cudaDeviceSynchronize());
}

void capturedGrow(cudaStream_t s, cudaGraph_t *g) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  growArena(s);
  cudaStreamEndCapture(s, g);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  CHECK_CALL(cudaStreamSynchronize(s));
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: 'cudaStreamSynchronize' blocks the host
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host
  cudaStreamEndCapture(s, g);
}

// Calls through a local std::function or a function pointer reach the
// callables the variable is given in its function: its initializer and
// later assignments.
static void drainDevice() { cudaDeviceSynchronize(); }
// CHECK-MESSAGES: :[[@LINE-1]]:29: warning: 'cudaDeviceSynchronize' blocks the host
static void quietStep() {}

void callsThroughVariables(cudaStream_t s, cudaGraph_t *g, bool fast) {
  std::function<void(int)> step = [s](int n) {
    if (n > 0)
      cudaStreamSynchronize(s);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaStreamSynchronize' blocks the host
    // CHECK-MESSAGES: :[[@LINE+12]]:3: note: the lambda runs during capture
  };
  std::function<void()> finish;
  if (fast)
    finish = quietStep;
  else
    finish = [] {
      cudaDeviceSynchronize();
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaDeviceSynchronize' blocks the host
    };
  void (*hook)() = &drainDevice;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  step(1);
  finish();
  hook();
  cudaStreamEndCapture(s, g);
  step(2);
}

// A std::function holding the end of the capture ends it where it is
// called: what follows runs eagerly.
void endsThroughFunction(cudaStream_t s, cudaGraph_t *g) {
  std::function<void()> end = [s, g] { cudaStreamEndCapture(s, g); };
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  end();
  cudaStreamSynchronize(s);
}

// A capture inside a generic lambda (a type dispatch's body): each type it
// is called with instantiates its call operator, and the region is there.
template <typename F> void dispatchTypes(int type, F &&body) {
  if (type == 0)
    body(float{});
  else
    body(int{});
}

struct Recorder {
  cudaStream_t stream;
  struct Scope {
    explicit Scope(Recorder &r) : rec(r) {
      cudaStreamBeginCapture(rec.stream, cudaStreamCaptureModeGlobal);
    }
    ~Scope() { cudaStreamEndCapture(rec.stream, &graph); }
    Recorder &rec;
    cudaGraph_t graph = nullptr;
  };
  Scope scope() { return Scope{*this}; }
};

void capturedPerType(Recorder &rec, int type) {
  dispatchTypes(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (sizeof(T) == 4) {
      auto capture = rec.scope();
      cudaDeviceSynchronize();
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaDeviceSynchronize' blocks the host
    }
    cudaDeviceSynchronize();
  });
}
