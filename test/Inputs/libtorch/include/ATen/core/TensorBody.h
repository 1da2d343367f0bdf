// Stand-in for the generated ATen/core/TensorBody.h: at::Tensor and its
// method-style operators. Operator methods are declared only (their real
// definitions call into the dispatcher); the small conversions that the real
// header defines inline (cpu(), cuda()) keep their inline bodies here.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/TensorBase.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

namespace at {
namespace indexing {
struct TensorIndex;
} // namespace indexing

class Tensor;
using TensorList = ArrayRef<Tensor>;

class TORCH_API Tensor : public TensorBase {
 public:
  Tensor() = default;
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) = default;
  explicit Tensor(const TensorBase& base) : TensorBase(base) {}

  Tensor& operator=(const Tensor& x) & = default;
  Tensor& operator=(Tensor&& x) & = default;
  Tensor& operator=(const Scalar& v) &&;
  Tensor& operator=(const Tensor& rhs) &&;

  Tensor contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;

  Tensor cpu() const {
    return to(options().device(DeviceType::CPU), /*non_blocking*/ false, /*copy*/ false);
  }
  Tensor cuda() const {
    return to(options().device(DeviceType::CUDA), /*non_blocking*/ false, /*copy*/ false);
  }

  Scalar item() const;
  template <typename T>
  T item() const;

  void print() const;

  // Conversions / copies.
  Tensor to(TensorOptions options = {}, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(std::optional<ScalarType> dtype, std::optional<Layout> layout,
            std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking,
            bool copy, std::optional<MemoryFormat> memory_format) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  Tensor& mutable_grad() const;
  const Tensor& grad() const;
  Tensor pin_memory(std::optional<Device> device = std::nullopt) const;
  bool is_pinned(std::optional<Device> device = std::nullopt) const;
  Tensor clone(std::optional<MemoryFormat> memory_format = std::nullopt) const;

  // Data-dependent results.
  Tensor nonzero() const;
  Tensor nonzero_static(int64_t size, int64_t fill_value = -1) const;
  Tensor masked_select(const Tensor& mask) const;
  bool is_nonzero() const;
  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
                bool equal_nan = false) const;

  // Reductions.
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor max(const Tensor& other) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor min(const Tensor& other) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;

  // Pointwise / linear algebra.
  Tensor abs() const;
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor& mul_(const Tensor& other) const;
  Tensor& mul_(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor exp() const;
  Tensor relu() const;
  Tensor& relu_() const;
  Tensor& div_(const Tensor& other) const;
  Tensor& div_(const Scalar& other) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor& clamp_(const std::optional<Scalar>& min = std::nullopt,
                 const std::optional<Scalar>& max = std::nullopt) const;
  Tensor matmul(const Tensor& other) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor& zero_() const;
  Tensor& fill_(const Scalar& value) const;
  Tensor& fill_(const Tensor& value) const;

  // Comparisons and predicates (boolean results).
  Tensor gt(const Scalar& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& other) const;
  Tensor isnan() const;

  // Views and shape.
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor expand(IntArrayRef size, bool implicit = false) const;

  // Indexing (definitions in ATen/TensorIndexing.h).
  Tensor operator[](const Scalar& index) const;
  Tensor operator[](const Tensor& index) const;
  Tensor operator[](int64_t index) const;
  Tensor index(ArrayRef<at::indexing::TensorIndex> indices) const;
  Tensor index(std::initializer_list<at::indexing::TensorIndex> indices) const;
  Tensor& index_put_(ArrayRef<at::indexing::TensorIndex> indices, const Tensor& rhs);
  Tensor& index_put_(ArrayRef<at::indexing::TensorIndex> indices, const Scalar& v);
  Tensor& index_put_(std::initializer_list<at::indexing::TensorIndex> indices, const Tensor& rhs);
  Tensor& index_put_(std::initializer_list<at::indexing::TensorIndex> indices, const Scalar& v);

  // Compound assignment.
  Tensor& operator+=(const Tensor& other);
  Tensor& operator+=(const Scalar& other);
  Tensor& operator-=(const Tensor& other);
  Tensor& operator-=(const Scalar& other);
  Tensor& operator*=(const Tensor& other);
  Tensor& operator*=(const Scalar& other);
  Tensor& operator/=(const Tensor& other);
  Tensor& operator/=(const Scalar& other);
  Tensor operator-() const;
};

// Binary operators (ATen/TensorOperators.h in the real tree).
#define AT_STUB_BINARY_OP(op)                                   \
  Tensor operator op(const Tensor& self, const Tensor& other);  \
  Tensor operator op(const Tensor& self, const Scalar& other);  \
  Tensor operator op(const Scalar& self, const Tensor& other);
AT_STUB_BINARY_OP(+)
AT_STUB_BINARY_OP(-)
AT_STUB_BINARY_OP(*)
AT_STUB_BINARY_OP(/)
AT_STUB_BINARY_OP(<)
AT_STUB_BINARY_OP(<=)
AT_STUB_BINARY_OP(>)
AT_STUB_BINARY_OP(>=)
AT_STUB_BINARY_OP(==)
AT_STUB_BINARY_OP(!=)
AT_STUB_BINARY_OP(&)
AT_STUB_BINARY_OP(|)
#undef AT_STUB_BINARY_OP

} // namespace at
