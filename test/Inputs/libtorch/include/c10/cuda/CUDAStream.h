// Stand-in for c10/cuda/CUDAStream.h. query() and synchronize() are inline in
// the real header (they call cudaStreamQuery / stream_synchronize) and keep
// their bodies here; stream() is out of line.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <ostream>

namespace c10 {
namespace cuda {

class C10_CUDA_API CUDAStream {
 public:
  enum Unchecked { UNCHECKED };

  explicit CUDAStream(Stream stream) : stream_(stream) {
    TORCH_CHECK(stream_.device_type() == DeviceType::CUDA);
  }
  explicit CUDAStream(Unchecked, Stream stream) : stream_(stream) {}

  bool operator==(const CUDAStream& other) const noexcept { return unwrap() == other.unwrap(); }
  bool operator!=(const CUDAStream& other) const noexcept { return unwrap() != other.unwrap(); }

  operator cudaStream_t() const { return stream(); }
  operator Stream() const { return unwrap(); }

  DeviceType device_type() const { return DeviceType::CUDA; }
  DeviceIndex device_index() const { return stream_.device_index(); }
  Device device() const { return Device(DeviceType::CUDA, device_index()); }
  StreamId id() const { return stream_.id(); }

  bool query() const {
    cudaError_t err = C10_CUDA_ERROR_HANDLED(cudaStreamQuery(stream()));
    if (err == cudaSuccess) {
      return true;
    } else if (err != cudaErrorNotReady) {
      C10_CUDA_CHECK(err);
    } else {
      (void)cudaGetLastError();
    }
    return false;
  }

  void synchronize() const { c10::cuda::stream_synchronize(stream()); }

  int priority() const;

  cudaStream_t stream() const;

  Stream unwrap() const { return stream_; }

 private:
  Stream stream_;
};

C10_API CUDAStream getStreamFromPool(const bool isHighPriority = false, DeviceIndex device = -1);
C10_API CUDAStream getStreamFromPool(const int priority, DeviceIndex device = -1);
C10_API CUDAStream getStreamFromExternal(cudaStream_t ext_stream, DeviceIndex device_index);
C10_API CUDAStream getDefaultCUDAStream(DeviceIndex device_index = -1);
C10_API CUDAStream getCurrentCUDAStream(DeviceIndex device_index = -1);
C10_API void setCurrentCUDAStream(CUDAStream stream);

C10_API std::ostream& operator<<(std::ostream& stream, const CUDAStream& s);

} // namespace cuda
} // namespace c10
