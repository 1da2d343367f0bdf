// Stand-in for ATen/cuda/Exceptions.h.
#pragma once

#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#define AT_CUDA_CHECK(EXPR) C10_CUDA_CHECK(EXPR)
