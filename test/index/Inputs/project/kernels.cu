#include "ops.h"

at::Tensor fused_norm(const at::Tensor &x) {
  float scale = x.abs().max().item<float>();
  return x / scale;
}

at::Tensor safe_scale(const at::Tensor &x, double f) { return x * f; }
