// Minimal stand-in for the CUDA 13 cuda_runtime.h: execution-space macros,
// launch configuration hook, built-in index variables and the C++ template
// overloads that the real header defines inline on top of the C API.
#ifndef __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_H__

#if defined(__CUDA__)
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#else
#define __host__
#define __device__
#define __global__
#define __shared__
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#endif
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict

#include "cuda_runtime_api.h"

// Called by clang for every `kernel<<<grid, block, shmem, stream>>>(...)`.
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
                                                size_t sharedMem = 0,
                                                void *stream = 0);
#if defined(__CUDA__) && defined(__CUDA_ARCH__)
// Device-side compilation resolves `<<<...>>>` through this name instead.
extern "C" __device__ cudaError_t cudaConfigureCall(dim3 gridDim, dim3 blockDim,
                                                    size_t sharedMem = 0,
                                                    cudaStream_t stream = 0);
#endif

// Built-in variables (device_launch_parameters.h in the real toolkit).
extern __device__ const uint3 threadIdx;
extern __device__ const uint3 blockIdx;
extern __device__ const dim3 blockDim;
extern __device__ const dim3 gridDim;
extern __device__ const int warpSize;

#if defined(__CUDA__)
extern "C" __device__ void __syncthreads(void);

// Device-side math (crt/math_functions.h). Declared as __device__ overloads
// so that they coexist with the host declarations from <cmath>/<math.h>.
static __device__ __inline__ float sqrtf(float x) { return __builtin_sqrtf(x); }
static __device__ __inline__ float rsqrtf(float x) { return 1.0f / __builtin_sqrtf(x); }
static __device__ __inline__ float expf(float x) { return __builtin_expf(x); }
static __device__ __inline__ float __expf(float x) { return __builtin_expf(x); }
static __device__ __inline__ float logf(float x) { return __builtin_logf(x); }
static __device__ __inline__ float fabsf(float x) { return __builtin_fabsf(x); }
static __device__ __inline__ float fmaxf(float x, float y) { return __builtin_fmaxf(x, y); }
static __device__ __inline__ float fminf(float x, float y) { return __builtin_fminf(x, y); }
static __device__ __inline__ float tanhf(float x) { return __builtin_tanhf(x); }
static __device__ __inline__ float __fdividef(float x, float y) { return x / y; }

// Warp shuffles and atomics (sm_30_intrinsics.h / sm_20_atomic_functions.h).
__device__ float __shfl_down_sync(unsigned int mask, float var, unsigned int delta,
                                  int width = 32);
__device__ int __shfl_down_sync(unsigned int mask, int var, unsigned int delta,
                                int width = 32);
__device__ float __shfl_xor_sync(unsigned int mask, float var, int laneMask, int width = 32);
__device__ int __shfl_xor_sync(unsigned int mask, int var, int laneMask, int width = 32);
__device__ float atomicAdd(float *address, float val);
__device__ int atomicAdd(int *address, int val);
__device__ unsigned int atomicAdd(unsigned int *address, unsigned int val);
#endif

// C++ convenience overloads (inline in the real cuda_runtime.h).
template <class T>
static __inline__ __host__ cudaError_t cudaLaunchKernel(T *func, dim3 gridDim, dim3 blockDim,
                                                        void **args, size_t sharedMem = 0,
                                                        cudaStream_t stream = 0) {
  return ::cudaLaunchKernel((const void *)func, gridDim, blockDim, args, sharedMem, stream);
}

static __inline__ __host__ cudaError_t cudaEventCreate(cudaEvent_t *event, unsigned int flags) {
  return ::cudaEventCreateWithFlags(event, flags);
}

static __inline__ __host__ cudaError_t cudaMallocHost(void **ptr, size_t size,
                                                      unsigned int flags) {
  return ::cudaHostAlloc(ptr, size, flags);
}

template <class T>
static __inline__ __host__ cudaError_t cudaHostAlloc(T **ptr, size_t size, unsigned int flags) {
  return ::cudaHostAlloc((void **)(void *)ptr, size, flags);
}

template <class T>
static __inline__ __host__ cudaError_t cudaMallocManaged(T **devPtr, size_t size,
                                                         unsigned int flags = cudaMemAttachGlobal) {
  return ::cudaMallocManaged((void **)(void *)devPtr, size, flags);
}

template <class T>
static __inline__ __host__ cudaError_t cudaMalloc(T **devPtr, size_t size) {
  return ::cudaMalloc((void **)(void *)devPtr, size);
}

template <class T>
static __inline__ __host__ cudaError_t cudaMallocHost(T **ptr, size_t size,
                                                      unsigned int flags = 0) {
  return cudaMallocHost((void **)(void *)ptr, size, flags);
}

template <class T>
static __inline__ __host__ cudaError_t cudaMallocAsync(T **ptr, size_t size,
                                                       cudaStream_t stream) {
  return ::cudaMallocAsync((void **)(void *)ptr, size, stream);
}

template <class T>
static __inline__ __host__ cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src,
                                                          size_t count, size_t offset = 0,
                                                          enum cudaMemcpyKind kind =
                                                              cudaMemcpyHostToDevice) {
  return ::cudaMemcpyToSymbol((const void *)&symbol, src, count, offset, kind);
}

template <class T>
static __inline__ __host__ cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol,
                                                            size_t count, size_t offset = 0,
                                                            enum cudaMemcpyKind kind =
                                                                cudaMemcpyDeviceToHost) {
  return ::cudaMemcpyFromSymbol(dst, (const void *)&symbol, count, offset, kind);
}

#endif // __CUDA_RUNTIME_H__
