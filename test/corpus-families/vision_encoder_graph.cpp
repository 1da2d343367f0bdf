// Vision encoder (ViT-style) served through CUDA graphs.
//
// Graphs are keyed by batch size and share one memory pool. The patch grid
// can change when the camera resolution changes; the encoder then recaptures
// every graph for the new grid. Frames arrive as host byte buffers and are
// uploaded before the graph runs.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

namespace vision {

struct EncoderBlockImpl : torch::nn::Module {
  EncoderBlockImpl(int64_t dim, int64_t heads)
      : norm1(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        norm2(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        qkv(register_module("qkv", torch::nn::Linear(dim, 3 * dim))),
        proj(register_module("proj", torch::nn::Linear(dim, dim))),
        fc1(register_module("fc1", torch::nn::Linear(dim, 4 * dim))),
        fc2(register_module("fc2", torch::nn::Linear(4 * dim, dim))),
        heads_(heads) {}

  torch::Tensor forward(torch::Tensor x) {
    const auto b = x.size(0), n = x.size(1), d = x.size(2);
    auto parts = qkv(norm1(x)).view({b, n, 3, heads_, d / heads_}).permute({2, 0, 3, 1, 4});
    auto attn = torch::softmax(torch::matmul(parts[0], parts[1].transpose(-1, -2)) / std::sqrt(double(d / heads_)), -1);
    auto y = torch::matmul(attn, parts[2]).transpose(1, 2).reshape({b, n, d});
    x = x + proj(y);
    return x + fc2(torch::gelu(fc1(norm2(x))));
  }

  torch::nn::LayerNorm norm1, norm2;
  torch::nn::Linear qkv, proj, fc1, fc2;
  int64_t heads_;
};
TORCH_MODULE(EncoderBlock);

class GraphedEncoder {
 public:
  GraphedEncoder(int64_t dim, int64_t depth, int64_t patch, std::vector<int64_t> batch_sizes)
      : dim_(dim), patch_(patch), batch_sizes_(std::move(batch_sizes)),
        stream_(c10::cuda::getStreamFromPool()) {
    torch::manual_seed(7);
    for (int64_t i = 0; i < depth; ++i) {
      blocks_.push_back(EncoderBlock(dim, 8));
      blocks_.back()->to(torch::kCUDA, torch::kHalf);
      blocks_.back()->eval();
    }
    auto f16 = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
    patch_w_ = torch::randn({3 * patch * patch, dim}, f16) * 0.02;
    // ImageNet statistics, uploaded once.
    mean_ = torch::tensor({0.485f, 0.456f, 0.406f}, f16.dtype(torch::kFloat)).view({1, 3, 1, 1});
    std_ = torch::tensor({0.229f, 0.224f, 0.225f}, f16.dtype(torch::kFloat)).view({1, 3, 1, 1});
  }

  // (Re)captures every batch size for a grid of grid_h x grid_w patches.
  void capture_for_grid(int64_t grid_h, int64_t grid_w) {
    grid_h_ = grid_h;
    grid_w_ = grid_w;
    graphs_.clear();
    const auto pool = at::cuda::graph_pool_handle();
    for (int64_t bs : batch_sizes_) {
      auto entry = std::make_unique<Entry>();
      entry->pixels = torch::zeros({bs, 3, grid_h * patch_, grid_w * patch_},
                                   torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA));
      c10::cuda::CUDAStreamGuard guard(stream_);
      torch::NoGradGuard no_grad;
      entry->out = encode(entry->pixels);  // warm-up
      entry->graph.capture_begin(pool);
      entry->out = encode(entry->pixels);
      entry->graph.capture_end();
      graphs_[bs] = std::move(entry);
    }
  }

  // Frames of possibly varying size; the grid follows the first frame.
  std::vector<torch::Tensor> serve(const std::vector<torch::Tensor>& batches) {
    std::vector<torch::Tensor> outs;
    int64_t frames_served = 0;
    for (const auto& pixels : batches) {
      int64_t new_h = pixels.size(2) / patch_;
      int64_t new_w = pixels.size(3) / patch_;
      if (new_h != grid_h_ || new_w != grid_w_) {
        capture_for_grid(new_h, new_w);
      }
      int64_t bs = pick_batch_size(pixels.size(0));
      Entry& e = *graphs_.at(bs);
      e.pixels.zero_();
      e.pixels.narrow(0, 0, pixels.size(0)).copy_(pixels);
      frames_served += pixels.size(0);
      graphs_.at(bs)->graph.replay();
      outs.push_back(e.out.narrow(0, 0, pixels.size(0)).clone());
    }
    std::cout << "served " << frames_served << " frames\n";
    return outs;
  }

  int64_t patch() const { return patch_; }

 private:
  struct Entry {
    at::cuda::CUDAGraph graph;
    torch::Tensor pixels, out;
  };

  int64_t pick_batch_size(int64_t n) const {
    for (int64_t bs : batch_sizes_) {
      if (bs >= n) {
        return bs;
      }
    }
    return batch_sizes_.back();
  }

  torch::Tensor encode(const torch::Tensor& pixels) {
    auto x = ((pixels - mean_) / std_).to(torch::kHalf);
    const auto b = x.size(0);
    auto patches = x.unfold(2, patch_, patch_).unfold(3, patch_, patch_)
                       .permute({0, 2, 3, 1, 4, 5})
                       .reshape({b, grid_h_ * grid_w_, 3 * patch_ * patch_});
    auto tokens = torch::matmul(patches, patch_w_);
    // Random token order for the light-weight pooling head (default generator).
    auto order = torch::rand({tokens.size(1)}, pixels.options()).argsort();
    auto dropped = at::bernoulli(torch::full({b, tokens.size(1), 1}, 0.9, tokens.options()));
    for (auto& blk : blocks_) {
      tokens = blk->forward(tokens);
    }
    auto shuffled = tokens.index({torch::indexing::Slice(), order});
    auto keep = dropped > 0.5;
    auto pooled = torch::where(keep, shuffled, torch::zeros_like(shuffled)).mean(1);
    seed_seen_ = static_cast<int64_t>(at::cuda::detail::getDefaultCUDAGenerator().current_seed());
    return pooled.to(pixels);
  }

  const int64_t dim_;
  const int64_t patch_;
  std::vector<int64_t> batch_sizes_;
  int64_t grid_h_ = 0, grid_w_ = 0;
  int64_t seed_seen_ = 0;
  c10::cuda::CUDAStream stream_;
  std::vector<EncoderBlock> blocks_;
  torch::Tensor patch_w_, mean_, std_;
  std::map<int64_t, std::unique_ptr<Entry>> graphs_;
};

// Host-side decode of a raw RGB frame; not part of any graph.
torch::Tensor upload_frame(std::vector<uint8_t>& rgb, int64_t h, int64_t w) {
  c10::cuda::CUDAStreamGuard legacy(c10::cuda::getDefaultCUDAStream());
  auto host = torch::from_blob(rgb.data(), {1, h, w, 3}, torch::kUInt8);
  auto dev = host.to(torch::kCUDA, /*non_blocking=*/true);
  return dev.permute({0, 3, 1, 2}).to(torch::kFloat).div(255.0);
}

}  // namespace vision

int main() {
  vision::GraphedEncoder enc(384, 6, 16, {1, 2, 4, 8});
  enc.capture_for_grid(14, 14);
  std::vector<uint8_t> frame(224 * 224 * 3, 128);
  auto first = vision::upload_frame(frame, 224, 224);
  std::vector<torch::Tensor> batches{first, torch::rand({3, 3, 224, 224}, first.options()),
                                     torch::rand({2, 3, 256, 256}, first.options())};
  auto outs = enc.serve(batches);
  std::cout << outs.size() << " outputs\n";
  return 0;
}
