// Stand-in for ATen/TensorIndexing.h: Python-style indexing helpers.
#pragma once

#include <ATen/core/TensorBody.h>

#include <cstdint>
#include <initializer_list>

namespace at {
namespace indexing {

constexpr int64_t INDEX_MIN = INT64_MIN;
constexpr int64_t INDEX_MAX = INT64_MAX;

enum class TensorIndexType { None, Ellipsis, SymInt, Boolean, Slice, Tensor };

constexpr std::nullopt_t None = std::nullopt;

struct TORCH_API EllipsisIndexType final {
  EllipsisIndexType() = default;
};
TORCH_API extern const EllipsisIndexType Ellipsis;

struct TORCH_API Slice final {
 public:
  Slice(std::optional<int64_t> start_index = std::nullopt,
        std::optional<int64_t> stop_index = std::nullopt,
        std::optional<int64_t> step_index = std::nullopt);
  int64_t start() const;
  int64_t stop() const;
  int64_t step() const;
};

struct TORCH_API TensorIndex final {
  TensorIndex(std::nullopt_t);
  TensorIndex(EllipsisIndexType);
  TensorIndex(const char* str);
  TensorIndex(int64_t integer);
  TensorIndex(int integer);
  TensorIndex(bool boolean);
  TensorIndex(Slice slice);
  TensorIndex(Tensor tensor);

  bool is_none() const;
  bool is_ellipsis() const;
  bool is_integer() const;
  bool is_boolean() const;
  bool is_slice() const;
  bool is_tensor() const;
};

} // namespace indexing
} // namespace at
