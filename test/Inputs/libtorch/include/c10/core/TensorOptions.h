// Stand-in for c10/core/TensorOptions.h: builder for factory-function options
// plus the free helper functions (c10::dtype, c10::device, ...).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Optional.h>

#include <utility>

namespace c10 {

struct TensorOptions {
  TensorOptions() = default;
  /* implicit */ TensorOptions(Layout layout) { this->set_layout(layout); }
  /* implicit */ TensorOptions(Device device) { this->set_device(device); }
  /* implicit */ TensorOptions(DeviceType device_type) { this->set_device(Device(device_type)); }
  /* implicit */ TensorOptions(ScalarType dtype) { this->set_dtype(dtype); }
  /* implicit */ TensorOptions(MemoryFormat memory_format) {
    this->set_memory_format(memory_format);
  }

  // Chained setters; each returns a modified copy.
  TensorOptions device(std::optional<Device> device) const noexcept {
    TensorOptions r = *this;
    r.set_device(device);
    return r;
  }
  template <typename... Args>
  TensorOptions device(Args&&... args) const noexcept {
    return device(std::optional<Device>(std::in_place, std::forward<Args>(args)...));
  }
  TensorOptions device_index(DeviceIndex device_index) const noexcept {
    return device(Device(DeviceType::CUDA, device_index));
  }
  TensorOptions dtype(std::optional<ScalarType> dtype) const noexcept {
    TensorOptions r = *this;
    r.set_dtype(dtype);
    return r;
  }
  TensorOptions layout(std::optional<Layout> layout) const noexcept {
    TensorOptions r = *this;
    r.set_layout(layout);
    return r;
  }
  TensorOptions requires_grad(std::optional<bool> requires_grad) const noexcept {
    TensorOptions r = *this;
    r.set_requires_grad(requires_grad);
    return r;
  }
  TensorOptions pinned_memory(std::optional<bool> pinned_memory) const noexcept {
    TensorOptions r = *this;
    r.set_pinned_memory(pinned_memory);
    return r;
  }
  TensorOptions memory_format(std::optional<MemoryFormat> memory_format) const noexcept {
    TensorOptions r = *this;
    r.set_memory_format(memory_format);
    return r;
  }

  // Getters.
  Device device() const noexcept { return device_.value_or(Device(kCPU)); }
  bool has_device() const noexcept { return device_.has_value(); }
  std::optional<Device> device_opt() const noexcept { return device_; }
  ScalarType dtype() const noexcept { return dtype_.value_or(kFloat); }
  bool has_dtype() const noexcept { return dtype_.has_value(); }
  std::optional<ScalarType> dtype_opt() const noexcept { return dtype_; }
  Layout layout() const noexcept { return layout_.value_or(kStrided); }
  bool requires_grad() const noexcept { return requires_grad_.value_or(false); }
  bool pinned_memory() const noexcept { return pinned_memory_.value_or(false); }
  bool has_pinned_memory() const noexcept { return pinned_memory_.has_value(); }
  std::optional<bool> pinned_memory_opt() const noexcept { return pinned_memory_; }

 private:
  void set_device(std::optional<Device> device) & noexcept { device_ = device; }
  void set_dtype(std::optional<ScalarType> dtype) & noexcept { dtype_ = dtype; }
  void set_layout(std::optional<Layout> layout) & noexcept { layout_ = layout; }
  void set_requires_grad(std::optional<bool> requires_grad) & noexcept {
    requires_grad_ = requires_grad;
  }
  void set_pinned_memory(std::optional<bool> pinned_memory) & noexcept {
    pinned_memory_ = pinned_memory;
  }
  void set_memory_format(std::optional<MemoryFormat> memory_format) & noexcept {
    memory_format_ = memory_format;
  }

  std::optional<Device> device_;
  std::optional<ScalarType> dtype_;
  std::optional<Layout> layout_;
  std::optional<bool> requires_grad_;
  std::optional<bool> pinned_memory_;
  std::optional<MemoryFormat> memory_format_;
};

inline TensorOptions dtype(ScalarType dtype) { return TensorOptions().dtype(dtype); }
inline TensorOptions layout(Layout layout) { return TensorOptions().layout(layout); }
inline TensorOptions device(Device device) { return TensorOptions().device(device); }
inline TensorOptions device_index(DeviceIndex device_index) {
  return TensorOptions().device_index(device_index);
}
inline TensorOptions requires_grad(bool requires_grad = true) {
  return TensorOptions().requires_grad(requires_grad);
}
inline TensorOptions memory_format(MemoryFormat memory_format) {
  return TensorOptions().memory_format(memory_format);
}

} // namespace c10
