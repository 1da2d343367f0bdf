// Stand-in for c10/cuda/CUDACachingAllocator.h.
#pragma once

#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAMacros.h>
#include <c10/cuda/CUDAStream.h>

#include <cstddef>

namespace c10 {
namespace cuda {
namespace CUDACachingAllocator {

C10_CUDA_API void* raw_alloc(size_t nbytes);
C10_CUDA_API void* raw_alloc_with_stream(size_t nbytes, cudaStream_t stream);
C10_CUDA_API void raw_delete(void* ptr);
C10_CUDA_API void emptyCache();
C10_CUDA_API void recordStream(void* ptr, CUDAStream stream);
C10_CUDA_API void beginAllocateToPool(DeviceIndex device, MempoolId_t mempool_id);
C10_CUDA_API void endAllocateToPool(DeviceIndex device, MempoolId_t mempool_id);
C10_CUDA_API void releasePool(DeviceIndex device, MempoolId_t mempool_id);

} // namespace CUDACachingAllocator
} // namespace cuda
} // namespace c10
