// Stand-in for c10/cuda/CUDAGuard.h: RAII device and stream guards.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Optional.h>

namespace c10 {
namespace cuda {

struct CUDAGuard {
  explicit CUDAGuard() = delete;
  explicit CUDAGuard(DeviceIndex device_index);
  explicit CUDAGuard(Device device);
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;
  CUDAGuard(CUDAGuard&& other) = delete;
  CUDAGuard& operator=(CUDAGuard&& other) = delete;
  ~CUDAGuard();

  void set_device(Device device);
  void reset_device(Device device);
  void set_index(DeviceIndex device_index);
  Device original_device() const;
  Device current_device() const;
};

struct OptionalCUDAGuard {
  explicit OptionalCUDAGuard();
  explicit OptionalCUDAGuard(std::optional<Device> device_opt);
  explicit OptionalCUDAGuard(std::optional<DeviceIndex> device_index_opt);
  OptionalCUDAGuard(const OptionalCUDAGuard&) = delete;
  OptionalCUDAGuard& operator=(const OptionalCUDAGuard&) = delete;
  OptionalCUDAGuard(OptionalCUDAGuard&& other) = delete;
  OptionalCUDAGuard& operator=(OptionalCUDAGuard&& other) = delete;
  ~OptionalCUDAGuard();

  void set_device(Device device);
  void reset_device(Device device);
  void set_index(DeviceIndex device_index);
  std::optional<Device> original_device() const;
  std::optional<Device> current_device() const;
  void reset();
};

struct CUDAStreamGuard {
  explicit CUDAStreamGuard() = delete;
  explicit CUDAStreamGuard(Stream stream);
  CUDAStreamGuard(const CUDAStreamGuard&) = delete;
  CUDAStreamGuard& operator=(const CUDAStreamGuard&) = delete;
  CUDAStreamGuard(CUDAStreamGuard&& other) = delete;
  CUDAStreamGuard& operator=(CUDAStreamGuard&& other) = delete;
  ~CUDAStreamGuard();

  void reset_stream(Stream stream);
  CUDAStream original_stream() const;
  CUDAStream current_stream() const;
  Device current_device() const;
  Device original_device() const;
};

struct OptionalCUDAStreamGuard {
  explicit OptionalCUDAStreamGuard();
  explicit OptionalCUDAStreamGuard(Stream stream);
  explicit OptionalCUDAStreamGuard(std::optional<Stream> stream_opt);
  OptionalCUDAStreamGuard(const OptionalCUDAStreamGuard&) = delete;
  OptionalCUDAStreamGuard& operator=(const OptionalCUDAStreamGuard&) = delete;
  ~OptionalCUDAStreamGuard();

  void reset_stream(Stream stream);
  std::optional<CUDAStream> original_stream() const;
  std::optional<CUDAStream> current_stream() const;
  void reset();
};

} // namespace cuda
} // namespace c10
