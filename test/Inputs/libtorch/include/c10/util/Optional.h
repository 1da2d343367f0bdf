// Stand-in for c10/util/Optional.h (libtorch 2.x: aliases of std::optional).
#pragma once

#include <optional>

namespace c10 {
using std::make_optional;
using std::nullopt;
using std::nullopt_t;
using std::optional;
} // namespace c10
