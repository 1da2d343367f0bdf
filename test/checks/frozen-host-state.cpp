// RUN: %check_cudagraph_tidy %s cudagraph-frozen-host-state %t -- -- -x cuda --cuda-host-only -nocudainc -nocudalib -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <cuda_runtime.h>
#include <torch/optim.h>
#include <torch/script.h>

#include <map>
#include <memory>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess)                                                   \
      return;                                                                  \
  } while (0)

__global__ void scaleKernel(const float *in, float *out, int n, float factor);

at::Tensor nextBatch();
float nextFactor();
float *nextBuffer();

//===--- libtorch: capture once, then rebind and replay in a loop ---------===//

void rebindLoop(at::Tensor static_x, int steps) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  at::Tensor y = static_x * 2;
  graph.capture_end();
  for (int i = 0; i < steps; ++i) {
    static_x = nextBatch();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'static_x' is reassigned after the graph captured it: replay keeps reading the storage captured at capture time and silently differs from eager execution; copy new data into the static input with copy_() (hazard: reassigned-static-input) [cudagraph-frozen-host-state]
    // CHECK-MESSAGES: :[[@LINE-5]]:18: note: the graph reads 'static_x' here during capture
    // CHECK-MESSAGES: :[[@LINE-7]]:9: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:5: note: the graph is replayed here
    graph.replay();
    // CHECK-FIXES: {{^}}    static_x.copy_(nextBatch());{{$}}
  }
}

// copy_ into the static input, in-place updates: what replay reads.
void copyLoop(at::Tensor static_x, int steps) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  at::Tensor y = static_x * 2;
  graph.capture_end();
  for (int i = 0; i < steps; ++i) {
    static_x.copy_(nextBatch());
    static_x.fill_(1.0f);
    static_x += nextBatch();
    graph.replay();
  }
}

// Rebinding before the capture, or a tensor the capture never read.
void beforeCapture(at::Tensor static_x, at::Tensor other, int steps) {
  at::cuda::CUDAGraph graph;
  static_x = nextBatch();
  graph.capture_begin();
  at::Tensor y = static_x * 2;
  graph.capture_end();
  for (int i = 0; i < steps; ++i) {
    other = nextBatch();
    graph.replay();
  }
}

// Captured again after every change: no stale replay.
void recaptureLoop(at::Tensor static_x, int steps) {
  at::cuda::CUDAGraph graph;
  for (int i = 0; i < steps; ++i) {
    static_x = nextBatch();
    graph.reset();
    graph.capture_begin();
    at::Tensor y = static_x * 2;
    graph.capture_end();
    graph.replay();
  }
}

// Changed after the capture, but never replayed afterwards.
at::Tensor noReplay(at::Tensor static_x) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  at::Tensor y = static_x * 2;
  graph.capture_end();
  graph.replay();
  static_x = nextBatch();
  return static_x + 1;
}

// The graph is reset before the next replay could run.
void resetAfter(at::Tensor static_x) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  at::Tensor y = static_x * 2;
  graph.capture_end();
  static_x = nextBatch();
  graph.reset();
  graph.replay();
}

// Another graph replays: it never read static_x.
void otherGraph(at::Tensor static_x, at::cuda::CUDAGraph &other) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  at::Tensor y = static_x * 2;
  graph.capture_end();
  static_x = nextBatch();
  other.replay();
}

//===--- libtorch: host scalars ------------------------------------------===//

void scalarLoop(at::Tensor x, at::Tensor b, int steps) {
  at::cuda::CUDAGraph graph;
  float scale = 0.5f;
  double alpha = 1.0;
  const float fixed = 3.0f;
  graph.capture_begin();
  at::Tensor y = x * scale;
  at::Tensor z = at::add(x, b, alpha * fixed);
  graph.capture_end();
  for (int i = 0; i < steps; ++i) {
    scale = nextFactor();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'scale' changes after the graph captured its value: replay uses the value seen at capture time and silently differs from eager execution; keep changing values in device tensors updated with copy_() or fill_() (hazard: frozen-host-scalar) [cudagraph-frozen-host-state]
    // CHECK-MESSAGES: :[[@LINE-6]]:22: note: the graph keeps the value 'scale' has here during capture
    // CHECK-MESSAGES: :[[@LINE-8]]:9: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+6]]:5: note: the graph is replayed here
    alpha *= 0.9;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'alpha' changes after the graph captured its value
    // CHECK-MESSAGES: :[[@LINE-10]]:32: note: the graph keeps the value 'alpha' has here during capture
    // CHECK-MESSAGES: :[[@LINE-13]]:9: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:5: note: the graph is replayed here
    graph.replay();
  }
}

// Computed once before capture and never changed: frozen, and right.
void scalarOnce(at::Tensor x, float base) {
  at::cuda::CUDAGraph graph;
  float scale = base * 2;
  graph.capture_begin();
  at::Tensor y = x * scale;
  graph.capture_end();
  for (int i = 0; i < 4; ++i)
    graph.replay();
}

// A value the capture computes itself (a loop counter inside the region) is
// no input.
void counterInside(at::Tensor x) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  for (int k = 0; k < 3; ++k)
    x.mul_(k + 1);
  graph.capture_end();
  graph.replay();
}

//===--- libtorch: a runner class ------------------------------------------===//

class Runner {
public:
  void capture() {
    graph_->capture_begin();
    out_ = input_ * scale_;
    graph_->capture_end();
  }
  void step(const at::Tensor &batch, float scale) {
    input_ = batch;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'input_' is reassigned after the graph captured it
    // CHECK-MESSAGES: :[[@LINE-6]]:12: note: the graph reads 'input_' here during capture
    // CHECK-MESSAGES: :[[@LINE-8]]:13: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+6]]:5: note: the graph is replayed here
    scale_ = scale;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'scale_' changes after the graph captured its value
    // CHECK-MESSAGES: :[[@LINE-11]]:21: note: the graph keeps the value 'scale_' has here during capture
    // CHECK-MESSAGES: :[[@LINE-13]]:13: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:5: note: the graph is replayed here
    graph_->replay();
    // CHECK-FIXES: {{^}}    input_.copy_(batch);{{$}}
  }
  void stepRight(const at::Tensor &batch) {
    input_.copy_(batch);
    graph_->replay();
  }
  // Changes without a replay: the next capture() reads them.
  void configure(const at::Tensor &batch, float scale) {
    input_ = batch;
    scale_ = scale;
  }

private:
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
  at::Tensor input_, out_;
  float scale_ = 1.0f;
};

