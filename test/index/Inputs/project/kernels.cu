#include "ops.h"

at::Tensor fused_norm(const at::Tensor &x) {
  float scale = x.abs().max().item<float>();
  return x / scale;
}

at::Tensor safe_scale(const at::Tensor &x, double f) { return x * f; }

// Compiled on first use: the warm-up run Python makes before it captures the
// model fills the cache, and the captured pass finds the entry.
static std::map<int64_t, double> plan_cache;
at::Tensor planned_scale(const at::Tensor &x, int64_t key) {
  auto it = plan_cache.find(key);
  if (it == plan_cache.end()) {
    double s = x.abs().max().item<double>();
    it = plan_cache.emplace(key, s).first;
  }
  return x * it->second;
}
