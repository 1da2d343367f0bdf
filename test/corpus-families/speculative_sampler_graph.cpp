// Captured verification step for speculative decoding.
//
// The target model's logits for k draft positions are compared with the
// draft model's probabilities; accepted tokens are kept, the first rejected
// position is resampled from the residual distribution. Sampling uses a
// dedicated generator so that runs can be replayed token for token.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <iostream>
#include <vector>

namespace spec {

struct VerifyRequest {
  torch::Tensor target_logits;  // [k, vocab] float, CUDA
  torch::Tensor draft_probs;    // [k, vocab] float, CUDA
  torch::Tensor draft_tokens;   // [k] int64, CUDA
  double top_p = 0.9;
};

class SpeculativeVerifier {
 public:
  SpeculativeVerifier(int64_t k, int64_t vocab, double top_p)
      : k_(k), vocab_(vocab), top_p_(top_p),
        stream_(c10::cuda::getStreamFromPool()),
        sample_gen_(at::cuda::detail::createCUDAGenerator()) {
    auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    static_target_ = torch::zeros({k, vocab}, f32);
    static_draft_ = torch::full({k, vocab}, 1.0 / static_cast<double>(vocab), f32);
    static_tokens_ = torch::zeros({k}, f32.dtype(torch::kLong));
    // Token-level logit bias from the serving config, uploaded once.
    std::vector<float> bias(static_cast<size_t>(vocab), 0.0f);
    bias[0] = -100.0f;
    static_bias_ = torch::from_blob(bias.data(), {vocab}).to(torch::kCUDA, /*non_blocking=*/true).clone();
    host_bias_ = bias;
  }

  void capture() {
    c10::cuda::CUDAStreamGuard guard(stream_);
    verify_body();  // warm-up: cuBLAS/cuRAND state and kernel caches
    graph_.capture_begin();
    verify_body();
    graph_.capture_end();
  }

  void run(const std::vector<VerifyRequest>& requests) {
    capture();
    for (const auto& r : requests) {
      static_target_.copy_(r.target_logits);
      static_draft_.copy_(r.draft_probs);
      static_tokens_.copy_(r.draft_tokens);
      top_p_ = r.top_p; // expect: cudagraph-frozen-host-state
      graph_.replay();
      std::cout << "accepted mask " << out_accepted_.sizes() << "\n";
    }
  }

  // Calibrates the acceptance floor over a few batches.
  torch::Tensor calibrate(const std::vector<torch::Tensor>& ratios) {
    auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    auto static_ratio = torch::zeros({k_}, f32);
    auto history = torch::zeros({k_}, f32);
    double floor = 0.02;
    at::cuda::CUDAGraph g;
    c10::cuda::CUDAStreamGuard guard(stream_);
    g.capture_begin();
    auto clipped = static_ratio.clamp_min(floor);
    history.add_(clipped);
    g.capture_end();
    for (const auto& r : ratios) {
      static_ratio.copy_(r);
      g.replay();
      floor *= 1.5; // expect: cudagraph-frozen-host-state
    }
    return history;
  }

  torch::Tensor accepted() const { return out_accepted_; }

 private:
  torch::Tensor top_p_filter(const torch::Tensor& probs) {
    auto sorted = probs.sort(/*dim=*/-1, /*descending=*/true);
    auto values = std::get<0>(sorted);
    auto order = std::get<1>(sorted);
    auto cum = values.cumsum(-1);
    auto drop = (cum - values) > top_p_;
    auto kept = values.masked_fill(drop, 0.0);
    return torch::zeros_like(probs).scatter(-1, order, kept);
  }

  torch::Tensor residual_resample(const torch::Tensor& target, const torch::Tensor& draft) {
    auto resid = (target - draft).clamp_min(0.0) + 1e-9;
    resid = resid / resid.sum(-1, /*keepdim=*/true);
    // Exponential-race sampling: argmax(p / E) with E ~ Exp(1); no host sync, unlike multinomial.
    auto u = at::rand(resid.sizes(), sample_gen_, resid.options()); // expect: cudagraph-rng-generator
    return (resid / (-u.clamp_min(1e-12).log())).argmax(-1);
  }

