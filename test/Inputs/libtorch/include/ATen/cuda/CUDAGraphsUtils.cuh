// Stand-in for ATen/cuda/CUDAGraphsUtils.cuh: the capture status of the
// current stream.
#pragma once

#include <c10/cuda/CUDAGraphsC10Utils.h>

namespace at {
namespace cuda {

using CaptureId_t = c10::cuda::CaptureId_t;
using CaptureStatus = c10::cuda::CaptureStatus;

inline CaptureStatus currentStreamCaptureStatus() {
  return c10::cuda::currentStreamCaptureStatusMayInitCtx();
}

} // namespace cuda
} // namespace at
