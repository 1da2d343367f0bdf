// Fused RMS normalization as a PyTorch C++/CUDA extension op, plus a small
// driver that captures one normalization step into a CUDA graph.
//
// rms_norm(x, weight, eps) normalizes every row of a 2-D float tensor by its
// root-mean-square and scales it by `weight`.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <torch/library.h>
#include <torch/version.h>

#include <cstdint>

namespace fused_norm {

constexpr int kThreads = 256;
constexpr float kClip = 1.0e4f;

// One block per row: a shared-memory reduction of the sum of squares, then
// a second pass that writes the scaled output.
__global__ void rms_norm_kernel(const float* __restrict__ x,
                                const float* __restrict__ weight,
                                float* __restrict__ y, int64_t cols, float eps) {
  __shared__ float partial[kThreads];
  const int64_t row = blockIdx.x;
  const float* xr = x + row * cols;
  float* yr = y + row * cols;

  float acc = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    acc += xr[c] * xr[c];
  }
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      partial[threadIdx.x] += partial[threadIdx.x + s];
    }
    __syncthreads();
  }
  const float inv_rms = 1.0f / sqrtf(partial[0] / static_cast<float>(cols) + eps);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    yr[c] = xr[c] * inv_rms * weight[c];
  }
}

// Launches the kernel on the caller's current stream.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2, "rms_norm: expected a 2-D CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kFloat, "rms_norm: expected float32 input");
  const c10::cuda::CUDAGuard device_guard(x.device());
  at::Tensor x_c = x.contiguous();
  at::Tensor w_c = weight.contiguous();
  at::Tensor y = at::empty_like(x_c);
  const int64_t rows = x_c.size(0);
  const int64_t cols = x_c.size(1);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  rms_norm_kernel<<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(
      x_c.data_ptr<float>(), w_c.data_ptr<float>(), y.data_ptr<float>(), cols,
      static_cast<float>(eps));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

// Copies the weight into a persistent device buffer, ordered on `stream`.
void refresh_weight(const at::Tensor& src, at::Tensor& dst, cudaStream_t stream) {
  C10_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr<float>(), src.data_ptr<float>(),
                                 src.numel() * sizeof(float), cudaMemcpyDeviceToDevice,
                                 stream));
}

// Blocks until everything queued on `stream` has finished.
void wait_for_stream(cudaStream_t stream) {
  C10_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Rescales the input in place when its largest magnitude is too large.
void clip_if_needed(at::Tensor& x) {
  const float peak = x.abs().max().item<float>();
  if (peak > kClip) {
    x.mul_(kClip / peak);
  }
}

// Indices of rows whose first feature is positive, padded with -1 to a fixed
// length so that the output shape does not depend on the data.
at::Tensor active_rows(const at::Tensor& x) {
  at::Tensor mask = x.select(/*dim=*/1, /*index=*/0) > 0;
#if TORCH_VERSION_MAJOR >= 2 && (TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 1)
  return at::nonzero_static(mask, /*size=*/x.size(0), /*fill_value=*/-1);
#else
  at::Tensor positions = at::arange(x.size(0), x.options().dtype(at::kLong));
  return at::where(mask, positions, at::full({x.size(0)}, -1, positions.options()));
#endif
}

// One normalization step: what the captured graph replays.
at::Tensor normalize_step(at::Tensor& x, const at::Tensor& weight, at::Tensor& weight_buf,
                          double eps) {
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  refresh_weight(weight, weight_buf, stream);
  clip_if_needed(x);
  at::Tensor y = rms_norm(x, weight_buf, eps);
  wait_for_stream(stream);
  return y;
}

struct NormGraph {
  at::cuda::CUDAGraph graph;
  at::Tensor static_x;
  at::Tensor weight;
  at::Tensor weight_buf;
  at::Tensor static_y;
  at::Tensor static_rows;
};

// Records one step into `g.graph`. The static tensors must already be
// allocated on the GPU; afterwards callers fill g.static_x and call replay().
void capture_norm_graph(NormGraph& g, double eps) {
  at::cuda::CUDAStream side = at::cuda::getStreamFromPool();
  c10::cuda::CUDAStreamGuard stream_guard(side);
  g.graph.capture_begin();
  g.static_y = normalize_step(g.static_x, g.weight, g.weight_buf, eps);
  g.static_rows = active_rows(g.static_y);
  g.graph.capture_end();
}

} // namespace fused_norm

TORCH_LIBRARY(fused_norm, m) {
  m.def("rms_norm(Tensor x, Tensor weight, float eps) -> Tensor");
}

TORCH_LIBRARY_IMPL(fused_norm, CUDA, m) {
  m.impl("rms_norm", &fused_norm::rms_norm);
}
