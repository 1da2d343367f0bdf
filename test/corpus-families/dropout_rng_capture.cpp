// Whole-step CUDA graph for a small regression MLP trained with stochastic
// regularisation: dropout, input jitter, stochastic depth and a hand-fused
// dropout path that reserves Philox offsets itself.
//
// The trainer keeps its own generators so that the regularisation noise is
// reproducible independently of the global seed.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

namespace train {

constexpr uint64_t kEpochSeed = 0x5eedULL;
constexpr uint64_t kAugmentSeed = 17;

struct PhiloxPair {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

// Input jitter with a private, lazily created generator.
torch::Tensor jitter(const torch::Tensor& x, double scale) {
  static at::Generator jitter_gen = at::make_generator<at::CUDAGeneratorImpl>();
  auto eps = at::randn(x.sizes(), jitter_gen, x.options()); // expect: cudagraph-rng-generator
  return x + eps * scale;
}

// Same jitter drawn from the device's default generator.
torch::Tensor jitter_default(const torch::Tensor& x, double scale) {
  auto eps = at::randn(x.sizes(), at::cuda::detail::getDefaultCUDAGenerator(), x.options());
  return x + eps * scale;
}

// Old-style fused dropout: asks the generator for (seed, offset) directly.
PhiloxPair reserve_philox(at::Generator& gen, uint64_t numel) {
  auto* impl = at::check_generator<at::CUDAGeneratorImpl>(gen);
  std::lock_guard<std::mutex> lock(gen.mutex());
  auto inputs = impl->philox_engine_inputs(numel); // expect: cudagraph-rng-generator
  return PhiloxPair{inputs.first, inputs.second};
}

// Graph-safe variant: the state is resolved on the device at replay.
at::PhiloxCudaState reserve_philox_graphsafe(at::Generator& gen, uint64_t numel) {
  auto* impl = at::check_generator<at::CUDAGeneratorImpl>(gen);
  std::lock_guard<std::mutex> lock(gen.mutex());
  return impl->philox_cuda_state(numel);
}

class Trainer {
 public:
  Trainer(int64_t batch, int64_t in, int64_t hidden, double drop_p)
      : drop_p_(drop_p),
        stream_(c10::cuda::getStreamFromPool()),
        dropout_gen_(at::cuda::detail::createCUDAGenerator()),
        depth_gen_(at::make_generator<at::CUDAGeneratorImpl>()) {
    auto opts = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    w1_ = (torch::randn({in, hidden}, opts) * 0.05).requires_grad_();
    w2_ = (torch::randn({hidden, hidden}, opts) * 0.05).requires_grad_();
    w3_ = (torch::randn({hidden, 1}, opts) * 0.05).requires_grad_();
    static_x_ = torch::zeros({batch, in}, opts);
    static_y_ = torch::zeros({batch, 1}, opts);
    static_lr_ = torch::full({}, 1e-3, opts);
    static_noise_ = torch::zeros({batch, hidden}, opts);
    // Seeding happens once, outside of any capture.
    dropout_gen_.set_current_seed(kEpochSeed);
    depth_gen_.set_current_seed(kEpochSeed + 1);
  }

  void capture() {
    at::Generator noise_gen = at::cuda::detail::createCUDAGenerator();
    noise_gen.set_current_seed(7);
    c10::cuda::CUDAStreamGuard guard(stream_);
    for (int i = 0; i < 3; ++i) {
      step_body();
    }
    std::printf("capturing with dropout seed %llu\n",
                static_cast<unsigned long long>(dropout_gen_.current_seed()));
    graph_.capture_begin();
    static_noise_.normal_(0.0, 0.05, noise_gen); // expect: cudagraph-rng-generator
    static_loss_ = step_body();
    graph_.capture_end();
  }

  void fit(const std::vector<std::pair<torch::Tensor, torch::Tensor>>& batches, double lr) {
    capture();
    for (size_t i = 0; i < batches.size(); ++i) {
      static_x_.copy_(batches[i].first);
      static_y_.copy_(batches[i].second);
      static_lr_.fill_(lr / (1.0 + 0.01 * static_cast<double>(i)));
      graph_.replay();
    }
  }

