// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAStream.h>
#include <cub/device/device_segmented_sort.cuh>
#include <cuda.h>
#include <cuda_runtime.h>
#include <iostream>
#include <torch/cuda.h>
#include <torch/torch.h>

// ---------------------------------------------------------------------------
// Positive: raw CUDA between begin and end.
void rawCapture(cudaStream_t s, float *dev, float *host) {
  cudaGraph_t graph;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host until all work on the device finishes during CUDA graph capture: the call fails with cudaErrorStreamCaptureUnsupported (900)
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains
  cudaMemcpy(host, dev, 16, cudaMemcpyDeviceToHost);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemcpy' copies synchronously on the legacy default stream during CUDA graph capture: with a non-blocking capture stream the copy runs eagerly
  cudaMemset(dev, 0, 16);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemset' sets memory synchronously
  cudaMemcpyAsync(host, dev, 16, cudaMemcpyDeviceToHost, s);
  cudaMemsetAsync(dev, 0, 16, s);
  // A C struct named like the copy APIs: its construction calls nothing.
  cudaMemcpyAttributes attrs = {};
  cudaMemcpyAttributes copied(attrs);
  cudaStreamEndCapture(s, &graph);
  cudaDeviceSynchronize();
}

void driverCapture(CUstream s, CUevent e) {
  CUgraph graph;
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  cuCtxSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuCtxSynchronize' blocks the host
  cuStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuStreamSynchronize' blocks the host
  cuEventSynchronize(e);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cuEventSynchronize' blocks the host
  cuStreamEndCapture(s, &graph);
}

