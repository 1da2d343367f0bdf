// Stand-in for c10/core/Scalar.h: a host-side number (the result of
// Tensor::item()).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>

namespace c10 {

class Scalar {
 public:
  Scalar() : Scalar(int64_t(0)) {}
  /* implicit */ Scalar(int8_t vv);
  /* implicit */ Scalar(uint8_t vv);
  /* implicit */ Scalar(int16_t vv);
  /* implicit */ Scalar(int vv);
  /* implicit */ Scalar(int64_t vv);
  /* implicit */ Scalar(float vv);
  /* implicit */ Scalar(double vv);
  /* implicit */ Scalar(bool vv);

  template <typename T>
  T to() const;

  double toDouble() const;
  float toFloat() const;
  int64_t toLong() const;
  int toInt() const;
  bool toBool() const;
  uint8_t toByte() const;

  bool isFloatingPoint() const;
  bool isIntegral(bool includeBool) const;
  bool isBoolean() const;
  ScalarType type() const;

  Scalar operator-() const;
  bool equal(bool num) const;
};

} // namespace c10
