// Stand-in for ATen/core/Formatting.h: printing tensors.
#pragma once

#include <ATen/core/TensorBody.h>

#include <ostream>

namespace at {
TORCH_API std::ostream& print(std::ostream& stream, const Tensor& tensor, int64_t linesize);
static inline std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  return print(out, t, 80);
}
TORCH_API void print(const Tensor& t, int64_t linesize = 80);
} // namespace at
