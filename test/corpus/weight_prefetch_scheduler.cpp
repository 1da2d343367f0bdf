// Layer-wise weight streaming for models that do not fit in device memory:
// weights live in host memory and layer i+1 is uploaded on a copy stream
// while layer i computes. The decode forward is graph-captured.

#include <torch/torch.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace stream_weights {

class LayerPrefetcher {
 public:
  LayerPrefetcher(std::vector<torch::Tensor> host_weights, int64_t slots)
      : host_(std::move(host_weights)), copy_(c10::cuda::getStreamFromPool()) {
    for (int64_t s = 0; s < slots; ++s) {
      device_.push_back(torch::empty_like(host_.front(), host_.front().options().device(torch::kCUDA)));
      ready_.push_back(std::make_unique<at::cuda::CUDAEvent>());
      free_.push_back(std::make_unique<at::cuda::CUDAEvent>());
    }
  }

  int64_t slot_of(size_t layer) const { return static_cast<int64_t>(layer % device_.size()); }

  void issue(size_t layer) {
    const int64_t s = slot_of(layer);
    c10::cuda::CUDAStreamGuard g(copy_);
    free_[s]->block(copy_);
    device_[s].copy_(host_[layer], /*non_blocking=*/true);
    ready_[s]->record(copy_);
    ++issued_;
  }

  // True when the upload of `layer` already finished.
  bool is_ready(size_t layer) const { return ready_[slot_of(layer)]->query(); } // expect: cudagraph-status-query

  bool copy_stream_idle() const { return copy_.query(); } // expect: cudagraph-status-query

  const torch::Tensor& acquire(size_t layer) {
    const int64_t s = slot_of(layer);
    if (!is_ready(layer)) {
      ++stalls_;
    }
    ready_[s]->block(c10::cuda::getCurrentCUDAStream());
    return device_[s];
  }

  void release(size_t layer) { free_[slot_of(layer)]->record(c10::cuda::getCurrentCUDAStream()); }

  // Heuristic used by the scheduler: how far ahead to issue uploads.
  size_t lookahead() const {
    const cudaError_t st = cudaEventQuery(ready_.front()->event()); // expect: cudagraph-status-query
    const bool compute_idle = cudaStreamQuery(c10::cuda::getCurrentCUDAStream().stream()) == cudaSuccess; // expect: cudagraph-status-query
    if (st == cudaSuccess && !compute_idle) {
      return 2;
    }
    return copy_stream_idle() ? 2 : 1;
  }

  size_t layers() const { return host_.size(); }
  int64_t stalls() const { return stalls_; }

 private:
  std::vector<torch::Tensor> host_;
  std::vector<torch::Tensor> device_;
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> ready_, free_;
  c10::cuda::CUDAStream copy_;
  int64_t issued_ = 0;
  int64_t stalls_ = 0;
};

class StreamedMLPStack {
 public:
  explicit StreamedMLPStack(LayerPrefetcher& pf) : pf_(pf) {}

  torch::Tensor forward(const torch::Tensor& x) {
    auto h = x;
    const size_t ahead = pf_.lookahead();
    for (size_t i = 0; i < ahead && i < pf_.layers(); ++i) {
      pf_.issue(i);
    }
    for (size_t i = 0; i < pf_.layers(); ++i) {
      if (i + ahead < pf_.layers()) {
        pf_.issue(i + ahead);
      }
      const torch::Tensor& w = pf_.acquire(i);
      h = torch::relu(torch::matmul(h, w)) + h;
      pf_.release(i);
    }
    return h;
  }

 private:
  LayerPrefetcher& pf_;
};

// Wait (busy) until all uploads issued so far are done. Used by the loader
// before it swaps in a new checkpoint.
void wait_idle(LayerPrefetcher& pf) {
  while (!pf.copy_stream_idle()) {
  }
}

}  // namespace stream_weights

int main() {
  const int64_t d = 2048;
  std::vector<torch::Tensor> host;
  for (int i = 0; i < 24; ++i) {
    host.push_back(torch::randn({d, d}, torch::TensorOptions().dtype(torch::kHalf)).pin_memory());
  }
  stream_weights::LayerPrefetcher pf(host, 3);
  stream_weights::StreamedMLPStack model(pf);

  auto capture_stream = c10::cuda::getStreamFromPool();
  c10::cuda::CUDAStreamGuard guard(capture_stream);
  auto x = torch::zeros({8, d}, torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA));
  model.forward(x);
  stream_weights::wait_idle(pf);
  capture_stream.synchronize();

  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  auto y = model.forward(x);
  graph.capture_end();

  for (int step = 0; step < 10; ++step) {
    graph.replay();
  }
  capture_stream.synchronize();
  return pf.stalls() >= 0 && y.defined() ? 0 : 1;
}
