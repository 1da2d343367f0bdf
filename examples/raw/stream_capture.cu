// Raw CUDA stream capture: building a two-kernel pipeline into a CUDA graph,
// once with explicit begin/end calls and once with an RAII capture guard.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(call)                                                        \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                   \
                   cudaGetErrorString(err_));                                   \
      std::abort();                                                             \
    }                                                                           \
  } while (0)

namespace {

constexpr int kThreads = 128;

__global__ void scale_kernel(float* data, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    data[i] *= factor;
  }
}

__global__ void add_bias_kernel(float* data, const float* bias, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    data[i] += bias[i];
  }
}

int blocks_for(int n) { return (n + kThreads - 1) / kThreads; }

// Begins capture on construction and ends it on destruction.
class ScopedCapture {
 public:
  ScopedCapture(cudaStream_t stream, cudaGraph_t* graph,
                cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal)
      : stream_(stream), graph_(graph) {
    CHECK_CUDA(cudaStreamBeginCapture(stream_, mode));
  }
  ~ScopedCapture() { cudaStreamEndCapture(stream_, graph_); }

  ScopedCapture(const ScopedCapture&) = delete;
  ScopedCapture& operator=(const ScopedCapture&) = delete;

 private:
  cudaStream_t stream_;
  cudaGraph_t* graph_;
};

} // namespace

// Captures scale + bias with explicit begin/end calls.
cudaGraph_t capture_pipeline(cudaStream_t stream, float* d_data, const float* d_bias,
                             float* d_backup, int n) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));

  scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(d_data, 2.0f, n);
  CHECK_CUDA(cudaMemcpyAsync(d_backup, d_data, bytes, cudaMemcpyDeviceToDevice, stream));

  float* h_snapshot = nullptr;
  CHECK_CUDA(cudaMallocHost(&h_snapshot, bytes));

  const cudaError_t progress = cudaStreamQuery(stream);
  std::printf("pipeline status during capture: %s\n", cudaGetErrorName(progress));

  add_bias_kernel<<<blocks_for(n), kThreads, 0, stream>>>(d_data, d_bias, n);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));

  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaFreeHost(h_snapshot));
  return graph;
}

// Same pipeline, captured through the RAII guard, then instantiated.
cudaGraphExec_t capture_with_guard(cudaStream_t stream, float* d_data, const float* d_bias,
                                   float* h_first, int n) {
  cudaGraph_t graph = nullptr;
  {
    ScopedCapture capture(stream, &graph);
    scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(d_data, 0.5f, n);
    add_bias_kernel<<<blocks_for(n), kThreads, 0, stream>>>(d_data, d_bias, n);
    CHECK_CUDA(cudaMemcpy(h_first, d_data, sizeof(float), cudaMemcpyDeviceToHost));
  }
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaDeviceSynchronize());
  return exec;
}

int main() {
  constexpr int n = 1 << 16;
  const size_t bytes = n * sizeof(float);

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *d_data = nullptr, *d_bias = nullptr, *d_backup = nullptr, *h_first = nullptr;
  CHECK_CUDA(cudaMalloc(&d_data, bytes));
  CHECK_CUDA(cudaMalloc(&d_bias, bytes));
  CHECK_CUDA(cudaMalloc(&d_backup, bytes));
  CHECK_CUDA(cudaMallocHost(&h_first, sizeof(float)));
  CHECK_CUDA(cudaMemset(d_data, 0, bytes));
  CHECK_CUDA(cudaMemset(d_bias, 0, bytes));

  cudaGraph_t graph = capture_pipeline(stream, d_data, d_bias, d_backup, n);
  cudaGraphExec_t first = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&first, graph, 0));
  cudaGraphExec_t second = capture_with_guard(stream, d_data, d_bias, h_first, n);

  for (int iter = 0; iter < 10; ++iter) {
    CHECK_CUDA(cudaGraphLaunch(first, stream));
    CHECK_CUDA(cudaGraphLaunch(second, stream));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::printf("first element: %f\n", *h_first);

  CHECK_CUDA(cudaGraphExecDestroy(first));
  CHECK_CUDA(cudaGraphExecDestroy(second));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaFreeHost(h_first));
  CHECK_CUDA(cudaFree(d_backup));
  CHECK_CUDA(cudaFree(d_bias));
  CHECK_CUDA(cudaFree(d_data));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return 0;
}