  // Gumbel-max sampling for the bonus token.
  torch::Tensor gumbel_bonus(const torch::Tensor& logits) {
    auto e = torch::empty_like(logits);
    e.exponential_(1.0, sample_gen_); // expect: cudagraph-rng-generator
    return (logits - e.log()).argmax(-1);
  }

  void verify_body() {
    auto biased = static_target_ + static_bias_;
    auto target = top_p_filter(torch::softmax(biased, -1));
    auto idx = static_tokens_.unsqueeze(-1);
    auto p_t = target.gather(-1, idx).squeeze(-1);
    auto p_d = static_draft_.gather(-1, idx).squeeze(-1);
    auto tie_break = torch::rand({k_}, sample_gen_, p_t.options()) * 1e-6; // expect: cudagraph-rng-generator
    auto ratio = (p_t / p_d.clamp_min(1e-9) + tie_break).clamp_max(1.0);
    auto u = torch::rand_like(ratio);  // default generator
    auto accept = u < ratio;
    auto resampled = residual_resample(target, static_draft_);
    out_tokens_ = torch::where(accept, static_tokens_, resampled);
    out_accepted_ = accept;
    out_kept_ = static_tokens_.index({accept}); // expect: cudagraph-host-sync
    auto rejected = torch::where(accept.logical_not()); // expect: cudagraph-host-sync
    out_first_reject_ = rejected[0];
    auto order = torch::arange(k_, static_tokens_.options());
    out_positions_ = p_t.index({order.flip(0)});
    out_bonus_ = gumbel_bonus(biased.narrow(0, k_ - 1, 1));
    auto bias_now = torch::from_blob(host_bias_.data(), {vocab_}).to(torch::kCUDA, /*non_blocking=*/true); // expect: cudagraph-host-sync
    out_bias_drift_ = (bias_now - static_bias_).abs().sum();
    out_ratio_dev_ = ratio.to(p_d);
  }

  const int64_t k_;
  const int64_t vocab_;
  double top_p_;
  c10::cuda::CUDAStream stream_;
  at::Generator sample_gen_;
  at::cuda::CUDAGraph graph_;
  std::vector<float> host_bias_;
  torch::Tensor static_target_, static_draft_, static_tokens_, static_bias_;
  torch::Tensor out_tokens_, out_accepted_, out_kept_, out_first_reject_;
  torch::Tensor out_positions_, out_bonus_, out_bias_drift_, out_ratio_dev_;
};

// Eager reference used by the tests: same sampling, no graph.
torch::Tensor reference_resample(const torch::Tensor& target, const torch::Tensor& draft,
                                 at::Generator& gen) {
  auto resid = (target - draft).clamp_min(0.0) + 1e-9;
  return at::multinomial(resid / resid.sum(-1, true), 1, false, gen).squeeze(-1);
}

}  // namespace spec

int main() {
  const int64_t k = 4, vocab = 1000;
  spec::SpeculativeVerifier verifier(k, vocab, 0.9);
  auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
  std::vector<spec::VerifyRequest> reqs(3);
  for (auto& r : reqs) {
    r.target_logits = torch::randn({k, vocab}, f32);
    r.draft_probs = torch::softmax(torch::randn({k, vocab}, f32), -1);
    r.draft_tokens = torch::randint(vocab, {k}, f32.dtype(torch::kLong));
  }
  reqs[1].top_p = 0.8;
  verifier.run(reqs);
  auto hist = verifier.calibrate({torch::rand({k}, f32), torch::rand({k}, f32)});

  at::Generator ref_gen = at::cuda::detail::createCUDAGenerator();
  auto ref = spec::reference_resample(torch::softmax(reqs[0].target_logits, -1), reqs[0].draft_probs, ref_gen);
  std::cout << ref.sizes() << " " << hist.sizes() << "\n";
  return 0;
}
