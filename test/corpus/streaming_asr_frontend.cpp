// Streaming speech front-end: 20 ms audio chunks arrive from the capture
// thread into page-locked slots, are framed and turned into log-mel-like
// features and encoded by a small conv stack. The per-chunk device work is a
// CUDA graph; host buffers are allocated once at start-up.

#include <torch/torch.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <array>
#include <cstring>
#include <vector>

namespace asr {

constexpr int64_t kChunkSamples = 320;  // 20 ms at 16 kHz
constexpr int64_t kContext = 80;
constexpr int64_t kMelBins = 64;
constexpr int64_t kRing = 4;

class Frontend {
 public:
  Frontend() {
    auto dev = torch::TensorOptions().device(torch::kCUDA);
    window_ = torch::hann_window(kChunkSamples + kContext, dev);
    mel_ = torch::rand({(kChunkSamples + kContext) / 2 + 1, kMelBins}, dev);
    conv1_ = torch::randn({128, kMelBins, 3}, dev) * 0.05;
    conv2_ = torch::randn({128, 128, 3}, dev) * 0.05;
    for (auto& slot : host_in_) {
      slot = torch::zeros({kChunkSamples}, torch::TensorOptions().dtype(torch::kFloat)).pin_memory();
    }
    host_out_ = torch::empty({128}, torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
    context_ = torch::zeros({kContext}, dev);
    dev_chunk_ = torch::zeros({kChunkSamples}, dev);
    voiced_ = torch::zeros({8}, dev.dtype(torch::kLong));
  }

  torch::Tensor features(const torch::Tensor& samples) {
    auto frame = torch::cat({context_, samples}) * window_;
    auto spec = torch::fft_rfft(frame).abs().pow(2);
    auto mel = torch::matmul(spec, mel_).clamp_min(1e-10).log();
    context_.copy_(samples.narrow(0, kChunkSamples - kContext, kContext));
    return mel;
  }

  torch::Tensor encode(const torch::Tensor& mel) {
    auto x = mel.view({1, kMelBins, 1}).expand({1, kMelBins, 3}).contiguous();
    x = torch::gelu(torch::conv1d(x, conv1_, {}, 1, 1));
    x = torch::gelu(torch::conv1d(x, conv2_, {}, 1, 1));
    return x.mean(-1).squeeze(0);
  }

  // Indices of the loudest mel bins, fixed count so the shape never changes.
  torch::Tensor voiced_bins(const torch::Tensor& mel) {
    auto loud = mel.gt(mel.mean());
#if TORCH_VERSION_MAJOR >= 2
    return at::nonzero_static(loud, voiced_.size(0), /*fill_value=*/-1).flatten();
#else
    return torch::argsort(loud.to(torch::kInt), 0, /*descending=*/true).narrow(0, 0, voiced_.size(0));
#endif
  }

  void process_slot(int64_t slot) {
    const auto& src = host_in_[slot];
    TORCH_CHECK(src.is_pinned(), "input slot must be page-locked");
    dev_chunk_.copy_(src, /*non_blocking=*/true);
    auto mel = features(dev_chunk_);
    voiced_.copy_(voiced_bins(mel));
    auto emb = encode(mel);
    auto gain = torch::where(emb.abs().max() > 10.0, 10.0 / emb.abs().max(), torch::ones_like(emb.abs().max()));
    host_out_.copy_(emb * gain, /*non_blocking=*/true);
    auto meta = torch::empty({4}, torch::TensorOptions().dtype(torch::kLong).pinned_memory(false));
    meta.fill_(slot);
    slot_meta_ = meta;
  }

  void capture() {
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    for (int64_t s = 0; s < kRing; ++s) {
      process_slot(s);
    }
    stream.synchronize();
    for (int64_t s = 0; s < kRing; ++s) {
      graphs_[s].capture_begin();
      process_slot(s);
      ready_[s].record(stream);
      graphs_[s].capture_end();
    }
  }

  // Called from the audio thread's consumer for each chunk.
  std::vector<float> push(const float* pcm, int64_t slot) {
    ready_[slot].synchronize();
    std::memcpy(host_in_[slot].data_ptr<float>(), pcm, kChunkSamples * sizeof(float));
    graphs_[slot].replay();
    ready_[slot].synchronize();
    const float* out = host_out_.data_ptr<float>();
    return std::vector<float>(out, out + host_out_.numel());
  }

 private:
  torch::Tensor window_, mel_, conv1_, conv2_, context_, dev_chunk_, voiced_, host_out_, slot_meta_;
  std::array<torch::Tensor, kRing> host_in_;
  std::array<at::cuda::CUDAGraph, kRing> graphs_;
  std::array<at::cuda::CUDAEvent, kRing> ready_;
};

}  // namespace asr

int main() {
  asr::Frontend fe;
  fe.capture();
  std::vector<float> pcm(asr::kChunkSamples, 0.0f);
  for (int i = 0; i < 100; ++i) {
    auto emb = fe.push(pcm.data(), i % asr::kRing);
    if (emb.empty()) {
      return 1;
    }
  }
  return 0;
}