// Positive: libtorch, graph as object, reference, pointer and member.
void torchObject(at::Tensor t, at::cuda::CUDAEvent &ev) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  float f = t.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'Tensor::item' copies a device value to the host and waits for it during CUDA graph capture: libtorch throws c10::Error "CUDA error: operation not permitted when stream is capturing"
  auto s = t.sum().item();
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: 'Tensor::item' copies a device value
  auto host = t.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: 'Tensor::cpu' copies a tensor to the host
  // Elements of the host copy are read on the host: no further wait.
  double corner = host[0][1].item<double>();
  auto h2 = t.to(torch::kCPU);
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'Tensor::to' copies a tensor to the host
  auto h3 = t.to(at::Device("cpu"));
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'Tensor::to' copies a tensor to the host
  auto idx = t.nonzero();
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: 'Tensor::nonzero' waits for the device to learn the size of its result
  auto idx2 = at::nonzero(t);
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'nonzero' waits for the device
  auto sel = t.masked_select(t > 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: 'Tensor::masked_select' waits for the device
  auto uq = at::unique_consecutive(t);
  // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: 'unique_consecutive' waits for the device
  bool nz = t.is_nonzero();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'Tensor::is_nonzero' reads a device result on the host
  bool eq = t.equal(t);
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 'Tensor::equal' reads a device result
  bool close = at::allclose(t, t);
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: 'allclose' reads a device result
  std::cout << t;
  // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: 'operator<<' on a tensor copies the tensor to the host to print it
  torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'synchronize' blocks the host until the device finishes
  c10::cuda::device_synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'device_synchronize' blocks the host
  c10::cuda::getCurrentCUDAStream().synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:37: warning: 'CUDAStream::synchronize' blocks the host until the stream drains
  ev.synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:6: warning: 'CUDAEvent::synchronize' blocks the host until the event completes
  auto staging = torch::empty({16}, torch::kFloat);
  staging.copy_(t);
  // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: 'Tensor::copy_' copies a tensor to the host and waits for it
  auto hostCopy = t.cpu();
  hostCopy.copy_(t, /*non_blocking=*/false);
  // CHECK-MESSAGES: :[[@LINE-2]]:21: warning: 'Tensor::cpu' copies a tensor to the host
  // CHECK-MESSAGES: :[[@LINE-2]]:12: warning: 'Tensor::copy_' copies a tensor to the host and waits for it
  auto uploaded = staging.to(torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: 'Tensor::to' copies a host tensor to the device and waits for the copy during CUDA graph capture: libtorch throws c10::Error "Cannot copy between CPU and CUDA tensors
  t.copy_(staging);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'Tensor::copy_' copies a host tensor to the device
  // A pageable source fails even with non_blocking=true (measured).
  auto pageableAsync = staging.to(torch::kCUDA, /*non_blocking=*/true);
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: 'Tensor::to' copies a host tensor to the device
  auto literal = torch::tensor({1.f, 2.f}, torch::TensorOptions().device(torch::kCUDA));
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'tensor' copies a host tensor to the device
  float hostValues[16] = {};
  auto blob = torch::from_blob(hostValues, {16}).to(torch::kCUDA, true);
  // CHECK-MESSAGES: :[[@LINE-1]]:50: warning: 'Tensor::to' copies a host tensor to the device
  auto cpuLiteral = torch::tensor({1.f, 2.f});
  // Selections whose size is the true count of a boolean mask.
  auto byMask = t.index({t > 0});
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: 'Tensor::index' waits for the device to learn the size of its result (the mask's true count) during CUDA graph capture
  auto keep = t.gt(0).logical_and(t.lt(5));
  auto kept = t.index({keep});
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: 'Tensor::index' waits for the device
  auto flags = torch::zeros({4, 4}, torch::TensorOptions().dtype(torch::kBool));
  auto flagged = t.index({torch::indexing::Slice(), flags.view({16})});
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: 'Tensor::index' waits for the device
  auto positions = at::where(t.ne(0));
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: 'where' waits for the device
  // A copy to the device and type of a host tensor is a download.
  auto likeHost = t.to(cpuLiteral);
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: 'Tensor::to' copies a tensor to the host and waits for it
  // Capture-safe: non-blocking copies from pinned memory, nonzero_static,
  // device work.
  auto pinnedStaging = torch::empty(
      {16}, torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
  auto uploadedAsync = pinnedStaging.to(torch::kCUDA, /*non_blocking=*/true);
  t.copy_(pinnedStaging, /*non_blocking=*/true);
  auto pinnedCopy = staging.pin_memory();
  t.copy_(pinnedCopy, /*non_blocking=*/true);
  staging.copy_(t, /*non_blocking=*/true);
  auto onGpu = torch::empty({16}, t.options());
  onGpu.copy_(t);
  auto onGpu2 = torch::empty({16}, torch::TensorOptions().device(torch::kCUDA));
  onGpu2.copy_(t);
  auto pinned = t.to(torch::kCPU, /*non_blocking=*/true);
  auto fixed = at::nonzero_static(t, 16);
  auto fixed2 = t.nonzero_static(16);
  auto y = t.relu().add(1);
  auto onDevice = t.to(torch::kCUDA);
  // Integer indices, slices and three-argument where keep a fixed shape;
  // to(device tensor) stays on the device.
  auto rows = torch::arange(4, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  auto gathered = t.index({rows});
  auto head = t.index({torch::indexing::Slice(0, 8)});
  auto clipped = at::where(t > 0, t, t * 0.5);
  auto likeDevice = t.to(onGpu);
  auto cpuMask = cpuLiteral > 0;
  auto hostPicked = cpuLiteral.index({cpuMask});
  graph.capture_end();
  (void)f; (void)s; (void)nz; (void)eq; (void)close;
}

// Fields whose every stored value is a host (or pinned host) tensor.
struct Staging {
  at::Tensor counts_, pinned_, device_;
  explicit Staging(const at::Tensor &dev)
      : device_(torch::empty({16}, dev.options())) {
    counts_ = torch::zeros({16}, torch::kLong);
    pinned_ = counts_.pin_memory();
  }
  void step(at::cuda::CUDAGraph &graph, const at::Tensor &t) {
    graph.capture_begin();
    auto down = t.to(counts_);
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: 'Tensor::to' copies a tensor to the host and waits for it
    auto up = counts_.to(torch::kCUDA, /*non_blocking=*/true);
    // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: 'Tensor::to' copies a host tensor to the device
    auto weights = torch::tensor({1.0f, 0.5f}, t.options());
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: 'tensor' copies a host tensor to the device
    auto upPinned = pinned_.to(torch::kCUDA, /*non_blocking=*/true);
    auto same = t.to(device_);
    auto hostWeights = torch::tensor({1.0f, 0.5f}, counts_.options());
    graph.capture_end();
  }
};

void torchReference(at::cuda::CUDAGraph &graph, at::Tensor t) {
  graph.capture_begin();
  t.item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'Tensor::item' copies a device value
  graph.capture_end();
}

void torchPointer(at::cuda::CUDAGraph *graph, at::Tensor t) {
  graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
  t.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'Tensor::item' copies a device value
  graph->capture_end();
}

struct Runner {
  at::cuda::CUDAGraph graph_;
  at::Tensor out_;
  void capture() {
    graph_.capture_begin();
    out_.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: 'Tensor::cpu' copies a tensor to the host
    graph_.capture_end();
    out_.cpu(); // after capture: fine
  }
};

// ---------------------------------------------------------------------------
// Negative: outside regions, before begin and after end, helpers only called
// outside capture.
void warmup(at::Tensor t) {
  t.item<float>();
  cudaDeviceSynchronize();
}

void notCaptured(at::cuda::CUDAGraph &graph, at::Tensor t) {
  warmup(t);
  t.cpu();
  graph.capture_begin();
  t.add_(1);
  graph.capture_end();
  t.cpu();
  warmup(t);
}

// ---------------------------------------------------------------------------
// Control flow: conditional begin, loops, early returns.
void conditional(at::cuda::CUDAGraph &graph, at::Tensor t, bool useGraph) {
  if (useGraph)
    graph.capture_begin();
  t.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'Tensor::item' copies a device value
  if (useGraph)
    graph.capture_end();
}

struct Options {
  bool use_graph = true;
};

// The end is conditional on the same flag as the begin: after it, no path
// is capturing.
void correlated(at::cuda::CUDAGraph &graph, cudaStream_t s, const Options &o,
                bool graphs) {
  if (o.use_graph)
    graph.capture_begin();
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host
  if (o.use_graph) {
    graph.capture_end();
  }
  cudaStreamSynchronize(s);
  if (graphs)
    graph.capture_begin();
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host
  if (!graphs)
    return;
  graph.capture_end();
  cudaStreamSynchronize(s);
}

void earlyReturn(at::cuda::CUDAGraph &graph, at::Tensor t, bool bail) {
  graph.capture_begin();
  if (bail) {
    graph.capture_end();
    return;
  }
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host
  graph.capture_end();
  cudaDeviceSynchronize();
}

void loop(at::cuda::CUDAGraph *graphs, at::Tensor t, int n) {
  for (int i = 0; i < n; ++i) {
    t.cpu(); // first iteration runs before any capture, later ones after end
    graphs[i].capture_begin();
    t.add_(1);
    graphs[i].capture_end();
  }
}

void loopAroundSync(cudaStream_t s, int n) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < n; ++i)
    cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamSynchronize' blocks the host
  cudaStreamEndCapture(s, &g);
}

// ---------------------------------------------------------------------------
// Macros: the hazard is a macro argument.
void macro(cudaStream_t s) {
  cudaGraph_t g;
  C10_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  C10_CUDA_CHECK(cudaStreamSynchronize(s));
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'cudaStreamSynchronize' blocks the host
  C10_CUDA_CHECK(cudaStreamEndCapture(s, &g));
}

#define SYNC_ALL() cudaDeviceSynchronize()
void macroBody(cudaStream_t s) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  SYNC_ALL();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host
  cudaStreamEndCapture(s, &g);
}

// ---------------------------------------------------------------------------
// Templates: the hazard is in an instantiated helper.
template <typename T> T readScalar(const at::Tensor &t) {
  return t.item<T>();
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: 'Tensor::item' copies a device value
  // CHECK-MESSAGES: :[[@LINE+8]]:3: note: 'readScalar' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+6]]:9: note: CUDA graph capture begins here
}

template <typename T> T neverCaptured(const at::Tensor &t) { return t.item<T>(); }

void templates(at::cuda::CUDAGraph &graph, at::Tensor t) {
  graph.capture_begin();
  readScalar<float>(t);
  readScalar<double>(t);
  graph.capture_end();
  neverCaptured<float>(t);
}

// ---------------------------------------------------------------------------
// Lambdas: called in the region, or defined in it and passed on.
template <typename F> void forEachChunk(int n, F f) {
  for (int i = 0; i < n; ++i)
    f(i);
}

void lambdas(at::cuda::CUDAGraph &graph, at::Tensor t) {
  auto sync = [&] { cudaDeviceSynchronize(); };
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: 'cudaDeviceSynchronize' blocks the host
  auto harmless = [&] { t.cpu(); };
  graph.capture_begin();
  sync();
  forEachChunk(4, [&](int i) { t.select(0, i).item<float>(); });
  // CHECK-MESSAGES: :[[@LINE-1]]:47: warning: 'Tensor::item' copies a device value
  graph.capture_end();
  harmless();
}

// ---------------------------------------------------------------------------
// Interprocedural: helpers two calls deep, methods, library inline functions.
namespace ops {
void flush(cudaStream_t s) {
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host
  // CHECK-MESSAGES: :[[@LINE+10]]:5: note: 'flush' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+18]]:8: note: 'Op::launch' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+16]]:11: note: CUDA graph capture begins here
}
void onlyOutside(cudaStream_t s) { cudaStreamSynchronize(s); }
} // namespace ops

struct Op {
  cudaStream_t stream;
  void launch() {
    ops::flush(stream);
  }
};

struct Model {
  Op op;
  at::cuda::CUDAGraph graph;
  void capture() {
    graph.capture_begin();
    op.launch();
    c10::cuda::stream_synchronize(op.stream);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'stream_synchronize' blocks the host until the stream drains
    graph.capture_end();
    ops::onlyOutside(op.stream);
  }
};

// An inline library function that synchronizes inside: reported at the call.
void libraryInside(at::cuda::CUDAGraph &graph, c10::cuda::CUDAStream s) {
  graph.capture_begin();
  s.synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'CUDAStream::synchronize' blocks the host
  graph.capture_end();
}

// ---------------------------------------------------------------------------
// Helpers that test the capture status first only synchronize when no
// capture is open: not reported. The capturing side of the test is. A test
// of one stream does not cover a wait on the whole device, which also waits
// on streams captured elsewhere.
void syncUnlessCapturing(cudaStream_t s) {
  cudaStreamCaptureStatus status;
  cudaStreamIsCapturing(s, &status);
  if (status == cudaStreamCaptureStatusNone)
    cudaStreamSynchronize(s);
  if (status != cudaStreamCaptureStatusNone) {
    cudaDeviceSynchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaDeviceSynchronize' blocks the host
  } else {
    cudaDeviceSynchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaDeviceSynchronize' blocks the host
    // CHECK-MESSAGES: :[[@LINE-2]]:5: note: a capture-status test guards this call, but it waits on every stream
  }
}

bool is_capturing(cudaStream_t s);
void returnEarlyWhenCapturing(cudaStream_t s) {
  if (is_capturing(s))
    return;
  cudaStreamSynchronize(s);
}

void torchStatus() {
  if (c10::cuda::currentStreamCaptureStatusMayInitCtx() ==
      c10::cuda::CaptureStatus::None)
    c10::cuda::device_synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'device_synchronize' blocks the host
  if (!(c10::cuda::currentStreamCaptureStatusMayInitCtx() !=
        c10::cuda::CaptureStatus::None))
    c10::cuda::device_synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'device_synchronize' blocks the host
  if (c10::cuda::currentStreamCaptureStatusMayInitCtx() ==
      c10::cuda::CaptureStatus::None)
    c10::cuda::stream_synchronize(c10::cuda::getCurrentCUDAStream());
}

void callsGuardedHelpers(cudaStream_t s) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  syncUnlessCapturing(s);
  returnEarlyWhenCapturing(s);
  torchStatus();
  cudaStreamEndCapture(s, &g);
}

