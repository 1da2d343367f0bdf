// Paged KV-cache bookkeeping that lives on the GPU: a free-block bitmap, a
// per-sequence block table and slot mapping. The append path is executed
// inside the captured decode step.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdint>
#include <iostream>
#include <vector>

namespace kv {

template <typename T>
T read_scalar(const torch::Tensor& t) {
  return t.item<T>(); // expect: cudagraph-host-sync
}

template <typename T>
T read_scalar_or(const torch::Tensor& t, T fallback) {
  return t.defined() ? t.item<T>() : fallback;
}

struct CacheLayout {
  int64_t num_blocks = 4096;
  int64_t block_size = 16;
  int64_t max_seqs = 256;
  int64_t max_blocks_per_seq = 128;
  int64_t heads = 8;
  int64_t head_dim = 128;
};

class PagedKVCache {
 public:
  explicit PagedKVCache(const CacheLayout& l) : l_(l) {
    auto dev = torch::TensorOptions().device(torch::kCUDA);
    free_mask_ = torch::ones({l.num_blocks}, dev.dtype(torch::kBool));
    block_table_ = torch::full({l.max_seqs, l.max_blocks_per_seq}, -1, dev.dtype(torch::kLong));
    seq_lens_ = torch::zeros({l.max_seqs}, dev.dtype(torch::kLong));
    num_used_ = torch::zeros({}, dev.dtype(torch::kLong));
    fragmentation_ = torch::zeros({}, dev.dtype(torch::kFloat));
    k_cache_ = torch::zeros({l.num_blocks, l.block_size, l.heads, l.head_dim}, dev.dtype(torch::kHalf));
    v_cache_ = torch::zeros_like(k_cache_);
  }

  torch::Tensor allocate_blocks(int64_t n) {
    auto free_ids = free_mask_.nonzero().flatten(); // expect: cudagraph-host-sync
    auto picked = free_ids.narrow(0, 0, n);
    free_mask_.index_fill_(0, picked, false);
    num_used_.add_(n);
    return picked;
  }

  // Slot index of the next token of every active sequence.
  torch::Tensor slot_mapping(const torch::Tensor& seq_ids) {
    auto lens = seq_lens_.index_select(0, seq_ids);
    auto block_idx = lens.div(l_.block_size, "floor");
    auto offsets = lens.remainder(l_.block_size);
    auto rows = block_table_.index_select(0, seq_ids);
    auto blocks = rows.gather(1, block_idx.unsqueeze(1)).squeeze(1);
    return blocks * l_.block_size + offsets;
  }

  void append(const torch::Tensor& seq_ids, const torch::Tensor& k, const torch::Tensor& v) {
    const int64_t n = seq_ids.size(0);
    if (n == 0) {
      return;
    }
    const int64_t used = read_scalar<int64_t>(num_used_);
    if (used + n > l_.num_blocks) { // expect: cudagraph-data-dependent-branch
      evict_finished();
    }

    auto tail = block_table_.index_select(0, seq_ids).select(1, -1).to(torch::kCPU); // expect: cudagraph-host-sync
    const int64_t last_block = tail.data_ptr<int64_t>()[0];
    if (last_block < 0) { // expect: cudagraph-data-dependent-branch
      auto fresh = allocate_blocks(n);
      block_table_.select(1, -1).index_copy_(0, seq_ids, fresh);
    }

    auto slots = slot_mapping(seq_ids);
    k_cache_.view({-1, l_.heads, l_.head_dim}).index_copy_(0, slots, k);
    v_cache_.view({-1, l_.heads, l_.head_dim}).index_copy_(0, slots, v);
    seq_lens_.index_add_(0, seq_ids, torch::ones_like(seq_ids));

    const float frag = read_scalar<float>(fragmentation_);
    frag_history_.push_back(frag);
    if (frag > 0.5f) { // expect: cudagraph-data-dependent-branch
      ++compaction_requests_;
    }
  }

  void evict_finished() {
    auto done = seq_lens_.ge(l_.max_blocks_per_seq * l_.block_size);
    auto rows = block_table_.masked_fill(done.logical_not().unsqueeze(1), -1);
    auto valid = rows.ge(0);
    auto freed = rows.masked_select(valid); // expect: cudagraph-host-sync
    auto distinct = std::get<0>(at::_unique(freed)); // expect: cudagraph-host-sync
    free_mask_.index_fill_(0, distinct, true);
    block_table_.masked_fill_(done.unsqueeze(1), -1);
    seq_lens_.masked_fill_(done, 0);
  }

  // Defragments the table between requests; never part of a decode step.
  void compact() {
    auto live = free_mask_.logical_not().nonzero().flatten();
    const int64_t n_live = live.numel();
    if (read_scalar<int64_t>(num_used_) != n_live) {
      std::cerr << "block accounting mismatch: " << n_live << std::endl;
    }
    auto order = std::get<0>(torch::_unique(block_table_.flatten()));
    if (order.size(0) > 1 && order[0].item<int64_t>() < 0) {
      order = order.narrow(0, 1, order.size(0) - 1);
    }
    fragmentation_.fill_(1.0 - static_cast<double>(n_live) / l_.num_blocks);
  }

  int64_t used_blocks_or(int64_t fallback) const { return read_scalar_or<int64_t>(num_used_, fallback); }

 private:
  CacheLayout l_;
  torch::Tensor free_mask_, block_table_, seq_lens_, num_used_, fragmentation_;
  torch::Tensor k_cache_, v_cache_;
  std::vector<float> frag_history_;
  int64_t compaction_requests_ = 0;
};

class DecodeStep {
 public:
  DecodeStep(PagedKVCache& cache, int64_t batch, const CacheLayout& l) : cache_(cache) {
    auto dev = torch::TensorOptions().device(torch::kCUDA);
    seq_ids_ = torch::arange(batch, dev.dtype(torch::kLong));
    k_ = torch::zeros({batch, l.heads, l.head_dim}, dev.dtype(torch::kHalf));
    v_ = torch::zeros_like(k_);
  }

  void capture() {
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    cache_.append(seq_ids_, k_, v_);
    stream.synchronize();
    cache_.compact();

    graph_.capture_begin();
    cache_.append(seq_ids_, k_, v_);
    graph_.capture_end();
    std::cout << "blocks in use after capture: " << cache_.used_blocks_or(-1) << std::endl;
  }

  void step(const torch::Tensor& k, const torch::Tensor& v) {
    k_.copy_(k);
    v_.copy_(v);
    graph_.replay();
  }

 private:
  PagedKVCache& cache_;
  at::cuda::CUDAGraph graph_;
  torch::Tensor seq_ids_, k_, v_;
};

}  // namespace kv

int main() {
  kv::CacheLayout layout;
  kv::PagedKVCache cache(layout);
  kv::DecodeStep step(cache, 32, layout);
  step.capture();
  return 0;
}
