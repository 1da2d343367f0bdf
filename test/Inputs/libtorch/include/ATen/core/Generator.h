// Stand-in for ATen/core/Generator.h: at::Generator wraps a GeneratorImpl.
#pragma once

#include <c10/core/Device.h>
#include <c10/macros/Macros.h>

#include <cstdint>
#include <memory>
#include <utility>

namespace c10 {
struct GeneratorImpl {
  GeneratorImpl(Device device_in);
  virtual ~GeneratorImpl() = default;
  virtual void set_current_seed(uint64_t seed) = 0;
  virtual uint64_t current_seed() const = 0;
  virtual uint64_t seed() = 0;
  Device device() const;
};
} // namespace c10

namespace at {

class Tensor;

struct TORCH_API Generator {
  Generator() = default;
  explicit Generator(std::shared_ptr<c10::GeneratorImpl> gen_impl) : impl_(std::move(gen_impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  c10::GeneratorImpl* unsafeGetGeneratorImpl() const { return impl_.get(); }
  void set_current_seed(uint64_t seed) { impl_->set_current_seed(seed); }
  uint64_t current_seed() const { return impl_->current_seed(); }
  uint64_t seed() { return impl_->seed(); }
  Device device() const { return impl_->device(); }
  // Out of line in real libtorch (Generator.cpp): they copy RNG state.
  at::Tensor get_state() const;
  void set_state(const at::Tensor& new_state);

  template <typename T>
  T* get() const {
    return static_cast<T*>(impl_.get());
  }

 private:
  std::shared_ptr<c10::GeneratorImpl> impl_;
};

template <class Impl, class... Args>
Generator make_generator(Args&&... args) {
  return Generator(std::make_shared<Impl>(std::forward<Args>(args)...));
}

} // namespace at
