// Stand-in for torch/types.h: torch:: re-exports at:: (and through it c10::).
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Optional.h>
#include <torch/csrc/autograd/generated/variable_factories.h>

namespace torch {

using namespace at; // NOLINT

using std::nullopt;
using std::optional;

using Dtype = at::ScalarType;

constexpr auto kUInt8 = at::kByte;
constexpr auto kInt8 = at::kChar;
constexpr auto kInt16 = at::kShort;
constexpr auto kInt32 = at::kInt;
constexpr auto kInt64 = at::kLong;
constexpr auto kFloat16 = at::kHalf;
constexpr auto kFloat32 = at::kFloat;
constexpr auto kFloat64 = at::kDouble;

} // namespace torch
