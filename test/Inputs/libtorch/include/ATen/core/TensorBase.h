// Stand-in for ATen/core/TensorBase.h: the dispatcher-free part of the
// tensor handle (metadata, raw data access).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>
#include <c10/macros/Macros.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>
#include <c10/util/Optional.h>

#include <cstdint>
#include <memory>
#include <string>

namespace c10 {
struct TensorImpl;
}

namespace at {

class TORCH_API TensorBase {
 public:
  TensorBase() = default;
  TensorBase(const TensorBase&) = default;
  TensorBase(TensorBase&&) noexcept = default;
  TensorBase& operator=(const TensorBase& x) & = default;
  TensorBase& operator=(TensorBase&& x) & noexcept = default;

  int64_t dim() const;
  int64_t ndimension() const { return dim(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  IntArrayRef sizes() const;
  IntArrayRef strides() const;
  int64_t numel() const;
  size_t nbytes() const;
  size_t itemsize() const;
  int64_t element_size() const;
  int64_t storage_offset() const;
  bool defined() const { return static_cast<bool>(impl_); }
  void reset() { impl_.reset(); }
  bool is_same(const TensorBase& other) const noexcept { return impl_ == other.impl_; }
  bool is_contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;
  TensorBase contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;

  ScalarType scalar_type() const;
  caffe2::TypeMeta dtype() const noexcept;
  Layout layout() const;
  Device device() const;
  int64_t get_device() const;
  bool is_cuda() const;
  bool is_cpu() const;
  bool is_sparse() const;
  bool is_meta() const;
  TensorOptions options() const;
  bool requires_grad() const;
  std::string toString() const;

  void* data_ptr() const;
  template <typename T>
  T* data_ptr() const;
  const void* const_data_ptr() const;
  template <typename T>
  const T* const_data_ptr() const;
  void* mutable_data_ptr() const;
  template <typename T>
  T* mutable_data_ptr() const;

  template <typename T>
  T item() const;

  c10::TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }

 protected:
  std::shared_ptr<c10::TensorImpl> impl_;
};

} // namespace at