// Host tensors through parameters: a helper given the host copy reads host
// memory; a check that a tensor is on the CPU makes its reads host reads.
static double boxEdge(const at::Tensor &box, int i) {
  return box[i][i].item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: 'Tensor::item' copies a device value to the host and waits for it
  // CHECK-MESSAGES: :[[@LINE+16]]:14: note: 'boxEdge' is called here during capture
}
static double boxFromCaller(const at::Tensor &box) { return boxEdge(box, 0); }
struct Cell {
  explicit Cell(const at::Tensor &box) : edge(box[0][0].item<double>()) {}
  double edge;
};
double hostBoxes(at::Tensor positions, at::Tensor deviceBox, at::Tensor checkedBox) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  auto box = deviceBox.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: 'Tensor::cpu' copies a tensor to the host
  double a = boxEdge(box, 1) + boxFromCaller(box);
  TORCH_CHECK(checkedBox.device() == torch::kCPU, "the box stays on the host");
  Cell cell(checkedBox);
  // Without a check, the argument may be on the device.
  double b = boxEdge(deviceBox, 2);
  graph.capture_end();
  return a + b + cell.edge;
}

// ---------------------------------------------------------------------------
// CUB's segmented sort synchronizes the stream (with many segments); its
// size query (null storage) runs nothing, and the segmented radix sort only
// launches kernels.
void segmentedSorts(cudaStream_t s, void *temp, std::size_t bytes,
                    const float *in, float *out, const int *offsets, int n,
                    int segments) {
  std::size_t needed = 0;
  cudaGraph_t graph;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  cub::DeviceSegmentedSort::StableSortKeys(nullptr, needed, in, out, n,
                                           segments, offsets, offsets + 1, s);
  cub::DeviceSegmentedSort::StableSortKeys(temp, bytes, in, out, n, segments,
                                           offsets, offsets + 1, s);
  // CHECK-MESSAGES: :[[@LINE-2]]:3: warning: 'DeviceSegmentedSort::StableSortKeys' runs cub::DeviceSegmentedSort, which copies segment sizes to the host and synchronizes the stream during CUDA graph capture{{.*}}use cub::DeviceSegmentedRadixSort{{.*}}(hazard: cub-segmented-sort-sync) [cudagraph-host-sync]
  cub::DeviceSegmentedSort::SortKeys(temp, bytes, in, out, n, segments,
                                     offsets, offsets + 1, s);
  // CHECK-MESSAGES: :[[@LINE-2]]:3: warning: 'DeviceSegmentedSort::SortKeys' runs cub::DeviceSegmentedSort
  cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, in, out, n, segments,
                                          offsets, offsets + 1, 0, 32, s);
  cudaStreamEndCapture(s, &graph);
  cub::DeviceSegmentedSort::StableSortKeys(temp, bytes, in, out, n, segments,
                                           offsets, offsets + 1, s);
}

