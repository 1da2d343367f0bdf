// Stand-in for ATen/core/ivalue.h: the tagged value TorchScript passes
// around, here only with the tensor and scalar cases.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace c10 {

class IValue {
 public:
  IValue();
  IValue(at::Tensor t);
  IValue(double d);
  IValue(int64_t i);
  IValue(bool b);
  IValue(const IValue& rhs);
  IValue(IValue&& rhs) noexcept;
  IValue& operator=(const IValue& rhs);
  IValue& operator=(IValue&& rhs) noexcept;
  ~IValue();

  bool isTensor() const;
  at::Tensor toTensor() const&;
  double toDouble() const;
};

} // namespace c10