//===--- raw CUDA ----------------------------------------------------------===//

void rawLoop(float *d_in, float *d_out, int n, cudaStream_t s, int steps) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  float factor = 1.0f;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  scaleKernel<<<(n + 255) / 256, 256, 0, s>>>(d_in, d_out, n, factor);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  for (int i = 0; i < steps; ++i) {
    factor += 1.0f;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'factor' changes after the graph captured its value: replay uses the value seen at capture time and silently differs from eager execution; keep the value in device memory that the kernel reads and update it before each replay (cudaMemcpyAsync), or capture again (hazard: frozen-host-scalar) [cudagraph-frozen-host-state]
    // CHECK-MESSAGES: :[[@LINE-6]]:63: note: the graph keeps the value 'factor' has here during capture
    // CHECK-MESSAGES: :[[@LINE-8]]:3: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+6]]:11: note: the graph is replayed here
    d_in = nextBuffer();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'd_in' is reassigned after the graph captured it: replay keeps reading the storage captured at capture time and silently differs from eager execution; copy the new values into the buffer the graph captured (cudaMemcpyAsync) instead of pointing the variable at new memory (hazard: reassigned-static-input) [cudagraph-frozen-host-state]
    // CHECK-MESSAGES: :[[@LINE-11]]:47: note: the graph reads 'd_in' here during capture
    // CHECK-MESSAGES: :[[@LINE-13]]:3: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:11: note: the graph is replayed here
    CHECK(cudaGraphLaunch(exec, s));
  }
}

// A value copied into device memory before each launch: replays read it.
void rawRight(float *d_in, float *d_out, float *d_factor, int n,
              cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  float *host_in = nextBuffer();
  int value = 0;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(d_in, host_in, n * sizeof(float), cudaMemcpyHostToDevice, s);
  cudaMemsetAsync(d_out, value, n * sizeof(float), s);
  scaleKernel<<<(n + 255) / 256, 256, 0, s>>>(d_in, d_out, n, 2.0f);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  for (int i = 0; i < 4; ++i) {
    cudaMemcpyAsync(d_factor, &value, sizeof(int), cudaMemcpyHostToDevice, s);
    cudaGraphLaunch(exec, s);
  }
  value = 7;
  host_in = nextBuffer();
  cudaGraphExecDestroy(exec);
}

// The memset value and the copy's source pointer change before a replay.
void rawMemset(float *d_out, float *host_in, float *d_in, int n,
               cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  int value = 0;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(d_in, host_in, n * sizeof(float), cudaMemcpyHostToDevice, s);
  cudaMemsetAsync(d_out, value, n * sizeof(float), s);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  value = 0xff;
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'value' changes after the graph captured its value
  // CHECK-MESSAGES: :[[@LINE-5]]:26: note: the graph keeps the value 'value' has here during capture
  // CHECK-MESSAGES: :[[@LINE-8]]:3: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE+6]]:3: note: the graph is replayed here
  host_in = nextBuffer();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'host_in' is reassigned after the graph captured it
  // CHECK-MESSAGES: :[[@LINE-11]]:25: note: the graph reads 'host_in' here during capture
  // CHECK-MESSAGES: :[[@LINE-13]]:3: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE+1]]:3: note: the graph is replayed here
  cudaGraphLaunch(exec, s);
}

// Two graphs: the executable launched after the change holds the other.
void rawTwoGraphs(float *d_in, float *d_out, int n, cudaStream_t s) {
  cudaGraph_t first, second;
  cudaGraphExec_t firstExec, secondExec;
  float factor = 1.0f;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  scaleKernel<<<1, 256, 0, s>>>(d_in, d_out, n, factor);
  cudaStreamEndCapture(s, &first);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  scaleKernel<<<1, 256, 0, s>>>(d_out, d_in, n, 2.0f);
  cudaStreamEndCapture(s, &second);
  cudaGraphInstantiate(&firstExec, first, 0);
  cudaGraphInstantiate(&secondExec, second, 0);
  factor = 3.0f;
  cudaGraphLaunch(secondExec, s);
}

// A step counter the graph froze at its first value.
void stepCounter(float *d_in, float *d_out, int n, cudaStream_t s) {
  cudaGraphExec_t exec = nullptr;
  for (int step = 0; step < 8; ++step) {
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: 'step' changes after the graph captured its value
  // CHECK-MESSAGES: :[[@LINE+6]]:53: note: the graph keeps the value 'step' has here during capture
  // CHECK-MESSAGES: :[[@LINE+4]]:7: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE+8]]:5: note: the graph is replayed here
    if (!exec) {
      cudaGraph_t graph;
      cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
      scaleKernel<<<1, 256, 0, s>>>(d_in, d_out, n, step * 0.5f);
      cudaStreamEndCapture(s, &graph);
      cudaGraphInstantiate(&exec, graph, 0);
    }
    cudaGraphLaunch(exec, s);
  }
}

//===--- a template and lambdas ----------------------------------------------===//

template <typename T>
void templatedLoop(at::Tensor static_x, T scale, int steps) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  at::Tensor y = static_x * scale;
  graph.capture_end();
  for (int i = 0; i < steps; ++i) {
    scale = scale + 1;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'scale' changes after the graph captured its value
    // CHECK-MESSAGES: :[[@LINE-5]]:29: note: the graph keeps the value 'scale' has here during capture
    // CHECK-MESSAGES: :[[@LINE-7]]:9: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:5: note: the graph is replayed here
    graph.replay();
  }
}
template void templatedLoop<float>(at::Tensor, float, int);

void lambdaStep(at::Tensor static_x) {
  at::cuda::CUDAGraph graph;
  float scale = 2.0f;
  auto capture = [&] {
    graph.capture_begin();
    at::Tensor y = static_x * scale;
    graph.capture_end();
  };
  capture();
  auto step = [&](float next) {
    scale = next;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'scale' changes after the graph captured its value
    // CHECK-MESSAGES: :[[@LINE-7]]:31: note: the graph keeps the value 'scale' has here during capture
    // CHECK-MESSAGES: :[[@LINE-9]]:11: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:5: note: the graph is replayed here
    graph.replay();
  };
  step(3.0f);
}

