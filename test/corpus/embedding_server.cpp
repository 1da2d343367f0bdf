// Sentence-embedding server. Requests arrive as CPU token-id tensors, are
// staged to the GPU, encoded by a mean-pooled transformer-ish encoder and the
// normalized embeddings are streamed back to host memory for the RPC layer.

#include <torch/torch.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstring>
#include <deque>
#include <vector>

namespace embed {

struct ServerOptions {
  int64_t max_batch = 64;
  int64_t seq_len = 128;
  int64_t dim = 768;
  int64_t vocab = 30522;
  bool pin_requests = true;
  bool keep_history = false;
};

class Encoder {
 public:
  explicit Encoder(const ServerOptions& o) : o_(o) {
    auto opts = torch::TensorOptions().dtype(torch::kHalf).device(torch::kCUDA);
    table_ = torch::randn({o.vocab, o.dim}, opts) * 0.02;
    proj_ = torch::randn({o.dim, o.dim}, opts) * 0.02;
  }

  torch::Tensor encode(const torch::Tensor& ids, const torch::Tensor& mask) {
    auto h = torch::embedding(table_, ids);
    h = torch::tanh(torch::matmul(h, proj_));
    auto m = mask.unsqueeze(-1).to(h.scalar_type());
    auto pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0);
    return torch::nn::functional::normalize(pooled.to(torch::kFloat),
                                            torch::nn::functional::NormalizeFuncOptions().dim(-1));
  }

 private:
  ServerOptions o_;
  torch::Tensor table_, proj_;
};

class EmbeddingServer {
 public:
  explicit EmbeddingServer(const ServerOptions& o) : o_(o), encoder_(o) {
    auto dev_long = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
    static_ids_ = torch::zeros({o.max_batch, o.seq_len}, dev_long);
    static_mask_ = torch::zeros({o.max_batch, o.seq_len}, dev_long.dtype(torch::kBool));
    // Host side buffers live for the lifetime of the server.
    host_ids_ = torch::empty({o.max_batch, o.seq_len}, torch::TensorOptions().dtype(torch::kLong).pinned_memory(true));
    host_out_ = torch::empty({o.max_batch, o.dim}, torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
  }

  // Stages a request that is already sitting in host_ids_ and encodes it.
  void encode_static() {
    static_ids_.copy_(host_ids_, /*non_blocking=*/true);
    static_mask_.copy_(static_ids_.ne(0));
    auto emb = encoder_.encode(static_ids_, static_mask_);
    host_out_.copy_(emb, /*non_blocking=*/true);
  }

  // Older entry point kept for the batch API: takes an arbitrary CPU tensor.
  torch::Tensor encode_request(const torch::Tensor& cpu_ids) {
    torch::Tensor staged = cpu_ids;
    if (o_.pin_requests && !cpu_ids.is_pinned()) {
      staged = cpu_ids.pin_memory(); // expect: cudagraph-pinned-alloc
    }
    auto ids = staged.to(torch::kCUDA, /*non_blocking=*/true);
    auto emb = encoder_.encode(ids, ids.ne(0));
    auto result = torch::empty({emb.size(0), emb.size(1)}, torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true)); // expect: cudagraph-pinned-alloc
    result.copy_(emb, /*non_blocking=*/true);
    if (o_.keep_history) {
      history_.push_back(result);
    }
    return result;
  }

  // Mask of padding positions built on the host, shipped with the batch.
  torch::Tensor host_padding_mask(int64_t batch) {
    auto mask = torch::zeros({batch, o_.seq_len}, torch::TensorOptions().dtype(torch::kBool).pinned_memory(true)); // expect: cudagraph-pinned-alloc
    return mask.to(torch::kCUDA, /*non_blocking=*/true);
  }

  void capture(bool legacy_path) {
    auto stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(stream);
    warm_up(legacy_path);
    stream.synchronize();

    graph_.capture_begin();
    if (legacy_path) {
      auto req = torch::ones({o_.max_batch, o_.seq_len}, torch::TensorOptions().dtype(torch::kLong));
      static_out_ = encode_request(req);
      static_mask_.copy_(host_padding_mask(o_.max_batch).logical_not());
    } else {
      encode_static();
    }
    done_.record(stream);
    graph_.capture_end();
  }

  void warm_up(bool legacy_path) {
    for (int i = 0; i < 3; ++i) {
      if (legacy_path) {
        auto req = torch::ones({o_.max_batch, o_.seq_len}, torch::TensorOptions().dtype(torch::kLong));
        encode_request(req);
        scratch_ = torch::empty({o_.max_batch, o_.dim}, torch::TensorOptions().pinned_memory(true));
      } else {
        encode_static();
      }
    }
  }

  // Copies one request into the pinned staging buffer, replays and returns
  // a view of the pinned output.
  torch::Tensor serve(const std::vector<int64_t>& ids, int64_t batch) {
    std::memset(host_ids_.data_ptr<int64_t>(), 0, host_ids_.nbytes());
    std::memcpy(host_ids_.data_ptr<int64_t>(), ids.data(), ids.size() * sizeof(int64_t));
    graph_.replay();
    done_.synchronize();
    return host_out_.narrow(0, 0, batch);
  }

 private:
  ServerOptions o_;
  Encoder encoder_;
  at::cuda::CUDAGraph graph_;
  at::cuda::CUDAEvent done_;
  torch::Tensor static_ids_, static_mask_, static_out_;
  torch::Tensor host_ids_, host_out_, scratch_;
  std::deque<torch::Tensor> history_;
};

}  // namespace embed

int main() {
  embed::ServerOptions o;
  embed::EmbeddingServer server(o);
  server.capture(/*legacy_path=*/false);
  std::vector<int64_t> ids(o.seq_len, 101);
  auto out = server.serve(ids, 1);
  return out.size(0) == 1 ? 0 : 1;
}
