// Stand-in for c10/cuda/CUDAException.h: error-checking macros around CUDA
// runtime calls. Each macro evaluates EXPR exactly once.
#pragma once

#include <c10/cuda/CUDAMacros.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace c10 {
class C10_CUDA_API CUDAError : public c10::Error {
  using Error::Error;
};
} // namespace c10

namespace c10 {
namespace cuda {
C10_CUDA_API void c10_cuda_check_implementation(const int32_t err, const char* filename,
                                                const char* function_name,
                                                const int line_number,
                                                const bool include_device_assertions);
} // namespace cuda
} // namespace c10

#define C10_CUDA_CHECK(EXPR)                                                  \
  do {                                                                        \
    const cudaError_t __err = EXPR;                                           \
    if (C10_UNLIKELY(__err != cudaSuccess)) {                                 \
      c10::cuda::c10_cuda_check_implementation(static_cast<int32_t>(__err),   \
                                               __FILE__, __func__,            \
                                               static_cast<int>(__LINE__),    \
                                               true);                         \
    }                                                                         \
  } while (0)

#define C10_CUDA_CHECK_WARN(EXPR)                                             \
  do {                                                                        \
    const cudaError_t __err = EXPR;                                           \
    if (C10_UNLIKELY(__err != cudaSuccess)) {                                 \
      auto error_unused C10_UNUSED = cudaGetLastError();                      \
      (void)error_unused;                                                     \
      TORCH_WARN("CUDA warning: ", cudaGetErrorString(__err));                \
    }                                                                         \
  } while (0)

#define C10_CUDA_ERROR_HANDLED(EXPR) EXPR

#define C10_CUDA_IGNORE_ERROR(EXPR)                                           \
  do {                                                                        \
    const cudaError_t __err = EXPR;                                           \
    if (C10_UNLIKELY(__err != cudaSuccess)) {                                 \
      cudaError_t error_unused C10_UNUSED = cudaGetLastError();               \
      (void)error_unused;                                                     \
    }                                                                         \
  } while (0)

#define C10_CUDA_CLEAR_ERROR()                                                \
  do {                                                                        \
    cudaError_t error_unused C10_UNUSED = cudaGetLastError();                 \
    (void)error_unused;                                                       \
  } while (0)

#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
