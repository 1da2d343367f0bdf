// Stand-in for c10/core/ScalarType.h (plus the caffe2::TypeMeta handle that
// Tensor::dtype() returns).
#pragma once

#include <cstddef>
#include <cstdint>

namespace c10 {

enum class ScalarType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  ComplexHalf = 8,
  ComplexFloat = 9,
  ComplexDouble = 10,
  Bool = 11,
  QInt8 = 12,
  QUInt8 = 13,
  QInt32 = 14,
  BFloat16 = 15,
  Undefined = 16,
};

constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;

size_t elementSize(ScalarType t);
const char* toString(ScalarType t);

} // namespace c10

namespace caffe2 {

class TypeMeta final {
 public:
  TypeMeta() noexcept;
  static TypeMeta fromScalarType(c10::ScalarType scalar_type);
  c10::ScalarType toScalarType() const;
  size_t itemsize() const noexcept;
  const char* name() const noexcept;
  friend bool operator==(const TypeMeta& lhs, const TypeMeta& rhs) noexcept;
  friend bool operator!=(const TypeMeta& lhs, const TypeMeta& rhs) noexcept;
};

inline bool operator==(const c10::ScalarType& t, const TypeMeta m) { return m.toScalarType() == t; }
inline bool operator==(const TypeMeta m, const c10::ScalarType& t) { return t == m; }
inline bool operator!=(const c10::ScalarType& t, const TypeMeta m) { return !(t == m); }
inline bool operator!=(const TypeMeta m, const c10::ScalarType& t) { return !(t == m); }

} // namespace caffe2
