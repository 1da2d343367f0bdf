// Multi-stream prefill pipeline captured into several CUDA graphs.
//
// Independent parts of a prefill step (attention heads, expert MLPs, a LoRA
// delta, KV-cache prefetch) run on side streams that are forked from the
// capture stream with CUDA events and joined back before the capture ends.

#include <torch/torch.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <iostream>
#include <vector>

namespace prefill {

using c10::cuda::CUDAStream;
using c10::cuda::CUDAStreamGuard;

// Makes `to` wait for everything queued so far on `from`.
void fork_into(at::cuda::CUDAEvent& ev, const CUDAStream& from, const CUDAStream& to) {
  ev.record(from);
  ev.block(to);
}

void join_back(at::cuda::CUDAEvent& ev, const CUDAStream& side, const CUDAStream& main) {
  ev.record(side);
  ev.block(main);
}

class PrefillPipeline {
 public:
  PrefillPipeline(int64_t tokens, int64_t hidden, int experts)
      : cap_(c10::cuda::getStreamFromPool()),
        side_a_(c10::cuda::getStreamFromPool()),
        side_b_(c10::cuda::getStreamFromPool()),
        prefetch_(c10::cuda::getStreamFromPool()),
        upload_(c10::cuda::getStreamFromPool()) {
    auto f16 = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
    x_ = torch::randn({tokens, hidden}, f16);
    w_ = torch::randn({hidden, hidden}, f16) * 0.02;
    w_staging_ = torch::randn({hidden, hidden}, f16) * 0.02;
    lora_a_ = torch::randn({hidden, 16}, f16) * 0.02;
    lora_b_ = torch::zeros({16, hidden}, f16);
    kv_pool_ = torch::randn({256, hidden}, f16);
    next_blocks_ = torch::arange(tokens, f16.dtype(torch::kLong));
    for (int e = 0; e < experts; ++e) {
      expert_w_.push_back(torch::randn({hidden, hidden}, f16) * 0.02);
      expert_streams_.push_back(c10::cuda::getStreamFromPool());
      expert_done_.emplace_back();
    }
  }

  void capture_all() {
    capture_heads();
    capture_chain();
    capture_experts();
    capture_prefetch();
    capture_lora();
    capture_with_weights();
  }

  void replay_all() {
    for (auto* g : {&g_heads_, &g_chain_, &g_experts_, &g_prefetch_, &g_lora_, &g_weights_}) {
      g->replay();
    }
  }

 private:
  void update_stats(const torch::Tensor& t) {
    CUDAStreamGuard legacy(c10::cuda::getDefaultCUDAStream()); // expect: cudagraph-legacy-stream
    act_norm_ = t.norm();
  }

  // Two halves of the heads on two side streams, both joined.
  void capture_heads() {
    CUDAStreamGuard guard(cap_);
    g_heads_.capture_begin();
    fork_into(fork_a_, cap_, side_a_);
    fork_into(fork_b_, cap_, side_b_);
    {
      CUDAStreamGuard on_a(side_a_);
      heads_lo_ = torch::softmax(x_.narrow(1, 0, x_.size(1) / 2), -1);
    }
    {
      CUDAStreamGuard on_b(side_b_);
      heads_hi_ = torch::softmax(x_.narrow(1, x_.size(1) / 2, x_.size(1) / 2), -1);
    }
    join_back(join_a_, side_a_, cap_);
    join_back(join_b_, side_b_, cap_);
    out_heads_ = torch::cat({heads_lo_, heads_hi_}, 1);
    update_stats(out_heads_);
    g_heads_.capture_end();
  }

  // cap -> a -> b -> cap: side stream a is joined through b.
  void capture_chain() {
    auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    chain0_.record(cap_);
    CUDAStreamGuard guard(cap_);
    g_chain_.capture_begin();
    chain0_.record(cap_);
    chain0_.block(side_a_);
    {
      CUDAStreamGuard on_a(side_a_);
      chain_mid_ = torch::matmul(x_, w_);
    }
    chain1_.record(side_a_);
    chain1_.block(side_b_);
    {
      CUDAStreamGuard on_b(side_b_);
      chain_mid_ = torch::gelu(chain_mid_);
    }
    chain2_.record(side_b_);
    chain2_.block(cap_);
    auto mix = torch::tensor({0.25f, 0.75f}, f32); // expect: cudagraph-host-sync
    out_chain_ = chain_mid_.to(torch::kFloat) * mix[1] + x_.to(torch::kFloat) * mix[0];
    g_chain_.capture_end();
  }

