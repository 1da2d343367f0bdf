// Target-model verification step for speculative decoding. The draft model
// proposes k tokens per sequence; the target scores them in one forward and
// the longest accepted prefix is committed. Verification is graph-captured
// per (batch, k) pair.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace spec {

struct VerifyBuffers {
  torch::Tensor draft_tokens;   // [B, k]
  torch::Tensor draft_probs;    // [B, k]
  torch::Tensor target_logits;  // [B, k + 1, V]
  torch::Tensor accepted_len;   // [B]
  torch::Tensor bonus_token;    // [B]
};

static bool same_tokens(const torch::Tensor& a, const torch::Tensor& b) {
  return a.equal(b); // expect: cudagraph-host-sync
}

class Verifier {
 public:
  Verifier(int64_t vocab, int max_rounds, bool check_numerics)
      : vocab_(vocab), max_rounds_(max_rounds), check_numerics_(check_numerics) {}

  void verify(VerifyBuffers& buf) {
    const int64_t k = buf.draft_tokens.size(1);
    auto target_probs = torch::softmax(buf.target_logits, -1);
    auto greedy = buf.target_logits.argmax(-1);

    // Fast path: the draft matched greedy decoding exactly.
    if (same_tokens(buf.draft_tokens, greedy.narrow(1, 0, k))) { // expect: cudagraph-data-dependent-branch
      buf.accepted_len.fill_(k);
      buf.bonus_token.copy_(greedy.select(1, k));
      return;
    }

    auto p_target = target_probs.narrow(1, 0, k).gather(-1, buf.draft_tokens.unsqueeze(-1)).squeeze(-1);
    if (check_numerics_) {
      auto recomputed = torch::softmax(buf.target_logits.to(torch::kDouble), -1).to(target_probs.scalar_type());
      TORCH_CHECK(torch::allclose(recomputed, target_probs, 1e-3, 1e-5), "target softmax drifted"); // expect: cudagraph-host-sync, cudagraph-data-dependent-branch
    }

    auto ratio = (p_target / buf.draft_probs.clamp_min(1e-9)).clamp_max(1.0);
    auto u = torch::rand_like(ratio);
    auto accept = (u < ratio).to(torch::kInt);
    auto prefix = accept.cumprod(1);
    buf.accepted_len.copy_(prefix.sum(1));

    const bool any_rejected = prefix.select(1, 0).logical_not().any().is_nonzero(); // expect: cudagraph-host-sync
    if (any_rejected) { // expect: cudagraph-data-dependent-branch
      resample_rejected(buf, target_probs, prefix);
    }

    if (keep_trace_) {
      trace_.push_back(buf.accepted_len.to(torch::kCPU, /*non_blocking=*/false)); // expect: cudagraph-host-sync
    }
    auto pos = buf.accepted_len.clamp_max(k).unsqueeze(-1).unsqueeze(-1).expand({-1, 1, vocab_});
    buf.bonus_token.copy_(target_probs.gather(1, pos).squeeze(1).argmax(-1));
  }

  void resample_rejected(VerifyBuffers& buf, const torch::Tensor& target_probs, const torch::Tensor& prefix) {
    const int64_t k = buf.draft_tokens.size(1);
    auto residual = (target_probs.narrow(1, 0, k) - buf.draft_probs.unsqueeze(-1)).clamp_min(0.0);
    auto norm = residual.sum(-1, /*keepdim=*/true);
    auto fixed = residual / norm.clamp_min(1e-9);
    auto keep = prefix.to(torch::kBool);
    for (int r = 0; r < max_rounds_; ++r) {
      auto draws = (fixed / torch::empty_like(fixed).exponential_()).argmax(-1);
      buf.draft_tokens.copy_(torch::where(keep, buf.draft_tokens, draws));
    }
  }

 private:
  int64_t vocab_;
  int max_rounds_;
  bool check_numerics_;
  bool keep_trace_ = false;
  std::vector<torch::Tensor> trace_;
};

class VerifyGraphPool {
 public:
  VerifyGraphPool(Verifier& v, int64_t vocab) : verifier_(v), vocab_(vocab) {}

  VerifyBuffers make_buffers(int64_t batch, int64_t k) {
    auto dev = torch::TensorOptions().device(torch::kCUDA);
    VerifyBuffers b;
    b.draft_tokens = torch::zeros({batch, k}, dev.dtype(torch::kLong));
    b.draft_probs = torch::full({batch, k}, 0.5, dev.dtype(torch::kFloat));
    b.target_logits = torch::zeros({batch, k + 1, vocab_}, dev.dtype(torch::kFloat));
    b.accepted_len = torch::zeros({batch}, dev.dtype(torch::kLong));
    b.bonus_token = torch::zeros({batch}, dev.dtype(torch::kLong));
    return b;
  }

  void capture(int64_t batch, int64_t k) {
    auto key = std::make_pair(batch, k);
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    Entry& e = entries_[key];
    e.buffers = make_buffers(batch, k);
    for (int i = 0; i < 2; ++i) {
      verifier_.verify(e.buffers);
    }
    stream.synchronize();

    auto verify_once = [&](VerifyBuffers& b) { verifier_.verify(b); };
    e.graph.capture_begin();
    verify_once(e.buffers);
    e.graph.capture_end();
  }

  // Returns how many draft tokens were accepted for row 0 (used by tests).
  int64_t replay_and_read(int64_t batch, int64_t k) {
    Entry& e = entries_.at(std::make_pair(batch, k));
    e.graph.replay();
    auto host = e.buffers.accepted_len.to(torch::kCPU);
    if (host.equal(torch::zeros_like(host))) {
      return 0;
    }
    return host[0].item<int64_t>();
  }

 private:
  struct Entry {
    at::cuda::CUDAGraph graph;
    VerifyBuffers buffers;
  };
  Verifier& verifier_;
  int64_t vocab_;
  std::map<std::pair<int64_t, int64_t>, Entry> entries_;
};

}  // namespace spec

int main() {
  spec::Verifier verifier(32000, 4, /*check_numerics=*/true);
  spec::VerifyGraphPool pool(verifier, 32000);
  pool.capture(4, 5);
  return pool.replay_and_read(4, 5) >= 0 ? 0 : 1;
}
