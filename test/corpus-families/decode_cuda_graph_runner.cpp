// Decode-step CUDA graph runner for a small paged-attention language model.
//
// One graph is captured per padded batch size and all graphs share one
// memory pool. Requests are copied into the static buffers of the bucket that
// fits and the bucket's graph is replayed. A second, single-shape graph runs
// the draft ("medusa") heads on the last hidden state.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <vector>

namespace serving {

struct RunnerConfig {
  std::vector<int64_t> batch_sizes{1, 2, 4, 8, 16};
  int64_t hidden = 1024;
  int64_t vocab = 32000;
  int64_t max_blocks = 64;
  double temperature = 1.0;
  std::vector<int64_t> banned_tokens{0, 3, 17};
};

struct DecodeRequest {
  torch::Tensor ids;        // [n] int64, CUDA
  torch::Tensor positions;  // [n] int64, CUDA
  torch::Tensor tables;     // [n, max_blocks] int32, CUDA
  double temperature = 1.0;
};

class ToyDecoder {
 public:
  explicit ToyDecoder(const RunnerConfig& cfg) : cfg_(cfg) {
    auto opts = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
    embed_ = torch::randn({cfg.vocab, cfg.hidden}, opts) * 0.02;
    proj_ = torch::randn({cfg.hidden, cfg.hidden}, opts) * 0.02;
    head_ = torch::randn({cfg.hidden, cfg.vocab}, opts) * 0.02;
  }

  torch::Tensor hidden(const torch::Tensor& ids, const torch::Tensor& positions,
                       const torch::Tensor& tables) const {
    auto h = embed_.index_select(0, ids);
    auto rot = positions.to(torch::kHalf).unsqueeze(1) * 1e-4;
    auto blocks = tables.to(torch::kHalf).mean(1, /*keepdim=*/true) * 1e-3;
    return torch::gelu(torch::matmul(h + rot + blocks, proj_));
  }

  torch::Tensor logits(const torch::Tensor& h) const {
    return torch::matmul(h, head_).to(torch::kFloat);
  }

 private:
  RunnerConfig cfg_;
  torch::Tensor embed_, proj_, head_;
};

// Buffers and graph for one padded batch size.
struct BucketGraph {
  at::cuda::CUDAGraph graph;
  torch::Tensor ids, positions, tables, out;
};

class DecodeGraphRunner {
 public:
  DecodeGraphRunner(ToyDecoder& model, RunnerConfig cfg)
      : model_(model), cfg_(std::move(cfg)), temperature_(cfg_.temperature),
        capture_stream_(c10::cuda::getStreamFromPool()),
        pool_(at::cuda::graph_pool_handle()) {
    auto long_cuda = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
    // Built once, outside any capture.
    banned_ = torch::tensor(cfg_.banned_tokens, long_cuda);
  }

  void capture_all() {
    for (int64_t bs : cfg_.batch_sizes) {
      capture_bucket(bs);
    }
  }

  void serve(const std::vector<DecodeRequest>& requests) {
    capture_all();
    for (const auto& req : requests) {
      const int64_t n = req.ids.size(0);
      const int64_t bs = bucket_for(n);
      auto& b = buckets_.at(bs);
      b.ids.zero_();
      b.ids.narrow(0, 0, n).copy_(req.ids);
      b.positions.narrow(0, 0, n).copy_(req.positions);
      b.tables.narrow(0, 0, n).copy_(req.tables);
      temperature_ = req.temperature; // expect: cudagraph-frozen-host-state
      b.graph.replay();
      std::cout << "bucket " << bs << " served " << n << " sequences\n";
    }
  }

  // Same loop, but a temperature change invalidates the captured graphs.
  void serve_with_recapture(const std::vector<DecodeRequest>& requests) {
    capture_all();
    for (const auto& req : requests) {
      const int64_t n = req.ids.size(0);
      const double wanted = req.temperature;
      if (wanted != temperature_) {
        temperature_ = wanted;
        buckets_.clear();
        capture_all();
      }
      auto& b = buckets_.at(bucket_for(n));
      b.ids.narrow(0, 0, n).copy_(req.ids);
      b.positions.narrow(0, 0, n).copy_(req.positions);
      b.tables.narrow(0, 0, n).copy_(req.tables);
      b.graph.replay();
    }
  }

 private:
  int64_t bucket_for(int64_t n) const {
    for (int64_t bs : cfg_.batch_sizes) {
      if (bs >= n) {
        return bs;
      }
    }
    return cfg_.batch_sizes.back();
  }

  torch::Tensor sample_logits(const torch::Tensor& h) {
    auto logits = model_.logits(h);
    logits.index_fill_(1, banned_, -1e9);
    return torch::softmax(logits.div(temperature_), -1);
  }

  // Extra tokens some deployments ban per request batch; the list lives on the host.
  torch::Tensor extra_ban_mask(int64_t bs) {
    auto long_cuda = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
    auto extra = torch::tensor(cfg_.banned_tokens, long_cuda); // expect: cudagraph-host-sync
    return torch::zeros({bs, cfg_.vocab}, long_cuda.dtype(torch::kBool)).index_fill_(1, extra, true);
  }

