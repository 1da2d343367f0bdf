// Users name their own begin/end functions, functions that always run under
// capture, and extra APIs for each check; wrappers and RAII guards whose
// bodies begin or end capture are recognized without options.
//
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t -- \
// RUN:   --config="{CheckOptions: {cudagraph-host-sync.CaptureBeginFunctions: 'rt::beginGraph', \
// RUN:     cudagraph-host-sync.CaptureEndFunctions: 'rt::endGraph', \
// RUN:     cudagraph-host-sync.CapturedFunctions: 'model::*::forward', \
// RUN:     cudagraph-host-sync.ExtraFunctions: 'telemetry::flushToDisk'}}" \
// RUN:   -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs
// RUN: %check_cudagraph_tidy %s cudagraph-host-sync %t --prefix=DEFAULT -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAGraph.h>
#include <cuda_runtime.h>

namespace rt {
void beginGraph(int id); // defined in another translation unit
void endGraph(int id);
} // namespace rt
namespace telemetry {
void flushToDisk();
}

void userListed(cudaStream_t s) {
  rt::beginGraph(1);
  cudaStreamSynchronize(s);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaStreamSynchronize' blocks the host
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins here
  telemetry::flushToDisk();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'flushToDisk' is listed as a capture hazard for this check during CUDA graph capture
  rt::endGraph(1);
  cudaStreamSynchronize(s);
}

namespace model {
struct Decoder {
  at::Tensor forward(const at::Tensor &x) {
    return x.relu() * x.sum().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: 'Tensor::item' copies a device value
    // CHECK-MESSAGES: :[[@LINE-3]]:14: note: 'forward' is listed in CapturedFunctions and runs under CUDA graph capture
  }
  at::Tensor prepare(const at::Tensor &x) { return x.cpu(); }
};
} // namespace model

// Wrappers: a function that leaves a capture open begins a region in its
// caller; one that closes it ends the region. No options needed.
static cudaGraph_t gGraph;
void startCapture(cudaStream_t s) {
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
}
void stopCapture(cudaStream_t s) {
  cudaStreamEndCapture(s, &gGraph);
  cudaDeviceSynchronize(); // after the end, inside the wrapper: fine
}

void wrappers(cudaStream_t s) {
  cudaDeviceSynchronize();
  startCapture(s);
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: 'cudaDeviceSynchronize' blocks the host
  // CHECK-MESSAGES: :[[@LINE-3]]:3: note: CUDA graph capture begins in 'startCapture', called here
  // DEFAULT: :[[@LINE-3]]:3: warning: 'cudaDeviceSynchronize' blocks the host
  stopCapture(s);
  cudaDeviceSynchronize();
}

// RAII guard: the constructor begins and the destructor ends capture.
class GraphCapture {
public:
  explicit GraphCapture(cudaStream_t s) : s_(s) {
    if (cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal) != cudaSuccess)
      throw 1;
  }
  ~GraphCapture() { cudaStreamEndCapture(s_, &graph_); }

private:
  cudaStream_t s_;
  cudaGraph_t graph_ = nullptr;
};

void guarded(cudaStream_t s) {
  {
    GraphCapture capture(s);
    cudaStreamSynchronize(s);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'cudaStreamSynchronize' blocks the host
    // CHECK-MESSAGES: :[[@LINE-3]]:18: note: CUDA graph capture begins when 'GraphCapture' is constructed here
    // DEFAULT: :[[@LINE-3]]:5: warning: 'cudaStreamSynchronize' blocks the host
  }
  cudaStreamSynchronize(s);
}
