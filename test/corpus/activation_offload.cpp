// Activation offloading for long-context inference: after each block the
// hidden state is copied to page-locked host memory so the device copy can be
// reused. The per-layer host buffers are managed with the CUDA runtime API
// directly; the model itself is libtorch.

#include <torch/torch.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <vector>

namespace offload {

// Simple bump arena of page-locked memory, reserved once at start-up.
class HostArena {
 public:
  HostArena() = default;
  HostArena(const HostArena&) = delete;
  HostArena& operator=(const HostArena&) = delete;
  ~HostArena() { release_all(); }

  void reserve(size_t bytes) {
    void* p = nullptr;
    C10_CUDA_CHECK(cudaMallocHost(&p, bytes));
    base_ = static_cast<char*>(p);
    capacity_ = bytes;
    used_ = 0;
  }

  void* take(size_t bytes) {
    const size_t aligned = (bytes + 255) & ~static_cast<size_t>(255);
    if (used_ + aligned > capacity_) {
      return nullptr;
    }
    void* p = base_ + used_;
    used_ += aligned;
    return p;
  }

  void release_all() {
    if (base_ != nullptr) {
      C10_CUDA_CHECK(cudaFreeHost(base_));
      base_ = nullptr;
    }
  }

 private:
  char* base_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
};

class ActivationOffloader {
 public:
  ActivationOffloader(HostArena& arena, cudaStream_t copy_stream)
      : arena_(arena), copy_stream_(copy_stream) {}

  // Lets the caller provide its own CPU tensor as the destination of `layer`.
  void bind_host_tensor(int layer, const torch::Tensor& host) {
    Slot& slot = slots_[layer];
    if (slot.registered) {
      C10_CUDA_CHECK(cudaHostUnregister(slot.ptr)); // expect: cudagraph-pinned-alloc
    }
    C10_CUDA_CHECK(cudaHostRegister(host.data_ptr(), host.nbytes(), cudaHostRegisterDefault)); // expect: cudagraph-pinned-alloc
    slot.ptr = host.data_ptr();
    slot.bytes = host.nbytes();
    slot.registered = true;
    slot.owned = false;
    slot.keep_alive = host;
  }

  void* host_buffer(int layer, size_t bytes) {
    Slot& slot = slots_[layer];
    if (slot.ptr != nullptr && slot.bytes >= bytes) {
      return slot.ptr;
    }
    if (slot.done == nullptr) {
      C10_CUDA_CHECK(cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming));
    }
    if (void* p = arena_.take(bytes)) {
      slot.ptr = p;
      slot.bytes = bytes;
      return p;
    }
    if (slot.owned) {
      C10_CUDA_CHECK(cudaFreeHost(slot.ptr)); // warmed up before the capture: not run while capturing
    }
    C10_CUDA_CHECK(cudaHostAlloc(&slot.ptr, bytes, cudaHostAllocPortable)); // warmed up before the capture: not run while capturing
    slot.bytes = bytes;
    slot.owned = true;
    return slot.ptr;
  }

  void offload(int layer, const torch::Tensor& act) {
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    void* dst = host_buffer(layer, act.nbytes());
    Slot& slot = slots_[layer];
    if (slot.pending) {
      // The previous copy into this buffer has to land before it is overwritten.
      const cudaError_t st = cudaEventQuery(slot.done); // expect: cudagraph-status-query
      if (st == cudaErrorNotReady) {
        C10_CUDA_CHECK(cudaEventSynchronize(slot.done)); // expect: cudagraph-host-sync
      }
    }
    C10_CUDA_CHECK(cudaMemcpyAsync(dst, act.data_ptr(), act.nbytes(), cudaMemcpyDeviceToHost, stream));
    C10_CUDA_CHECK(cudaEventRecord(slot.done, stream));
    slot.pending = true;
  }

  void wait_for_copies() {
    while (cudaStreamQuery(copy_stream_) == cudaErrorNotReady) { // expect: cudagraph-status-query
    }
  }

  void prefetch(int layer, torch::Tensor& dst) {
    const Slot& slot = slots_.at(layer);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    C10_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), slot.ptr, dst.nbytes(), cudaMemcpyHostToDevice, stream));
  }

 private:
  struct Slot {
    void* ptr = nullptr;
    size_t bytes = 0;
    bool registered = false;
    bool owned = false;
    bool pending = false;
    cudaEvent_t done = nullptr;
    torch::Tensor keep_alive;
  };
  HostArena& arena_;
  cudaStream_t copy_stream_;
  std::map<int, Slot> slots_;
};

class OffloadedStack {
 public:
  OffloadedStack(int layers, int64_t d) {
    auto opts = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
    for (int i = 0; i < layers; ++i) {
      weights_.push_back(torch::randn({d, d}, opts) * 0.02);
    }
  }

  torch::Tensor forward(const torch::Tensor& x, ActivationOffloader& off, bool drain) {
    auto h = x;
    for (size_t i = 0; i < weights_.size(); ++i) {
      h = torch::gelu(torch::matmul(h, weights_[i])) + h;
      off.offload(static_cast<int>(i), h);
    }
    if (drain) {
      off.wait_for_copies();
    }
    return h;
  }

  size_t depth() const { return weights_.size(); }

 private:
  std::vector<torch::Tensor> weights_;
};

}  // namespace offload

int main() {
  const int64_t tokens = 2048, d = 1024;
  offload::HostArena arena;
  arena.reserve(static_cast<size_t>(4) * tokens * d * sizeof(at::Half));

  auto capture_stream = c10::cuda::getStreamFromPool();
  auto copy_stream = c10::cuda::getStreamFromPool();
  offload::ActivationOffloader off(arena, copy_stream.stream());
  offload::OffloadedStack stack(8, d);

  auto opts = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
  auto x = torch::randn({tokens, d}, opts);
  auto user_buf = torch::empty({tokens, d}, torch::TensorOptions().dtype(torch::kHalf));

  c10::cuda::CUDAStreamGuard guard(capture_stream);
  stack.forward(x, off, /*drain=*/true);
  C10_CUDA_CHECK(cudaStreamSynchronize(capture_stream.stream()));

  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  off.bind_host_tensor(0, user_buf);
  auto y = stack.forward(x, off, /*drain=*/false);
  graph.capture_end();

  graph.replay();
  C10_CUDA_CHECK(cudaStreamSynchronize(capture_stream.stream()));
  return y.size(0) == tokens ? 0 : 1;
}
