// Stand-in for ATen/cuda/CUDAContext.h (and CUDAContextLight.h).
#pragma once

#include <ATen/cuda/Exceptions.h>
#include <c10/core/Device.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace at {
namespace cuda {

inline int64_t getNumGPUs() { return c10::cuda::device_count(); }
inline bool is_available() { return c10::cuda::device_count() > 0; }

TORCH_CUDA_CPP_API cudaDeviceProp* getCurrentDeviceProperties();
TORCH_CUDA_CPP_API int warp_size();
TORCH_CUDA_CPP_API cudaDeviceProp* getDeviceProperties(c10::DeviceIndex device);
TORCH_CUDA_CPP_API bool canDeviceAccessPeer(c10::DeviceIndex device,
                                            c10::DeviceIndex peer_device);

} // namespace cuda
} // namespace at
