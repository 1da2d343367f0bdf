// Stand-in for c10/core/Stream.h: a device-generic stream handle.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace c10 {

using StreamId = int64_t;

class Stream final {
 public:
  enum Unsafe { UNSAFE };
  enum Default { DEFAULT };

  explicit Stream(Unsafe, Device device, StreamId id) : device_(device), id_(id) {}
  explicit Stream(Default, Device device) : device_(device), id_(0) {}

  bool operator==(const Stream& other) const noexcept {
    return this->device_ == other.device_ && this->id_ == other.id_;
  }
  bool operator!=(const Stream& other) const noexcept { return !(*this == other); }

  Device device() const noexcept { return device_; }
  DeviceType device_type() const noexcept { return device_.type(); }
  DeviceIndex device_index() const noexcept { return device_.index(); }
  StreamId id() const noexcept { return id_; }

  bool query() const;
  void synchronize() const;

 private:
  Device device_;
  StreamId id_;
};

} // namespace c10
