// Neural vocoder (mel -> waveform) with a graph-replay fast path and a
// start-up self-test that compares replay against eager execution.

#include <torch/torch.h>
#include <torch/cuda.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

namespace tts {

template <typename T>
T host_value(const torch::Tensor& t) {
  return t.item<T>();
}

struct Upsampler {
  torch::Tensor w1, w2, w3;

  static Upsampler make(int64_t mels) {
    auto dev = torch::TensorOptions().device(torch::kCUDA);
    return {torch::randn({mels, 256, 8}, dev) * 0.02, torch::randn({256, 64, 8}, dev) * 0.02,
            torch::randn({64, 1, 4}, dev) * 0.02};
  }

  torch::Tensor forward(const torch::Tensor& mel) const {
    auto x = torch::leaky_relu(torch::conv_transpose1d(mel, w1, {}, 8), 0.1);
    x = torch::leaky_relu(torch::conv_transpose1d(x, w2, {}, 8), 0.1);
    return torch::tanh(torch::conv_transpose1d(x, w3, {}, 4));
  }
};

bool all_finite(const torch::Tensor& t) { return torch::isfinite(t).all().is_nonzero(); }

void describe(const std::string& tag, const torch::Tensor& t) {
  std::cout << tag << ": shape=" << t.sizes() << " peak=" << host_value<float>(t.abs().max())
            << " rms=" << host_value<double>(t.pow(2).mean().sqrt().to(torch::kDouble)) << std::endl;
}

class Vocoder {
 public:
  Vocoder(int64_t mels, int64_t frames) : net_(Upsampler::make(mels)) {
    static_mel_ = torch::zeros({1, mels, frames}, torch::TensorOptions().device(torch::kCUDA));
  }

  void warm_up(int iters) {
    for (int i = 0; i < iters; ++i) {
      auto wav = net_.forward(static_mel_);
      if (!all_finite(wav)) {
        throw std::runtime_error("non-finite output during warm-up");
      }
    }
    c10::cuda::device_synchronize();
  }

  void capture() {
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    warm_up(3);

    graph_.capture_begin();
    static_wav_ = net_.forward(static_mel_);
    auto summarize = [this]() { return static_wav_.abs().max().item<float>(); };
    static_peak_ = static_wav_.abs().max();
    graph_.capture_end();

    stream.synchronize();
    std::printf("captured, initial peak %.4f\n", summarize());
  }

  bool self_test(const torch::Tensor& mel) {
    static_mel_.copy_(mel);
    graph_.replay();
    torch::cuda::synchronize();
    auto eager = net_.forward(mel);
    if (!torch::allclose(eager, static_wav_, 1e-4, 1e-5)) {
      describe("eager", eager);
      describe("graph", static_wav_);
      return false;
    }
    if (!static_wav_.equal(eager)) {
      std::cout << "replay differs bitwise (within tolerance)" << std::endl;
    }
    return host_value<float>(static_peak_) <= 1.0f;
  }

  torch::Tensor synthesize(const torch::Tensor& mel) {
    static_mel_.copy_(mel);
    graph_.replay();
    return static_wav_;
  }

 private:
  Upsampler net_;
  at::cuda::CUDAGraph graph_;
  torch::Tensor static_mel_, static_wav_, static_peak_;
};

}  // namespace tts

int main() {
  tts::Vocoder voc(80, 200);
  voc.capture();
  auto mel = torch::randn({1, 80, 200}, torch::TensorOptions().device(torch::kCUDA));
  if (!voc.self_test(mel)) {
    std::cerr << "self-test failed" << std::endl;
    return 1;
  }
  auto wav = voc.synthesize(mel).cpu();
  std::cout << "samples: " << wav.numel() << std::endl;
  return 0;
}
