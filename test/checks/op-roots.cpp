// RUN: %check_cudagraph_tidy %s cudagraph-host-sync,cudagraph-device-alloc,cudagraph-legacy-stream %t -- -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs
// RUN: %check_cudagraph_tidy --prefix=CHECK-NARROW %s cudagraph-host-sync,cudagraph-device-alloc,cudagraph-legacy-stream %t -- -config="{CheckOptions: {CustomOpRoots: 'myops::fused_*'}}" -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs
// Only exclusions: every op but those; `!*` leaves none, as `false` does.
// RUN: %check_cudagraph_tidy --prefix=CHECK-OFF %s cudagraph-host-sync,cudagraph-device-alloc,cudagraph-legacy-stream %t -- -config="{CheckOptions: {CustomOpRoots: '!*'}}" -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs
// RUN: %check_cudagraph_tidy --prefix=CHECK-OFF %s cudagraph-host-sync,cudagraph-device-alloc,cudagraph-legacy-stream %t -- -config="{CheckOptions: {CustomOpRoots: false}}" -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

// Functions registered as PyTorch custom ops or Python bindings run under
// capture when Python captures a model that calls them: they are roots with
// no begin call in C++.

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <ATen/cuda/CUDAGraphsUtils.cuh>
#include <cuda_runtime.h>
#include <torch/extension.h>
#include <unordered_map>

__global__ void scale_kernel(float *x, float s, int n);

// A shape read from the device, in a helper the op calls.
static int64_t longest(const at::Tensor &lengths) {
  return lengths.max().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: 'Tensor::item' copies a device value to the host and waits for it during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+8]]:21: note: 'longest' is called here during capture
  // CHECK-MESSAGES: :[[@LINE+50]]:5: note: 'fused_norm' is registered here as custom op 'myops::fused_norm': it runs under CUDA graph capture when a captured model calls it
  // CHECK-NARROW: :[[@LINE-4]]:24: warning: 'Tensor::item' copies a device value to the host
}

at::Tensor fused_norm(at::Tensor x, at::Tensor lengths) {
  auto stream = at::cuda::getCurrentCUDAStream();
  scale_kernel<<<1, 32, 0, stream>>>(x.data_ptr<float>(), 1.f, 32);
  int64_t max_len = longest(lengths);
  return x.narrow(0, 0, max_len);
}

// The default stream: a launch with no stream argument.
at::Tensor scale_cuda(at::Tensor x) {
  scale_kernel<<<1, 32>>>(x.data_ptr<float>(), 2.f, 32);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'scale_kernel' sends work to the legacy default stream during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+48]]:5: note: 'scale_cuda' is registered here as custom op 'myops::scale'
  return x;
}

// Only registered for the CPU key: never runs on CUDA tensors.
at::Tensor scale_cpu(at::Tensor x) {
  float first = x[0].item<float>();
  return x * first;
}

// Registered through TORCH_FN for CUDA.
at::Tensor workspace_cuda(at::Tensor x) {
  void *scratch = nullptr;
  cudaMalloc(&scratch, 1024);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMalloc' allocates or frees device memory during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+34]]:5: note: 'workspace_cuda' is registered here as custom op 'myops::workspace'
  cudaFree(scratch);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaFree' allocates or frees device memory
  // CHECK-MESSAGES: :[[@LINE+31]]:5: note: 'workspace_cuda' is registered here as custom op 'myops::workspace'
  return x;
}

// The capture-aware form: a branch on the capture status of the current
// stream keeps the sync out of captures.
at::Tensor maybe_sync(at::Tensor x) {
  if (at::cuda::currentStreamCaptureStatus() ==
      at::cuda::CaptureStatus::None)
    cudaStreamSynchronize(at::cuda::getCurrentCUDAStream());
  return x;
}

// A function that is called, never registered, is not a root.
int64_t unregistered(at::Tensor x) { return x.sum().item<int64_t>(); }

TORCH_LIBRARY(myops, m) {
  m.def("fused_norm(Tensor x, Tensor lengths) -> Tensor", &fused_norm);
  m.def("scale(Tensor x) -> Tensor");
  m.def("workspace(Tensor x) -> Tensor");
  m.def("maybe_sync(Tensor x) -> Tensor", &maybe_sync);
  // A lambda body is an op too.
  m.def("to_host(Tensor x) -> Tensor", [](at::Tensor x) {
    return x.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: 'Tensor::cpu' copies a tensor to the host
    // CHECK-MESSAGES: :[[@LINE-3]]:5: note: 'lambda' is registered here as custom op 'myops::to_host'
  });
}

TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("scale", &scale_cuda);
  m.impl("workspace", TORCH_FN(workspace_cuda));
}

TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("scale", &scale_cpu);
}

// The dispatch key given at the impl call decides too.
at::Tensor gather_rows(at::Tensor x, at::Tensor idx) {
  return idx.nonzero();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: 'Tensor::nonzero' waits for the device to learn the size of its result
  // CHECK-MESSAGES: :[[@LINE+8]]:5: note: 'gather_rows' is registered here as custom op 'extra::gather_rows'
}
at::Tensor gather_rows_cpu(at::Tensor x, at::Tensor idx) {
  return idx.nonzero();
}

TORCH_LIBRARY_FRAGMENT(extra, m) {
  m.def("gather_rows(Tensor x, Tensor idx) -> Tensor");
  m.impl("gather_rows", torch::kCUDA, &gather_rows);
  m.impl("gather_rows", torch::kCPU, &gather_rows_cpu);
}

// pybind11 bindings: functions and methods Python calls.
at::Tensor mha_fwd(at::Tensor q) {
  at::Tensor pinned = at::empty({4}, q.options().device(at::kCPU).pinned_memory(true));
  cudaMemcpy(pinned.data_ptr(), q.data_ptr(), 16, cudaMemcpyDeviceToHost);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaMemcpy' copies synchronously on the legacy default stream
  // CHECK-MESSAGES: :[[@LINE+51]]:5: note: 'mha_fwd' is registered here as Python binding 'fwd'
  return q;
}

struct Runner {
  at::Tensor run(at::Tensor x) {
    if (x.sum().item<float>() > 0)
      // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: 'Tensor::item' copies a device value to the host
      // CHECK-MESSAGES: :[[@LINE+47]]:8: note: 'Runner::run' is registered here as Python binding 'run'
      return x;
    return -x;
  }
};

// A binding that captures by itself: its region is analyzed as written,
// its code before the begin runs eagerly.
void capture_once(at::Tensor x) {
  cudaDeviceSynchronize();
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  maybe_sync(x);
  graph.capture_end();
}

// An autograd function's forward and backward run in the model's passes.
struct ClampGrad : public torch::autograd::Function<ClampGrad> {
  static torch::autograd::variable_list
  forward(torch::autograd::AutogradContext *ctx, at::Tensor x) {
    return {x};
  }
  static torch::autograd::variable_list
  backward(torch::autograd::AutogradContext *ctx,
           torch::autograd::variable_list grads) {
    cudaDeviceSynchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaDeviceSynchronize' blocks the host
    // CHECK-MESSAGES: :[[@LINE-4]]:3: note: 'ClampGrad::backward' is registered here as autograd function 'ClampGrad.backward'
    return grads;
  }
};

// Setup bindings with no tensor in their signature run when the program
// sets up, not inside a captured model: not roots.
static void *g_workspace = nullptr;
int64_t create_workspace(int64_t bytes) {
  cudaMalloc(&g_workspace, bytes);
  cudaDeviceSynchronize();
  return reinterpret_cast<int64_t>(g_workspace);
}

PYBIND11_MODULE(myext, m) {
  m.def("create_workspace", &create_workspace);
  m.def("fwd", &mha_fwd, "forward", pybind11::arg("q"));
  m.def("capture_once", &capture_once);
  pybind11::class_<Runner>(m, "Runner")
      .def(pybind11::init<>())
      .def("run", &Runner::run);
}

// A tensor argument whose device the unit does not show. Read element by
// element on the host and given to no device work, it is a block of host
// values (a simulation box, a small table of parameters): its reads are
// host reads. A scalar read whole, or a tensor also given to a kernel, is
// device data.
template <typename T> struct Extent {
  T x, y, z;
};
__global__ void bin_kernel(const float *pos, Extent<float> box, int n);

