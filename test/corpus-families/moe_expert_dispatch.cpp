// Mixture-of-experts layer with top-k routing, captured with libtorch's
// CUDAGraph. Token permutation scratch space is managed with the raw CUDA
// runtime because the permute kernels of the production build take raw
// pointers; this file keeps only the host-side orchestration.

#include <torch/torch.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

namespace moe {

// Grows on demand; never shrinks.
class ScratchBuffer {
 public:
  ~ScratchBuffer() {
    if (ptr_ != nullptr) {
      cudaFree(ptr_);
    }
  }

  void* ensure(size_t bytes) {
    if (bytes > capacity_) {
      if (ptr_ != nullptr) {
        C10_CUDA_CHECK(cudaFree(ptr_)); // expect: cudagraph-device-alloc
      }
      C10_CUDA_CHECK(cudaMalloc(&ptr_, bytes)); // expect: cudagraph-device-alloc
      capacity_ = bytes;
    }
    return ptr_;
  }

 private:
  void* ptr_ = nullptr;
  size_t capacity_ = 0;
};

struct MoeConfig {
  int64_t tokens = 256;
  int64_t hidden = 512;
  int64_t ffn = 1024;
  int64_t experts = 8;
  int64_t top_k = 2;
  double router_jitter = 0.01;
};

class MoeLayer {
 public:
  explicit MoeLayer(const MoeConfig& cfg)
      : cfg_(cfg), router_gen_(at::cuda::detail::createCUDAGenerator()) {
    auto f16 = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
    router_w_ = torch::randn({cfg.hidden, cfg.experts}, f16) * 0.02;
    w_in_ = torch::randn({cfg.experts, cfg.hidden, cfg.ffn}, f16) * 0.02;
    w_out_ = torch::randn({cfg.experts, cfg.ffn, cfg.hidden}, f16) * 0.02;
    // Host-side tables used for load accounting.
    capacity_cpu_ = torch::full({cfg.experts}, cfg.tokens * cfg.top_k / cfg.experts + 8, torch::kLong);
    capacity_pinned_ = capacity_cpu_.pin_memory();
    host_counts_ = torch::zeros({cfg.experts}, torch::kLong);
    // Eager uploads before any capture are fine.
    capacity_dev_ = capacity_cpu_.to(torch::kCUDA, /*non_blocking=*/true);
  }

  // Dense, capture-friendly dispatch: every expert sees every token, masked.
  torch::Tensor forward_dense(const torch::Tensor& x, cudaStream_t stream) {
    auto logits = torch::matmul(x, router_w_).to(torch::kFloat);
    auto noise = at::rand(logits.sizes(), router_gen_, logits.options()); // expect: cudagraph-rng-generator
    auto topk = (logits + noise * cfg_.router_jitter).topk(cfg_.top_k, -1);
    auto gates = torch::softmax(std::get<0>(topk), -1);
    auto ids = std::get<1>(topk);
    auto out = torch::zeros_like(x);
    for (int64_t e = 0; e < cfg_.experts; ++e) {
      auto hit = ids.eq(e);
      auto gate = torch::where(hit, gates, torch::zeros_like(gates)).sum(-1, true);
      auto h = torch::gelu(torch::matmul(x, w_in_[e]));
      out += torch::matmul(h, w_out_[e]) * gate.to(x.scalar_type());
    }
    permute_scratch(x, ids, stream);
    return out;
  }

  // Sparse dispatch: gathers the tokens routed to each expert.
  torch::Tensor forward_sparse(const torch::Tensor& x) {
    auto logits = torch::matmul(x, router_w_).to(torch::kFloat);
    auto jitter = at::rand(logits.sizes(), logits.options());
    auto ids = std::get<1>((logits + jitter * cfg_.router_jitter).topk(cfg_.top_k, -1));
    auto out = torch::zeros_like(x);
    for (int64_t e = 0; e < cfg_.experts; ++e) {
      auto routed = ids.eq(e).any(-1);
      auto rows = x.index({routed}); // expect: cudagraph-host-sync
      auto positions = at::where(routed); // expect: cudagraph-host-sync
      auto y = torch::matmul(torch::gelu(torch::matmul(rows, w_in_[e])), w_out_[e]);
      out.index_add_(0, positions[0], y);
    }
    auto order = ids.select(-1, 0).argsort();
    last_sorted_ = x.index({order});
    last_counts_dev_ = expert_histogram(ids);
    return out;
  }