// Captured in a lambda, changed and replayed by the enclosing function.
void lambdaCapture(at::Tensor static_x, int steps) {
  at::cuda::CUDAGraph graph;
  float scale = 2.0f;
  scale = 4.0f;
  auto capture = [&] {
    graph.capture_begin();
    at::Tensor y = static_x * scale;
    graph.capture_end();
  };
  capture();
  for (int i = 0; i < steps; ++i) {
    scale += 1.0f;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'scale' changes after the graph captured its value
    // CHECK-MESSAGES: :[[@LINE-7]]:31: note: the graph keeps the value 'scale' has here during capture
    // CHECK-MESSAGES: :[[@LINE-9]]:11: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:5: note: the graph is replayed here
    graph.replay();
  }
}

// A host scalar copied by address: replay copies its current value.
void byAddress(float *d_factor, cudaStream_t s, int steps) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  float factor = 1.0f;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(d_factor, &factor, sizeof(float), cudaMemcpyHostToDevice, s);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  for (int i = 0; i < steps; ++i) {
    factor = nextFactor();
    cudaGraphLaunch(exec, s);
    cudaStreamSynchronize(s);
  }
}

// A batch declared in the loop: each iteration makes a new tensor.
void declaredInLoop(int steps) {
  at::cuda::CUDAGraph graph;
  for (int i = 0; i < steps; ++i) {
    at::Tensor batch = nextBatch();
    // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: 'batch' is reassigned after the graph captured it
    // CHECK-MESSAGES: :[[@LINE+5]]:22: note: the graph reads 'batch' here during capture
    // CHECK-MESSAGES: :[[@LINE+3]]:13: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+6]]:5: note: the graph is replayed here
    if (i == 0) {
      graph.capture_begin();
      at::Tensor y = batch * 2;
      graph.capture_end();
    }
    graph.replay();
  }
}

//===--- graphs chosen by the changed value, recapture on change ----------===//

int nextSize();

// One graph per batch size: the replay picks the graph captured with bs.
void bucketed(at::Tensor x, std::vector<at::cuda::CUDAGraph> &graphs,
              int steps) {
  int bs = 8;
  graphs[bs].capture_begin();
  at::Tensor y = x.narrow(0, 0, bs);
  graphs[bs].capture_end();
  for (int i = 0; i < steps; ++i) {
    bs = nextSize();
    graphs[bs].replay();
  }
}

// The program tests the changed value and captures again when it differs.
void recaptureOnChange(at::Tensor x, int steps) {
  at::cuda::CUDAGraph graph;
  int n = nextSize();
  int captured_n = -1;
  for (int i = 0; i < steps; ++i) {
    n = nextSize();
    if (n != captured_n) {
      graph.reset();
      graph.capture_begin();
      at::Tensor y = x.narrow(0, 0, n);
      graph.capture_end();
      captured_n = n;
    }
    graph.replay();
  }
}

// A static input behind an accessor.
struct Holder {
  at::Tensor input_;
  at::cuda::CUDAGraph graph_;
  at::Tensor &input() { return input_; }
  void capture() {
    graph_.capture_begin();
    at::Tensor y = input() * 2;
    graph_.capture_end();
  }
  void run(const at::Tensor &t) {
    input() = t;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'input()' is reassigned after the graph captured it:
    // CHECK-MESSAGES: :[[@LINE-6]]:20: note: the graph reads 'input()' here during capture
    // CHECK-MESSAGES: :[[@LINE-8]]:12: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:5: note: the graph is replayed here
    graph_.replay();
    // CHECK-FIXES: {{^}}    input().copy_(t);{{$}}
  }
};

// Read in a helper the capture calls; replayed through another method.
class Model {
public:
  at::Tensor forward() { return x_ * scale_; }
  void capture() {
    graph_.capture_begin();
    out_ = forward();
    graph_.capture_end();
  }
  void replayWith(float s) {
    scale_ = s;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'scale_' changes after the graph captured its value:
    // CHECK-MESSAGES: :[[@LINE-9]]:38: note: the graph keeps the value 'scale_' has here during capture
    // CHECK-MESSAGES: :[[@LINE-7]]:12: note: 'Model::forward' is called here during capture
    // CHECK-MESSAGES: :[[@LINE-9]]:12: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:5: note: the graph is replayed here
    launch();
  }
  void launch() { graph_.replay(); }
  // Not followed by a replay here: not reported.
  void later(float s) { scale_ = s; }

private:
  at::cuda::CUDAGraph graph_;
  at::Tensor x_, out_;
  float scale_ = 1;
};

// Members of local structs: another object's member, or another member, is
// not what the graph read.
struct Params {
  float alpha;
  float beta;
};

void members(at::Tensor x) {
  at::cuda::CUDAGraph graph;
  Params p{1, 2}, q{3, 4};
  graph.capture_begin();
  at::Tensor y = x * p.alpha;
  graph.capture_end();
  q.alpha = 5;
  p.beta = 6;
  graph.replay();
  p.alpha = 7;
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'p.alpha' changes after the graph captured its value:
  // CHECK-MESSAGES: :[[@LINE-7]]:22: note: the graph keeps the value 'p.alpha' has here during capture
  // CHECK-MESSAGES: :[[@LINE-9]]:9: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE+1]]:3: note: the graph is replayed here
  graph.replay();
}

// Writing the elements of a host buffer the graph copies from is how new
// input reaches it (the copy reads the buffer at replay); an element the
// graph read by value is frozen like any scalar.
void hostElements(float *h_data, const float *h_scale, float *d_data,
                  float *d_out, int n, cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  float local[4] = {1, 2, 3, 4};
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(d_data, h_data, n * sizeof(float), cudaMemcpyHostToDevice, s);
  cudaMemcpyAsync(d_out, local, sizeof(local), cudaMemcpyHostToDevice, s);
  scaleKernel<<<(n + 255) / 256, 256, 0, s>>>(d_data, d_out, n, local[1]);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  for (int i = 0; i < n; ++i)
    h_data[i] = static_cast<float>(i);
  cudaGraphLaunch(exec, s);
  local[1] = 2.0f;
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'local' changes after the graph captured its value
  // CHECK-MESSAGES: :[[@LINE-8]]:65: note: the graph keeps the value 'local' has here during capture
  // CHECK-MESSAGES: :[[@LINE-12]]:3: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE+1]]:3: note: the graph is replayed here
  cudaGraphLaunch(exec, s);
}

