// Per-user ranking: score items, sort each user's segment, keep the best few.
//
// Everything inside the captured region is either a plain kernel, CUB with
// caller-provided temporary storage, or a Thrust algorithm that neither
// allocates nor returns a value to the host (par_nosync). Thrust calls that
// need either run before the capture or after the replay.

#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CUDA_CHECK(x)                                                              \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

struct Sigmoid {
  __host__ __device__ float operator()(float x) const { return 1.0f / (1.0f + expf(-x)); }
};

struct ScaleBy {
  float factor;
  __host__ __device__ float operator()(float x) const { return x * factor; }
};

__global__ void make_offsets(int* offsets, int users, int items_per_user) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u <= users) {
    offsets[u] = u * items_per_user;
  }
}

__global__ void take_top(const float* sorted, const int* ids, float* top_s, int* top_i, int users, int per_user, int k) {
  const int u = blockIdx.x;
  const int j = threadIdx.x;
  if (u < users && j < k) {
    top_s[u * k + j] = sorted[u * per_user + j];
    top_i[u * k + j] = ids[u * per_user + j];
  }
}

// Elementwise map on a stream without synchronising.
template <typename Op>
void map_inplace(float* data, int n, Op op, cudaStream_t s) {
  thrust::device_ptr<float> p(data);
  thrust::transform(thrust::cuda::par_nosync.on(s), p, p + n, p, op);
}

struct Workspace {
  void* temp = nullptr;
  size_t temp_bytes = 0;
  float* keys_out = nullptr;
  int* vals_out = nullptr;
  int* offsets = nullptr;
  float* sum = nullptr;
};

int main() {
  const int users = 4096, per_user = 512, k = 16;
  const int n = users * per_user;
  float *scores = nullptr, *top_s = nullptr;
  int *ids = nullptr, *top_i = nullptr;
  CUDA_CHECK(cudaMalloc(&scores, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&ids, sizeof(int) * n));
  CUDA_CHECK(cudaMalloc(&top_s, sizeof(float) * users * k));
  CUDA_CHECK(cudaMalloc(&top_i, sizeof(int) * users * k));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // Eager set-up with Thrust's own temporaries: not captured.
  thrust::device_ptr<float> sp(scores);
  thrust::device_ptr<int> ip(ids);
  thrust::sequence(thrust::cuda::par.on(s), ip, ip + n);
  thrust::sort(thrust::cuda::par.on(s), ip, ip + n);
  const float initial_mass = thrust::reduce(thrust::cuda::par.on(s), sp, sp + n, 0.0f);

  Workspace ws;
  CUDA_CHECK(cudaMalloc(&ws.keys_out, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&ws.vals_out, sizeof(int) * n));
  CUDA_CHECK(cudaMalloc(&ws.offsets, sizeof(int) * (users + 1)));
  CUDA_CHECK(cudaMalloc(&ws.sum, sizeof(float)));
  size_t sort_bytes = 0, sum_bytes = 0;
  CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(nullptr, sort_bytes, scores, ws.keys_out, ids, ws.vals_out, n, users, ws.offsets, ws.offsets + 1, 0, 32, s));
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, sum_bytes, scores, ws.sum, n, s));
  ws.temp_bytes = sort_bytes > sum_bytes ? sort_bytes : sum_bytes;
  CUDA_CHECK(cudaMalloc(&ws.temp, ws.temp_bytes));

  const float temperature = 0.7f;
  std::function<void()> after_replay;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  make_offsets<<<(users + 256) / 256, 256, 0, s>>>(ws.offsets, users, per_user);
  map_inplace(scores, n, ScaleBy{1.0f / temperature}, s);
  map_inplace(scores, n, Sigmoid{}, s);
  thrust::for_each(thrust::cuda::par_nosync.on(s), thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n), [p = ids, per_user] __device__ (int i) { p[i] = i % per_user; });
  CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(ws.temp, sort_bytes, scores, ws.keys_out, ids, ws.vals_out, n, users, ws.offsets, ws.offsets + 1, 0, 32, s));
  take_top<<<users, 32, 0, s>>>(ws.keys_out, ws.vals_out, top_s, top_i, users, per_user, k);
  CUDA_CHECK(cub::DeviceReduce::Sum(ws.temp, sum_bytes, top_s, ws.sum, users * k, s));
  // Post-processing that needs host results is deferred until after replay.
  after_replay = [&]() {
    thrust::device_ptr<float> ts(top_s);
    const float mass = thrust::reduce(thrust::cuda::par.on(s), ts, ts + users * k, 0.0f);
    thrust::sort(thrust::cuda::par.on(s), ts, ts + users * k);
    std::printf("top-k mass %f (initial %f)\n", mass, initial_mass);
  };
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  for (int it = 0; it < 20; ++it) {
    CUDA_CHECK(cudaGraphLaunch(exec, s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  after_replay();

  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(s));
  for (void* p : {static_cast<void*>(scores), static_cast<void*>(ids), static_cast<void*>(top_s),
                  static_cast<void*>(top_i), ws.temp, static_cast<void*>(ws.keys_out),
                  static_cast<void*>(ws.vals_out), static_cast<void*>(ws.offsets), static_cast<void*>(ws.sum)}) {
    CUDA_CHECK(cudaFree(p));
  }
  return 0;
}
