// Micro-benchmark: eager vs. graph replay for a chain of small elementwise
// and GEMM kernels, at two problem sizes captured back to back.

#include <torch/torch.h>
#include <torch/cuda.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <chrono>
#include <cstdio>
#include <vector>

namespace bench {

torch::Tensor kernel_chain(const torch::Tensor& x, const torch::Tensor& w, int depth) {
  auto y = x;
  for (int i = 0; i < depth; ++i) {
    y = torch::addmm(y, y, w, /*beta=*/0.5, /*alpha=*/0.5);
    y = torch::relu(y).mul_(0.99).add_(0.01);
  }
  return y;
}

struct Timing {
  double eager_ms = 0.0;
  double graph_ms = 0.0;
};

double time_events(at::cuda::CUDAEvent& start, at::cuda::CUDAEvent& stop) {
  stop.synchronize();
  return static_cast<double>(start.elapsed_time(stop));
}

Timing run_case(int64_t n, int depth, int iters) {
  auto dev = torch::TensorOptions().device(torch::kCUDA);
  auto x = torch::randn({n, n}, dev);
  auto w = torch::randn({n, n}, dev) / static_cast<double>(n);
  auto stream = c10::cuda::getStreamFromPool();
  c10::cuda::CUDAStreamGuard guard(stream);
  at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);

  kernel_chain(x, w, depth);
  torch::cuda::synchronize();
  start.record(stream);
  for (int i = 0; i < iters; ++i) {
    kernel_chain(x, w, depth);
  }
  stop.record(stream);
  Timing t;
  t.eager_ms = time_events(start, stop) / iters;

  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  auto out = kernel_chain(x, w, depth);
  graph.capture_end();
  stream.synchronize();

  start.record(stream);
  for (int i = 0; i < iters; ++i) {
    graph.replay();
  }
  stop.record(stream);
  while (!stop.query()) {
  }
  t.graph_ms = time_events(start, stop) / iters;
  if (!stream.query()) {
    std::printf("stream still busy after timing\n");
  }
  std::printf("n=%lld checksum=%.3f\n", static_cast<long long>(n), out.sum().item<double>());
  return t;
}

void run_pair(int depth, int iters) {
  auto dev = torch::TensorOptions().device(torch::kCUDA);
  auto small = torch::randn({64, 64}, dev);
  auto large = torch::randn({1024, 1024}, dev);
  auto ws = torch::randn({64, 64}, dev) / 64.0;
  auto wl = torch::randn({1024, 1024}, dev) / 1024.0;
  auto stream = c10::cuda::getStreamFromPool();
  c10::cuda::CUDAStreamGuard guard(stream);

  kernel_chain(small, ws, depth);
  kernel_chain(large, wl, depth);
  stream.synchronize();

  at::cuda::CUDAGraph g_small, g_large;
  g_small.capture_begin();
  auto out_small = kernel_chain(small, ws, depth);
  g_small.capture_end();

  c10::cuda::device_synchronize();
  std::printf("small graph captured, out mean %.4f\n", out_small.mean().item<float>());

  g_large.capture_begin(g_small.pool());
  auto out_large = kernel_chain(large, wl, depth);
  g_large.capture_end();

  for (int i = 0; i < iters; ++i) {
    g_small.replay();
    g_large.replay();
  }
  torch::cuda::synchronize();
  std::printf("pair done: %.4f %.4f\n", out_small.norm().item<float>(), out_large.norm().item<float>());
}

}  // namespace bench

int main() {
  const std::vector<int64_t> sizes{128, 512, 2048};
  for (int64_t n : sizes) {
    const auto t = bench::run_case(n, 16, 50);
    std::printf("n=%lld eager %.3f ms  graph %.3f ms  speedup %.2fx\n", static_cast<long long>(n), t.eager_ms,
                t.graph_ms, t.eager_ms / (t.graph_ms > 0.0 ? t.graph_ms : 1e-9));
  }
  bench::run_pair(16, 100);
  return 0;
}
