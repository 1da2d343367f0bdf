// Paged decode attention with a plan/run split. `plan` inspects the current
// sequence lengths on the host and writes work partitioning into fixed-size
// device buffers; `run` only reads those buffers, so it can be recorded once
// and replayed after every re-plan.

#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace attn {

struct PlanBuffers {
  torch::Tensor kv_indptr;      // [max_batch + 1] int32, device
  torch::Tensor kv_indices;     // [max_pages] int32, device
  torch::Tensor last_page_len;  // [max_batch] int32, device
  torch::Tensor split_kv;       // [] int32, device
  torch::Tensor host_staging;   // pinned, same layout as the three above packed
};

class DecodeAttention {
 public:
  DecodeAttention(int64_t max_batch, int64_t max_pages, int64_t page_size, int64_t heads, int64_t head_dim)
      : max_batch_(max_batch), max_pages_(max_pages), page_size_(page_size), heads_(heads), head_dim_(head_dim) {
    auto i32 = torch::TensorOptions().dtype(torch::kInt).device(torch::kCUDA);
    buf_.kv_indptr = torch::zeros({max_batch + 1}, i32);
    buf_.kv_indices = torch::zeros({max_pages}, i32);
    buf_.last_page_len = torch::zeros({max_batch}, i32);
    buf_.split_kv = torch::zeros({}, i32);
    buf_.host_staging = torch::zeros({2 * max_batch + 2 + max_pages}, torch::TensorOptions().dtype(torch::kInt).pinned_memory(true));
  }

  // Host-side scheduling. Called before each replay, never while recording.
  void plan(const torch::Tensor& seq_lens, const torch::Tensor& page_table) {
    auto lens = seq_lens.to(torch::kCPU).to(torch::kInt);
    const int64_t b = lens.size(0);
    TORCH_CHECK(b <= max_batch_, "batch larger than planned capacity");
    auto pages_per_seq = (lens + (page_size_ - 1)).div(page_size_, "floor");
    auto indptr = torch::cat({torch::zeros({1}, lens.options()), pages_per_seq.cumsum(0).to(torch::kInt)});
    const int64_t total_pages = indptr[-1].item<int64_t>();
    TORCH_CHECK(total_pages <= max_pages_, "page table overflow");

    auto used = page_table.to(torch::kCPU).flatten().narrow(0, 0, total_pages);
    const int32_t max_len = lens.max().item<int32_t>();
    const int32_t split = max_len > 4096 ? 8 : (max_len > 1024 ? 4 : 1);

    auto* h = buf_.host_staging.data_ptr<int32_t>();
    std::fill(h, h + buf_.host_staging.numel(), 0);
    std::copy(indptr.data_ptr<int32_t>(), indptr.data_ptr<int32_t>() + b + 1, h);
    auto last = lens - (pages_per_seq - 1) * page_size_;
    std::copy(last.data_ptr<int32_t>(), last.data_ptr<int32_t>() + b, h + max_batch_ + 1);
    h[2 * max_batch_ + 1] = split;
    auto used_i32 = used.to(torch::kInt);
    std::copy(used_i32.data_ptr<int32_t>(), used_i32.data_ptr<int32_t>() + total_pages, h + 2 * max_batch_ + 2);

    auto dev = buf_.host_staging.to(torch::kCUDA, /*non_blocking=*/true);
    buf_.kv_indptr.copy_(dev.narrow(0, 0, max_batch_ + 1));
    buf_.last_page_len.copy_(dev.narrow(0, max_batch_ + 1, max_batch_));
    buf_.split_kv.copy_(dev[2 * max_batch_ + 1]);
    buf_.kv_indices.copy_(dev.narrow(0, 2 * max_batch_ + 2, max_pages_));
  }

  // q: [B, H, D]; k/v pages: [P, page, H, D]. Pure device work.
  torch::Tensor run(const torch::Tensor& q, const torch::Tensor& k_pages, const torch::Tensor& v_pages) {
    TORCH_CHECK(q.dim() == 3 && q.size(1) == heads_ && q.size(2) == head_dim_, "bad query shape");
    const int64_t b = q.size(0);
    auto idx = buf_.kv_indices.to(torch::kLong);
    auto k = k_pages.index_select(0, idx).reshape({-1, heads_, head_dim_});
    auto v = v_pages.index_select(0, idx).reshape({-1, heads_, head_dim_});
    auto pos = torch::arange(k.size(0), idx.options());
    auto starts = buf_.kv_indptr.narrow(0, 0, b).to(torch::kLong) * page_size_;
    auto ends = buf_.kv_indptr.narrow(0, 1, b).to(torch::kLong) * page_size_ -
                (page_size_ - buf_.last_page_len.narrow(0, 0, b).to(torch::kLong));
    auto mask = pos.unsqueeze(0).ge(starts.unsqueeze(1)) & pos.unsqueeze(0).lt(ends.unsqueeze(1));
    auto scores = torch::einsum("bhd,thd->bht", {q, k}) / std::sqrt(static_cast<double>(head_dim_));
    scores = scores.masked_fill(mask.logical_not().unsqueeze(1), -1e9);
    auto out = torch::einsum("bht,thd->bhd", {torch::softmax(scores.to(torch::kFloat), -1).to(q.scalar_type()), v});
    if (heads_ > 1 && head_dim_ % 8 == 0) {
      out = out.contiguous();
    }
    return out;
  }

 private:
  int64_t max_batch_, max_pages_, page_size_, heads_, head_dim_;
  PlanBuffers buf_;
};

}  // namespace attn

int main() {
  const int64_t batch = 8, pages = 512, page = 16, heads = 8, dim = 128;
  attn::DecodeAttention op(batch, pages, page, heads, dim);
  auto dev = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
  auto k_pages = torch::randn({pages, page, heads, dim}, dev);
  auto v_pages = torch::randn({pages, page, heads, dim}, dev);
  auto q = torch::randn({batch, heads, dim}, dev);
  auto seq_lens = torch::randint(1, 1000, {batch}, torch::TensorOptions().dtype(torch::kInt).device(torch::kCUDA));
  auto page_table = torch::arange(pages, torch::TensorOptions().dtype(torch::kInt).device(torch::kCUDA));

  auto stream = c10::cuda::getStreamFromPool();
  c10::cuda::CUDAStreamGuard guard(stream);
  op.plan(seq_lens, page_table);
  op.run(q, k_pages, v_pages);
  stream.synchronize();

  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  auto out = op.run(q, k_pages, v_pages);
  graph.capture_end();

  for (int step = 0; step < 4; ++step) {
    seq_lens.add_(1);
    op.plan(seq_lens, page_table);
    graph.replay();
  }
  stream.synchronize();
  return out.size(0) == batch ? 0 : 1;
}