//===--- values reaching captured work through parameters and arrays -----===//

void launchScaled(const float *in, float *out, int n, float factor,
                  cudaStream_t s) {
  scaleKernel<<<(n + 255) / 256, 256, 0, s>>>(in, out, n, factor);
}

// A member passed to a helper whose kernel takes it by value: the graph
// keeps the member's value at capture.
struct HelperRunner {
  float factor_ = 1;
  float *in_ = nullptr, *out_ = nullptr;
  int n_ = 0;
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  void capture(cudaStream_t s) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    launchScaled(in_, out_, n_, factor_, s);
    cudaStreamEndCapture(s, &graph_);
    cudaGraphInstantiate(&exec_, graph_, 0);
  }
  void step(float f, cudaStream_t s) {
    factor_ = f;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'factor_' changes after the graph captured its value:
    // CHECK-MESSAGES: :[[@LINE-7]]:33: note: the graph keeps the value 'factor_' has here during capture
    // CHECK-MESSAGES: :[[@LINE-8]]:5: note: 'launchScaled' is called here during capture
    // CHECK-MESSAGES: :[[@LINE-10]]:5: note: CUDA graph capture begins here (global mode)
    // CHECK-MESSAGES: :[[@LINE+1]]:5: note: the graph is replayed here
    cudaGraphLaunch(exec_, s);
  }
  // n_ reaches the kernel too, but this step writes what the graph does
  // not read by value.
  void refill(float *h, cudaStream_t s) {
    h[0] = 1.0f;
    cudaGraphLaunch(exec_, s);
  }
};

// A kernel-parameter array hands the launch the values its elements point
// at: the graph keeps d_in and alpha as they were at capture.
void launchArray(const void *fn, float *d_in, float *d_next, float *d_out,
                 cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  float alpha = 0.5f;
  int n = 256;
  void *args[] = {&d_in, &d_out, &n, &alpha};
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaLaunchKernel(fn, dim3(1), dim3(256), args, 0, s);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphLaunch(exec, s);
  d_in = d_next;
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'd_in' is reassigned after the graph captured it:
  // CHECK-MESSAGES: :[[@LINE-8]]:20: note: the graph reads 'd_in' here during capture
  // CHECK-MESSAGES: :[[@LINE-8]]:3: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE+1]]:3: note: the graph is replayed here
  cudaGraphLaunch(exec, s);
}

// An array of pointers the launch does not take, or a copy by address: not
// values the graph keeps.
void arrayNotLaunched(float *d_in, float *d_next, float *d_out, cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  float *bufs[] = {d_in, d_out};
  float scale = 1.0f;
  void *addrs[] = {&scale};
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(d_out, addrs[0], sizeof(float), cudaMemcpyHostToDevice, s);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  scale = 2.0f;
  bufs[0] = d_next;
  cudaGraphLaunch(exec, s);
}

//===--- buffers freed while a graph still reads them by address ---------===//

extern "C" void *malloc(unsigned long);
extern "C" void free(void *);

// A helper with a local staging vector, called under capture: the graph
// copies from the vector's storage at every replay.
void uploadOnes(float *d, int n, cudaStream_t s) {
  std::vector<float> h(n, 1.0f);
  cudaMemcpyAsync(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice, s);
}
// CHECK-MESSAGES: :[[@LINE-1]]:1: warning: 'h' goes out of scope when 'uploadOnes' returns, while a graph that reads it by address can still be replayed: each replay copies from (or into) the address recorded at capture, now freed: stale or unrelated values, heap corruption, or an illegal-address fault; keep the buffer alive as long as the graph may be replayed (a member or static buffer owned together with the graph) and refill it in place before each replay (hazard: freed-before-replay) [cudagraph-frozen-host-state]
// CHECK-MESSAGES: :[[@LINE-3]]:22: note: the graph is given the address of 'h' here during capture
// CHECK-MESSAGES: :[[@LINE+10]]:5: note: 'uploadOnes' is called here during capture
// CHECK-MESSAGES: :[[@LINE+8]]:5: note: CUDA graph capture begins here (global mode)
// CHECK-MESSAGES: :[[@LINE+24]]:30: note: the graph is replayed here

struct StagedGraph {
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  float *d_ = nullptr;
  void build(cudaStream_t s) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    uploadOnes(d_, 16, s);
    cudaStreamEndCapture(s, &graph_);
    cudaGraphInstantiate(&exec_, graph_, 0);
  }
  // The owner's own array, the graph kept in members and replayed later.
  void buildTable(cudaStream_t s) {
    float table[4] = {1, 2, 3, 4};
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMemcpyAsync(d_, table, sizeof(table), cudaMemcpyHostToDevice, s);
    cudaStreamEndCapture(s, &graph_);
    cudaGraphInstantiate(&exec_, graph_, 0);
  }
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'table' goes out of scope when 'buildTable' returns, while a graph
  // CHECK-MESSAGES: :[[@LINE-5]]:25: note: the graph is given the address of 'table' here during capture
  // CHECK-MESSAGES: :[[@LINE-7]]:5: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE+1]]:30: note: the graph is replayed here
  void run(cudaStream_t s) { cudaGraphLaunch(exec_, s); }
};

// A step function that captures on its first call and replays the kept
// graph on every call: a later call, skipping the capture, replays the
// address of the first call's stack array. The begin's check macro wraps it
// in `do { } while (0)`, which runs once.
#define STEP_CHECK(call)                                                       \
  do {                                                                         \
    if ((call) != cudaSuccess)                                                 \
      throw 1;                                                                 \
  } while (0)
