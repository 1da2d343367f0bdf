// Paged KV-cache block pool with graph-captured compaction.
//
// Blocks live in large chunks allocated with the CUDA runtime. Compaction
// moves live blocks to the front of the pool; the list of moves is fixed for
// a given fragmentation pattern, so the copies are captured once and the
// graph is replayed every time the same pattern shows up. The fp8 scale
// update of the cache is a small libtorch graph.

#include <torch/torch.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(x)                                                              \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

namespace kv {

struct BlockMove {
  int src;
  int dst;
};

class BlockPool {
 public:
  BlockPool(size_t block_bytes, int blocks_per_chunk)
      : block_bytes_(block_bytes), blocks_per_chunk_(blocks_per_chunk) {}

  ~BlockPool() {
    for (char* c : chunks_) {
      cudaFree(c);
    }
  }

  // Returns the address of block `id`, growing the pool when needed.
  char* block_ptr(int id) {
    const int chunk = id / blocks_per_chunk_;
    while (static_cast<int>(chunks_.size()) <= chunk) {
      grow();
    }
    return chunks_[chunk] + static_cast<size_t>(id % blocks_per_chunk_) * block_bytes_;
  }

  // Releases chunks past `keep_chunks`.
  void trim(size_t keep_chunks) {
    while (chunks_.size() > keep_chunks) {
      CUDA_CHECK(cudaFree(chunks_.back())); // expect: cudagraph-device-alloc
      chunks_.pop_back();
    }
  }

  void reserve(int blocks) { block_ptr(blocks - 1); }
  size_t block_bytes() const { return block_bytes_; }
  size_t chunk_bytes() const { return block_bytes_ * blocks_per_chunk_; }
  char* chunk(size_t i) const { return chunks_[i]; }
  size_t num_chunks() const { return chunks_.size(); }

 private:
  void grow() {
    char* c = nullptr;
    CUDA_CHECK(cudaMalloc(&c, chunk_bytes())); // expect: cudagraph-device-alloc
    chunks_.push_back(c);
  }

  size_t block_bytes_;
  int blocks_per_chunk_;
  std::vector<char*> chunks_;
};

class Compactor {
 public:
  Compactor(BlockPool& pool, cudaStream_t stream) : pool_(pool), stream_(stream) {}

  ~Compactor() {
    if (exec_ != nullptr) {
      cudaGraphExecDestroy(exec_);
      cudaGraphDestroy(graph_);
    }
  }

  void capture(const std::vector<BlockMove>& moves, size_t keep_chunks) {
    CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    for (const BlockMove& mv : moves) {
      char* dst = pool_.block_ptr(mv.dst);
      char* src = pool_.block_ptr(mv.src);
      CUDA_CHECK(cudaMemcpyAsync(dst, src, pool_.block_bytes(), cudaMemcpyDeviceToDevice, stream_));
    }
    // Zero the tail of the first chunk so stale keys never leak into attention.
    CUDA_CHECK(cudaMemsetAsync(pool_.chunk(0), 0, pool_.block_bytes(), 0)); // expect: cudagraph-legacy-stream
    CUDA_CHECK(cudaMemsetAsync(pool_.chunk(0) + pool_.block_bytes(), 0, pool_.block_bytes(), stream_));
    pool_.trim(keep_chunks);
    CUDA_CHECK(cudaStreamEndCapture(stream_, &graph_));
    CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }

  // Staging copy used by the swap-out path; relaxed mode allows the temporary buffer.
  void capture_swap_out(char* swap_dst, size_t bytes) {
    cudaGraph_t g = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
    char* staging = nullptr;
    CUDA_CHECK(cudaMalloc(&staging, bytes));
    CUDA_CHECK(cudaMemcpyAsync(staging, pool_.chunk(0), bytes, cudaMemcpyDeviceToDevice, stream_));
    CUDA_CHECK(cudaMemcpyAsync(swap_dst, staging, bytes, cudaMemcpyDeviceToDevice, stream_));
    CUDA_CHECK(cudaStreamEndCapture(stream_, &g));
    CUDA_CHECK(cudaGraphDestroy(g));
    CUDA_CHECK(cudaFree(staging));
  }

