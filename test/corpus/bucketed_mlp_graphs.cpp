// Recommendation-model tower served with one CUDA graph per batch bucket.
// All graphs share one memory pool; results are streamed back into a pinned
// host buffer that the RPC layer reads after the completion event fires.

#include <torch/torch.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rec {

struct TowerImpl : torch::nn::Module {
  TowerImpl(int64_t in, std::vector<int64_t> hidden, bool use_layernorm) : use_layernorm_(use_layernorm) {
    int64_t prev = in;
    for (size_t i = 0; i < hidden.size(); ++i) {
      layers_.push_back(register_module("fc" + std::to_string(i), torch::nn::Linear(prev, hidden[i])));
      prev = hidden[i];
    }
    out_ = register_module("out", torch::nn::Linear(prev, 1));
  }

  torch::Tensor forward(torch::Tensor x) {
    for (auto& l : layers_) {
      x = torch::relu(l->forward(x));
      if (use_layernorm_) {
        x = torch::layer_norm(x, {x.size(-1)});
      }
    }
    return torch::sigmoid(out_->forward(x)).squeeze(-1);
  }

  std::vector<torch::nn::Linear> layers_;
  torch::nn::Linear out_{nullptr};
  bool use_layernorm_;
};
TORCH_MODULE(Tower);

class BucketedTower {
 public:
  BucketedTower(Tower tower, int64_t features, std::vector<int64_t> buckets)
      : tower_(std::move(tower)), features_(features), buckets_(std::move(buckets)) {
    tower_->to(torch::kCUDA);
    tower_->eval();
    const int64_t max_bs = buckets_.back();
    host_scores_ = torch::empty({max_bs}, torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
    host_inputs_ = torch::zeros({max_bs, features}).pin_memory();
  }

  void capture_all() {
    torch::NoGradGuard no_grad;
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    c10::cuda::MempoolId_t pool{0, 0};

    for (int64_t bs : buckets_) {
      auto e = std::make_unique<Entry>();
      e->input = torch::zeros({bs, features_}, torch::TensorOptions().device(torch::kCUDA));
      tower_->forward(e->input);
      stream.synchronize();

      if (pool.first == 0 && pool.second == 0) {
        e->graph.capture_begin();
      } else {
        e->graph.capture_begin(pool);
      }
      e->input.copy_(host_inputs_.narrow(0, 0, bs), /*non_blocking=*/true);
      e->scores = tower_->forward(e->input);
      host_scores_.narrow(0, 0, bs).copy_(e->scores, /*non_blocking=*/true);
      e->scores_host_view = e->scores.to(torch::kCPU, /*non_blocking=*/true);
      e->done.record(stream);
      e->graph.capture_end();

      pool = e->graph.pool();
      stream.synchronize();
      entries_[bs] = std::move(e);
    }
  }

  // Fills the pinned input buffer, replays the smallest fitting bucket and
  // waits for its completion event.
  std::vector<float> score(const std::vector<float>& rows, int64_t n) {
    auto it = entries_.lower_bound(n);
    TORCH_CHECK(it != entries_.end(), "batch of ", n, " exceeds the largest bucket");
    auto dst = host_inputs_.narrow(0, 0, it->first);
    dst.zero_();
    std::memcpy(dst.data_ptr<float>(), rows.data(), rows.size() * sizeof(float));
    it->second->graph.replay();
    it->second->done.synchronize();
    const float* p = host_scores_.data_ptr<float>();
    return std::vector<float>(p, p + n);
  }

 private:
  struct Entry {
    at::cuda::CUDAGraph graph;
    at::cuda::CUDAEvent done;
    torch::Tensor input, scores, scores_host_view;
  };
  Tower tower_;
  int64_t features_;
  std::vector<int64_t> buckets_;
  std::map<int64_t, std::unique_ptr<Entry>> entries_;
  torch::Tensor host_scores_, host_inputs_;
};

}  // namespace rec

int main() {
  rec::BucketedTower tower(rec::Tower(128, std::vector<int64_t>{512, 256, 128}, /*use_layernorm=*/true), 128, {8, 32, 128, 512});
  tower.capture_all();
  std::vector<float> rows(20 * 128, 0.1f);
  auto scores = tower.score(rows, 20);
  return scores.size() == 20 ? 0 : 1;
}