struct StepSolver {
  cudaGraphExec_t exec_ = nullptr;
  float *d_bounds_ = nullptr;
  void step(cudaStream_t s) {
    float bounds[2] = {0.f, 1.f};
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: 'bounds' is made anew on every call of 'step', but the graph captured on an earlier call keeps reading that call's buffer
    if (!exec_) {
      cudaGraph_t graph;
      STEP_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
      cudaMemcpyAsync(d_bounds_, bounds, sizeof(bounds),
                      cudaMemcpyHostToDevice, s);
      // CHECK-MESSAGES: :[[@LINE-2]]:34: note: the graph is given the address of 'bounds' here during capture
      // CHECK-MESSAGES: :[[@LINE-4]]:18: note: CUDA graph capture begins here (global mode)
      cudaStreamEndCapture(s, &graph);
      cudaGraphInstantiate(&exec_, graph, 0);
    }
    cudaGraphLaunch(exec_, s);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: the graph is replayed here, on a call that skips the capture
  }
  // Captured on every call: no later call replays an old capture.
  void stepEachTime(cudaStream_t s) {
    float bounds[2] = {0.f, 1.f};
    cudaGraph_t graph;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMemcpyAsync(d_bounds_, bounds, sizeof(bounds), cudaMemcpyHostToDevice,
                    s);
    cudaStreamEndCapture(s, &graph);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphLaunch(exec, s);
    cudaGraphExecDestroy(exec);
  }
};

// A matrix that holds its storage through a shared_ptr: a slice made by a
// method of a live matrix shares that storage, so its scope end frees
// nothing; a matrix made here owns its storage.
struct SharedBlock {
  std::shared_ptr<float> mem;
};
struct DeviceMatrix {
  float *ptr = nullptr;
  SharedBlock block;
  DeviceMatrix() = default;
  explicit DeviceMatrix(int n);
  DeviceMatrix(float *p, SharedBlock b) : ptr(p), block(b) {}
  float *data() const { return ptr; }
  DeviceMatrix rows(int from) const { return DeviceMatrix(ptr + from, block); }
};
__global__ void scaleRows(float *p);

struct SliceRunner {
  DeviceMatrix whole{64};
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  void buildSlice(cudaStream_t s) {
    DeviceMatrix tail = whole.rows(32);
    DeviceMatrix alias = whole;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    scaleRows<<<1, 32, 0, s>>>(tail.data());
    scaleRows<<<1, 32, 0, s>>>(alias.data());
    cudaStreamEndCapture(s, &graph_);
    cudaGraphInstantiate(&exec_, graph_, 0);
  }
  void buildOwn(cudaStream_t s) {
    DeviceMatrix scratch(64);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    scaleRows<<<1, 32, 0, s>>>(scratch.data());
    cudaStreamEndCapture(s, &graph_);
    cudaGraphInstantiate(&exec_, graph_, 0);
  }
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'scratch' goes out of scope when 'buildOwn' returns, while a graph
  // CHECK-MESSAGES: :[[@LINE-5]]:32: note: the graph is given the address of 'scratch' here during capture
  void run(cudaStream_t s) { cudaGraphLaunch(exec_, s); }
};

// Freed between two replays in one function.
void freedThenReplayed(float *d, cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  float *h = (float *)malloc(64);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(d, h, 64, cudaMemcpyHostToDevice, s);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphLaunch(exec, s);
  free(h);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'h' is freed while a graph that reads it by address can still be replayed
  // CHECK-MESSAGES: :[[@LINE-6]]:22: note: the graph reads 'h' here during capture
  // CHECK-MESSAGES: :[[@LINE-8]]:3: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE+1]]:3: note: the graph is replayed here
  cudaGraphLaunch(exec, s);
}

// A block scope ends before the graph is replayed.
void scopedStaging(float *d, cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  {
    std::vector<float> h(16, 2.0f);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMemcpyAsync(d, h.data(), 64, cudaMemcpyHostToDevice, s);
    cudaStreamEndCapture(s, &graph);
  }
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'h' goes out of scope while a graph
  // CHECK-MESSAGES: :[[@LINE-4]]:24: note: the graph is given the address of 'h' here during capture
  // CHECK-MESSAGES: :[[@LINE-6]]:5: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE+2]]:3: note: the graph is replayed here
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphLaunch(exec, s);
}

// A helper that grows the buffers by freeing and allocating them, called
// before the replay; the graph is captured again only when the size of
// one dimension changes, so a larger batch replays the freed buffers.
__global__ void padRows(const float *in, float *out);
struct GrowingRunner {
  cudaStream_t s_;
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  float *d_in_ = nullptr, *d_out_ = nullptr;
  unsigned long in_bytes_ = 0, out_bytes_ = 0;
  bool captured_ = false;
  int dim_ = 0;
  void ensure(unsigned long in_bytes, unsigned long out_bytes) {
    if (in_bytes > in_bytes_) {
      if (d_in_)
        cudaFree(d_in_);
      // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: 'd_in_' is freed while a graph that reads it by address can still be replayed
      // CHECK-MESSAGES: :[[@LINE+17]]:31: note: the graph reads 'd_in_' here during capture
      // CHECK-MESSAGES: :[[@LINE+15]]:5: note: CUDA graph capture begins here (global mode)
      // CHECK-MESSAGES: :[[@LINE+23]]:5: note: 'GrowingRunner::ensure' frees it when called here, and the graph is not captured again on every path from here to the replay
      // CHECK-MESSAGES: :[[@LINE+25]]:5: note: the graph is replayed here
      cudaMalloc(&d_in_, in_bytes);
      in_bytes_ = in_bytes;
    }
    if (out_bytes > out_bytes_) {
      if (d_out_)
        cudaFree(d_out_);
      // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: 'd_out_' is freed while a graph
      cudaMalloc(&d_out_, out_bytes);
      out_bytes_ = out_bytes;
    }
  }
  void rebuild(int dim) {
    cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal);
    padRows<<<1, 32, 0, s_>>>(d_in_, d_out_);
    cudaStreamEndCapture(s_, &graph_);
    cudaGraphInstantiate(&exec_, graph_, 0);
    captured_ = true;
    dim_ = dim;
  }
  void run(int batch, int len, int dim) {
    const unsigned long in_bytes = (unsigned long)batch * len * 4;
    ensure(in_bytes, (unsigned long)batch * dim * 4);
    if (!captured_ || dim_ != dim)
      rebuild(dim);
    cudaGraphLaunch(exec_, s_);
  }
};

