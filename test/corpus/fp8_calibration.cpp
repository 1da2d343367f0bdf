// FP8-style activation quantization for a linear layer with three scaling
// recipes. The quantized GEMM path is recorded into a CUDA graph; offline
// calibration runs eagerly before that.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cmath>
#include <iostream>
#include <vector>

namespace quant {

constexpr float kFp8Max = 448.0f;

enum ScaleRecipe : int64_t { kPerTensor = 0, kPerChannel = 1, kDelayed = 2 };

struct QuantState {
  torch::Tensor recipe;        // int64 scalar on device, switched by the scheduler
  torch::Tensor amax_history;  // [H]
  torch::Tensor scale;         // [] or [C]
  torch::Tensor tolerance;     // [] float
  bool keep_log = false;
  std::vector<torch::Tensor> log;
};

// Simulated e4m3 rounding: clamp to the representable range and round the
// mantissa to 3 bits.
static torch::Tensor fake_fp8(const torch::Tensor& x) {
  auto c = x.clamp(-kFp8Max, kFp8Max);
  auto e = torch::floor(torch::log2(c.abs().clamp_min(1e-12)));
  auto step = torch::pow(2.0, e - 3);
  return torch::round(c / step) * step;
}

static torch::Tensor per_tensor_scale(const torch::Tensor& x) {
  const float amax = x.abs().max().item<float>(); // expect: cudagraph-host-sync
  const float s = amax > 0.0f ? kFp8Max / amax : 1.0f; // expect: cudagraph-data-dependent-branch
  return torch::full({}, s, x.options().dtype(torch::kFloat));
}

static torch::Tensor per_tensor_scale_device(const torch::Tensor& x) {
  auto amax = x.abs().max().to(torch::kFloat);
  return torch::where(amax > 0, kFp8Max / amax, torch::ones_like(amax));
}

static torch::Tensor per_channel_scale(const torch::Tensor& x) {
  auto amax = std::get<0>(x.abs().max(0)).to(torch::kFloat).clamp_min(1e-12);
  return kFp8Max / amax;
}

torch::Tensor quantize(QuantState& st, const torch::Tensor& x, bool device_scales) {
  torch::Tensor scale;
  switch (st.recipe.item<int64_t>()) { // expect: cudagraph-host-sync, cudagraph-data-dependent-branch
    case kPerTensor:
      scale = device_scales ? per_tensor_scale_device(x) : per_tensor_scale(x);
      break;
    case kPerChannel:
      scale = per_channel_scale(x);
      break;
    case kDelayed:
    default:
      while (st.amax_history.max().item<float>() > 1e4f) { // expect: cudagraph-host-sync, cudagraph-data-dependent-branch
        st.amax_history.mul_(0.5);
      }
      scale = kFp8Max / st.amax_history.max().clamp_min(1e-12);
      st.amax_history.copy_(st.amax_history.roll(1));
      st.amax_history.select(0, 0).copy_(x.abs().max());
      break;
  }
  st.scale.copy_(scale.expand_as(st.scale));
  if (st.keep_log) {
    st.log.push_back(scale.cpu()); // expect: cudagraph-host-sync
  }
  return fake_fp8(x * scale);
}

// Iteratively shrinks the scale until the quantization error is acceptable.
torch::Tensor refine_scale(const torch::Tensor& x, torch::Tensor scale, const torch::Tensor& tol,
                           int max_iters) {
  auto err = (fake_fp8(x * scale) / scale - x).abs().mean();
  for (int i = 0; i < max_iters && err.item<float>() > tol.item<float>(); ++i) { // expect: cudagraph-host-sync, cudagraph-data-dependent-branch
    scale = scale * 0.9;
    err = (fake_fp8(x * scale) / scale - x).abs().mean();
  }
  return scale;
}

class QuantLinear {
 public:
  QuantLinear(int64_t in, int64_t out, int64_t history) {
    auto dev = torch::TensorOptions().device(torch::kCUDA);
    weight_ = torch::randn({out, in}, dev.dtype(torch::kFloat)) * 0.02;
    st_.recipe = torch::full({}, static_cast<int64_t>(kPerTensor), dev.dtype(torch::kLong));
    st_.amax_history = torch::zeros({history}, dev.dtype(torch::kFloat));
    st_.scale = torch::ones({}, dev.dtype(torch::kFloat));
    st_.tolerance = torch::full({}, 1e-3, dev.dtype(torch::kFloat));
  }

  torch::Tensor forward(const torch::Tensor& x, bool refine, bool device_scales) {
    auto xq = quantize(st_, x, device_scales);
    if (refine) {
      st_.scale.copy_(refine_scale(x, st_.scale, st_.tolerance, 4));
    }
    if (x.scalar_type() == torch::kHalf) {
      return torch::matmul(xq.to(torch::kHalf), weight_.to(torch::kHalf).t()) / st_.scale;
    }
    return torch::matmul(xq, weight_.t()) / st_.scale;
  }

  // Offline: choose a recipe from a few calibration batches.
  void calibrate(const std::vector<torch::Tensor>& batches) {
    float worst = 0.0f;
    for (const auto& b : batches) {
      const float amax = b.abs().max().item<float>();
      worst = amax > worst ? amax : worst;
      auto uniq = std::get<0>(torch::unique_dim(b.sign(), 0));
      if (uniq.size(0) == 1) {
        std::cout << "degenerate calibration batch" << std::endl;
      }
    }
    const int64_t recipe = worst > 100.0f ? kPerChannel : kPerTensor;
    st_.recipe.fill_(recipe);
    st_.scale.fill_(kFp8Max / std::max(worst, 1e-6f));
  }

  void capture(const torch::Tensor& static_x, bool refine, bool device_scales) {
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    forward(static_x, refine, device_scales);
    stream.synchronize();
    graph_.capture_begin();
    static_out_ = forward(static_x, refine, device_scales);
    graph_.capture_end();
  }

  torch::Tensor out() const { return static_out_; }
  void replay() { graph_.replay(); }

 private:
  torch::Tensor weight_, static_out_;
  QuantState st_;
  at::cuda::CUDAGraph graph_;
};

}  // namespace quant

int main() {
  quant::QuantLinear layer(1024, 1024, 16);
  auto dev = torch::TensorOptions().device(torch::kCUDA);
  std::vector<torch::Tensor> calib;
  for (int i = 0; i < 4; ++i) {
    calib.push_back(torch::randn({64, 1024}, dev));
  }
  layer.calibrate(calib);
  auto x = torch::randn({64, 1024}, dev);
  layer.capture(x, /*refine=*/false, /*device_scales=*/true);
  layer.replay();
  std::cout << layer.out().abs().max().item<float>() << std::endl;
  return 0;
}
