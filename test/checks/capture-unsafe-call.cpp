// RUN: %check_cudagraph_tidy %s cudagraph-capture-unsafe-call %t -- -- -std=c++17 -isystem %cuda_stubs

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>

#include <functional>
#include <vector>

// Positive: each forbidden call directly in a region.
void direct(cudaStream_t s, cudaGraphExec_t old, cudaGraphExec_t other,
            CUmodule mod) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaGraphExecDestroy(old);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaGraphExecDestroy' destroys an executable graph during CUDA graph capture: the call fails with cudaErrorStreamCaptureUnsupported (900); destroy executable graphs before capture begins or after it ends (hazard: graph-exec-destroy) [cudagraph-capture-unsafe-call]
  cudaGraphLaunch(other, s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaGraphLaunch' launches another graph during CUDA graph capture
  cudaStreamAddCallback(s, nullptr, nullptr, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamAddCallback' adds a stream callback during CUDA graph capture
  cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1 << 20);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSetLimit' changes a device limit during CUDA graph capture
  cuModuleUnload(mod);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuModuleUnload' unloads a module during CUDA graph capture
  cudaStreamEndCapture(s, &g);
}

// Instantiating a graph inside another capture fails (measured: 900 in
// global and thread-local modes, end-capture 901); after the end it is the
// normal next step.
struct LazyGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  void launch(cudaStream_t s) {
    if (!exec)
      cudaGraphInstantiateWithFlags(&exec, graph, 0);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaGraphInstantiateWithFlags' instantiates a graph during CUDA graph capture: the call fails with cudaErrorStreamCaptureUnsupported (900){{.*}}instantiate after the capture ends (or before it begins) (hazard: graph-instantiate) [cudagraph-capture-unsafe-call]
  }
};
void nested(cudaStream_t s, LazyGraph &inner) {
  cudaGraph_t g;
  cudaGraphExec_t e;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  inner.launch(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:9: note: 'LazyGraph::launch' is called here during capture
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&e, g, 0);
}
void nestedRelaxed(cudaStream_t s, cudaGraph_t other) {
  cudaGraph_t g;
  cudaGraphExec_t e;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  cudaGraphInstantiate(&e, other, 0);
  cudaStreamEndCapture(s, &g);
}

// Negative: the capture-safe neighbours (measured on CUDA 13).
void hostTask(void *);
void allowed(cudaStream_t s, cudaGraph_t spare, CUmodule *mod,
             const void *image) {
  cudaGraph_t g;
  size_t limit = 0;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaLaunchHostFunc(s, hostTask, nullptr);
  cudaDeviceGetLimit(&limit, cudaLimitStackSize);
  cudaGraphDestroy(spare);
  cuModuleLoadData(mod, image);
  cudaStreamEndCapture(s, &g);
}

// Relaxed mode allows module unloading and handle creation; not destroying.
void relaxed(cudaStream_t s, CUmodule mod, cublasHandle_t old) {
  cudaGraph_t g;
  cublasHandle_t h;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  cuModuleUnload(mod);
  cublasCreate(&h);
  cublasDestroy(old);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cublasDestroy' creates or destroys a cuBLAS handle during CUDA graph capture
  cudaStreamEndCapture(s, &g);
}

// cuBLAS: a handle made inside the region fails; one made before is fine.
struct Blas {
  cublasHandle_t handle = nullptr;
  cublasHandle_t get() {
    if (!handle)
      cublasCreate(&handle);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cublasCreate' creates or destroys a cuBLAS handle during CUDA graph capture
    return handle;
  }
};

void gemm(cudaStream_t s, Blas &blas, const float *a, const float *b,
          float *c, int n) {
  float one = 1.0f, zero = 0.0f;
  cublasHandle_t h = blas.get();
  // CHECK-MESSAGES: :[[@LINE-1]]:27: note: 'Blas::get' is called here during capture
  cublasSetStream(h, s);
  cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero,
              c, n);
}