  void record_entropy(const torch::Tensor& probs) {
    c10::cuda::CUDAStreamGuard guard(c10::cuda::getDefaultCUDAStream()); // expect: cudagraph-legacy-stream
    entropy_ = -(probs * probs.clamp_min(1e-12).log()).sum(-1);
  }

  void capture_bucket(int64_t bs) {
    auto long_cuda = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
    buckets_.erase(bs);
    BucketGraph& b = buckets_[bs];
    b.ids = torch::zeros({bs}, long_cuda);
    b.positions = torch::zeros({bs}, long_cuda);
    b.tables = torch::zeros({bs, cfg_.max_blocks}, long_cuda.dtype(torch::kInt));

    c10::cuda::CUDAStreamGuard guard(capture_stream_);
    // Warm-up on the capture stream: first cuBLAS use and lazy init happen here.
    for (int i = 0; i < 2; ++i) {
      auto warm = sample_logits(model_.hidden(b.ids, b.positions, b.tables));
      record_entropy(warm);
    }
    b.graph.capture_begin(pool_);
    auto h = model_.hidden(b.ids, b.positions, b.tables);
    auto probs = sample_logits(h);
    probs = probs.masked_fill(extra_ban_mask(bs), 0.0);
    record_entropy(probs);
    b.out = probs.argmax(-1);
    b.graph.capture_end();
  }

  ToyDecoder& model_;
  RunnerConfig cfg_;
  double temperature_;
  c10::cuda::CUDAStream capture_stream_;
  at::cuda::MempoolId_t pool_;
  torch::Tensor banned_;
  torch::Tensor entropy_;
  std::map<int64_t, BucketGraph> buckets_;
};

// Draft heads that propose the next few tokens from the last hidden state.
class MedusaHeadGraph {
 public:
  MedusaHeadGraph(int64_t batch, int64_t hidden, int64_t heads)
      : stream_(c10::cuda::getStreamFromPool()) {
    auto opts = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
    static_hidden_ = torch::zeros({batch, hidden}, opts);
    heads_ = torch::randn({heads, hidden, hidden}, opts) * 0.02;
  }

  void capture(double residual_scale) {
    c10::cuda::CUDAStreamGuard guard(stream_);
    forward(residual_scale);  // warm-up
    graph_.reset();
    graph_.capture_begin();
    static_out_ = forward(residual_scale);
    graph_.capture_end();
  }

  // Runs the draft heads for a sequence of hidden states.
  std::vector<torch::Tensor> propose(const std::vector<torch::Tensor>& hiddens) {
    double residual_scale = 0.5;
    capture(residual_scale);
    std::vector<torch::Tensor> drafts;
    for (const auto& h : hiddens) {
      static_hidden_ = h; // expect: cudagraph-frozen-host-state
      graph_.replay();
      drafts.push_back(static_out_.clone());
    }
    return drafts;
  }

  std::vector<torch::Tensor> propose_copying(const std::vector<torch::Tensor>& hiddens) {
    static_hidden_ = torch::zeros_like(static_hidden_);  // before capture: fine
    capture(0.5);
    std::vector<torch::Tensor> drafts;
    for (const auto& h : hiddens) {
      static_hidden_.copy_(h);
      graph_.replay();
      drafts.push_back(static_out_.clone());
    }
    return drafts;
  }

 private:
  torch::Tensor forward(double residual_scale) {
    auto x = static_hidden_.unsqueeze(0);
    auto y = torch::matmul(x, heads_);
    return (y + x * residual_scale).argmax(-1);
  }

  c10::cuda::CUDAStream stream_;
  at::cuda::CUDAGraph graph_;
  torch::Tensor static_hidden_, static_out_, heads_;
};

}  // namespace serving

int main() {
  serving::RunnerConfig cfg;
  serving::ToyDecoder model(cfg);
  serving::DecodeGraphRunner runner(model, cfg);
  auto long_cuda = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
  std::vector<serving::DecodeRequest> reqs;
  for (int64_t n : {1, 3, 7}) {
    serving::DecodeRequest r;
    r.ids = torch::randint(cfg.vocab, {n}, long_cuda);
    r.positions = torch::arange(n, long_cuda);
    r.tables = torch::zeros({n, cfg.max_blocks}, long_cuda.dtype(torch::kInt));
    r.temperature = 0.7 + 0.1 * static_cast<double>(n);
    reqs.push_back(r);
  }
  runner.serve(reqs);
  runner.serve_with_recapture(reqs);

  serving::MedusaHeadGraph medusa(4, cfg.hidden, 3);
  auto half_cuda = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
  std::vector<torch::Tensor> hs{torch::randn({4, cfg.hidden}, half_cuda), torch::randn({4, cfg.hidden}, half_cuda)};
  auto d1 = medusa.propose(hs);
  auto d2 = medusa.propose_copying(hs);
  std::cout << d1.size() + d2.size() << " drafts\n";
  return 0;
}