// The test names every size the helper was given, the helper's result, or
// a member the helper sets, or the capture is made again on every call.
struct CheckedRunner {
  cudaStream_t s_;
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  float *d_a_ = nullptr, *d_b_ = nullptr, *d_c_ = nullptr, *d_d_ = nullptr;
  unsigned long a_ = 0, b_ = 0, c_ = 0, d_ = 0;
  bool captured_ = false, dirty_ = false;
  int batch_ = 0, len_ = 0;
  void growA(unsigned long bytes) {
    if (bytes > a_) {
      cudaFree(d_a_);
      cudaMalloc(&d_a_, bytes);
      a_ = bytes;
    }
  }
  bool growB(unsigned long bytes) {
    if (bytes <= b_)
      return false;
    cudaFree(d_b_);
    cudaMalloc(&d_b_, bytes);
    b_ = bytes;
    return true;
  }
  void growC(unsigned long bytes) {
    if (bytes > c_) {
      cudaFree(d_c_);
      cudaMalloc(&d_c_, bytes);
      c_ = bytes;
      dirty_ = true;
    }
  }
  void growD(unsigned long bytes) {
    if (bytes > d_) {
      cudaFree(d_d_);
      cudaMalloc(&d_d_, bytes);
      d_ = bytes;
    }
  }
  void rebuild() {
    cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal);
    padRows<<<1, 32, 0, s_>>>(d_a_, d_b_);
    padRows<<<1, 32, 0, s_>>>(d_c_, d_d_);
    cudaStreamEndCapture(s_, &graph_);
    cudaGraphInstantiate(&exec_, graph_, 0);
    captured_ = true;
    dirty_ = false;
  }
  void runSizes(int batch, int len) {
    const unsigned long bytes = (unsigned long)batch * len * 4;
    growA(bytes);
    if (!captured_ || batch != batch_ || len != len_)
      rebuild();
    cudaGraphLaunch(exec_, s_);
  }
  void runGrown(int n) {
    bool grew = growB(n * 4ul);
    if (grew || !captured_)
      rebuild();
    cudaGraphLaunch(exec_, s_);
  }
  void runDirty(int n) {
    growC(n * 4ul);
    if (dirty_)
      rebuild();
    cudaGraphLaunch(exec_, s_);
  }
  void runAlways(int n) {
    growD(n * 4ul);
    rebuild();
    cudaGraphLaunch(exec_, s_);
  }
};


// Replayed while alive, freed after the last replay; a static staging
// buffer; a kernel-parameter array (copied at the launch); a graph made and
// replayed only where the buffer lives.
void aliveWhileReplayed(float *d, cudaStream_t s, int steps) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  std::vector<float> h(16, 2.0f);
  static float fixed[4];
  float *p = (float *)malloc(64);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(d, h.data(), 64, cudaMemcpyHostToDevice, s);
  cudaMemcpyAsync(d, p, 64, cudaMemcpyHostToDevice, s);
  cudaMemcpyAsync(d, fixed, sizeof(fixed), cudaMemcpyHostToDevice, s);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  for (int i = 0; i < steps; ++i)
    cudaGraphLaunch(exec, s);
  cudaStreamSynchronize(s);
  free(p);
  cudaGraphExecDestroy(exec);
}

void keptArguments(const void *fn, float *d, cudaStream_t s,
                   cudaGraphExec_t *out, cudaGraph_t *g) {
  void *args[] = {&d};
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaLaunchKernel(fn, dim3(1), dim3(1), args, 0, s);
  cudaStreamEndCapture(s, g);
  cudaGraphInstantiate(out, *g, 0);
}
void launchKept(cudaGraphExec_t e, cudaStream_t s) { cudaGraphLaunch(e, s); }

//===--- inputs made anew on every call of a function that captures once -===//

// The graph is captured on the first call only; each later call makes a new
// tensor and replays a graph that still reads the first call's.
struct ScaledStep {
  at::cuda::CUDAGraph graph_;
  bool captured_ = false;
  at::Tensor in_, out_, scale_;
  void step(double factor) {
    at::Tensor scale = at::full({1}, factor, in_.options());
    // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: 'scale' is made anew on every call of 'step', but the graph captured on an earlier call keeps reading that call's tensor: later replays ignore the new value and read memory freed when that call returned; keep one persistent input (a member made with the graph), copy each call's value into it before the replay and capture with it (hazard: per-call-input) [cudagraph-frozen-host-state]
    // CHECK-MESSAGES: :[[@LINE+4]]:20: note: the graph reads 'scale' here during capture
    // CHECK-MESSAGES: :[[@LINE+2]]:14: note: CUDA graph capture begins here (global mode)
    if (!captured_) {
      graph_.capture_begin();
      out_ = in_ * scale;
      graph_.capture_end();
      captured_ = true;
    }
    graph_.replay();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: the graph is replayed here, on a call that skips the capture
  }
  // The same value written into a persistent tensor: the graph reads it.
  void stepInPlace(double factor) {
    scale_.fill_(factor);
    at::Tensor scale = scale_;
    if (!captured_) {
      graph_.capture_begin();
      out_ = in_ * scale;
      graph_.capture_end();
      captured_ = true;
    }
    graph_.replay();
  }
  // Captured on every call: the graph always reads this call's tensor.
  void stepRecapture(double factor) {
    at::Tensor scale = at::full({1}, factor, in_.options());
    graph_.reset();
    graph_.capture_begin();
    out_ = in_ * scale;
    graph_.capture_end();
    graph_.replay();
  }
  // Made once before a loop whose first pass captures: alive for every
  // replay of this call.
  void loop(int steps) {
    at::Tensor scale = at::full({1}, 2.0, in_.options());
    for (int i = 0; i < steps; ++i) {
      if (i == 0) {
        graph_.capture_begin();
        out_ = in_ * scale;
        graph_.capture_end();
      }
      graph_.replay();
    }
  }
};

