// Stand-in for ATen/Tensor.h.
#pragma once

#include <ATen/core/Tensor.h>