  void run() { CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  BlockPool& pool_;
  cudaStream_t stream_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Re-quantises the most recent keys into the fp8-like cache with a host scale.
class ScaleUpdater {
 public:
  ScaleUpdater(int64_t blocks, int64_t block_elems)
      : stream_(c10::cuda::getStreamFromPool()), copy_stream_(c10::cuda::getStreamFromPool()) {
    auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
    static_keys_ = torch::zeros({blocks, block_elems}, f32);
    static_block_ids_ = torch::zeros({blocks}, f32.dtype(torch::kLong));
    cache_ = torch::zeros({4 * blocks, block_elems}, f32.dtype(torch::kHalf));
  }

  void capture(const std::vector<int64_t>& reserved_ids, const torch::Tensor& initial_keys) {
    auto long_cuda = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
    {
      // The first keys come from the prefill, copied on a separate stream.
      c10::cuda::CUDAStreamGuard on_copy(copy_stream_);
      static_keys_.copy_(initial_keys, /*non_blocking=*/true);
    }
    keys_ready_.record(copy_stream_);
    c10::cuda::CUDAStreamGuard guard(stream_);
    graph_.capture_begin();
    keys_ready_.block(stream_); // expect: cudagraph-unjoined-fork
    auto reserved = torch::tensor(reserved_ids, long_cuda); // expect: cudagraph-host-sync
    auto q = static_keys_.div(kv_scale_).clamp(-448.0, 448.0).to(torch::kHalf);
    cache_.index_copy_(0, static_block_ids_, q);
    cache_.index_fill_(0, reserved, 0.0);
    auto live_rows = cache_.narrow(0, 0, static_keys_.size(0)).index({static_keys_.abs().amax(1) > 0}); // expect: cudagraph-host-sync
    live_energy_ = live_rows.to(torch::kFloat).pow(2).sum();
    graph_.capture_end();
  }

  void step(const std::vector<torch::Tensor>& keys, const std::vector<torch::Tensor>& ids,
            const std::vector<double>& scales) {
    for (size_t i = 0; i < keys.size(); ++i) {
      static_keys_.copy_(keys[i]);
      if (i % 2 == 0) {
        static_block_ids_.copy_(ids[i]);
      } else {
        static_block_ids_ = ids[i]; // expect: cudagraph-frozen-host-state
      }
      kv_scale_ = scales[i]; // expect: cudagraph-frozen-host-state
      graph_.replay();
    }
  }

 private:
  c10::cuda::CUDAStream stream_;
  c10::cuda::CUDAStream copy_stream_;
  at::cuda::CUDAEvent keys_ready_;
  at::cuda::CUDAGraph graph_;
  double kv_scale_ = 1.0;
  torch::Tensor static_keys_, static_block_ids_, cache_, live_energy_;
};

}  // namespace kv

int main() {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  kv::BlockPool pool(16 * 1024, 64);
  pool.reserve(64);  // first chunk exists before any capture
  char* swap_dst = nullptr;
  CUDA_CHECK(cudaMalloc(&swap_dst, pool.chunk_bytes()));
  {
    kv::Compactor compactor(pool, stream);
    std::vector<kv::BlockMove> moves{{70, 1}, {90, 2}, {130, 3}};
    compactor.capture(moves, 1);
    compactor.capture_swap_out(swap_dst, pool.chunk_bytes());
    for (int i = 0; i < 5; ++i) {
      compactor.run();
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  kv::ScaleUpdater updater(8, 256);
  std::vector<int64_t> reserved{0, 1};
  auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
  updater.capture(reserved, torch::randn({8, 256}, f32));
  std::vector<torch::Tensor> keys{torch::randn({8, 256}, f32), torch::randn({8, 256}, f32)};
  std::vector<torch::Tensor> ids{torch::arange(8, f32.dtype(torch::kLong)), torch::arange(8, 16, f32.dtype(torch::kLong))};
  updater.step(keys, ids, {0.5, 0.25});

  CUDA_CHECK(cudaFree(swap_dst));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}