  // Monte-Carlo dropout estimate; runs eagerly, never captured.
  torch::Tensor mc_dropout_predict(const torch::Tensor& x, int samples) {
    torch::NoGradGuard no_grad;
    auto acc = torch::zeros({x.size(0), 1}, x.options());
    for (int s = 0; s < samples; ++s) {
      auto h = torch::relu(torch::matmul(x, w1_));
      auto keep = at::bernoulli(h, 1.0 - drop_p_, dropout_gen_);
      acc += torch::matmul(torch::relu(torch::matmul(h * keep, w2_)), w3_);
    }
    return acc / samples;
  }

 private:
  torch::Tensor dropout(const torch::Tensor& h) {
    auto keep = at::bernoulli(h, 1.0 - drop_p_, dropout_gen_); // expect: cudagraph-rng-generator
    return h * keep / (1.0 - drop_p_);
  }

  // Drop the residual branch for a random subset of rows.
  torch::Tensor stochastic_depth(const torch::Tensor& branch) {
    auto u = torch::empty({branch.size(0), 1}, branch.options());
    u.uniform_(0.0, 1.0, depth_gen_); // expect: cudagraph-rng-generator
    return branch * (u > 0.2).to(branch.scalar_type());
  }

  // Second dropout site, driven by the default generator.
  torch::Tensor dropout_default(const torch::Tensor& h) {
    auto keep = at::bernoulli(h, 1.0 - drop_p_);
    return h * keep / (1.0 - drop_p_);
  }

  torch::Tensor fused_dropout_mask(const torch::Tensor& h) {
    auto state = reserve_philox_graphsafe(dropout_gen_, static_cast<uint64_t>(h.numel())); // expect: cudagraph-rng-generator
    (void)state;
    auto legacy = reserve_philox(depth_gen_, static_cast<uint64_t>(h.numel())); // expect: cudagraph-rng-generator
    (void)legacy;
    return torch::ones_like(h);
  }

  void reseed_for_epoch() {
    dropout_gen_.set_current_seed(kEpochSeed ^ 0x9e3779b9ULL); // expect: cudagraph-rng-generator
    torch::manual_seed(kAugmentSeed); // expect: cudagraph-rng-generator
  }

  torch::Tensor step_body() {
    reseed_for_epoch();
    auto x = jitter(static_x_, 0.01);
    x = jitter_default(x, 0.01);
    auto h1 = dropout(torch::relu(torch::matmul(x, w1_)));
    auto h2 = h1 + stochastic_depth(torch::relu(torch::matmul(h1, w2_)));
    h2 = dropout_default(h2 + static_noise_) * fused_dropout_mask(h2);
    auto pred = torch::matmul(h2, w3_);
    auto loss_w = torch::tensor({1.0f, 1e-4f}, static_x_.options()); // expect: cudagraph-host-sync
    auto loss = torch::mse_loss(pred, static_y_) * loss_w[0] + w1_.pow(2).sum() * loss_w[1];
    auto grads = torch::autograd::grad({loss}, {w1_, w2_, w3_});
    torch::NoGradGuard no_grad;
    w1_.sub_(grads[0] * static_lr_);
    w2_.sub_(grads[1] * static_lr_);
    w3_.sub_(grads[2] * static_lr_);
    return loss.detach();
  }

  const double drop_p_;
  c10::cuda::CUDAStream stream_;
  at::Generator dropout_gen_;
  at::Generator depth_gen_;
  at::cuda::CUDAGraph graph_;
  torch::Tensor w1_, w2_, w3_;
  torch::Tensor static_x_, static_y_, static_lr_, static_noise_, static_loss_;
};

}  // namespace train

int main() {
  torch::manual_seed(0);
  train::Trainer trainer(64, 32, 128, 0.1);
  auto opts = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
  std::vector<std::pair<torch::Tensor, torch::Tensor>> batches;
  for (int i = 0; i < 8; ++i) {
    batches.emplace_back(torch::randn({64, 32}, opts), torch::randn({64, 1}, opts));
  }
  trainer.fit(batches, 1e-2);
  auto pred = trainer.mc_dropout_predict(batches[0].first, 16);
  std::printf("mc-dropout mean %f\n", pred.mean().item<float>());
  return 0;
}
