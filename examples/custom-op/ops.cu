// A custom-op extension the way vLLM, SGLang and FlashInfer write theirs:
// CUDA kernels, launchers, and TORCH_LIBRARY registration. No function here
// begins a capture; Python does (capture.py), when it captures a model that
// calls these ops. Each op stands for one thing real extensions do.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#include <torch/library.h>

namespace {

__global__ void scale_kernel(const float *in, float *out, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * s;
}

__global__ void accumulate_kernel(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, in[i]);
}

int blocks(int64_t n) { return static_cast<int>((n + 255) / 256); }

} // namespace

// Capture-safe: work on the current stream, output from the caching
// allocator.
at::Tensor scale(at::Tensor x, double s) {
  at::Tensor y = at::empty_like(x);
  int n = static_cast<int>(x.numel());
  scale_kernel<<<blocks(n), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(s), n);
  return y;
}

// Normalizes by the largest magnitude, read back to the host.
at::Tensor normalize(at::Tensor x) {
  float peak = x.abs().max().item<float>();
  return scale(x, peak > 0.f ? 1.0 / peak : 1.0);
}

// A scratch buffer from cudaMalloc for every call.
at::Tensor sum_scratch(at::Tensor x) {
  int n = static_cast<int>(x.numel());
  float *scratch = nullptr;
  cudaMalloc(&scratch, sizeof(float));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  cudaMemsetAsync(scratch, 0, sizeof(float), stream);
  accumulate_kernel<<<blocks(n), 256, 0, stream>>>(x.data_ptr<float>(),
                                                   scratch, n);
  at::Tensor y = at::empty({1}, x.options());
  cudaMemcpyAsync(y.data_ptr<float>(), scratch, sizeof(float),
                  cudaMemcpyDeviceToDevice, stream);
  cudaFree(scratch);
  return y;
}

// A launch without a stream: the legacy default stream.
at::Tensor scale_default_stream(at::Tensor x, double s) {
  at::Tensor y = at::empty_like(x);
  int n = static_cast<int>(x.numel());
  scale_kernel<<<blocks(n), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(),
                                   static_cast<float>(s), n);
  return y;
}

// Waits for its own work before returning (a debugging leftover).
at::Tensor scale_and_wait(at::Tensor x, double s) {
  at::Tensor y = scale(x, s);
  cudaStreamSynchronize(at::cuda::getCurrentCUDAStream());
  return y;
}

TORCH_LIBRARY(graphops, m) {
  m.def("scale(Tensor x, float s) -> Tensor");
  m.def("normalize(Tensor x) -> Tensor");
  m.def("sum_scratch(Tensor x) -> Tensor");
  m.def("scale_default_stream(Tensor x, float s) -> Tensor");
  m.def("scale_and_wait(Tensor x, float s) -> Tensor");
}

TORCH_LIBRARY_IMPL(graphops, CUDA, m) {
  m.impl("scale", &scale);
  m.impl("normalize", &normalize);
  m.impl("sum_scratch", &sum_scratch);
  m.impl("scale_default_stream", &scale_default_stream);
  m.impl("scale_and_wait", &scale_and_wait);
}
