// Stand-in for torch/csrc/autograd/generated/variable_factories.h: the
// torch:: factory functions are inline wrappers that forward to at::.
#pragma once

#include <ATen/ATen.h>

#include <initializer_list>
#include <vector>

namespace torch {

namespace detail {
// The nested-braces and vector forms torch::tensor accepts.
class TensorDataContainer {
 public:
  TensorDataContainer(double value);
  TensorDataContainer(std::initializer_list<double> values);
  TensorDataContainer(std::initializer_list<float> values);
  TensorDataContainer(std::initializer_list<int64_t> values);
  TensorDataContainer(const std::vector<float>& values);
  TensorDataContainer(const std::vector<double>& values);
  TensorDataContainer(const std::vector<int64_t>& values);
};
} // namespace detail

/// Copies host values into a new tensor on the device the options name.
at::Tensor tensor(detail::TensorDataContainer tensor_data_container,
                  const at::TensorOptions& options = {});

inline at::Tensor empty(at::IntArrayRef size, at::TensorOptions options = {},
                        std::optional<at::MemoryFormat> memory_format = std::nullopt) {
  return at::empty(size, at::TensorOptions(options).requires_grad(std::nullopt), memory_format);
}
inline at::Tensor zeros(at::IntArrayRef size, at::TensorOptions options = {}) {
  return at::zeros(size, at::TensorOptions(options).requires_grad(std::nullopt));
}
inline at::Tensor ones(at::IntArrayRef size, at::TensorOptions options = {}) {
  return at::ones(size, at::TensorOptions(options).requires_grad(std::nullopt));
}
inline at::Tensor full(at::IntArrayRef size, const at::Scalar& fill_value,
                       at::TensorOptions options = {}) {
  return at::full(size, fill_value, at::TensorOptions(options).requires_grad(std::nullopt));
}
inline at::Tensor rand(at::IntArrayRef size, at::TensorOptions options = {}) {
  return at::rand(size, at::TensorOptions(options).requires_grad(std::nullopt));
}
inline at::Tensor rand(at::IntArrayRef size, std::optional<at::Generator> generator,
                       at::TensorOptions options = {}) {
  return at::rand(size, generator, at::TensorOptions(options).requires_grad(std::nullopt));
}
inline at::Tensor randn(at::IntArrayRef size, at::TensorOptions options = {}) {
  return at::randn(size, at::TensorOptions(options).requires_grad(std::nullopt));
}
inline at::Tensor randn(at::IntArrayRef size, std::optional<at::Generator> generator,
                        at::TensorOptions options = {}) {
  return at::randn(size, generator, at::TensorOptions(options).requires_grad(std::nullopt));
}
inline at::Tensor arange(const at::Scalar& end, at::TensorOptions options = {}) {
  return at::arange(end, at::TensorOptions(options).requires_grad(std::nullopt));
}
inline at::Tensor arange(const at::Scalar& start, const at::Scalar& end,
                         at::TensorOptions options = {}) {
  return at::arange(start, end, at::TensorOptions(options).requires_grad(std::nullopt));
}
inline at::Tensor empty_like(const at::Tensor& self, at::TensorOptions options = {},
                             std::optional<at::MemoryFormat> memory_format = std::nullopt) {
  return at::empty_like(self, at::TensorOptions(options).requires_grad(std::nullopt),
                        memory_format);
}
inline at::Tensor zeros_like(const at::Tensor& self, at::TensorOptions options = {},
                             std::optional<at::MemoryFormat> memory_format = std::nullopt) {
  return at::zeros_like(self, at::TensorOptions(options).requires_grad(std::nullopt),
                        memory_format);
}
inline at::Tensor from_blob(void* data, at::IntArrayRef sizes,
                            const at::TensorOptions& options = at::TensorOptions()) {
  return at::from_blob(data, sizes, at::TensorOptions(options).requires_grad(std::nullopt));
}

} // namespace torch
