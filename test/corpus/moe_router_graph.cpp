// Mixture-of-experts block used in the decode path. Two execution modes:
//  * "grouped": gathers the tokens routed to each expert and runs only those;
//  * "padded": every expert processes a fixed-capacity slice chosen on device.
// The decode path is captured into a CUDA graph once per batch size.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <tuple>
#include <vector>

namespace moe {

enum class ExecMode { kGrouped, kPadded };

struct MoEConfig {
  int64_t hidden = 2048;
  int64_t ffn = 1408;
  int64_t num_experts = 16;
  int64_t top_k = 2;
  int64_t capacity = 64;
  bool renormalize = true;
  bool track_load = false;
};

// Offsets of each expert's slice after sorting tokens by expert id.
torch::Tensor expert_offsets(const torch::Tensor& topk_ids, int64_t num_experts) {
  auto flat = topk_ids.flatten();
  auto counts = torch::zeros({num_experts}, flat.options());
  counts.scatter_add_(0, flat, torch::ones_like(flat));
  return torch::cat({torch::zeros({1}, counts.options()), counts.cumsum(0)});
}

// Indices of the first `capacity` set entries of a 1-D mask, padded with the
// last row index. Fixed output shape.
torch::Tensor first_k_indices(const torch::Tensor& mask, int64_t capacity) {
  auto order = torch::argsort(mask.to(torch::kInt), /*dim=*/0, /*descending=*/true);
  auto k = std::min<int64_t>(capacity, mask.size(0));
  return order.narrow(0, 0, k);
}

class MoEBlock {
 public:
  explicit MoEBlock(const MoEConfig& cfg) : cfg_(cfg) {
    auto opts = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
    gate_ = torch::randn({cfg.hidden, cfg.num_experts}, opts) * 0.02;
    for (int64_t e = 0; e < cfg.num_experts; ++e) {
      w_in_.push_back(torch::randn({cfg.hidden, cfg.ffn}, opts) * 0.02);
      w_out_.push_back(torch::randn({cfg.ffn, cfg.hidden}, opts) * 0.02);
    }
    load_ = torch::zeros({cfg.num_experts}, opts.dtype(torch::kFloat));
  }

  std::tuple<torch::Tensor, torch::Tensor> route(const torch::Tensor& x) {
    auto scores = torch::softmax(torch::matmul(x, gate_).to(torch::kFloat), -1);
    torch::Tensor w, ids;
    std::tie(w, ids) = scores.topk(cfg_.top_k, -1);
    if (cfg_.renormalize) {
      w = w / w.sum(-1, /*keepdim=*/true);
    }
    return std::make_tuple(w, ids);
  }

  torch::Tensor expert_mlp(int64_t e, const torch::Tensor& xs) {
    return torch::matmul(torch::silu(torch::matmul(xs, w_in_[e])), w_out_[e]);
  }

  torch::Tensor forward_grouped(const torch::Tensor& x) {
    torch::Tensor w, ids;
    std::tie(w, ids) = route(x);
    auto out = torch::zeros_like(x);
    for (int64_t e = 0; e < cfg_.num_experts; ++e) {
      auto hit = ids.eq(e);
      auto rows = torch::nonzero(hit.any(-1)).squeeze(-1); // expect: cudagraph-host-sync
      auto gate_w = (w * hit.to(w.scalar_type())).sum(-1, /*keepdim=*/true).index_select(0, rows);
      out.index_add_(0, rows, expert_mlp(e, x.index_select(0, rows)) * gate_w.to(x.scalar_type()));
    }
    if (cfg_.track_load) {
      update_load_stats(ids);
      if (load_imbalance() > 4.0f) { // expect: cudagraph-data-dependent-branch
        load_.zero_();
      }
    }
    return out;
  }

  torch::Tensor forward_padded(const torch::Tensor& x) {
    torch::Tensor w, ids;
    std::tie(w, ids) = route(x);
    auto out = torch::zeros_like(x);
    for (int64_t e = 0; e < cfg_.num_experts; ++e) {
      auto hit = ids.eq(e);
      auto mask = hit.any(-1);
#if TORCH_VERSION_MAJOR >= 2
      auto rows = at::nonzero_static(mask, cfg_.capacity, /*fill_value=*/0).squeeze(-1);
#else
      auto rows = first_k_indices(mask, cfg_.capacity);
#endif
      auto valid = mask.index_select(0, rows).unsqueeze(-1).to(x.scalar_type());
      auto gate_w = (w * hit.to(w.scalar_type())).sum(-1, /*keepdim=*/true).index_select(0, rows);
      auto y = expert_mlp(e, x.index_select(0, rows)) * gate_w.to(x.scalar_type()) * valid;
      out.index_add_(0, rows, y);
    }
    return out;
  }

  void update_load_stats(const torch::Tensor& ids) {
    auto sorted = std::get<0>(ids.flatten().sort());
    torch::Tensor experts, inverse, counts;
    std::tie(experts, inverse, counts) = torch::unique_consecutive(sorted, false, /*return_counts=*/true); // expect: cudagraph-host-sync
    load_.index_add_(0, experts, counts.to(torch::kFloat));
    last_counts_ = counts.to(at::kCPU); // expect: cudagraph-host-sync
  }

  // max/mean ratio of the accumulated expert load.
  float load_imbalance() const {
    auto mean = load_.mean().clamp_min(1.0);
    return (load_.max() / mean).item<float>(); // expect: cudagraph-host-sync
  }

  torch::Tensor load() const { return load_; }

 private:
  MoEConfig cfg_;
  torch::Tensor gate_, load_, last_counts_;
  std::vector<torch::Tensor> w_in_, w_out_;
};

class MoEGraphCache {
 public:
  MoEGraphCache(MoEBlock& block, ExecMode mode) : block_(block), mode_(mode) {}

  torch::Tensor run_mode(const torch::Tensor& x) {
    return mode_ == ExecMode::kGrouped ? block_.forward_grouped(x) : block_.forward_padded(x);
  }

  void capture(const std::vector<int64_t>& batch_sizes, int64_t hidden) {
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    for (int64_t bs : batch_sizes) {
      auto in = torch::zeros({bs, hidden}, torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA));
      run_mode(in);
      stream.synchronize();

      auto graph = std::make_shared<at::cuda::CUDAGraph>();
      graph->capture_begin();
      auto out = run_mode(in);
      graph->capture_end();
      entries_.push_back({bs, graph, in, out});
    }
  }

  // Load histogram for the last replay, fetched for the metrics endpoint.
  std::vector<float> expert_histogram() {
    auto host = block_.load().to(torch::kCPU);
    auto distinct = std::get<0>(at::_unique(host.nonzero().flatten()));
    std::vector<float> hist(host.data_ptr<float>(), host.data_ptr<float>() + host.numel());
    if (distinct.numel() == 0) {
      hist.clear();
    }
    return hist;
  }

 private:
  struct Entry {
    int64_t bs;
    std::shared_ptr<at::cuda::CUDAGraph> graph;
    torch::Tensor in, out;
  };
  MoEBlock& block_;
  ExecMode mode_;
  std::vector<Entry> entries_;
};

}  // namespace moe
