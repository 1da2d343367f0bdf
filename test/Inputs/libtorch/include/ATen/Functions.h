// Stand-in for the generated ATen/Functions.h: free-function operators in
// namespace at. Declarations only (the real inline bodies just forward to the
// dispatcher).
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/TensorBody.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace at {

// Factories.
TORCH_API Tensor empty(IntArrayRef size, TensorOptions options = {},
                       std::optional<MemoryFormat> memory_format = std::nullopt);
TORCH_API Tensor empty(IntArrayRef size, std::optional<ScalarType> dtype,
                       std::optional<Layout> layout, std::optional<Device> device,
                       std::optional<bool> pin_memory,
                       std::optional<MemoryFormat> memory_format);
TORCH_API Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {});
TORCH_API Tensor zeros(IntArrayRef size, TensorOptions options = {});
TORCH_API Tensor zeros(IntArrayRef size, std::optional<ScalarType> dtype,
                       std::optional<Layout> layout, std::optional<Device> device,
                       std::optional<bool> pin_memory);
TORCH_API Tensor ones(IntArrayRef size, TensorOptions options = {});
TORCH_API Tensor ones(IntArrayRef size, std::optional<ScalarType> dtype,
                      std::optional<Layout> layout, std::optional<Device> device,
                      std::optional<bool> pin_memory);
TORCH_API Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {});
TORCH_API Tensor full(IntArrayRef size, const Scalar& fill_value,
                      std::optional<ScalarType> dtype, std::optional<Layout> layout,
                      std::optional<Device> device, std::optional<bool> pin_memory);
TORCH_API Tensor scalar_tensor(const Scalar& s, TensorOptions options = {});
TORCH_API Tensor rand(IntArrayRef size, TensorOptions options = {});
TORCH_API Tensor rand(IntArrayRef size, std::optional<Generator> generator,
                      TensorOptions options = {});
TORCH_API Tensor randn(IntArrayRef size, TensorOptions options = {});
TORCH_API Tensor randn(IntArrayRef size, std::optional<Generator> generator,
                       TensorOptions options = {});
TORCH_API Tensor randint(int64_t high, IntArrayRef size, TensorOptions options = kLong);
TORCH_API Tensor arange(const Scalar& end, TensorOptions options = {});
TORCH_API Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options = {});
TORCH_API Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
                        TensorOptions options = {});
TORCH_API Tensor empty_like(const Tensor& self, TensorOptions options = {},
                            std::optional<MemoryFormat> memory_format = std::nullopt);
TORCH_API Tensor zeros_like(const Tensor& self, TensorOptions options = {},
                            std::optional<MemoryFormat> memory_format = std::nullopt);
TORCH_API Tensor ones_like(const Tensor& self, TensorOptions options = {},
                           std::optional<MemoryFormat> memory_format = std::nullopt);
TORCH_API Tensor full_like(const Tensor& self, const Scalar& fill_value,
                           TensorOptions options = {},
                           std::optional<MemoryFormat> memory_format = std::nullopt);
TORCH_API Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});

// Operators whose output shape or result depends on tensor values.
TORCH_API Tensor nonzero(const Tensor& self);
TORCH_API Tensor nonzero_static(const Tensor& self, int64_t size, int64_t fill_value = -1);
TORCH_API Tensor masked_select(const Tensor& self, const Tensor& mask);
TORCH_API std::tuple<Tensor, Tensor> _unique(const Tensor& self, bool sorted = true,
                                             bool return_inverse = false);
TORCH_API std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& self, bool sorted = true,
                                                      bool return_inverse = false,
                                                      bool return_counts = false);
TORCH_API std::tuple<Tensor, Tensor, Tensor> unique_consecutive(
    const Tensor& self, bool return_inverse = false, bool return_counts = false,
    std::optional<int64_t> dim = std::nullopt);
TORCH_API std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim,
                                                        bool sorted = true,
                                                        bool return_inverse = false,
                                                        bool return_counts = false);
TORCH_API bool is_nonzero(const Tensor& self);
TORCH_API bool equal(const Tensor& self, const Tensor& other);
TORCH_API bool allclose(const Tensor& self, const Tensor& other, double rtol = 1e-05,
                        double atol = 1e-08, bool equal_nan = false);
TORCH_API Scalar _local_scalar_dense(const Tensor& self);
TORCH_API Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
TORCH_API Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
TORCH_API Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
TORCH_API std::vector<Tensor> where(const Tensor& condition);

// Compute.
TORCH_API Tensor matmul(const Tensor& self, const Tensor& other);
TORCH_API Tensor mm(const Tensor& self, const Tensor& mat2);
TORCH_API Tensor relu(const Tensor& self);
TORCH_API Tensor& relu_(Tensor& self);
TORCH_API Tensor softmax(const Tensor& self, int64_t dim,
                         std::optional<ScalarType> dtype = std::nullopt);
TORCH_API Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
TORCH_API Tensor mul(const Tensor& self, const Tensor& other);
TORCH_API Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
TORCH_API Tensor max(const Tensor& self);
TORCH_API Tensor min(const Tensor& self);
TORCH_API Tensor cat(TensorList tensors, int64_t dim = 0);
TORCH_API Tensor stack(TensorList tensors, int64_t dim = 0);

} // namespace at