  // One stream per expert; every stream is forked and joined.
  void capture_experts() {
    CUDAStreamGuard guard(cap_);
    g_experts_.capture_begin();
    expert_fork_.record(cap_);
    for (size_t e = 0; e < expert_streams_.size(); ++e) {
      expert_fork_.block(expert_streams_[e]);
    }
    std::vector<torch::Tensor> parts(expert_streams_.size());
    for (size_t e = 0; e < expert_streams_.size(); ++e) {
      CUDAStreamGuard on_e(expert_streams_[e]);
      parts[e] = torch::matmul(x_, expert_w_[e]);
      expert_done_[e].record(expert_streams_[e]);
    }
    for (size_t e = 0; e < expert_streams_.size(); ++e) {
      expert_done_[e].block(cap_);
    }
    out_experts_ = torch::stack(parts).sum(0);
    g_experts_.capture_end();
  }

  // The prefetch copy records its completion event, but nobody waits on it.
  void capture_prefetch() {
    CUDAStreamGuard guard(cap_);
    g_prefetch_.capture_begin();
    fork_prefetch_.record(cap_);
    fork_prefetch_.block(prefetch_); // expect: cudagraph-unjoined-fork
    {
      CUDAStreamGuard on_p(prefetch_);
      kv_next_ = kv_pool_.index_select(0, next_blocks_);
      prefetch_done_.record(prefetch_);
    }
    out_prefetch_ = torch::matmul(x_, w_);
    g_prefetch_.capture_end();
  }

  // LoRA delta computed on a side stream that is never joined back.
  void capture_lora() {
    CUDAStreamGuard guard(cap_);
    g_lora_.capture_begin();
    auto base = torch::matmul(x_, w_);
    fork_into(lora_fork_, cap_, side_a_); // expect: cudagraph-unjoined-fork
    {
      CUDAStreamGuard on_a(side_a_);
      lora_delta_ = torch::matmul(torch::matmul(x_, lora_a_), lora_b_);
    }
    out_lora_ = base;
    g_lora_.capture_end();
  }

  // Weights are refreshed on an upload stream before capture.
  void capture_with_weights() {
    {
      CUDAStreamGuard on_up(upload_);
      w_.copy_(w_staging_);
    }
    weights_ready_.record(upload_);
    weights_ready_.block(cap_);
    CUDAStreamGuard guard(cap_);
    g_weights_.capture_begin();
    weights_ready_.block(cap_); // expect: cudagraph-unjoined-fork
    out_weights_ = torch::matmul(x_, w_);
    g_weights_.capture_end();
  }

  CUDAStream cap_, side_a_, side_b_, prefetch_, upload_;
  at::cuda::CUDAEvent fork_a_, fork_b_, join_a_, join_b_;
  at::cuda::CUDAEvent chain0_, chain1_, chain2_;
  at::cuda::CUDAEvent expert_fork_;
  at::cuda::CUDAEvent fork_prefetch_, prefetch_done_, lora_fork_, weights_ready_;
  std::vector<CUDAStream> expert_streams_;
  std::vector<at::cuda::CUDAEvent> expert_done_;
  std::vector<torch::Tensor> expert_w_;
  at::cuda::CUDAGraph g_heads_, g_chain_, g_experts_, g_prefetch_, g_lora_, g_weights_;
  torch::Tensor x_, w_, w_staging_, lora_a_, lora_b_, kv_pool_, next_blocks_, kv_next_;
  torch::Tensor heads_lo_, heads_hi_, chain_mid_, lora_delta_, act_norm_;
  torch::Tensor out_heads_, out_chain_, out_experts_, out_prefetch_, out_lora_, out_weights_;
};

}  // namespace prefill

int main() {
  prefill::PrefillPipeline pipe(128, 512, 4);
  pipe.capture_all();
  for (int i = 0; i < 10; ++i) {
    pipe.replay_all();
  }
  std::cout << "done\n";
  return 0;
}
