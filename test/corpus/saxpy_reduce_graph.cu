// Captures an iteration of "y = a*x + y; partial sums of y" with the stream
// capture API and replays it. Plain CUDA runtime, no framework.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(expr)                                                        \
  do {                                                                          \
    cudaError_t err_ = (expr);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                   cudaGetErrorString(err_));                                   \
      std::abort();                                                             \
    }                                                                           \
  } while (0)

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}

__global__ void block_sums(int n, const float* __restrict__ y, float* __restrict__ partial) {
  extern __shared__ float smem[];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + tid;
  smem[tid] = i < n ? y[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) {
      smem[tid] += smem[tid + stride];
    }
    __syncthreads();
  }
  if (tid == 0) {
    partial[blockIdx.x] = smem[0];
  }
}

struct Problem {
  int n = 1 << 20;
  int threads = 256;
  float a = 0.5f;
  float* d_x = nullptr;
  float* d_y = nullptr;
  float* d_partial = nullptr;
  float* d_scratch = nullptr;
  float* h_partial = nullptr;

  int blocks() const { return (n + threads - 1) / threads; }
};

static void debug_barrier(bool enabled) {
  if (enabled) {
    CUDA_CHECK(cudaDeviceSynchronize()); // expect: cudagraph-host-sync
  }
}

static void enqueue_iteration(const Problem& p, cudaStream_t s, bool debug) {
  saxpy<<<p.blocks(), p.threads, 0, s>>>(p.n, p.a, p.d_x, p.d_y);
  debug_barrier(debug);
  block_sums<<<p.blocks(), p.threads, p.threads * sizeof(float), s>>>(p.n, p.d_y, p.d_partial);
  CUDA_CHECK(cudaMemcpyAsync(p.h_partial, p.d_partial, p.blocks() * sizeof(float), cudaMemcpyDeviceToHost, s));
}

static float first_partial_sum(const Problem& p) {
  float v = 0.0f;
  CUDA_CHECK(cudaMemcpy(&v, p.d_partial, sizeof(float), cudaMemcpyDeviceToHost)); // expect: cudagraph-host-sync
  return v;
}

int main(int argc, char** argv) {
  const bool debug = argc > 1;
  Problem p;
  const size_t bytes = static_cast<size_t>(p.n) * sizeof(float);

  CUDA_CHECK(cudaMalloc(&p.d_x, bytes));
  CUDA_CHECK(cudaMalloc(&p.d_y, bytes));
  CUDA_CHECK(cudaMalloc(&p.d_partial, p.blocks() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&p.d_scratch, bytes));
  CUDA_CHECK(cudaMallocHost(&p.h_partial, p.blocks() * sizeof(float)));

  std::vector<float> h_x(p.n, 1.0f);
  CUDA_CHECK(cudaMemcpy(p.d_x, h_x.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(p.d_y, 0, bytes));

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // Eager iteration first: validates the kernels and loads the modules.
  enqueue_iteration(p, stream, debug);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::printf("eager partial[0] = %f\n", first_partial_sum(p));

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  enqueue_iteration(p, stream, debug);
  CUDA_CHECK(cudaMemsetAsync(p.d_scratch, 0, bytes, stream));
  if (debug) {
    cudaEvent_t mark;
    CUDA_CHECK(cudaEventCreate(&mark));
    CUDA_CHECK(cudaEventRecord(mark, stream));
    std::printf("mark reached: %d\n", cudaEventQuery(mark) == cudaSuccess); // expect: cudagraph-status-query
    std::printf("captured partial[0] = %f\n", first_partial_sum(p));
    CUDA_CHECK(cudaMemset(p.d_scratch, 0, bytes)); // expect: cudagraph-host-sync
    CUDA_CHECK(cudaStreamSynchronize(stream)); // expect: cudagraph-host-sync
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  for (int it = 0; it < 100; ++it) {
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));

  double total = 0.0;
  for (int b = 0; b < p.blocks(); ++b) {
    total += p.h_partial[b];
  }
  std::printf("sum(y) = %f (first block %f)\n", total, first_partial_sum(p));

  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFreeHost(p.h_partial));
  CUDA_CHECK(cudaFree(p.d_scratch));
  CUDA_CHECK(cudaFree(p.d_partial));
  CUDA_CHECK(cudaFree(p.d_y));
  CUDA_CHECK(cudaFree(p.d_x));
  return 0;
}
