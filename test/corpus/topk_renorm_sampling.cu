// Top-k renormalization + sampling as a custom op. One block per row finds
// the k-th largest probability by bisection, zeroes everything below it and
// draws a token with a caller-provided uniform sample. Exercised by a small
// graph-capture test at the bottom.

#include <torch/torch.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

#include <iostream>

namespace sampling {

template <typename scalar_t>
__global__ void topk_renorm_sample_kernel(const scalar_t* __restrict__ probs, const float* __restrict__ uniform,
                                          int64_t* __restrict__ out, int vocab, int k) {
  const int row = blockIdx.x;
  const scalar_t* p = probs + static_cast<int64_t>(row) * vocab;
  __shared__ float s_lo, s_hi, s_mass;
  if (threadIdx.x == 0) {
    s_lo = 0.0f;
    s_hi = 1.0f;
  }
  __syncthreads();
  for (int iter = 0; iter < 20; ++iter) {
    const float mid = 0.5f * (s_lo + s_hi);
    int count = 0;
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
      count += static_cast<float>(p[i]) >= mid ? 1 : 0;
    }
    for (int off = 16; off > 0; off >>= 1) {
      count += __shfl_xor_sync(0xffffffffu, count, off);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      if (count >= k) {
        s_lo = mid;
      } else {
        s_hi = mid;
      }
    }
    __syncthreads();
  }
  float mass = 0.0f;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float v = static_cast<float>(p[i]);
    mass += v >= s_lo ? v : 0.0f;
  }
  for (int off = 16; off > 0; off >>= 1) {
    mass += __shfl_xor_sync(0xffffffffu, mass, off);
  }
  if (threadIdx.x == 0) {
    s_mass = mass;
    const float target = uniform[row] * s_mass;
    float acc = 0.0f;
    int64_t pick = 0;
    for (int i = 0; i < vocab; ++i) {
      const float v = static_cast<float>(p[i]);
      if (v >= s_lo) {
        acc += v;
        pick = i;
        if (acc >= target) break;
      }
    }
    out[row] = pick;
  }
}

torch::Tensor topk_renorm_sample(const torch::Tensor& probs, const torch::Tensor& uniform, int64_t k) {
  TORCH_CHECK(probs.is_cuda(), "probs must be on CUDA");
  TORCH_CHECK(probs.dim() == 2, "probs must be [batch, vocab]");
  TORCH_CHECK(uniform.numel() == probs.size(0), "one uniform sample per row");
  TORCH_CHECK(probs.size(1) <= (1 << 20), "vocabulary too large");
  const at::cuda::OptionalCUDAGuard guard(probs.device());
  auto p = probs.is_contiguous() ? probs : probs.contiguous();
  auto u = uniform.to(torch::kFloat);
  auto out = torch::empty({probs.size(0)}, probs.options().dtype(torch::kLong));
  const int vocab = static_cast<int>(p.size(1));
  const int kk = static_cast<int>(k < vocab ? k : vocab);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(p.scalar_type(), "topk_renorm_sample", [&] {
    topk_renorm_sample_kernel<scalar_t><<<static_cast<unsigned>(p.size(0)), 32, 0, stream>>>(
        p.data_ptr<scalar_t>(), u.data_ptr<float>(), out.data_ptr<int64_t>(), vocab, kk);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace sampling

int main() {
  const int64_t batch = 16, vocab = 32000, k = 40;
  auto dev = torch::TensorOptions().device(torch::kCUDA);
  auto logits = torch::randn({batch, vocab}, dev);
  auto static_probs = torch::softmax(logits, -1);
  auto static_uniform = torch::rand({batch}, dev);

  auto stream = c10::cuda::getStreamFromPool();
  c10::cuda::CUDAStreamGuard guard(stream);
  auto eager = sampling::topk_renorm_sample(static_probs, static_uniform, k);
  stream.synchronize();
  const int64_t first = eager[0].item<int64_t>();

  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  static_uniform.uniform_();
  auto tokens = sampling::topk_renorm_sample(static_probs, static_uniform, k);
  auto host_tokens = tokens.to(torch::kCPU, /*non_blocking=*/true);
  graph.capture_end();

  graph.replay();
  stream.synchronize();
  auto host = tokens.to(torch::kCPU);
  std::cout << "first token eager " << first << ", replay " << host[0].item<int64_t>() << std::endl;
  return 0;
}