  void account_load(const torch::Tensor& ids) {
    auto counts = expert_histogram(ids);
    auto counts_host = counts.to(host_counts_); // expect: cudagraph-host-sync
    auto caps = capacity_cpu_.to(torch::kCUDA, /*non_blocking=*/true); // expect: cudagraph-host-sync
    auto caps_pinned = capacity_pinned_.to(torch::kCUDA, /*non_blocking=*/true);
    overflow_ = (counts - caps).clamp_min(0) + (counts - caps_pinned).clamp_min(0);
    load_fraction_ = counts.to(torch::kFloat).div(static_cast<double>(ids.numel()));
    load_on_device_ = counts.to(capacity_dev_);
    (void)counts_host;
  }

  torch::Tensor last_ids(const torch::Tensor& x) {
    return std::get<1>(torch::matmul(x, router_w_).topk(cfg_.top_k, -1));
  }

 private:
  // Fixed-size histogram (bincount would size its output from a device max).
  torch::Tensor expert_histogram(const torch::Tensor& ids) const {
    auto flat = ids.flatten();
    return torch::zeros({cfg_.experts}, flat.options()).scatter_add_(0, flat, torch::ones_like(flat));
  }

  void permute_scratch(const torch::Tensor& x, const torch::Tensor& ids, cudaStream_t stream) {
    const size_t bytes = static_cast<size_t>(x.numel()) * x.element_size();
    void* perm = scratch_.ensure(bytes);
    C10_CUDA_CHECK(cudaMemsetAsync(perm, 0, bytes, stream));
    C10_CUDA_CHECK(cudaMemsetAsync(perm, 0, static_cast<size_t>(ids.numel()) * sizeof(int64_t))); // expect: cudagraph-legacy-stream
    void* sorted_ids = nullptr;
    C10_CUDA_CHECK(cudaMallocAsync(&sorted_ids, static_cast<size_t>(ids.numel()) * sizeof(int64_t), stream));
    C10_CUDA_CHECK(cudaMemcpyAsync(sorted_ids, ids.data_ptr(), static_cast<size_t>(ids.numel()) * sizeof(int64_t), cudaMemcpyDeviceToDevice, stream));
    C10_CUDA_CHECK(cudaFreeAsync(sorted_ids, stream));
  }

  MoeConfig cfg_;
  at::Generator router_gen_;
  ScratchBuffer scratch_;
  torch::Tensor router_w_, w_in_, w_out_;
  torch::Tensor capacity_cpu_, capacity_pinned_, capacity_dev_, host_counts_;
  torch::Tensor overflow_, load_fraction_, load_on_device_, last_sorted_, last_counts_dev_;
};

class MoeGraph {
 public:
  MoeGraph(MoeLayer& layer, const MoeConfig& cfg)
      : layer_(layer), stream_(c10::cuda::getStreamFromPool()), stats_stream_(c10::cuda::getStreamFromPool()) {
    static_x_ = torch::zeros({cfg.tokens, cfg.hidden},
                             torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA));
  }

  void capture() {
    c10::cuda::CUDAStreamGuard guard(stream_);
    // Eager pass over the sparse path and the accounting (loads kernels, cuBLAS).
    auto warm = layer_.forward_sparse(static_x_);
    layer_.account_load(layer_.last_ids(static_x_));
    graph_.capture_begin();
    static_dense_ = layer_.forward_dense(static_x_, stream_.stream());
    static_sparse_ = layer_.forward_sparse(static_x_);
    // Load accounting is off the critical path: run it on the stats stream.
    stats_fork_.record(stream_);
    stats_fork_.block(stats_stream_); // expect: cudagraph-unjoined-fork
    {
      c10::cuda::CUDAStreamGuard on_stats(stats_stream_);
      layer_.account_load(layer_.last_ids(static_x_));
    }
    graph_.capture_end();
    (void)warm;
  }

  torch::Tensor run(const torch::Tensor& x) {
    static_x_.copy_(x);
    graph_.replay();
    return static_dense_ + static_sparse_;
  }

 private:
  MoeLayer& layer_;
  c10::cuda::CUDAStream stream_;
  c10::cuda::CUDAStream stats_stream_;
  at::cuda::CUDAEvent stats_fork_;
  at::cuda::CUDAGraph graph_;
  torch::Tensor static_x_, static_dense_, static_sparse_;
};

}  // namespace moe

int main() {
  moe::MoeConfig cfg;
  moe::MoeLayer layer(cfg);
  auto f16 = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
  // Eager sparse path for the reference output, outside of capture.
  auto reference = layer.forward_sparse(torch::randn({cfg.tokens, cfg.hidden}, f16));
  moe::MoeGraph graph(layer, cfg);
  graph.capture();
  for (int i = 0; i < 4; ++i) {
    auto y = graph.run(torch::randn({cfg.tokens, cfg.hidden}, f16));
    std::printf("step %d: %lld elements\n", i, static_cast<long long>(y.numel()));
  }
  std::printf("reference %lld\n", static_cast<long long>(reference.numel()));
  return 0;
}
