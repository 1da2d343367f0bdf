// Batch image classifier served from a captured CUDA graph. Images are
// decoded and normalized on the host, uploaded into a static input buffer and
// the top-5 classes are produced on the device.

#include <torch/torch.h>
#include <torch/cuda.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <iostream>
#include <string>
#include <vector>

namespace vision {

struct ConvBlockImpl : torch::nn::Module {
  ConvBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)))),
        norm(register_module("norm", torch::nn::GroupNorm(8, out))) {}

  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(norm->forward(conv->forward(x))); }

  torch::nn::Conv2d conv;
  torch::nn::GroupNorm norm;
};
TORCH_MODULE(ConvBlock);

struct TinyNetImpl : torch::nn::Module {
  explicit TinyNetImpl(int64_t classes) : fc(register_module("fc", torch::nn::Linear(256, classes))) {
    const int64_t widths[] = {3, 32, 64, 128, 256};
    for (int i = 0; i < 4; ++i) {
      blocks.push_back(register_module("block" + std::to_string(i), ConvBlock(widths[i], widths[i + 1], 2)));
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 4 && x.size(1) == 3, "expected NCHW RGB input");
    if (x.scalar_type() != torch::kFloat) {
      x = x.to(torch::kFloat);
    }
    for (auto& b : blocks) {
      x = b->forward(x);
    }
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc->forward(x);
  }

  std::vector<ConvBlock> blocks;
  torch::nn::Linear fc;
};
TORCH_MODULE(TinyNet);

class GraphedClassifier {
 public:
  GraphedClassifier(TinyNet net, int64_t batch, int64_t hw, bool with_probs)
      : net_(std::move(net)), with_probs_(with_probs) {
    net_->eval();
    net_->to(torch::kCUDA);
    auto opts = torch::TensorOptions().device(torch::kCUDA);
    static_in_ = torch::zeros({batch, 3, hw, hw}, opts);
    mean_ = torch::tensor({0.485f, 0.456f, 0.406f}).view({1, 3, 1, 1}).to(torch::kCUDA);
    std_ = torch::tensor({0.229f, 0.224f, 0.225f}).view({1, 3, 1, 1}).to(torch::kCUDA);
  }

  torch::Tensor body(const torch::Tensor& x) {
    auto logits = net_->forward((x - mean_) / std_);
    if (with_probs_) {
      return torch::softmax(logits, -1);
    }
    return logits;
  }

  void capture() {
    torch::NoGradGuard no_grad;
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);

    for (int i = 0; i < 3; ++i) {
      auto warm = body(static_in_);
      const int64_t cls = warm.argmax(1)[0].item<int64_t>();
      if (cls < 0) {
        std::cerr << "impossible class" << std::endl;
      }
    }
    torch::cuda::synchronize();

    graph_.capture_begin();
    auto scores = body(static_in_);
    const int64_t k = scores.size(1) >= 5 ? 5 : scores.size(1);
    auto top = scores.topk(k, 1);
    top_values_ = std::get<0>(top);
    top_indices_ = std::get<1>(top);
    if (static_in_.size(0) > 1) {
      batch_mean_ = scores.mean(0);
    }
    graph_.capture_end();
  }

  // Host-side batch of decoded uint8 images -> top-5 class ids.
  std::vector<std::vector<int64_t>> classify(const torch::Tensor& images_u8) {
    TORCH_CHECK(images_u8.size(0) <= static_in_.size(0), "batch too large");
    auto batch = images_u8.to(torch::kCUDA).permute({0, 3, 1, 2}).to(torch::kFloat).div_(255.0);
    static_in_.zero_();
    static_in_.narrow(0, 0, batch.size(0)).copy_(batch);
    graph_.replay();

    auto ids = top_indices_.narrow(0, 0, batch.size(0)).cpu();
    std::vector<std::vector<int64_t>> out(ids.size(0));
    for (int64_t i = 0; i < ids.size(0); ++i) {
      for (int64_t j = 0; j < ids.size(1); ++j) {
        out[i].push_back(ids[i][j].item<int64_t>());
      }
    }
    if (top_values_.max().item<float>() < 0.05f) {
      std::cout << "low-confidence batch: " << top_values_.narrow(0, 0, batch.size(0)) << std::endl;
    }
    return out;
  }

 private:
  TinyNet net_;
  bool with_probs_;
  at::cuda::CUDAGraph graph_;
  torch::Tensor static_in_, mean_, std_, top_values_, top_indices_, batch_mean_;
};

}  // namespace vision

int main() {
  vision::GraphedClassifier clf(vision::TinyNet(1000), 16, 224, /*with_probs=*/true);
  clf.capture();
  auto images = torch::randint(0, 256, {4, 224, 224, 3}, torch::TensorOptions().dtype(torch::kByte));
  auto result = clf.classify(images);
  std::cout << "first image top-1: " << result[0][0] << std::endl;
  return 0;
}
