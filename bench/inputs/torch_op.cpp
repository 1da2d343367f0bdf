#include <torch/torch.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAStream.h>
torch::Tensor step(torch::Tensor x) { return x.relu() * 2; }
void run(torch::Tensor x) {
  at::cuda::CUDAGraph g;
  g.capture_begin();
  auto y = step(x);
  if (y.sum().item<float>() > 0) y.add_(1);
  g.capture_end();
}
