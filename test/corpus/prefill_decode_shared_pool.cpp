// Chunked-prefill and decode graphs for a toy LM that share one private
// memory pool. Prompt preprocessing (deduplication, padding statistics) is
// done eagerly before capture; reporting happens after replay.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <tuple>
#include <vector>

namespace toylm {

struct Weights {
  torch::Tensor embed, wq, wk, wv, wo, head;
};

Weights make_weights(int64_t vocab, int64_t d) {
  auto opts = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
  return {torch::randn({vocab, d}, opts) * 0.02, torch::randn({d, d}, opts) * 0.02,
          torch::randn({d, d}, opts) * 0.02,     torch::randn({d, d}, opts) * 0.02,
          torch::randn({d, d}, opts) * 0.02,     torch::randn({d, vocab}, opts) * 0.02};
}

torch::Tensor attention(const Weights& w, const torch::Tensor& h, const torch::Tensor& k_cache,
                        const torch::Tensor& v_cache, const torch::Tensor& valid_mask) {
  auto q = torch::matmul(h, w.wq);
  auto scores = torch::matmul(q, k_cache.transpose(-1, -2)) / std::sqrt(static_cast<double>(h.size(-1)));
  scores = scores.masked_fill(valid_mask.logical_not().unsqueeze(1), -1e4);
  return torch::matmul(torch::matmul(torch::softmax(scores, -1), v_cache), w.wo);
}

struct PromptBatch {
  torch::Tensor tokens;   // [B, T] padded with 0
  torch::Tensor lengths;  // [B]
};

// Runs before any capture: computes padded layout and vocabulary coverage.
PromptBatch preprocess(const std::vector<std::vector<int64_t>>& prompts, int64_t max_len) {
  const int64_t b = static_cast<int64_t>(prompts.size());
  auto tokens = torch::zeros({b, max_len}, torch::kLong);
  auto lengths = torch::zeros({b}, torch::kLong);
  for (int64_t i = 0; i < b; ++i) {
    const int64_t n = std::min<int64_t>(max_len, static_cast<int64_t>(prompts[i].size()));
    for (int64_t j = 0; j < n; ++j) {
      tokens[i][j] = prompts[i][j];
    }
    lengths[i] = n;
  }
  auto dev_tokens = tokens.to(torch::kCUDA);
  auto distinct = std::get<0>(at::_unique(dev_tokens.masked_select(dev_tokens.ne(0))));
  auto empty_rows = lengths.eq(0).nonzero();
  if (empty_rows.size(0) > 0) {
    std::cerr << empty_rows.size(0) << " empty prompts" << std::endl;
  }
  std::cout << "prompt vocabulary: " << distinct.numel() << " distinct ids" << std::endl;
  return {dev_tokens, lengths.to(torch::kCUDA)};
}

class SharedPoolRunner {
 public:
  SharedPoolRunner(Weights w, int64_t batch, int64_t chunk, int64_t max_ctx)
      : w_(std::move(w)), batch_(batch), chunk_(chunk) {
    auto dev = torch::TensorOptions().device(torch::kCUDA);
    const int64_t d = w_.wq.size(0);
    chunk_tokens_ = torch::zeros({batch, chunk}, dev.dtype(torch::kLong));
    step_tokens_ = torch::zeros({batch, 1}, dev.dtype(torch::kLong));
    k_cache_ = torch::zeros({batch, max_ctx, d}, dev.dtype(torch::kHalf));
    v_cache_ = torch::zeros_like(k_cache_);
    valid_ = torch::zeros({batch, max_ctx}, dev.dtype(torch::kBool));
  }

  torch::Tensor run_tokens(const torch::Tensor& toks) {
    auto h = torch::embedding(w_.embed, toks);
    h = h + attention(w_, h, k_cache_, v_cache_, valid_);
    return torch::matmul(h, w_.head).select(1, -1);
  }

  void capture() {
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    run_tokens(chunk_tokens_);
    run_tokens(step_tokens_);
    stream.synchronize();
    c10::cuda::CUDACachingAllocator::emptyCache();

    prefill_.capture_begin();
    prefill_logits_ = run_tokens(chunk_tokens_);
    auto scratch = torch::empty({batch_, chunk_}, torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA));
    scratch.uniform_();
    prefill_noise_ = scratch.mean(-1);
    prefill_.capture_end();

    decode_.capture_begin(prefill_.pool());
    decode_logits_ = run_tokens(step_tokens_);
    next_tokens_ = decode_logits_.argmax(-1, /*keepdim=*/true);
    step_tokens_.copy_(next_tokens_);
    decode_.capture_end();
    stream.synchronize();
  }

  void prefill(const PromptBatch& p) {
    chunk_tokens_.copy_(p.tokens.narrow(1, 0, chunk_));
    prefill_.replay();
  }

  torch::Tensor decode_steps(int steps) {
    std::vector<torch::Tensor> out;
    for (int i = 0; i < steps; ++i) {
      decode_.replay();
      out.push_back(next_tokens_.clone());
    }
    return torch::cat(out, 1);
  }

 private:
  Weights w_;
  int64_t batch_, chunk_;
  at::cuda::CUDAGraph prefill_, decode_;
  torch::Tensor chunk_tokens_, step_tokens_, k_cache_, v_cache_, valid_;
  torch::Tensor prefill_logits_, prefill_noise_, decode_logits_, next_tokens_;
};

}  // namespace toylm

int main() {
  std::vector<std::vector<int64_t>> prompts = {{5, 17, 99, 4}, {8, 8, 8}, {}, {42}};
  auto batch = toylm::preprocess(prompts, 16);
  toylm::SharedPoolRunner runner(toylm::make_weights(1000, 256), 4, 16, 64);
  runner.capture();
  runner.prefill(batch);
  auto generated = runner.decode_steps(8).cpu();
  auto unique_per_row = std::get<0>(torch::unique_dim(generated, 0));
  std::cout << "generated:\n" << generated << "\nunique rows: " << unique_per_row.size(0) << std::endl;
  return 0;
}