// A static local's initializer runs on its function's first call: where the
// function holding the begin ran it before the begin (through any chain of
// calls), the copy in it is done when the capture begins.
static float onceTable[4];
static float *deviceTable = nullptr;
void uploadTableOnce() {
  static bool uploaded = [] {
    cudaMemcpy(deviceTable, onceTable, sizeof(onceTable),
               cudaMemcpyHostToDevice);
    // CHECK-MESSAGES: :[[@LINE-2]]:5: warning: 'cudaMemcpy' copies synchronously on the legacy default stream during CUDA graph capture
    // CHECK-MESSAGES: :[[@LINE-4]]:26: note: the lambda runs during capture
    return true;
  }();
  (void)uploaded;
}
void stepWithTable(cudaStream_t s) { uploadTableOnce(); }

void tableWarmedUp(cudaStream_t s) {
  cudaGraph_t g;
  stepWithTable(s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  stepWithTable(s);
  cudaStreamEndCapture(s, &g);
}

void tableFirstUnderCapture(cudaStream_t s) {
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: CUDA graph capture begins here (global mode)
  stepWithTable(s);
  cudaStreamEndCapture(s, &g);
}

// ---------------------------------------------------------------------------
// A project function defined in another unit that takes the stream and
// writes a graph handle has the shape of the end-capture call: the capture
// ends there, and the wait after it is outside the region. One that only
// takes the stream leaves the capture open.
struct Warper {
  double run(float *dev, cudaStream_t &s, cudaGraph_t &graph,
             cudaGraphExec_t &exec);
  void enqueue(float *dev, cudaStream_t s);
};

double searchEndedElsewhere(Warper &w, float *dev, cudaStream_t s,
                            cudaGraph_t &graph, cudaGraphExec_t &exec) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  double cost = w.run(dev, s, graph, exec);
  cudaStreamSynchronize(s);
  return cost;
}