// A TorchScript model whose inputs a helper fills: persistent positions,
// and one new tensor per global parameter, made on every call.
struct ModelForce {
  torch::jit::script::Module module_;
  std::map<bool, at::cuda::CUDAGraph> graphs_;
  at::Tensor positions_, energy_;
  std::vector<double> params_;

  void prepare(std::vector<torch::jit::IValue> &inputs) {
    inputs = {positions_};
    for (double p : params_) {
      at::Tensor param = torch::tensor(p);
      // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'param' is made anew on every call of 'execute', but the graph captured on an earlier call keeps reading that call's tensor
      inputs.push_back(param);
    }
  }
  static void run(torch::jit::script::Module &m,
                  std::vector<torch::jit::IValue> &inputs, at::Tensor &energy) {
    energy = m.forward(inputs).toTensor();
  }
  double execute(bool forces) {
    std::vector<torch::jit::IValue> inputs;
    prepare(inputs);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: 'inputs' is filled here
    if (graphs_.find(forces) == graphs_.end()) {
      run(module_, inputs, energy_);
      graphs_[forces].capture_begin();
      run(module_, inputs, energy_);
      // CHECK-MESSAGES: :[[@LINE-1]]:20: note: the graph reads 'inputs' here during capture
      // CHECK-MESSAGES: :[[@LINE-2]]:7: note: 'ModelForce::run' is called here during capture
      // CHECK-MESSAGES: :[[@LINE-4]]:23: note: CUDA graph capture begins here (global mode)
      graphs_[forces].capture_end();
    }
    graphs_[forces].replay();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: the graph is replayed here, on a call that skips the capture
    return 0.0;
  }
  // Inputs that are all persistent tensors: the graph reads the same ones.
  double executeStatic(bool forces) {
    std::vector<torch::jit::IValue> inputs{positions_};
    if (graphs_.find(forces) == graphs_.end()) {
      graphs_[forces].capture_begin();
      run(module_, inputs, energy_);
      graphs_[forces].capture_end();
    }
    graphs_[forces].replay();
    return 0.0;
  }
};

// A runner that captures on its first call and replays on every call reads
// its parameters: what a caller passes is what the graph keeps.
struct ScaleRunner {
  at::cuda::CUDAGraph graph_;
  bool captured_ = false;
  at::Tensor out_;
  at::Tensor run(const at::Tensor &x, const at::Tensor &scale) {
    if (!captured_) {
      graph_.capture_begin();
      out_ = x * scale;
      graph_.capture_end();
      captured_ = true;
    }
    graph_.replay();
    return out_;
  }
};

at::Tensor scaledStep(ScaleRunner &r, const at::Tensor &x, double s) {
  at::Tensor scale = at::full({1}, s, x.options());
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: 'scale' is made anew on every call of 'scaledStep', but the graph 'run' captured on an earlier call keeps reading that call's tensor: later replays
  return r.run(x, scale);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: note: passed to 'run' here
  // CHECK-MESSAGES: :[[@LINE-14]]:18: note: the graph reads 'scale' here during capture
  // CHECK-MESSAGES: :[[@LINE-16]]:14: note: CUDA graph capture begins here (global mode)
  // CHECK-MESSAGES: :[[@LINE-12]]:5: note: the graph is replayed here, on a call that skips the capture
}
// The caller's own inputs, a persistent tensor, a runner local to the
// caller, values made before a loop of calls: no finding.
at::Tensor passedThrough(ScaleRunner &r, const at::Tensor &x,
                         const at::Tensor &scale) {
  return r.run(x, scale);
}
at::Tensor localRunner(const at::Tensor &x, double s) {
  ScaleRunner r;
  at::Tensor scale = at::full({1}, s, x.options());
  return r.run(x, scale);
}
void loopOfCalls(ScaleRunner &r, const at::Tensor &x, int steps) {
  at::Tensor scale = at::full({1}, 2.0, x.options());
  for (int i = 0; i < steps; ++i)
    r.run(x, scale);
}

// Made after the begin, in the region: each capture reads its own call's
// buffer; a graph handle kept in a local is captured on every call.
struct CallbackData {
  double *result;
};
void hostCallback(void *);
void captureWithCallback(double *d, cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  double result = 0;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(&result, d, sizeof(double), cudaMemcpyDeviceToHost, s);
  CallbackData data = {&result};
  cudaLaunchHostFunc(s, hostCallback, &data);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  for (int i = 0; i < 4; ++i)
    cudaGraphLaunch(exec, s);
  cudaStreamSynchronize(s);
  cudaGraphExecDestroy(exec);
}

// Raw CUDA: a host staging vector made on every call, uploaded by a graph
// captured once and launched on every call.
struct Uploader {
  cudaGraph_t graph_;
  cudaGraphExec_t exec_ = nullptr;
  float *d_ = nullptr;
  void push(float value, cudaStream_t s) {
    std::vector<float> staged(16, value);
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: 'staged' is made anew on every call of 'push', but the graph captured on an earlier call keeps reading that call's buffer: later replays
    if (!exec_) {
      cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
      cudaMemcpyAsync(d_, staged.data(), 64, cudaMemcpyHostToDevice, s);
      // CHECK-MESSAGES: :[[@LINE-1]]:27: note: the graph is given the address of 'staged' here during capture
      // CHECK-MESSAGES: :[[@LINE-3]]:7: note: CUDA graph capture begins here (global mode)
      cudaStreamEndCapture(s, &graph_);
      cudaGraphInstantiate(&exec_, graph_, 0);
    }
    cudaGraphLaunch(exec_, s);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: note: the graph is replayed here, on a call that skips the capture
  }
};

