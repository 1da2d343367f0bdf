#pragma once
#include <torch/torch.h>
#include <cstdint>
#include <map>

at::Tensor fused_norm(const at::Tensor &x);
at::Tensor safe_scale(const at::Tensor &x, double f);
at::Tensor planned_scale(const at::Tensor &x, int64_t key);
