// Stand-in for c10/core/Layout.h.
#pragma once

#include <cstdint>

namespace c10 {
enum class Layout : int8_t { Strided, Sparse, SparseCsr, Mkldnn, SparseCsc, SparseBsr, SparseBsc, Jagged };
constexpr auto kStrided = Layout::Strided;
constexpr auto kSparse = Layout::Sparse;
} // namespace c10