static Extent<float> boxExtent(const at::Tensor &box) {
  return {box[0][0].item<float>(), box[1][1].item<float>(),
          box[2][2].item<float>()};
}
static void checkedStrategy(const at::Tensor &pos, const at::Tensor &box) {
  TORCH_CHECK(box.device() == torch::kCPU, "the box stays on the host");
  bin_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(
      pos.data_ptr<float>(), boxExtent(box), 32);
}
static void cellStrategy(const at::Tensor &pos, const at::Tensor &box) {
  TORCH_CHECK(box.dim() == 2 && box.size(0) == 3, "a 3x3 box");
  TORCH_CHECK(box[0][1].item<float>() == 0, "a rectangular box");
  bin_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(
      pos.data_ptr<float>(), boxExtent(box), 32);
}
at::Tensor bin_atoms(at::Tensor pos, at::Tensor box, int64_t strategy) {
  if (strategy == 0)
    checkedStrategy(pos, box);
  else
    cellStrategy(pos, box);
  return pos;
}
at::Tensor scale_by(at::Tensor x, at::Tensor scale) {
  float s = scale.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: 'Tensor::item' copies a device value to the host
  // CHECK-MESSAGES: :[[@LINE+16]]:5: note: 'scale_by' is registered here as custom op 'md::scale_by'
  return x * s;
}
at::Tensor first_run(at::Tensor x, at::Tensor lens) {
  int64_t first = lens[0].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: 'Tensor::item' copies a device value to the host
  // CHECK-MESSAGES: :[[@LINE+12]]:5: note: 'first_run' is registered here as custom op 'md::first_run'
  scale_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(
      reinterpret_cast<float *>(lens.data_ptr<int64_t>()), 1.f, 32);
  return x.narrow(0, 0, first);
}

TORCH_LIBRARY_FRAGMENT(md, m) {
  m.def("bin_atoms(Tensor pos, Tensor box, int strategy) -> Tensor");
  m.impl("bin_atoms", torch::kCUDA, &bin_atoms);
  m.def("scale_by(Tensor x, Tensor scale) -> Tensor");
  m.impl("scale_by", torch::kCUDA, &scale_by);
  m.def("first_run(Tensor x, Tensor lens) -> Tensor");
  m.impl("first_run", torch::kCUDA, &first_run);
}

// An autograd function applied by a registered op: Function::apply hands
// the op's arguments to forward unchanged, so forward's own uses of a
// tensor decide what it is, as they do for the op's parameters.
struct CellList : public torch::autograd::Function<CellList> {
  static torch::autograd::variable_list
  forward(torch::autograd::AutogradContext *ctx, const at::Tensor &pos,
          const at::Tensor &box) {
    TORCH_CHECK(box[0][1].item<float>() == 0 && box[1][0].item<float>() == 0,
                "a rectangular box");
    bin_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(
        pos.data_ptr<float>(), boxExtent(box), 32);
    return {pos};
  }
};
struct ScaledCells : public torch::autograd::Function<ScaledCells> {
  static torch::autograd::variable_list
  forward(torch::autograd::AutogradContext *ctx, const at::Tensor &pos,
          const at::Tensor &scale) {
    float s = scale[0].item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: 'Tensor::item' copies a device value to the host
    scale_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(
        scale.data_ptr<float>(), s, 1);
    return {pos};
  }
};

TORCH_LIBRARY_IMPL(md, AutogradCUDA, m) {
  m.impl("cell_list", [](const at::Tensor &pos, const at::Tensor &box) {
    return CellList::apply(pos, box)[0];
  });
  m.impl("scaled_cells", [](const at::Tensor &pos, const at::Tensor &scale) {
    return ScaledCells::apply(pos, scale)[0];
  });
}

// A compile-and-cache op: Python runs a model before it captures it, so the
// first call for a key takes the miss eagerly and the captured pass finds
// the entry. Work after the cache still runs under capture.
struct CompiledPlan {
  int64_t rows;
};
static std::unordered_map<int64_t, CompiledPlan> plan_cache;
static CompiledPlan compile_plan(const at::Tensor &spec) {
  at::Tensor host = spec.cpu();
  // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
  return {host.numel()};
}
at::Tensor planned(at::Tensor x, at::Tensor spec, int64_t key) {
  auto it = plan_cache.find(key);
  if (it == plan_cache.end()) {
    plan_cache.insert({key, compile_plan(spec)});
    it = plan_cache.find(key);
  }
  return x.narrow(0, 0, spec.max().item<int64_t>() + it->second.rows);
  // CHECK-MESSAGES: :[[@LINE-1]]:36: warning: 'Tensor::item' copies a device value to the host
  // CHECK-MESSAGES: :[[@LINE+5]]:5: note: 'planned' is registered here as custom op 'cache::planned'
}

TORCH_LIBRARY_FRAGMENT(cache, m) {
  m.def("planned(Tensor x, Tensor spec, int key) -> Tensor");
  m.impl("planned", torch::kCUDA, &planned);
}

