// RUN: %check_cudagraph_tidy %s cudagraph-device-alloc %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAGraph.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <torch/torch.h>
#include <map>
#include <memory>
#include <string>
#include <vector>

// Positive: the runtime and driver allocation APIs inside a region.
void raw(cudaStream_t s, float *old, size_t n) {
  cudaGraph_t g;
  float *scratch = nullptr;
  void *pitched = nullptr;
  size_t pitch = 0;
  CUdeviceptr dptr = 0;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMalloc(&scratch, n * sizeof(float));
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture: the call fails with cudaErrorStreamCaptureUnsupported (900) in global and thread-local modes
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here (global mode)
  cudaMallocManaged(&scratch, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMallocManaged' allocates or frees device memory
  cudaMallocPitch(&pitched, &pitch, 256, 16);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMallocPitch' allocates or frees device memory
  cuMemAlloc(&dptr, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuMemAlloc' allocates or frees device memory
  cuMemFree(dptr);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuMemFree' allocates or frees device memory
  cudaFree(old);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaFree' allocates or frees device memory{{.*}}use cudaMallocAsync/cudaFreeAsync on the capturing stream{{.*}}(hazard: device-malloc)
  cudaStreamEndCapture(s, &g);
  cudaFree(scratch); // after capture: fine
}

// Negative: stream-ordered allocation is captured as graph memory nodes, and
// pinned host allocation belongs to another check.
void streamOrdered(cudaStream_t s, size_t n) {
  cudaGraph_t g;
  float *scratch = nullptr;
  CUdeviceptr dptr = 0;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMallocAsync(&scratch, n * sizeof(float), s);
  cudaFreeAsync(scratch, s);
  cuMemAllocAsync(&dptr, n, reinterpret_cast<CUstream>(s));
  cuMemFreeAsync(dptr, reinterpret_cast<CUstream>(s));
  float *host = nullptr;
  cudaMallocHost(&host, n);
  cudaStreamEndCapture(s, &g);
}

// Stream-ordered allocation on the legacy stream is not recorded: the capture
// prohibits it (measured: 900 in global and thread-local modes, also for
// another non-capturing stream and for trimming a pool). A stream parameter
// may have joined the capture through an event: of the named streams, only
// those the unit creates and never joins (below) are known to be outside it.
void streamOrderedElsewhere(cudaStream_t s, cudaStream_t side, cudaMemPool_t pool,
                            size_t n) {
  cudaGraph_t g;
  void *scratch = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  cudaMallocAsync(&scratch, n, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMallocAsync' allocates or frees stream-ordered memory outside the capturing stream during CUDA graph capture: the call fails with cudaErrorStreamCaptureUnsupported (900){{.*}}pass the capturing stream{{.*}}(hazard: uncaptured-stream-alloc) [cudagraph-device-alloc]
  cudaFreeAsync(scratch, cudaStreamLegacy);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaFreeAsync' allocates or frees stream-ordered memory outside the capturing stream{{.*}}(hazard: uncaptured-stream-alloc)
  cudaMallocFromPoolAsync(&scratch, n, pool, s);
  cudaFreeAsync(scratch, side);
  cudaMemPoolTrimTo(pool, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemPoolTrimTo' allocates or frees device memory{{.*}}(hazard: device-malloc)
  cudaStreamEndCapture(s, &g);
  cudaFreeAsync(scratch, 0);
}

// A stream the unit creates for its own work and never joins to a capture
// is outside it as surely as the legacy stream (measured: 900 on another
// non-capturing stream too).
struct ScratchPool {
  cudaStream_t alloc_;
  cudaStream_t shared_;
  ScratchPool() {
    cudaStreamCreateWithFlags(&alloc_, cudaStreamNonBlocking);
    cudaStreamCreate(&shared_);
  }
  void *take(size_t n) {
    void *p = nullptr;
    cudaMallocAsync(&p, n, alloc_);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaMallocAsync' allocates or frees stream-ordered memory outside the capturing stream{{.*}}(hazard: uncaptured-stream-alloc)
    // CHECK-MESSAGES: :[[@LINE+22]]:21: note: 'ScratchPool::take' is called here during capture
    return p;
  }
  void *takeShared(size_t n) {
    void *p = nullptr;
    cudaMallocAsync(&p, n, shared_);
    return p;
  }
  // shared_ joins whatever stream hands it work: it may be in a capture.
  void follow(cudaStream_t s, cudaEvent_t e) {
    cudaEventRecord(e, s);
    cudaStreamWaitEvent(shared_, e, 0);
  }
};
void allocOnOwnStream(cudaStream_t s, ScratchPool &pool, size_t n) {
  cudaStream_t side;
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  cudaGraph_t g;
  void *scratch = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMallocAsync(&scratch, n, side);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMallocAsync' allocates or frees stream-ordered memory outside the capturing stream during CUDA graph capture{{.*}}(hazard: uncaptured-stream-alloc) [cudagraph-device-alloc]
  void *more = pool.take(n);
  void *shared = pool.takeShared(n);
  cudaFreeAsync(scratch, s);
  cudaStreamEndCapture(s, &g);
}

// Not reported: a created stream the region joins to the capture through an
// event before allocating on it.
void allocOnJoinedStream(cudaStream_t s, cudaEvent_t fork, cudaEvent_t join,
                         size_t n) {
  cudaStream_t side;
  cudaStreamCreate(&side);
  cudaGraph_t g;
  void *scratch = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  cudaMallocAsync(&scratch, n, side);
  cudaFreeAsync(scratch, side);
  cudaEventRecord(join, side);
  cudaStreamWaitEvent(s, join, 0);
  cudaStreamEndCapture(s, &g);
}

// Relaxed mode allows them (measured).
void streamOrderedRelaxed(cudaStream_t s, cudaMemPool_t pool, size_t n) {
  cudaGraph_t g;
  void *scratch = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  cudaMallocAsync(&scratch, n, 0);
  cudaMemPoolTrimTo(pool, 0);
  cudaStreamEndCapture(s, &g);
}

// Relaxed mode allows cudaMalloc, cudaMallocManaged, cudaMallocPitch and
// cudaFree (measured); the forms not measured there are still reported.
void relaxed(cudaStream_t s, float *old, size_t n) {
  cudaGraph_t g;
  float *scratch = nullptr;
  void *pitched = nullptr;
  size_t pitch = 0;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  cudaMalloc(&scratch, n);
  cudaMallocManaged(&scratch, n);
  cudaFree(old);
  cudaMallocPitch(&pitched, &pitch, 256, 16);
  cuMemAlloc((CUdeviceptr *)&pitched, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuMemAlloc' allocates or frees device memory
  // CHECK-MESSAGES: :[[@LINE-7]]:3: note: CUDA graph capture begins here (relaxed mode)
  cudaStreamEndCapture(s, &g);
}

// Positive through reach: a project allocator called while capturing; the
// call in the region leads to the allocation.
struct Pool {
  float *grow(size_t n) {
    float *p = nullptr;
    cudaMalloc(&p, n);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaMalloc' allocates or frees device memory
    return p;
  }
};

void viaPool(cudaStream_t s, Pool &pool, size_t n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  float *p = pool.grow(n);
  // CHECK-MESSAGES: :[[@LINE-1]]:19: note: 'Pool::grow' is called here during capture
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here (thread-local mode)
  (void)p;
  cudaStreamEndCapture(s, &g);
}

// Negative: libtorch's caching allocator serves tensors created during
// capture from the graph's private pool.
void torchAlloc(at::cuda::CUDAGraph &graph, const torch::Tensor &x) {
  graph.capture_begin();
  auto y = torch::empty_like(x);
  auto z = at::empty({4}, x.options());
  graph.capture_end();
}

// A project allocator that picks the allocation API by a memory-kind
// argument: a constant argument decides the switch, so only the arm it
// selects runs under capture.
enum class Space { Managed, Device, Stream, Pinned };

struct Arena {
  void *take(size_t bytes, Space space, cudaStream_t s) {
    void *p = nullptr;
    if (space == Space::Managed && !managedOk)
      space = Space::Pinned;
    switch (space) {
    case Space::Managed:
      cudaMallocManaged(&p, bytes);
      break;
    case Space::Device:
      cudaMalloc(&p, bytes);
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaMalloc' allocates or frees device memory
      break;
    case Space::Stream:
      cudaMallocAsync(&p, bytes, s);
      break;
    case Space::Pinned:
      cudaMallocHost(&p, bytes);
      break;
    }
    return p;
  }
  // The kind is passed on: the constant travels with it.
  void *scratch(size_t bytes, Space space, cudaStream_t s) {
    return take(bytes * 2, space, s);
  }
  // The kind comes from a table at run time: which arm runs is unknown, and
  // one arm releases on the stream, so the code chooses per allocation.
  void give(void *p, cudaStream_t s) {
    switch (kinds[reinterpret_cast<unsigned long>(p) & 3]) {
    case Space::Managed:
    case Space::Device:
      cudaFree(p);
      break;
    case Space::Stream:
      cudaFreeAsync(p, s);
      break;
    default:
      break;
    }
  }
  bool managedOk = true;
  Space kinds[4];
};

void arenaStreamOrdered(cudaStream_t s, Arena &arena, size_t n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  void *a = arena.take(n, Space::Stream, s);
  void *b = arena.scratch(n, Space::Stream, s);
  arena.give(a, s);
  arena.give(b, s);
  cudaStreamEndCapture(s, &g);
}

void arenaDevice(cudaStream_t s, Arena &arena, size_t n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  void *a = arena.scratch(n, Space::Device, s);
  // CHECK-MESSAGES: :[[@LINE-1]]:19: note: 'Arena::scratch' is called here during capture
  (void)a;
  cudaStreamEndCapture(s, &g);
}

// A runtime choice with no capture-safe arm is still a finding.
void growIfNeeded(void **p, size_t have, size_t want) {
  if (want > have) {
    cudaFree(*p);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaFree' allocates or frees device memory
    cudaMalloc(p, want);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaMalloc' allocates or frees device memory
  }
}

void growing(cudaStream_t s, void **p, size_t have, size_t want) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  growIfNeeded(p, have, want);
  cudaStreamEndCapture(s, &g);
}

// A project's registry of open captures: the begin wrapper adds to it, the
// end wrapper removes from it, and frees wait while it is not empty.
static std::map<unsigned long long, cudaStream_t> OpenCaptures;
static int CaptureDepth = 0;
static std::vector<cudaGraph_t> KeptGraphs; // only grows: not a registry

bool beginTracked(cudaStream_t s) {
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
    return false;
  unsigned long long id = 0;
  cudaStreamGetCaptureInfo(s, nullptr, &id);
  OpenCaptures[id] = s;
  ++CaptureDepth;
  return true;
}

void endTracked(cudaStream_t s, unsigned long long id) {
  cudaGraph_t g;
  cudaStreamEndCapture(s, &g);
  KeptGraphs.push_back(g);
  OpenCaptures.erase(id);
  --CaptureDepth;
}

void releaseLater(void *p);

void releaseTracked(void *p) {
  if (OpenCaptures.empty())
    cudaFree(p);
  else
    releaseLater(p);
}

void releaseCounted(void *p) {
  if (CaptureDepth > 0) {
    releaseLater(p);
    return;
  }
  cudaFree(p);
}

void releaseKept(void *p) {
  if (KeptGraphs.empty())
    cudaFree(p);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaFree' allocates or frees device memory
}

void releaseMany(void *p) {
  if (OpenCaptures.size() > 2)
    cudaFree(p);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaFree' allocates or frees device memory
}

void tracked(cudaStream_t s, void *p, unsigned long long id) {
  if (!beginTracked(s))
    return;
  releaseTracked(p);
  releaseCounted(p);
  releaseKept(p);
  releaseMany(p);
  endTracked(s, id);
}

// An object made the same way before the begin warms up its constructor:
// the lazily made pool exists when the capture makes the next one.
static void *WarmPool = nullptr;
struct WarmBuf {
  void *p;
  explicit WarmBuf(int n) {
    if (!WarmPool)
      cudaMalloc(&WarmPool, 1 << 20);
    p = WarmPool;
  }
};
void warmConstruction(cudaStream_t s) {
  cudaGraph_t g;
  WarmBuf warm(4);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  WarmBuf b(4);
  cudaStreamEndCapture(s, &g);
}
static void *ColdPool = nullptr;
struct ColdBuf {
  void *p;
  explicit ColdBuf(int n) {
    if (!ColdPool)
      cudaMalloc(&ColdPool, 1 << 20);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture
    p = ColdPool;
  }
};
void coldConstruction(cudaStream_t s) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  ColdBuf b(4);
  cudaStreamEndCapture(s, &g);
}

// A caching pool warmed up by a pass of the same work before the begin: its
// misses (a new block after a failed lookup, a free past the cache's limit,
// a trim when the cache grows) ran in the warm-up; the captured pass is
// served from the cache.
class BlockPool {
public:
  void *take(size_t n) {
    void *p = fromCache(n);
    if (p)
      return p;
    return fresh(n);
  }
  void give(void *p, size_t n) {
    if (keep(n))
      free_[n].push_back(p);
    else
      cudaFree(p);
    sweep();
  }
  void *named(int tag, size_t n) {
    auto it = named_.find(tag);
    if (it != named_.end()) {
      if (it->second.second >= n)
        return it->second.first;
      cudaFree(it->second.first);
      named_.erase(it);
    }
    void *p = fresh(n);
    named_[tag] = {p, n};
    return p;
  }

private:
  void *fromCache(size_t n) {
    auto it = free_.find(n);
    if (it == free_.end() || it->second.empty())
      return nullptr;
    void *p = it->second.back();
    it->second.pop_back();
    return p;
  }
  bool keep(size_t n) { return free_[n].size() < 4; }
  void *fresh(size_t n) {
    void *p = nullptr;
    cudaMalloc(&p, n);
    return p;
  }
  void sweep() {
    size_t cached = 0;
    for (auto &[size, blocks] : free_)
      cached += blocks.size();
    if (cached > 64)
      trim();
  }
  void trim() {
    for (auto &[size, blocks] : free_)
      for (void *p : blocks)
        cudaFree(p);
    free_.clear();
  }
  std::map<size_t, std::vector<void *>> free_;
  std::map<int, std::pair<void *, size_t>> named_;
};
BlockPool &blockPool() {
  static BlockPool P;
  return P;
}
struct PoolBuffer {
  explicit PoolBuffer(size_t n)
      : p(blockPool().take(n)),
        owner(p, [n](void *q) { blockPool().give(q, n); }) {}
  void *p;
  std::shared_ptr<void> owner;
};
void consume(void *a, void *b, cudaStream_t s);
void poolStep(cudaStream_t s) {
  PoolBuffer a(256), b(1024);
  consume(a.p, blockPool().named(7, 512), s);
}
void warmedPool(cudaStream_t s) {
  cudaGraph_t g;
  poolStep(s);
  cudaStreamSynchronize(s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  poolStep(s);
  cudaStreamEndCapture(s, &g);
}

// A branch on configuration runs the same way on every call: a warm-up does
// not make its allocation cold.
class ConfigBuffer {
public:
  void *get(size_t n) {
    if (onDevice_) {
      void *p = nullptr;
      cudaMalloc(&p, n);
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture
      return p;
    }
    return host_.data();
  }

private:
  bool onDevice_ = true;
  std::vector<char> host_;
};
void warmedConfig(cudaStream_t s, ConfigBuffer &c) {
  cudaGraph_t g;
  c.get(64);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  consume(c.get(64), nullptr, s);
  cudaStreamEndCapture(s, &g);
}

// A string argument decides a branch: the default empty tag never takes the
// tagged way.
struct TaggedArena {
  void *get(size_t n, const std::string &tag = "") {
    if (!tag.empty()) {
      void *p = nullptr;
      cudaMalloc(&p, n);
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture
      // CHECK-MESSAGES: :[[@LINE+13]]:13: note: 'TaggedArena::get' is called here during capture
      return p;
    }
    return base + n;
  }
  char *base = nullptr;
};
void taggedArena(cudaStream_t s, TaggedArena &a) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  consume(a.get(64), a.get(32, std::string()), s);
  cudaStreamEndCapture(s, &g);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  consume(a.get(64, "kv"), nullptr, s);
  cudaStreamEndCapture(s, &g);
}

// Objects of a buffer class made and destroyed by the standard library
// under capture: std::make_unique constructs one, clear() and reset()
// destroy one. An assignment to a std::unique_ptr is not taken for a
// destruction (`if (!p) p = std::make_unique<T>(n);` replaces nothing).
template <typename T> struct DeviceArray {
  T *data_ = nullptr;
  explicit DeviceArray(size_t n) { cudaMalloc(&data_, n * sizeof(T)); }
  // CHECK-MESSAGES: :[[@LINE-1]]:36: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+22]]:12: note: 'make_unique' constructs a 'DeviceArray' here during capture
  ~DeviceArray() { cudaFree(data_); }
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: 'cudaFree' allocates or frees device memory during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+18]]:11: note: 'clear' destroys a 'DeviceArray' here during capture, which runs its destructor
  // CHECK-MESSAGES: :[[@LINE+19]]:14: note: 'reset' also destroys a 'DeviceArray' here during capture
  T *data() { return data_; }
};
struct ResidualSum {
  cudaStream_t s_;
  cudaGraph_t graph_;
  std::unique_ptr<DeviceArray<float>> mid_;
  std::unique_ptr<DeviceArray<float>> scratch_;
  std::vector<std::unique_ptr<DeviceArray<float>>> down_;
  std::vector<float> host_;
  // Negative: made before the capture, and a container of plain values.
  void prepare() {
    mid_ = std::make_unique<DeviceArray<float>>(64);
    down_.clear();
  }
  void sum() {
    host_.clear();
    down_.clear();
    mid_ = std::make_unique<DeviceArray<float>>(64);
    scratch_.reset();
  }
  void capture() {
    prepare();
    cudaStreamBeginCapture(s_, cudaStreamCaptureModeThreadLocal);
    sum();
    cudaStreamEndCapture(s_, &graph_);
  }
};

// A begin wrapper that forwards its mode parameter (a shim over the runtime,
// as cudnn-frontend's cuda_graph_begin_capture): the capture's mode is the
// one each call passes.
static cudaError_t begin_capture(cudaStream_t stream,
                                 cudaStreamCaptureMode mode) {
  return cudaStreamBeginCapture(stream, mode);
}
// Negative: relaxed mode allows cudaMalloc.
void warmupRelaxed(cudaStream_t s, void **scratch) {
  if (begin_capture(s, cudaStreamCaptureModeRelaxed) != cudaSuccess)
    return;
  cudaMalloc(scratch, 1 << 20);
  cudaGraph_t g;
  cudaStreamEndCapture(s, &g);
}
// Positive: the same wrapper in thread-local mode.
void warmupThreadLocal(cudaStream_t s, void **scratch) {
  if (begin_capture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
    return;
  cudaMalloc(scratch, 1 << 20);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture
  cudaGraph_t g;
  cudaStreamEndCapture(s, &g);
}

// A grow-on-demand buffer behind out-parameters (a C decoder's workspace):
// `ensure_buffer(&g_ws, &g_ws_cap, n)` frees and allocates only when the
// capacity it is handed is short. A preparation step called before the
// capture function sizes the global for the largest shape, so the captured
// GEMM's call returns early.
static void *g_ws = nullptr;
static size_t g_ws_cap = 0;
static int ensure_buffer(void **buf, size_t *cap, size_t needed) {
  if (*cap >= needed)
    return 1;
  if (*buf)
    cudaFree(*buf);
  *buf = nullptr;
  *cap = 0;
  if (cudaMalloc(buf, needed) != cudaSuccess)
    return 0;
  *cap = needed;
  return 1;
}
static int ensure_workspace(size_t needed) {
  if (needed == 0)
    return 1;
  return ensure_buffer(&g_ws, &g_ws_cap, needed);
}
static size_t workspace_for(int m) { return size_t(m) << 12; }
static void gemm(cudaStream_t s, int m) {
  if (ensure_workspace(workspace_for(m)))
    cudaMemsetAsync(g_ws, 0, workspace_for(m), s);
}
static int decoder_prepare() {
  return ensure_workspace(workspace_for(64));
}
static void decoder_capture(cudaStream_t s, cudaGraph_t *g) {
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
    return;
  gemm(s, 64);
  cudaStreamEndCapture(s, g);
}
// Negative: the preparation ran before the capture.
void decoderStep(cudaStream_t s, cudaGraph_t *g) {
  if (!decoder_prepare())
    return;
  decoder_capture(s, g);
}

// Positive: a helper of the same kind, by reference, handed fresh locals:
// it allocates on every call, the captured one included.
static int grow(void *&buf, size_t &cap, size_t needed) {
  if (cap >= needed)
    return 1;
  cudaMalloc(&buf, needed);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture
  cap = needed;
  return 1;
}
static void scratch_gemm(cudaStream_t s, int m) {
  void *scratch = nullptr;
  size_t cap = 0;
  if (grow(scratch, cap, workspace_for(m)))
    cudaMemsetAsync(scratch, 0, workspace_for(m), s);
}
void scratchStep(cudaStream_t s, cudaGraph_t *g) {
  scratch_gemm(s, 64);
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
    return;
  scratch_gemm(s, 64);
  cudaStreamEndCapture(s, g);
}
