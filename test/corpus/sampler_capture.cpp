// Batched token sampler (temperature / top-k / top-p / repetition penalty)
// whose whole forward is recorded into one CUDA graph per batch shape.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <iostream>
#include <limits>
#include <tuple>

namespace serving {

struct SamplingParams {
  float temperature = 0.8f;
  float top_p = 0.95f;
  int64_t top_k = 50;
  float repetition_penalty = 1.1f;
  bool return_logprobs = false;
};

// Scales down logits of tokens that were already generated.
static torch::Tensor apply_repetition_penalty(torch::Tensor logits, const torch::Tensor& seen,
                                              float penalty) {
  if (penalty == 1.0f) {
    return logits;
  }
  auto picked = logits.masked_select(seen); // expect: cudagraph-host-sync
  auto scaled = torch::where(picked > 0, picked / penalty, picked * penalty);
  logits.masked_scatter_(seen, scaled);
  return logits;
}

// Same penalty without leaving the device: every position is rescaled and
// the seen-mask picks which version survives.
static torch::Tensor apply_repetition_penalty_dense(const torch::Tensor& logits,
                                                    const torch::Tensor& seen, float penalty) {
  auto scaled = torch::where(logits > 0, logits / penalty, logits * penalty);
  return torch::where(seen, scaled, logits);
}

static torch::Tensor top_p_filter(const torch::Tensor& probs, float top_p) {
  torch::Tensor sorted_probs, sorted_idx;
  std::tie(sorted_probs, sorted_idx) = probs.sort(-1, /*descending=*/true);
  auto cum = sorted_probs.cumsum(-1);
  auto drop = (cum - sorted_probs) > top_p;
  sorted_probs = sorted_probs.masked_fill(drop, 0.0);
  return torch::zeros_like(probs).scatter_(-1, sorted_idx, sorted_probs);
}

class Sampler {
 public:
  Sampler(int64_t batch, int64_t vocab, SamplingParams params, bool dense_penalty)
      : params_(params), dense_penalty_(dense_penalty) {
    auto opts = torch::TensorOptions().device(torch::kCUDA);
    static_logits_ = torch::zeros({batch, vocab}, opts.dtype(torch::kFloat));
    seen_ = torch::zeros({batch, vocab}, opts.dtype(torch::kBool));
    out_tokens_ = torch::zeros({batch}, opts.dtype(torch::kLong));
  }

  torch::Tensor sample(const torch::Tensor& logits) {
    auto x = dense_penalty_
                 ? apply_repetition_penalty_dense(logits, seen_, params_.repetition_penalty)
                 : apply_repetition_penalty(logits.clone(), seen_, params_.repetition_penalty);
    x = x / params_.temperature;
    if (params_.top_k > 0 && params_.top_k < x.size(-1)) {
      auto kth = std::get<0>(x.topk(params_.top_k, -1)).select(-1, params_.top_k - 1).unsqueeze(-1);
      x = x.masked_fill(x < kth, -std::numeric_limits<float>::infinity());
    }
    auto probs = top_p_filter(torch::softmax(x, -1), params_.top_p);

    const float mass = probs.sum().item<float>(); // expect: cudagraph-host-sync
    if (mass <= 0.0f) { // expect: cudagraph-data-dependent-branch
      return x.argmax(-1);
    }

    // Exponential-race sampling keeps the draw on the device.
    auto race = probs / torch::empty_like(probs).exponential_();
    auto next = race.argmax(-1);

    if (params_.return_logprobs) {
      auto lp = torch::log_softmax(x, -1).gather(-1, next.unsqueeze(-1));
      std::cout << "logprobs: " << lp << '\n'; // expect: cudagraph-host-sync
    }
    seen_.scatter_(1, next.unsqueeze(-1), true);
    return next;
  }

  void capture() {
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    for (int i = 0; i < 3; ++i) {
      sample(static_logits_);
    }
    stream.synchronize();
    seen_.zero_();

    graph_.capture_begin();
    out_tokens_.copy_(sample(static_logits_));
    graph_.capture_end();
  }

  torch::Tensor replay(const torch::Tensor& logits) {
    static_logits_.copy_(logits);
    graph_.replay();
    return out_tokens_;
  }

 private:
  SamplingParams params_;
  bool dense_penalty_;
  torch::Tensor static_logits_, seen_, out_tokens_;
  at::cuda::CUDAGraph graph_;
};

// Offline sanity check run by the test driver on replayed output.
static bool validate_tokens(const torch::Tensor& tokens, int64_t vocab) {
  auto bad = ((tokens < 0) | (tokens >= vocab)).nonzero();
  if (bad.size(0) > 0) {
    std::cerr << "invalid token ids at rows " << bad.flatten() << std::endl;
    return false;
  }
  return true;
}

}  // namespace serving

int main() {
  serving::SamplingParams params;
  params.return_logprobs = true;
  serving::Sampler sampler(8, 32000, params, /*dense_penalty=*/false);
  sampler.capture();

  auto logits = torch::randn({8, 32000}, torch::TensorOptions().device(torch::kCUDA));
  for (int step = 0; step < 16; ++step) {
    auto next = sampler.replay(logits);
    if (!serving::validate_tokens(next, 32000)) {
      return 1;
    }
    logits.normal_();
  }
  return 0;
}
