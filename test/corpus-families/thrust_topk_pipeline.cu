// Retrieval re-ranking pipeline: score candidates, keep the top k, normalise.
//
// The eager path uses Thrust throughout. The graph path was obtained by
// wrapping the same calls in stream capture; the CUB-based variant at the
// bottom is what the graph path is being migrated to.

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/extrema.h>
#include <thrust/for_each.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/unique.h>

#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(x)                                                              \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

struct AboveThreshold {
  float t;
  __host__ __device__ bool operator()(float s) const { return s > t; }
};

struct ExpShift {
  float shift;
  __host__ __device__ float operator()(float s) const { return expf(s - shift); }
};

struct Candidates {
  int n = 0;
  float* scores = nullptr;
  int* ids = nullptr;
  int* bucket = nullptr;
  float* probs = nullptr;
  int* kept = nullptr;
};

__global__ void score_candidates(const float* q, const float* emb, float* scores, int* ids, int n, int dim) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float acc = 0.0f;
    for (int d = 0; d < dim; ++d) {
      acc += q[d] * emb[static_cast<size_t>(i) * dim + d];
    }
    scores[i] = acc;
    ids[i] = i;
  }
}

__global__ void gather_topk(const float* scores, const int* ids, float* out_s, int* out_i, int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < k) {
    out_s[i] = scores[i];
    out_i[i] = ids[i];
  }
}

// Sorts candidates by descending score; used by both paths.
template <typename Policy>
void sort_desc(const Policy& policy, Candidates& c) {
  thrust::device_ptr<float> s(c.scores);
  thrust::device_ptr<int> id(c.ids);
  thrust::sort_by_key(policy, s, s + c.n, id, thrust::greater<float>()); // expect: cudagraph-capture-unsafe-call
}

template <typename Policy>
float softmax_denominator(const Policy& policy, const Candidates& c, float shift) {
  thrust::device_ptr<float> s(c.scores);
  return thrust::transform_reduce(policy, s, s + c.n, ExpShift{shift}, 0.0f, thrust::plus<float>()); // expect: cudagraph-capture-unsafe-call
}

// Offline quality check: never part of a graph.
static void validate(const Candidates& c, cudaStream_t s) {
  thrust::device_ptr<float> sc(c.scores);
  const float total = thrust::reduce(thrust::cuda::par.on(s), sc, sc + c.n, 0.0f);
  const auto best = thrust::max_element(thrust::cuda::par.on(s), sc, sc + c.n);
  std::printf("total %f, best index %ld\n", total, static_cast<long>(best - sc));
}