void enqueueStillOpen(Warper &w, float *dev, cudaStream_t s) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  w.enqueue(dev, s);
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: CUDA graph capture begins here
}

// A query that hands out the graph being captured ends nothing.
int captureInfo_f(cudaStream_t s, cudaStreamCaptureStatus *status,
                  cudaGraph_t *graph);

void queriedStillOpen(cudaStream_t s) {
  cudaStreamCaptureStatus status;
  cudaGraph_t graph;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  captureInfo_f(s, &status, &graph);
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host until a stream drains
  // CHECK-MESSAGES: :[[@LINE-4]]:3: note: CUDA graph capture begins here
}

// A wait helper called after each stage: the warning is at its wait, and
// every call under the capture is in a note.
static void syncIfTiming(bool timing) {
  if (timing)
    cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaDeviceSynchronize' blocks the host until all work on the device finishes during CUDA graph capture
}

void stagedForward(cudaStream_t s, float *dev, bool timing) {
  cudaGraph_t graph;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemsetAsync(dev, 0, 4, s);
  syncIfTiming(timing);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: note: 'syncIfTiming' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+3]]:3: note: 'syncIfTiming' is also called here during capture
  // CHECK-MESSAGES: :[[@LINE+4]]:3: note: 'syncIfTiming' is also called here during capture
  cudaMemsetAsync(dev, 1, 4, s);
  syncIfTiming(timing);
  cudaMemsetAsync(dev, 2, 4, s);
  syncIfTiming(timing);
  // CHECK-MESSAGES: :[[@LINE-10]]:3: note: CUDA graph capture begins here
  cudaStreamEndCapture(s, &graph);
}

