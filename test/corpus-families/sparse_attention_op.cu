// Block-sparse attention custom op with attention dropout, and a graphed
// decoder layer that calls it. Graph-safe by construction: kernels run on
// the current stream, scratch comes from the caching allocator and the
// dropout RNG uses philox_cuda_state.

#include <torch/torch.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace sparse {

constexpr int kBlock = 64;

__global__ void block_scores(const float* q, const float* k, const int* layout, float* scores,
                             int seq, int dim, float scale) {
  extern __shared__ float tile[];
  const int qb = blockIdx.x, kb = blockIdx.y;
  const int nb = seq / kBlock;
  if (!layout[qb * nb + kb]) {
    return;
  }
  const int r = threadIdx.x;
  for (int c = 0; c < kBlock; ++c) {
    float acc = 0.0f;
    for (int d = 0; d < dim; ++d) {
      acc += q[(qb * kBlock + r) * dim + d] * k[(kb * kBlock + c) * dim + d];
    }
    tile[r * kBlock + c] = acc * scale;
  }
  __syncthreads();
  for (int c = 0; c < kBlock; ++c) {
    scores[(qb * kBlock + r) * seq + kb * kBlock + c] = tile[r * kBlock + c];
  }
}

__global__ void dropout_mask(float* probs, int64_t n, float keep, at::PhiloxCudaState philox) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    // The real kernel unpacks the state with at::cuda::philox::unpack and draws
    // with curand_init/curand_uniform; this stand-in only hashes the index.
    const float u = static_cast<float>((i * 2654435761u) & 0xffff) / 65535.0f;
    probs[i] = u < keep ? probs[i] / keep : 0.0f;
  }
}