int main() {
  const int n = 1 << 18, dim = 64, threads = 256;
  int k = 100;
  Candidates c;
  c.n = n;
  float *d_q = nullptr, *d_emb = nullptr, *d_top_s = nullptr;
  int* d_top_i = nullptr;
  CUDA_CHECK(cudaMalloc(&d_q, sizeof(float) * dim));
  CUDA_CHECK(cudaMalloc(&d_emb, sizeof(float) * n * dim));
  CUDA_CHECK(cudaMalloc(&c.scores, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&c.ids, sizeof(int) * n));
  CUDA_CHECK(cudaMalloc(&c.bucket, sizeof(int) * n));
  CUDA_CHECK(cudaMalloc(&c.probs, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&c.kept, sizeof(int) * n));
  CUDA_CHECK(cudaMalloc(&d_top_s, sizeof(float) * 1024));
  CUDA_CHECK(cudaMalloc(&d_top_i, sizeof(int) * 1024));

  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int blocks = (n + threads - 1) / threads;

  // Eager run: Thrust is fine here.
  score_candidates<<<blocks, threads, 0, s>>>(d_q, d_emb, c.scores, c.ids, n, dim);
  sort_desc(thrust::cuda::par.on(s), c);
  validate(c, s);

  thrust::device_ptr<float> sc(c.scores);
  thrust::device_ptr<float> pr(c.probs);
  thrust::device_ptr<int> bk(c.bucket);
  thrust::device_ptr<int> kp(c.kept);
  const float shift = 10.0f;
  auto bucketize = [&](cudaStream_t st) {
    thrust::transform(thrust::cuda::par_nosync.on(st), sc, sc + n, bk, [] __host__ __device__ (float v) { return static_cast<int>(v * 4.0f); });
    thrust::exclusive_scan(thrust::cuda::par.on(st), bk, bk + n, bk); // expect: cudagraph-capture-unsafe-call
  };

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  score_candidates<<<blocks, threads, 0, s>>>(d_q, d_emb, c.scores, c.ids, n, dim);
  sort_desc(thrust::cuda::par.on(s), c);
  gather_topk<<<(k + threads - 1) / threads, threads, 0, s>>>(c.scores, c.ids, d_top_s, d_top_i, k);
  const float denom = softmax_denominator(thrust::cuda::par.on(s), c, shift);
  thrust::transform(thrust::cuda::par_nosync.on(s), sc, sc + n, pr, ExpShift{shift});
  thrust::for_each(thrust::cuda::par_nosync.on(s), thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n), [p = c.probs, denom] __device__ (int i) { p[i] /= denom; });
  const auto confident = thrust::count_if(thrust::cuda::par.on(s), pr, pr + n, AboveThreshold{1e-4f}); // expect: cudagraph-capture-unsafe-call
  const float mass = thrust::reduce(thrust::cuda::par.on(s), pr, pr + n, 0.0f); // expect: cudagraph-capture-unsafe-call
  thrust::inclusive_scan(thrust::device, pr, pr + n, pr); // expect: cudagraph-capture-unsafe-call
  bucketize(s);
  auto kept_end = thrust::copy_if(thrust::cuda::par.on(s), thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n), sc, kp, AboveThreshold{0.0f}); // expect: cudagraph-capture-unsafe-call
  auto uniq_end = thrust::unique(thrust::cuda::par.on(s), bk, bk + n); // expect: cudagraph-capture-unsafe-call
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::printf("captured: %ld confident, mass %f, %ld kept, %ld buckets\n", static_cast<long>(confident), mass,
              static_cast<long>(kept_end - kp), static_cast<long>(uniq_end - bk));

  for (int q = 0; q < 8; ++q) {
    k = 50 + 10 * q; // expect: cudagraph-frozen-host-state
    CUDA_CHECK(cudaGraphLaunch(exec, s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));

  // CUB path with caller-provided temporary storage: capture-safe.
  void* d_temp = nullptr;
  size_t sort_bytes = 0, sum_bytes = 0;
  float* d_sorted_s = nullptr;
  int* d_sorted_i = nullptr;
  float* d_sum = nullptr;
  CUDA_CHECK(cudaMalloc(&d_sorted_s, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&d_sorted_i, sizeof(int) * n));
  CUDA_CHECK(cudaMalloc(&d_sum, sizeof(float)));
  CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_bytes, c.scores, d_sorted_s, c.ids, d_sorted_i, n, 0, 32, s));
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, sum_bytes, c.probs, d_sum, n, s));
  CUDA_CHECK(cudaMalloc(&d_temp, sort_bytes > sum_bytes ? sort_bytes : sum_bytes));

  cudaGraph_t cub_graph = nullptr;
  cudaGraphExec_t cub_exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  score_candidates<<<blocks, threads, 0, s>>>(d_q, d_emb, c.scores, c.ids, n, dim);
  CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(d_temp, sort_bytes, c.scores, d_sorted_s, c.ids, d_sorted_i, n, 0, 32, s));
  gather_topk<<<1, 128, 0, s>>>(d_sorted_s, d_sorted_i, d_top_s, d_top_i, 100);
  thrust::transform(thrust::cuda::par_nosync.on(s), sc, sc + n, pr, ExpShift{shift});
  CUDA_CHECK(cub::DeviceReduce::Sum(d_temp, sum_bytes, c.probs, d_sum, n, s));
  CUDA_CHECK(cudaStreamEndCapture(s, &cub_graph));
  CUDA_CHECK(cudaGraphInstantiate(&cub_exec, cub_graph, 0));
  for (int q = 0; q < 8; ++q) {
    CUDA_CHECK(cudaGraphLaunch(cub_exec, s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  validate(c, s);

  CUDA_CHECK(cudaGraphExecDestroy(cub_exec));
  CUDA_CHECK(cudaGraphDestroy(cub_graph));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(s));
  for (void* p : {static_cast<void*>(d_q), static_cast<void*>(d_emb), static_cast<void*>(c.scores),
                  static_cast<void*>(c.ids), static_cast<void*>(c.bucket), static_cast<void*>(c.probs),
                  static_cast<void*>(c.kept), static_cast<void*>(d_top_s), static_cast<void*>(d_top_i),
                  static_cast<void*>(d_temp), static_cast<void*>(d_sorted_s), static_cast<void*>(d_sorted_i),
                  static_cast<void*>(d_sum)}) {
    CUDA_CHECK(cudaFree(p));
  }
  return 0;
}