// A capture begun only where a singleton's debug switch is off (every call
// of the capturing function is in the `else` of the test): the helper's
// debug-only synchronize never runs under it, another switch's does.
struct DebugSettings {
  static DebugSettings &get();
  bool isDebugMode() const;
  bool isVerbose() const;
};
struct StepService {
  cudaStream_t s_;
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  float *dev_;
  void kernels() {
    cudaMemsetAsync(dev_, 0, 4, s_);
    if (DebugSettings::get().isDebugMode())
      cudaStreamSynchronize(s_);
    if (DebugSettings::get().isVerbose())
      cudaStreamSynchronize(s_);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaStreamSynchronize' blocks the host
  }
  cudaGraphExec_t capture() {
    cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal);
    kernels();
    cudaStreamEndCapture(s_, &graph_);
    cudaGraphInstantiate(&exec_, graph_, 0);
    return exec_;
  }
  void step() {
    if (DebugSettings::get().isDebugMode()) {
      kernels();
      cudaStreamSynchronize(s_);
    } else {
      cudaGraphLaunch(capture(), s_);
    }
  }
};

// The same helper, but one call of the capturing function is not under
// the switch: the debug synchronize may run in the capture.
struct OpenStepService {
  cudaStream_t s_;
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  void kernels() {
    if (DebugSettings::get().isDebugMode())
      cudaStreamSynchronize(s_);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaStreamSynchronize' blocks the host
  }
  void capture() {
    cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal);
    kernels();
    cudaStreamEndCapture(s_, &graph_);
  }
  void step() {
    if (!DebugSettings::get().isDebugMode())
      capture();
  }
  void warm() { capture(); }
};

