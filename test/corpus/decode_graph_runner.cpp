// Decode-step graph runner for a small causal LM.
//
// One CUDA graph is captured per padded batch size. At serving time the
// incoming batch is copied into the static input buffers of the smallest
// bucket that fits and the graph is replayed.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

namespace lm {

struct DecoderConfig {
  int64_t vocab = 32000;
  int64_t hidden = 1024;
  int64_t layers = 4;
  int64_t eos_token = 2;
  int64_t pad_token = 0;
  bool collect_stats = false;
  bool verbose = false;
  std::vector<int64_t> capture_sizes{1, 2, 4, 8, 16, 32};
};

class TinyDecoder {
 public:
  explicit TinyDecoder(const DecoderConfig& cfg) : cfg_(cfg) {
    auto opts = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
    embed_ = torch::randn({cfg.vocab, cfg.hidden}, opts) * 0.02;
    pos_ = torch::randn({4096, cfg.hidden}, opts) * 0.02;
    for (int64_t i = 0; i < cfg.layers; ++i) {
      up_.push_back(torch::randn({cfg.hidden, 4 * cfg.hidden}, opts) * 0.02);
      down_.push_back(torch::randn({4 * cfg.hidden, cfg.hidden}, opts) * 0.02);
    }
    lm_head_ = torch::randn({cfg.hidden, cfg.vocab}, opts) * 0.02;
  }

  torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& positions) {
    auto h = embed_.index_select(0, tokens) + pos_.index_select(0, positions);
    for (size_t i = 0; i < up_.size(); ++i) {
      auto n = torch::layer_norm(h, {cfg_.hidden});
      h = h + torch::matmul(torch::gelu(torch::matmul(n, up_[i])), down_[i]);
    }
    return torch::matmul(torch::layer_norm(h, {cfg_.hidden}), lm_head_).to(torch::kFloat);
  }

 private:
  DecoderConfig cfg_;
  torch::Tensor embed_, pos_, lm_head_;
  std::vector<torch::Tensor> up_, down_;
};

class DecodeGraphRunner {
 public:
  DecodeGraphRunner(TinyDecoder& model, DecoderConfig cfg)
      : model_(model), cfg_(std::move(cfg)) {}

  // Greedy selection; sequences that already produced EOS keep emitting pad.
  torch::Tensor pick_tokens(const torch::Tensor& logits) {
    auto next = logits.argmax(-1);
    if (cfg_.eos_token >= 0) {
      auto finished = next.eq(cfg_.eos_token);
      if (finished.any().item<bool>()) { // expect: cudagraph-host-sync, cudagraph-data-dependent-branch
        next.masked_fill_(finished, cfg_.pad_token);
      }
    }
    return next;
  }

  void record_stats(const torch::Tensor& logits) {
    if (!cfg_.collect_stats) {
      return;
    }
    const float peak = logits.abs().max().item().toFloat(); // expect: cudagraph-host-sync
    peaks_.push_back(peak);
    if (peak > kLogitAlarm) { // expect: cudagraph-data-dependent-branch
      ++alarms_;
    }
  }

  void capture_all() {
    c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    auto long_opts = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);

    for (int64_t bs : cfg_.capture_sizes) {
      Slot& slot = slots_[bs];
      slot.tokens = torch::zeros({bs}, long_opts);
      slot.positions = torch::zeros({bs}, long_opts);

      // Eager warm-up so cuBLAS handles and workspaces exist before capture.
      for (int i = 0; i < 3; ++i) {
        auto logits = model_.forward(slot.tokens, slot.positions);
        auto next = pick_tokens(logits);
        if (next.max().item<int64_t>() >= cfg_.vocab) {
          throw std::runtime_error("warm-up produced an out-of-range token");
        }
      }
      stream.synchronize();

      slot.graph = std::make_unique<at::cuda::CUDAGraph>();
      slot.graph->capture_begin();
      slot.logits = model_.forward(slot.tokens, slot.positions);
      slot.next = pick_tokens(slot.logits);
      record_stats(slot.logits);
      if (cfg_.verbose) {
        std::cout << "[capture] bs=" << bs << " logits=" << slot.logits.sizes() << std::endl;
      }
      slot.graph->capture_end();

      stream.synchronize();
      if (cfg_.verbose) {
        std::cout << "[capture] bs=" << bs << " sample logits " << slot.logits.slice(1, 0, 4) << std::endl;
      }
    }
  }

  torch::Tensor step(const torch::Tensor& tokens, const torch::Tensor& positions) {
    const int64_t bs = tokens.size(0);
    auto it = slots_.lower_bound(bs);
    if (it == slots_.end()) {
      return pick_tokens(model_.forward(tokens, positions));
    }
    Slot& slot = it->second;
    slot.tokens.zero_();
    slot.positions.zero_();
    slot.tokens.narrow(0, 0, bs).copy_(tokens);
    slot.positions.narrow(0, 0, bs).copy_(positions);
    slot.graph->replay();
    return slot.next.narrow(0, 0, bs);
  }

 private:
  struct Slot {
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    torch::Tensor tokens, positions, logits, next;
  };

  TinyDecoder& model_;
  DecoderConfig cfg_;
  std::map<int64_t, Slot> slots_;
  std::vector<float> peaks_;
  int64_t alarms_ = 0;
  static constexpr float kLogitAlarm = 1e4f;
};

std::vector<int64_t> generate(DecodeGraphRunner& runner, int64_t first_token, int64_t start_pos,
                              int max_new_tokens, int64_t eos) {
  auto opts = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
  auto tokens = torch::full({1}, first_token, opts);
  auto positions = torch::full({1}, start_pos, opts);
  std::vector<int64_t> out;
  for (int i = 0; i < max_new_tokens; ++i) {
    auto next = runner.step(tokens, positions);
    const int64_t tok = next.cpu().item<int64_t>();
    out.push_back(tok);
    if (tok == eos) {
      break;
    }
    tokens.copy_(next);
    positions.add_(1);
  }
  return out;
}

}  // namespace lm

int main() {
  lm::DecoderConfig cfg;
  cfg.capture_sizes = {1, 4, 8};
  lm::TinyDecoder model(cfg);
  lm::DecodeGraphRunner runner(model, cfg);
  runner.capture_all();
  auto ids = lm::generate(runner, 1, 0, 32, cfg.eos_token);
  std::cout << "generated " << ids.size() << " tokens" << std::endl;
  return 0;
}