void coldBlas(cudaStream_t s, Blas &blas, const float *a, const float *b,
              float *c, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  gemm(s, blas, a, b, c, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'gemm' is called here during capture
  cudaStreamEndCapture(s, &g);
}

// A lazy handle warmed up by a call before the begin: its first-use branch
// (a field tested, then written through `&handle`) has run.
struct WarmedBlas {
  cublasHandle_t handle = nullptr;
  void scale(cudaStream_t s, float *x, int n) {
    if (handle == nullptr)
      cublasCreate(&handle);
    float one = 1.0f, zero = 0.0f;
    cublasSetStream(handle, s);
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, x, n, x, n,
                &zero, x, n);
  }
};

void warmBlas(cudaStream_t s, WarmedBlas &blas, float *x, int n) {
  cudaGraph_t g;
  blas.scale(s, x, n);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  blas.scale(s, x, n);
  cudaStreamEndCapture(s, &g);
}

// The warm-up of a step runs what the step calls too: the helper's lazy
// handle exists by the time the capture calls it again.
struct LazyBlas {
  cublasHandle_t handle = nullptr;
  void ensure() {
    if (handle == nullptr)
      cublasCreate(&handle);
  }
};
struct Stepper {
  LazyBlas blas;
  void step(cudaStream_t s) {
    blas.ensure();
    cublasSetStream(blas.handle, s);
  }
};
void warmStepper(cudaStream_t s, Stepper &st) {
  cudaGraph_t g;
  st.step(s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  st.step(s);
  cudaStreamEndCapture(s, &g);
}

// Work kept in a std::function or a vector of them during the capture and
// run after it ends is not captured.
void deferredWork(cudaStream_t s, float *d, int n) {
  cudaGraph_t g;
  std::function<void()> after;
  std::vector<std::function<void()>> cleanups;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  after = [&] { cudaDeviceSetLimit(cudaLimitStackSize, 4096); };
  cleanups.push_back([&] { cudaStreamAddCallback(s, nullptr, nullptr, 0); });
  std::function<void()> later = [=] { cudaDeviceSetLimit(cudaLimitStackSize, 2048); };
  cudaStreamEndCapture(s, &g);
  after();
  later();
  for (auto &f : cleanups)
    f();
}

// Thrust: the default allocator, the synchronous `par` policy and host
// results fail; `par_nosync` with an allocator over memory reserved before
// capture does not.
struct Reserved {
  typedef char value_type;
  char *allocate(size_t n);
  void deallocate(char *p, size_t n);
};

template <typename T>
void sortKeys(cudaStream_t s, T *keys, int n) {
  thrust::sort(thrust::cuda::par.on(s), keys, keys + n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'sort' runs a Thrust algorithm that allocates temporary storage or waits on the stream during CUDA graph capture
}

void thrustWork(cudaStream_t s, float *d, int *keys, int n, Reserved &pool) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  sortKeys(s, keys, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'sortKeys' is called here during capture
  thrust::sort(thrust::cuda::par_nosync(pool).on(s), d, d + n);
  thrust::sort(thrust::cuda::par(pool).on(s), d, d + n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'sort' runs a Thrust algorithm that allocates temporary storage or waits on the stream during CUDA graph capture
  thrust::sort(thrust::cuda::par_nosync.on(s), d, d + n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'sort' runs a Thrust algorithm that allocates temporary storage or waits on the stream
  float total = thrust::reduce(thrust::cuda::par_nosync(pool).on(s), d, d + n);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: 'reduce' runs a Thrust algorithm that returns its result to the host during CUDA graph capture
  (void)total;
  cudaStreamEndCapture(s, &g);
}

// Outside any region nothing is reported.
void setup(cudaGraphExec_t old, CUmodule mod) {
  cudaGraphExecDestroy(old);
  cudaDeviceSetLimit(cudaLimitStackSize, 4096);
  cuModuleUnload(mod);
}

// A flag the capturing method sets after the end still holds its other
// value while the capture is open: the captured Enqueue runs the work, not
// the graph. A flag also written during the capture is not known.
class SubNet {
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  bool useGraph_ = false;
  bool replaying_ = false;
  void work(cudaStream_t s);
  bool ready(cudaStream_t s);

public:
  void enqueue(cudaStream_t s) {
    if (useGraph_)
      cudaGraphLaunch(exec_, s);
    else
      work(s);
  }
  void replay(cudaStream_t s) {
    if (replaying_)
      cudaGraphLaunch(exec_, s);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaGraphLaunch' launches another graph during CUDA graph capture
    else
      work(s);
  }
  void enableGraph(cudaStream_t s) {
    enqueue(s);
    cudaStreamSynchronize(s);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    enqueue(s);
    cudaStreamEndCapture(s, &graph_);
    useGraph_ = true;
    cudaGraphInstantiate(&exec_, graph_, 0);
  }
  void recapture(cudaStream_t s) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    replaying_ = ready(s);
    replay(s);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: 'SubNet::replay' is called here during capture
    cudaStreamEndCapture(s, &graph_);
    replaying_ = true;
  }
};

// The way a branch takes tells what a local flag holds: the capture left
// open by `!ok` reaches the inner `if (ok)` only with ok false, so the reset
// there runs after the failed end, which ended the capture.
bool runStage(int i);
static void dropExec(cudaGraphExec_t *exec) {
  if (*exec)
    cudaGraphExecDestroy(*exec);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaGraphExecDestroy' destroys an executable graph during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+35]]:7: note: 'dropExec' is called here during capture
  *exec = nullptr;
}
bool captureStagesResetOnFailedEnd(cudaStream_t s, cudaGraphExec_t *exec,
                                   int stages) {
  cudaGraph_t g;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
    return false;
  bool ok = true;
  for (int i = 0; i < stages; ++i)
    if (!runStage(i)) {
      ok = false;
      break;
    }
  if (!ok || cudaStreamEndCapture(s, &g) != cudaSuccess) {
    if (ok)
      cudaGraphExecDestroy(*exec);
    return false;
  }
  return true;
}
// Positive: the reset on the failed stage runs with the capture open.
bool captureStagesResetOnFailedStage(cudaStream_t s, cudaGraphExec_t *exec,
                                     int stages) {
  cudaGraph_t g;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
    return false;
  bool ok = true;
  for (int i = 0; i < stages; ++i)
    if (!runStage(i)) {
      ok = false;
      break;
    }
  if (!ok || cudaStreamEndCapture(s, &g) != cudaSuccess) {
    if (!ok)
      dropExec(exec);
    return false;
  }
  return true;
}

// A handle kept in a static local, made on the first call that finds it
// unset. The functor's constructor asks for it, and the caller constructs
// the functor before the function that captures runs: the capture finds the
// handle made.
cublasHandle_t sharedBlasHandle() {
  static cublasHandle_t handle;
  if (!handle)
    cublasCreate(&handle);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cublasCreate' creates or destroys a cuBLAS handle during CUDA graph capture
  return handle;
}
cublasHandle_t groupedBlasHandle() {
  static cublasHandle_t handle = nullptr;
  if (handle == nullptr) {
    cublasStatus_t status = cublasCreate(&handle);
    (void)status;
  }
  return handle;
}
struct GroupedGemm {
  GroupedGemm() { groupedBlasHandle(); }
  void operator()(cudaStream_t s) const {
    cublasSetStream(groupedBlasHandle(), s);
  }
};
template <typename Gemm> void captureGrouped(Gemm &&gemm, cudaStream_t s) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  gemm(s);
  cudaStreamEndCapture(s, &g);
}
void groupedGemmWarm(cudaStream_t s) { captureGrouped(GroupedGemm(), s); }
// Positive: nothing asks for the handle before this capture.
void sharedHandleCold(cudaStream_t s) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cublasSetStream(sharedBlasHandle(), s);
  // CHECK-MESSAGES: :[[@LINE-1]]:19: note: 'sharedBlasHandle' is called here during capture
  cudaStreamEndCapture(s, &g);
}
