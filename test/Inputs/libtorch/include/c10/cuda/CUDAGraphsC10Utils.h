// Stand-in for c10/cuda/CUDAGraphsC10Utils.h: capture ids, mempool ids and
// the capture-mode RAII guard.
#pragma once

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <utility>

namespace c10 {
namespace cuda {

using CaptureId_t = unsigned long long;

// first is set if the instance is created by CUDAGraph::capture_begin.
// second is set if the instance is created by at::cuda::graph_pool_handle.
using MempoolId_t = std::pair<CaptureId_t, CaptureId_t>;

struct C10_CUDA_API CUDAStreamCaptureModeGuard {
  CUDAStreamCaptureModeGuard(cudaStreamCaptureMode desired) : strictness_(desired) {
    C10_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&strictness_));
  }
  ~CUDAStreamCaptureModeGuard() {
    C10_CUDA_CHECK_WARN(cudaThreadExchangeStreamCaptureMode(&strictness_));
  }

 private:
  cudaStreamCaptureMode strictness_;
};

enum class CaptureStatus : int {
  None = int(cudaStreamCaptureStatusNone),
  Active = int(cudaStreamCaptureStatusActive),
  Invalidated = int(cudaStreamCaptureStatusInvalidated)
};

// The capture status of the current stream (real libtorch defines it inline
// over cudaStreamIsCapturing).
CaptureStatus currentStreamCaptureStatusMayInitCtx();

} // namespace cuda
} // namespace c10
