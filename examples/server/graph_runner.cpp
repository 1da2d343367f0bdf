// CUDA-graph runner for a small libtorch inference service.
//
// The runner owns static input/output tensors, warms the model up on a side
// stream, captures one forward step into an at::cuda::CUDAGraph and then
// serves requests by copying each request into the static input and
// replaying the graph.

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <cstdint>
#include <iostream>
#include <thread>
#include <utility>
#include <vector>

namespace server {

// Two-layer MLP with fixed weights: y = relu(x W1 + b1) W2 + b2.
struct Model {
  torch::Tensor w1, b1, w2, b2;

  static Model random(int64_t features, int64_t hidden, int64_t classes) {
    auto opts = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    return Model{torch::randn({features, hidden}, opts), torch::zeros({hidden}, opts),
                 torch::randn({hidden, classes}, opts), torch::zeros({classes}, opts)};
  }

  torch::Tensor forward(const torch::Tensor& x) const {
    return torch::matmul(torch::relu(torch::matmul(x, w1) + b1), w2) + b2;
  }
};

class GraphRunner {
 public:
  GraphRunner(Model model, int64_t batch, int64_t features, int64_t classes, bool verbose)
      : model_(std::move(model)), verbose_(verbose) {
    auto dev = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    static_input_ = torch::zeros({batch, features}, dev);
    static_output_ = torch::zeros({batch, classes}, dev);
    // Pinned host buffer for results, allocated once, before any capture.
    host_output_ = torch::empty({batch, classes},
                                torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
  }

  // Runs the step a few times on a side stream so that lazy initialization
  // (cuBLAS handles, allocator pools) happens outside the capture.
  void warmup(int iters) {
    at::cuda::CUDAStream side = at::cuda::getStreamFromPool();
    side.synchronize();
    {
      c10::cuda::CUDAStreamGuard guard(side);
      for (int i = 0; i < iters; ++i) {
        static_output_ = step(static_input_);
      }
    }
    side.synchronize();
    torch::cuda::synchronize();
  }

  void capture() {
    at::cuda::CUDAStream capture_stream = at::cuda::getStreamFromPool();
    {
      c10::cuda::CUDAStreamGuard guard(capture_stream);
      graph_.capture_begin();
      static_output_ = step(static_input_);
      graph_.capture_end();
    }
    torch::cuda::synchronize();
  }

  // Serves one request: refresh the static input, replay, hand back a copy.
  torch::Tensor run(const torch::Tensor& request) {
    static_input_.copy_(request);
    graph_.replay();
    return static_output_.clone();
  }

 private:
  // The forward step that gets captured.
  torch::Tensor step(const torch::Tensor& x) {
    wait_for_staging();
    last_features_ = stage_features(x);
    torch::Tensor logits = model_.forward(x);
    log_logits(logits);
    host_output_.copy_(logits, /*non_blocking=*/true);
    staging_done_.record();
    return logits;
  }

  // Spins until the previous step's device-to-host copy has landed.
  void wait_for_staging() {
    while (!staging_done_.query()) {
      std::this_thread::yield();
    }
  }

  // Keeps a host copy of the features for the audit log.
  torch::Tensor stage_features(const torch::Tensor& x) {
    torch::Tensor staging = torch::empty(x.sizes(), torch::TensorOptions().pinned_memory(true));
    staging.copy_(x, /*non_blocking=*/true);
    return staging;
  }

  void log_logits(const torch::Tensor& logits) const {
    if (verbose_) {
      std::cout << "[graph_runner] logits:\n" << logits.cpu() << std::endl;
    }
  }

  Model model_;
  bool verbose_;
  at::cuda::CUDAGraph graph_;
  at::cuda::CUDAEvent staging_done_;
  torch::Tensor static_input_;
  torch::Tensor static_output_;
  torch::Tensor host_output_;
  torch::Tensor last_features_;
};

} // namespace server

int main() {
  constexpr int64_t kBatch = 8, kFeatures = 64, kHidden = 128, kClasses = 10;
  server::GraphRunner runner(server::Model::random(kFeatures, kHidden, kClasses), kBatch,
                             kFeatures, kClasses, /*verbose=*/false);
  runner.warmup(/*iters=*/3);
  runner.capture();

  std::vector<torch::Tensor> requests;
  for (int i = 0; i < 4; ++i) {
    requests.push_back(torch::randn({kBatch, kFeatures}, torch::device(torch::kCUDA)));
  }
  for (const torch::Tensor& request : requests) {
    torch::Tensor out = runner.run(request);
    std::cout << "request done, argmax row 0 = " << out[0].argmax().item<int64_t>() << "\n";
  }
  return 0;
}
