// bad_capture_torch: a libtorch program whose captured region reads a
// device value on the host. Under the harness the report names the
// cudaStreamSynchronize that .item() makes (900, the root cause), the
// c10::Error libtorch throws, and the line of the .item() call below.
//
//   cudagraph-run -o report.jsonl -- bad_capture_torch [item|generator]
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdio>
#include <cstring>
#include <exception>

int main(int Argc, char **Argv) {
  const char *Mode = Argc > 1 ? Argv[1] : "item";
  at::Tensor X = at::ones({1024}, at::device(at::kCUDA).dtype(at::kFloat));
  at::Generator Gen = at::cuda::detail::createCUDAGenerator();
  c10::cuda::CUDAStream Side = c10::cuda::getStreamFromPool();
  c10::cuda::CUDAStreamGuard Guard(Side);
  at::cuda::CUDAGraph Graph;
  try {
    Graph.capture_begin();
    at::Tensor Y = X * 2;
    if (std::strcmp(Mode, "item") == 0) {
      float Total = Y.sum().item<float>();
      std::printf("sum %f\n", Total);
    } else {
      at::Tensor Noise = at::randn({16}, Gen, X.options());
    }
    Graph.capture_end();
  } catch (const std::exception &E) {
    std::printf("capture failed: %.80s\n", E.what());
  }
  return 0;
}
