// Whole-iteration capture of a small regression model's training step:
// forward, backward, gradient clipping, loss scaling and an SGD update.

#include <torch/torch.h>
#include <torch/cuda.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <chrono>
#include <iostream>
#include <vector>

namespace train {

struct NetImpl : torch::nn::Module {
  NetImpl(int64_t in, int64_t hidden, int64_t out)
      : fc1(register_module("fc1", torch::nn::Linear(in, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
        head(register_module("head", torch::nn::Linear(hidden, out))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(fc1->forward(x));
    h = torch::relu(fc2->forward(h));
    return head->forward(h);
  }

  torch::nn::Linear fc1, fc2, head;
};
TORCH_MODULE(Net);

class LossScaler {
 public:
  explicit LossScaler(float init_scale) : scale_(init_scale) {}

  float scale() const { return scale_; }

  bool grads_overflowed(const std::vector<torch::Tensor>& grads) {
    auto flag = torch::zeros({}, grads.front().options().dtype(torch::kFloat));
    for (const auto& g : grads) {
      flag.add_(torch::isfinite(g).logical_not().any().to(torch::kFloat));
    }
    return flag.item<float>() > 0.0f; // expect: cudagraph-host-sync
  }

  // Zeroes the gradients (so the update is a no-op) when they overflowed.
  void unscale_(std::vector<torch::Tensor>& grads) {
    if (grads_overflowed(grads)) { // expect: cudagraph-data-dependent-branch
      scale_ *= 0.5f;
      good_steps_ = 0;
      for (auto& g : grads) {
        g.zero_();
      }
      return;
    }
    for (auto& g : grads) {
      g.mul_(1.0f / scale_);
    }
    if (++good_steps_ == growth_interval_) {
      scale_ *= 2.0f;
      good_steps_ = 0;
    }
  }

 private:
  float scale_;
  int good_steps_ = 0;
  int growth_interval_ = 2000;
};

double clip_grad_norm(std::vector<torch::Tensor>& grads, double max_norm) {
  std::vector<torch::Tensor> norms;
  norms.reserve(grads.size());
  for (const auto& g : grads) {
    norms.push_back(g.norm());
  }
  const double total = torch::stack(norms).norm().item<double>(); // expect: cudagraph-host-sync
  const double coef = total > max_norm ? max_norm / (total + 1e-6) : 1.0; // expect: cudagraph-data-dependent-branch
  for (auto& g : grads) {
    g.mul_(coef);
  }
  return total;
}

// Clip factor computed and applied on the device.
torch::Tensor clip_grad_norm_device(std::vector<torch::Tensor>& grads, double max_norm) {
  std::vector<torch::Tensor> norms;
  for (const auto& g : grads) {
    norms.push_back(g.norm());
  }
  auto total = torch::stack(norms).norm();
  auto coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
  for (auto& g : grads) {
    g.mul_(coef);
  }
  return total;
}

// Copies parameters to host memory on a side stream every N steps so that a
// writer thread can serialize them without stalling training.
class AsyncSnapshot {
 public:
  AsyncSnapshot() : stream_(c10::cuda::getStreamFromPool()) {}

  void snapshot(const std::vector<torch::Tensor>& params) {
    if (pending_ && !done_.query()) { // expect: cudagraph-status-query
      ++skipped_;
      return;
    }
    if (host_.empty()) {
      for (const auto& p : params) {
        host_.push_back(torch::empty(p.sizes(), p.options().device(torch::kCPU).pinned_memory(true))); // warmed up before the capture: not run while capturing
      }
    }
    start_.record(c10::cuda::getCurrentCUDAStream());
    start_.block(stream_);
    {
      c10::cuda::CUDAStreamGuard guard(stream_);
      for (size_t i = 0; i < params.size(); ++i) {
        host_[i].copy_(params[i], /*non_blocking=*/true);
      }
      done_.record(stream_);
    }
    pending_ = true;
    if (!stream_.query()) { // expect: cudagraph-status-query
      ++slow_;
    }
  }

  const std::vector<torch::Tensor>& wait() {
    done_.synchronize();
    pending_ = false;
    return host_;
  }

 private:
  c10::cuda::CUDAStream stream_;
  at::cuda::CUDAEvent start_, done_;
  std::vector<torch::Tensor> host_;
  bool pending_ = false;
  int64_t skipped_ = 0;
  int64_t slow_ = 0;
};

class Trainer {
 public:
  Trainer(Net net, double lr, bool device_clip)
      : net_(std::move(net)), lr_(lr), device_clip_(device_clip), scaler_(1024.0f) {
    net_->to(torch::kCUDA);
    auto opts = torch::TensorOptions().device(torch::kCUDA);
    static_x_ = torch::zeros({256, 64}, opts);
    static_y_ = torch::zeros({256, 1}, opts);
  }

  void step_body() {
    net_->zero_grad(/*set_to_none=*/false);
    auto pred = net_->forward(static_x_);
    static_loss_ = torch::mse_loss(pred, static_y_);
    (static_loss_ * scaler_.scale()).backward();

    std::vector<torch::Tensor> grads;
    for (auto& p : net_->parameters()) {
      grads.push_back(p.grad());
    }
    scaler_.unscale_(grads);
    if (device_clip_) {
      clip_grad_norm_device(grads, 1.0);
    } else {
      clip_grad_norm(grads, 1.0);
    }
    torch::NoGradGuard no_grad;
    for (auto& p : net_->parameters()) {
      p.add_(p.grad(), -lr_);
    }
    if (iter_ % snapshot_every_ == 0) {
      snapshots_.snapshot(net_->parameters());
    }
    if (++iter_ % log_every_ == 0) {
      std::cout << "iter " << iter_ << " loss " << static_loss_.item<float>() << std::endl; // expect: cudagraph-host-sync
    }
  }

  void timed_step_body() {
    auto t0 = std::chrono::steady_clock::now();
    step_body();
    torch::cuda::synchronize(); // expect: cudagraph-host-sync
    auto t1 = std::chrono::steady_clock::now();
    step_ms_ = std::chrono::duration<double, std::milli>(t1 - t0).count();
  }

  void capture(bool timed) {
    auto side = c10::cuda::getStreamFromPool();
    {
      c10::cuda::CUDAStreamGuard guard(side);
      for (int i = 0; i < 11; ++i) {
        step_body();
      }
    }
    torch::cuda::synchronize();

    c10::cuda::CUDAStreamGuard guard(side);
    graph_.capture_begin();
    if (timed) {
      timed_step_body();
    } else {
      step_body();
    }
    graph_.capture_end();
  }

  float train(const torch::Tensor& xs, const torch::Tensor& ys, int64_t batch) {
    float last = 0.0f;
    for (int64_t off = 0; off + batch <= xs.size(0); off += batch) {
      static_x_.copy_(xs.narrow(0, off, batch));
      static_y_.copy_(ys.narrow(0, off, batch));
      graph_.replay();
    }
    torch::cuda::synchronize();
    last_snapshot_ = snapshots_.wait();
    last = static_loss_.item<float>();
    if (last != last) {
      std::cerr << "loss is NaN" << std::endl;
    }
    return last;
  }

 private:
  Net net_;
  double lr_;
  bool device_clip_;
  LossScaler scaler_;
  at::cuda::CUDAGraph graph_;
  torch::Tensor static_x_, static_y_, static_loss_;
  int64_t iter_ = 0;
  int64_t log_every_ = 100;
  int64_t snapshot_every_ = 500;
  AsyncSnapshot snapshots_;
  double step_ms_ = 0.0;
  std::vector<torch::Tensor> last_snapshot_;
};

}  // namespace train

int main(int argc, char** argv) {
  const bool device_clip = argc > 1;
  train::Trainer trainer(train::Net(64, 256, 1), 1e-3, device_clip);
  trainer.capture(/*timed=*/argc > 2);
  auto opts = torch::TensorOptions().device(torch::kCUDA);
  auto xs = torch::randn({4096, 64}, opts);
  auto ys = xs.sum(-1, true);
  std::cout << "final loss " << trainer.train(xs, ys, 256) << std::endl;
  return 0;
}