torch::Tensor block_sparse_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     const torch::Tensor& layout, double scale, double dropout_p) {
  TORCH_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(), "inputs must be CUDA tensors");
  TORCH_CHECK(q.size(0) % kBlock == 0, "sequence length must be a multiple of ", kBlock);
  const c10::cuda::CUDAGuard guard(q.device());
  const int seq = static_cast<int>(q.size(0));
  const int dim = static_cast<int>(q.size(1));
  auto stream = at::cuda::getCurrentCUDAStream();
  auto scores = at::empty({seq, seq}, q.options());
  C10_CUDA_CHECK(cudaMemsetAsync(scores.data_ptr<float>(), 0, scores.nbytes(), stream));
  const size_t smem = kBlock * kBlock * sizeof(float);
  C10_CUDA_CHECK(cudaFuncSetAttribute(block_scores, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  const dim3 grid(seq / kBlock, seq / kBlock);
  block_scores<<<grid, kBlock, smem, stream>>>(q.data_ptr<float>(), k.data_ptr<float>(), layout.data_ptr<int>(), scores.data_ptr<float>(), seq, dim, static_cast<float>(scale));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  const int64_t nb = layout.size(0);
  auto dense_layout = layout.view({nb, 1, nb, 1}).expand({nb, kBlock, nb, kBlock}).reshape({seq, seq});
  auto probs = torch::softmax(torch::where(dense_layout.to(torch::kBool), scores, torch::full_like(scores, -1e9)), -1).contiguous();
  if (dropout_p > 0.0) {
    auto gen = at::cuda::detail::getDefaultCUDAGenerator();
    at::PhiloxCudaState philox;
    {
      auto* impl = at::check_generator<at::CUDAGeneratorImpl>(gen);
      std::lock_guard<std::mutex> lock(gen.mutex());
      philox = impl->philox_cuda_state(static_cast<uint64_t>(probs.numel()));
    }
    const int64_t n = probs.numel();
    dropout_mask<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(probs.data_ptr<float>(), n, static_cast<float>(1.0 - dropout_p), philox);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return torch::matmul(probs, v);
}

// Eager-only reference for tests; uses the legacy stream and its own generator.
torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  at::Generator gen = at::cuda::detail::createCUDAGenerator();
  gen.set_current_seed(0);
  auto noise = at::randn({q.size(0), k.size(0)}, gen, q.options()) * 1e-7;
  auto scores = at::empty({q.size(0), k.size(0)}, q.options());
  C10_CUDA_CHECK(cudaMemsetAsync(scores.data_ptr<float>(), 0, scores.nbytes(), 0));
  return torch::matmul(torch::softmax(torch::matmul(q, k.t()) + noise + scores, -1), v);
}

class GraphedLayer {
 public:
  GraphedLayer(int64_t dim, double scale)
      : dim_(dim), scale_(scale), main_(c10::cuda::getStreamFromPool()), side_(c10::cuda::getStreamFromPool()) {
    auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    wq_ = torch::randn({dim, dim}, f32) * 0.02;
    wk_ = torch::randn({dim, dim}, f32) * 0.02;
    wv_ = torch::randn({dim, dim}, f32) * 0.02;
    head_bias_ = torch::tensor({0.0f, 0.01f, -0.01f, 0.02f}, f32);
  }

  void capture(int64_t seq) {
    auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    auto e = std::make_unique<Entry>();
    e->x = torch::zeros({seq, dim_}, f32);
    e->layout = torch::ones({seq / kBlock, seq / kBlock}, f32.dtype(torch::kInt)).tril().contiguous();
    captured_scale_ = scale_;
    c10::cuda::CUDAStreamGuard guard(main_);
    e->out = forward(*e);  // warm-up
    e->graph.capture_begin();
    e->out = forward(*e);
    e->graph.capture_end();
    graphs_[seq] = std::move(e);
  }

  torch::Tensor run(const torch::Tensor& x) {
    const int64_t seq = x.size(0);
    if (scale_ != captured_scale_ || graphs_.count(seq) == 0) {
      capture(seq);
    }
    Entry& e = *graphs_.at(seq);
    e.x.copy_(x);
    e.graph.replay();
    return e.out;
  }

  void set_scale(double s) { scale_ = s; graphs_.clear(); }

 private:
  struct Entry {
    at::cuda::CUDAGraph graph;
    torch::Tensor x, layout, out;
  };

  torch::Tensor forward(Entry& e) {
    auto q = torch::matmul(e.x, wq_).contiguous();
    fork_.record(main_);
    fork_.block(side_);
    torch::Tensor k, v;
    {
      c10::cuda::CUDAStreamGuard on_side(side_);
      k = torch::matmul(e.x, wk_).contiguous();
      v = torch::matmul(e.x, wv_).contiguous();
    }
    join_.record(side_);
    join_.block(main_);
    auto y = block_sparse_attention(q, k, v, e.layout, scale_, 0.1);
    auto rows = torch::arange(y.size(0), y.options().dtype(torch::kLong)) % head_bias_.size(0);
    auto bias = head_bias_.index({rows}).unsqueeze(1);
    last_seed_ = at::cuda::detail::getDefaultCUDAGenerator().current_seed();
    return (y + bias).to(e.x);
  }

  int64_t dim_;
  double scale_;
  double captured_scale_ = 0.0;
  uint64_t last_seed_ = 0;
  c10::cuda::CUDAStream main_, side_;
  at::cuda::CUDAEvent fork_, join_;
  torch::Tensor wq_, wk_, wv_, head_bias_;
  std::map<int64_t, std::unique_ptr<Entry>> graphs_;
};

}  // namespace sparse

int main() {
  torch::manual_seed(0);
  sparse::GraphedLayer layer(128, 1.0 / std::sqrt(128.0));
  auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
  for (int64_t seq : {256, 512, 256}) {
    auto y = layer.run(torch::randn({seq, 128}, f32));
    std::cout << seq << " -> " << y.sizes() << "\n";
  }
  layer.set_scale(0.1);
  auto y = layer.run(torch::randn({256, 128}, f32));
  auto ref = sparse::reference_attention(torch::randn({256, 128}, f32), torch::randn({256, 128}, f32), torch::randn({256, 128}, f32));
  std::cout << y.sizes() << " " << ref.sizes() << "\n";
  return 0;
}