// A binding that times its own work on every call cannot run captured (the
// elapsed-time query needs completed events): a benchmark Python runs
// eagerly. Not a root, nor what it reaches.
static void timed_pass(at::Tensor x, float *scratch) {
  cudaMalloc(&scratch, 64);
  // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
  scale_kernel<<<1, 32>>>(x.data_ptr<float>(), 2.f, 32);
  // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
}
void benchmark_scale(at::Tensor x, int64_t runs) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float total = 0.f;
  for (int64_t i = 0; i < runs; ++i) {
    cudaEventRecord(start);
    timed_pass(x, nullptr);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
    float ms = 0.f;
    cudaEventElapsedTime(&ms, start, stop);
    total += ms;
  }
}
// Timing behind an option: the op runs captured when it is off.
void scale_profiled(at::Tensor x, bool profile) {
  cudaEvent_t start, stop;
  if (profile) {
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
  }
  scale_kernel<<<1, 32>>>(x.data_ptr<float>(), 2.f, 32);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'scale_kernel' sends work to the legacy default stream during CUDA graph capture
  // CHECK-MESSAGES: :[[@LINE+12]]:5: note: 'scale_profiled' is registered here as Python binding 'scale_profiled'
  if (profile) {
    float ms = 0.f;
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaEventSynchronize' blocks the host until an event completes during CUDA graph capture
    cudaEventElapsedTime(&ms, start, stop);
  }
}

PYBIND11_MODULE(benchext, m) {
  m.def("benchmark_scale", &benchmark_scale);
  m.def("scale_profiled", &scale_profiled);
}

// An object that records its own graph: Python drives it step by step and
// lets it capture, so its bound methods are not roots. Its own region is
// analyzed as written.
struct GreedyDecoder {
  at::Tensor tokens_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  int64_t decode_loop(at::Tensor logits, int64_t steps) {
    int64_t last = 0;
    for (int64_t i = 0; i < steps; ++i) {
      last = logits.argmax().item<int64_t>();
      // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
      cudaStreamSynchronize(nullptr);
      // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
    }
    return last;
  }
  void decode_graph(at::Tensor logits, cudaStream_t s) {
    if (!exec_) {
      cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
      scale_kernel<<<1, 32, 0, s>>>(logits.data_ptr<float>(), 2.f, 32);
      cudaStreamSynchronize(s);
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'cudaStreamSynchronize' blocks the host until a stream drains during CUDA graph capture
      // CHECK-NARROW: :[[@LINE-2]]:7: warning: 'cudaStreamSynchronize' blocks the host
      // CHECK-OFF: :[[@LINE-3]]:7: warning: 'cudaStreamSynchronize' blocks the host
      cudaStreamEndCapture(s, &graph_);
      cudaGraphInstantiate(&exec_, graph_, 0);
    }
    cudaGraphLaunch(exec_, s);
  }
};

PYBIND11_MODULE(decoderext, m) {
  pybind11::class_<GreedyDecoder>(m, "GreedyDecoder")
      .def(pybind11::init<>())
      .def("decode_loop", &GreedyDecoder::decode_loop)
      .def("decode_graph", &GreedyDecoder::decode_graph);
}

// The same when a base class records the graph: the bound subclass's own
// methods run eagerly too.
struct GraphRecorder {
  cudaGraphExec_t exec_ = nullptr;
  void record(cudaStream_t s, float *x) {
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    scale_kernel<<<1, 32, 0, s>>>(x, 2.f, 32);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&exec_, g, 0);
  }
};

struct BeamDecoder : GraphRecorder {
  int64_t best(at::Tensor scores) {
    return scores.argmax().item<int64_t>();
    // CHECK-MESSAGES-NOT: :[[@LINE-1]]:{{.*}}warning
  }
};

PYBIND11_MODULE(beamext, m) {
  pybind11::class_<BeamDecoder>(m, "BeamDecoder")
      .def(pybind11::init<>())
      .def("best", &BeamDecoder::best);
}

// A frame source's iteration protocol fills the inputs a replay reads;
// Python runs it outside the captured forward pass: not a root. Its
// `__call__` is compute and stays one.
struct FrameSource {
  at::Tensor frame;
  at::Tensor next() {
    cudaDeviceSynchronize();
    return frame;
  }
  at::Tensor call(at::Tensor x) {
    cudaDeviceSynchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaDeviceSynchronize' blocks the host
    return x;
  }
};

PYBIND11_MODULE(frameext, m) {
  pybind11::class_<FrameSource>(m, "FrameSource")
      .def("__next__", &FrameSource::next)
      .def("__call__", &FrameSource::call);
}

// CHECK-NARROW-NOT: warning:
// CHECK-OFF-NOT: warning:
