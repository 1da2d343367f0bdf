// Inference server for a two-tower recommendation model.
//
// Each request batch is padded to one of a few bucket sizes; one CUDA graph
// per bucket runs the embedding-bag lookups, the user and item towers on two
// streams, and the dot-product scorer. Host features come in through pinned
// staging buffers that are allocated once at start-up.

#include <torch/torch.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <functional>
#include <iostream>
#include <map>
#include <vector>

namespace recsys {

struct ServerConfig {
  std::vector<int64_t> buckets{32, 64, 128, 256};
  int64_t num_ids = 100000;
  int64_t bag = 8;
  int64_t dim = 64;
  double explore_eps = 0.05;
};

struct BucketState {
  at::cuda::CUDAGraph graph;
  torch::Tensor ids_pinned;     // [bs, bag] int64, pinned host
  torch::Tensor dense_pinned;   // [bs, dim] float, pinned host
  torch::Tensor ids, dense, scores;
};

class TwoTowerServer {
 public:
  explicit TwoTowerServer(const ServerConfig& cfg)
      : cfg_(cfg), main_(c10::cuda::getStreamFromPool()), item_stream_(c10::cuda::getStreamFromPool()) {
    torch::manual_seed(1234);
    auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    table_ = torch::randn({cfg.num_ids, cfg.dim}, f32) * 0.01;
    user_w_ = torch::randn({2 * cfg.dim, cfg.dim}, f32) * 0.05;
    item_w_ = torch::randn({cfg.dim, cfg.dim}, f32) * 0.05;
    // Small constant tables are uploaded here, before any capture.
    feature_scale_ = torch::tensor({1.0f, 0.5f}, f32);
    std::vector<float> bias(static_cast<size_t>(cfg.dim), 0.01f);
    tower_bias_ = torch::tensor(bias, f32);
  }

  void build() {
    captured_eps_ = cfg_.explore_eps;
    for (int64_t bs : cfg_.buckets) {
      capture_bucket(bs);
    }
  }

  torch::Tensor score(const torch::Tensor& ids_cpu, const torch::Tensor& dense_cpu) {
    const int64_t n = ids_cpu.size(0);
    int64_t bs = cfg_.buckets.back();
    for (int64_t b : cfg_.buckets) {
      if (b >= n) {
        bs = b;
        break;
      }
    }
    BucketState& st = buckets_.at(bs);
    st.ids_pinned.zero_();
    st.ids_pinned.narrow(0, 0, n).copy_(ids_cpu);
    st.dense_pinned.narrow(0, 0, n).copy_(dense_cpu);
    st.graph.replay();
    return st.scores.narrow(0, 0, n);
  }

  // Changing the exploration rate invalidates every bucket graph.
  void set_explore_eps(double eps) {
    cfg_.explore_eps = eps;
    if (cfg_.explore_eps != captured_eps_) {
      buckets_.clear();
      build();
    }
  }

  void shutdown() {
    c10::cuda::CUDAStreamGuard legacy(c10::cuda::getDefaultCUDAStream());
    table_ = torch::Tensor();
  }

 private:
  torch::Tensor user_tower(const torch::Tensor& pooled, const torch::Tensor& dense) {
    auto x = torch::cat({pooled, dense * feature_scale_[0]}, 1);
    return torch::relu(torch::matmul(x, user_w_) + tower_bias_);
  }

  torch::Tensor item_tower(const torch::Tensor& pooled) {
    return torch::relu(torch::matmul(pooled, item_w_) + tower_bias_);
  }

  void capture_bucket(int64_t bs) {
    auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    buckets_.erase(bs);
    BucketState& st = buckets_[bs];
    st.ids_pinned = torch::zeros({bs, cfg_.bag}, torch::TensorOptions().dtype(torch::kLong).pinned_memory(true));
    st.dense_pinned = torch::zeros({bs, cfg_.dim}, torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
    st.ids = torch::zeros({bs, cfg_.bag}, f32.dtype(torch::kLong));
    st.dense = torch::zeros({bs, cfg_.dim}, f32);

    c10::cuda::CUDAStreamGuard guard(main_);
    for (int i = 0; i < 2; ++i) {
      forward(st);
    }
    st.graph.capture_begin();
    forward(st);
    // Built during capture, only used after it: reports the bucket on the legacy stream.
    auto report = [&st, bs]() {
      c10::cuda::CUDAStreamGuard legacy(c10::cuda::getDefaultCUDAStream());
      auto shape = torch::tensor({static_cast<float>(bs)}, torch::TensorOptions().device(torch::kCUDA));
      std::cout << "bucket " << bs << " scores " << st.scores.sizes() << " " << shape.sizes() << "\n";
    };
    st.graph.capture_end();
    report();
  }

  void forward(BucketState& st) {
    // Pinned sources: asynchronous uploads are captured as memcpy nodes.
    st.ids.copy_(st.ids_pinned, /*non_blocking=*/true);
    auto dense = st.dense_pinned.to(torch::kCUDA, /*non_blocking=*/true);
    st.dense.copy_(dense);

    const int64_t bs = st.ids.size(0);
    auto flat = st.ids.flatten();
    auto rows = table_.index({flat});
    auto pooled = rows.view({bs, cfg_.bag, cfg_.dim}).mean(1);

    fork_.record(main_);
    fork_.block(item_stream_);
    torch::Tensor item;
    {
      c10::cuda::CUDAStreamGuard on_item(item_stream_);
      item = item_tower(pooled);
    }
    join_.record(item_stream_);
    join_.block(main_);

    auto user = user_tower(pooled, st.dense);
    auto scores = (user * item).sum(-1);
    auto explore = torch::rand({bs}, scores.options()) < captured_eps_;
    auto noise = at::randn({bs}, at::cuda::detail::getDefaultCUDAGenerator(), scores.options());
    st.scores = torch::where(explore, noise, scores);
    auto best = scores.argmax();
    best_row_ = st.ids.index({best.unsqueeze(0)});
    scores_like_table_ = scores.to(table_);
  }

  ServerConfig cfg_;
  double captured_eps_ = 0.0;
  c10::cuda::CUDAStream main_, item_stream_;
  at::cuda::CUDAEvent fork_, join_;
  std::map<int64_t, BucketState> buckets_;
  torch::Tensor table_, user_w_, item_w_, feature_scale_, tower_bias_;
  torch::Tensor best_row_, scores_like_table_;
};

// Offline evaluation with a private generator; runs eagerly.
torch::Tensor sample_negatives(int64_t n, int64_t num_ids) {
  at::Generator gen = at::cuda::detail::createCUDAGenerator();
  gen.set_current_seed(42);
  return at::randint(num_ids, {n}, gen, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
}

}  // namespace recsys

int main() {
  recsys::ServerConfig cfg;
  recsys::TwoTowerServer server(cfg);
  server.build();
  for (int64_t n : {10, 50, 200}) {
    auto ids = torch::randint(cfg.num_ids, {n, cfg.bag}, torch::kLong);
    auto dense = torch::randn({n, cfg.dim});
    auto s = server.score(ids, dense);
    std::cout << n << " -> " << s.sizes() << "\n";
  }
  server.set_explore_eps(0.1);
  auto negatives = recsys::sample_negatives(1024, cfg.num_ids);
  std::cout << negatives.sizes() << "\n";
  server.shutdown();
  return 0;
}