// libtorch's Adam computes its step on the host: the step count, the bias
// corrections and the learning rate become kernel arguments of the captured
// step, whichever optimizer reference the capture calls it through.
void trainStep(torch::optim::Optimizer &opt, at::Tensor &w, const at::Tensor &g) {
  opt.zero_grad();
  w.mutable_grad().copy_(g);
  opt.step();
  // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: 'Adam::step' computes its step on the host (the step count, the bias corrections and the learning rate become kernel arguments) during CUDA graph capture: every replay applies the step size of the captured step and ignores later learning-rate changes, silently diverging from eager training; capture the forward and backward passes only and call step() after each replay, or use an optimizer that keeps its step count and learning rate in device tensors (hazard: host-optimizer-step)
  // CHECK-MESSAGES: :[[@LINE+14]]:3: note: 'trainStep' is called here during capture
}
void optimizerRun(at::Tensor w, at::Tensor g) {
  torch::optim::Adam adam({w}, torch::optim::AdamOptions(1e-2));
  at::cuda::CUDAGraph graph;
  for (int i = 0; i < 3; ++i)
    trainStep(adam, w, g);
  // Stepping after the replay, outside the graph, is eager and right.
  graph.capture_begin();
  w.mutable_grad().copy_(g);
  graph.capture_end();
  graph.replay();
  adam.step();
  graph.capture_begin();
  trainStep(adam, w, g);
  graph.capture_end();
}

// A project's own tensor class (it owns an at::Tensor and hands it to
// libtorch in its methods) counts as a tensor: a local made by its
// constructor is new storage on every call.
template <typename T> struct Lattice {
  explicit Lattice(int64_t sites) : data_(at::zeros({sites})) {}
  Lattice(const Lattice &) = default;
  Lattice &operator=(const Lattice &other) {
    data_.copy_(other.data_);
    return *this;
  }
  Lattice row(int64_t i) const { return Lattice(data_.select(0, i), 0); }
  void scaleBy(double s) { data_.mul_(s); }
  at::Tensor data_;

private:
  Lattice(at::Tensor t, int) : data_(t) {}
};
at::Tensor latticeForce(std::vector<at::cuda::CUDAGraph> &graphs,
                        const Lattice<float> &field) {
  bool captured = graphs.size() == 1;
  if (!captured)
    graphs.emplace_back();
  Lattice<float> force(8);
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 'force' is made anew on every call of 'latticeForce', but the graph captured on an earlier call keeps reading that call's tensor
  Lattice<float> kept = field; // the caller's storage, shared
  if (!captured) {
    graphs[0].capture_begin();
    force = field.row(0);
    force.scaleBy(2.0);
    kept.scaleBy(0.5);
    graphs[0].capture_end();
  }
  graphs[0].replay();
  return force.data_;
}

// Ping-pong buffers: the kernel was captured with the grid index of the
// capture, and each step flips the index after the launch. The next step's
// replay computes from the same buffer again.
__global__ void lifeStep(const unsigned char *in, unsigned char *out);
struct LifeBoard {
  unsigned char *grid[2] = {nullptr, nullptr};
  int current = 0;
  int capturedAt = 0;
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  void capture() {
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    lifeStep<<<64, 256, 0, stream>>>(grid[current], grid[1 - current]);
    cudaStreamEndCapture(stream, &graph);
    cudaGraphInstantiate(&exec, graph, 0);
    capturedAt = current;
  }
  void step() {
    cudaGraphLaunch(exec, stream);
    current = 1 - current;
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'current' changes after the graph captured its value
    // CHECK-MESSAGES: :[[@LINE-9]]:43: note: the graph keeps the value 'current' has here during capture
    // CHECK-MESSAGES: :[[@LINE-4]]:5: note: the graph is replayed here on the next call of 'step'
  }
  // Negative: the index is tested before the replay, and a new capture
  // follows when it moved.
  void checkedStep() {
    if (current != capturedAt)
      capture();
    cudaGraphLaunch(exec, stream);
    current = 1 - current;
  }
};

//===--- A parameter the capture pins and the replay rules out ------------===//

// A decoder captures its step on the first position and replays it for the
// later ones: every replay rotates with position 0.
struct Decoder {
  cudaStream_t stream = nullptr;
  cudaGraphExec_t exec = nullptr;
  int state = 0;
  float *q = nullptr;
  int *d_pos = nullptr;
  void rope(int pos, const void *fn) {
    void *args[] = {&q, &pos};
    cudaLaunchKernel(fn, dim3(1), dim3(64), args, 0, stream);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'position' takes other values on the calls that replay the graph, which captured it by value only for the value it had then:
    // CHECK-MESSAGES: :[[@LINE+16]]:10: note: the graph keeps the value 'position' has here during capture
    // CHECK-MESSAGES: :[[@LINE+10]]:7: note: the graph is replayed here, where 'position' cannot have a value the capture ran with
  }
  void ropeOnDevice(const void *fn) {
    void *args[] = {&q, &d_pos};
    cudaLaunchKernel(fn, dim3(1), dim3(64), args, 0, stream);
  }
  void forward(int position, int layers, const void *fn) {
    cudaMemcpyAsync(d_pos, &position, sizeof(int), cudaMemcpyHostToDevice,
                    stream);
    if (state == 1 && position > 0) {
      cudaGraphLaunch(exec, stream);
      return;
    }
    if (state == 0 && position == 0)
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    rope(position, fn);
    ropeOnDevice(fn);
    // A local computed from the parameter alone is pinned with it.
    int length = position + 1;
    void *args[] = {&q, &length};
    cudaLaunchKernel(fn, dim3(1), dim3(64), args, 0, stream);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'position' takes other values on the calls that replay the graph
    // CHECK-MESSAGES: :[[@LINE-3]]:26: note: the graph keeps the value 'length' has here during capture
    // The layer count is not tested on either side: not reported.
    launchLayers(layers, fn);
    if (state == 0 && position == 0) {
      cudaGraph_t graph;
      cudaStreamEndCapture(stream, &graph);
      cudaGraphInstantiate(&exec, graph, 0);
      state = 1;
    }
  }
  void launchLayers(int layers, const void *fn) {
    void *args[] = {&q, &layers};
    cudaLaunchKernel(fn, dim3(1), dim3(64), args, 0, stream);
  }
};

// Locals the capture declares itself, several in one statement, are
// intermediates of the graph: not inputs that change.
void multiDeclared(const void *fn, const float *stdv, cudaStream_t s,
                   cudaGraphExec_t *exec) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  {
    float i0 = 1.0f / stdv[0], i1 = 1.0f / stdv[1];
    void *args[] = {&i0, &i1};
    cudaLaunchKernel(fn, dim3(1), dim3(1), args, 0, s);
  }
  cudaGraph_t g;
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(exec, g, 0);
  cudaGraphLaunch(*exec, s);
}