// The switch tested two calls up: every call of the capturing function is
// made by a function that is only called when the switch is off.
struct LayeredService {
  cudaStream_t s_;
  cudaGraph_t graph_;
  void kernels() {
    if (DebugSettings::get().isDebugMode())
      cudaStreamSynchronize(s_);
  }
  void capture() {
    cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal);
    kernels();
    cudaStreamEndCapture(s_, &graph_);
  }
  void runGraph() { capture(); }
  void step() {
    if (DebugSettings::get().isDebugMode())
      kernels();
    else
      runGraph();
  }
};

// ---------------------------------------------------------------------------
// Op tables: the executor runs each op through a function pointer its
// registration stored. The pointer's type names the program's own classes,
// so every function of this unit stored as one may run under the capture.
struct OpExecutor;
struct PlannedOp;
using OpForward = void (*)(OpExecutor &, const PlannedOp &);
struct OpEntry {
  const char *name;
  OpForward forward;
};
struct PlannedOp {
  OpForward fn;
  int slot;
};
struct OpExecutor {
  cudaStream_t stream;
  float *dev;
  float host;
};
void forwardCopyOut(OpExecutor &e, const PlannedOp &op) {
  cudaMemcpy(&e.host, e.dev + op.slot, sizeof(float), cudaMemcpyDeviceToHost);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemcpy' {{.*}}[cudagraph-host-sync]
  // CHECK-MESSAGES: :[[@LINE+28]]:5: note: this call through a function pointer may run 'forwardCopyOut' during capture: the program stores 'forwardCopyOut' in a pointer of this type
}
void forwardScale(OpExecutor &e, const PlannedOp &op) {
  cudaMemsetAsync(e.dev + op.slot, 0, sizeof(float), e.stream);
}
// Called by name only, never stored in an OpForward: not reached.
void forwardDrain(OpExecutor &e, const PlannedOp &) {
  cudaStreamSynchronize(e.stream);
}
static const OpEntry kOpTable[] = {{"copy_out", forwardCopyOut},
                                   {"scale", &forwardScale}};
PlannedOp planOp(int kind, int slot) {
  PlannedOp op;
  op.fn = kOpTable[kind].forward;
  op.slot = slot;
  return op;
}
// A generic callback type names no class of the program: what is stored as
// one elsewhere (a host-function callback) is not assumed to run here.
using HostCallback = void (*)(void *);
void hostDrain(void *) { cudaDeviceSynchronize(); }
HostCallback kDrainCallback = &hostDrain;
void runPlannedOps(OpExecutor &e, const PlannedOp *ops, int n,
                   HostCallback after, void *data) {
  forwardDrain(e, ops[0]);
  cudaGraph_t graph;
  cudaStreamBeginCapture(e.stream, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < n; ++i)
    ops[i].fn(e, ops[i]);
  HostCallback cb = kDrainCallback;
  cb(data);
  cudaStreamEndCapture(e.stream, &graph);
}

// A qualified call runs the method it names, not an override: the base hook
// does nothing, so no capture is open after it.
struct StepHooks {
  virtual ~StepHooks() = default;
  virtual void open(cudaStream_t) {}
  virtual void close(cudaStream_t) {}
};
struct GraphStepHooks final : StepHooks {
  cudaGraph_t graph = nullptr;
  void open(cudaStream_t s) override {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  }
  void close(cudaStream_t s) override { cudaStreamEndCapture(s, &graph); }
};
struct TimedStepHooks final : StepHooks {
  void open(cudaStream_t s) override {
    StepHooks::open(s);
    cudaStreamSynchronize(s);
  }
};
