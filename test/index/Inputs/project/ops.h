#pragma once
#include <torch/torch.h>

at::Tensor fused_norm(const at::Tensor &x);
at::Tensor safe_scale(const at::Tensor &x, double f);
