// Stand-in for c10/cuda/CUDAMacros.h.
#pragma once

#include <c10/macros/Macros.h>

#define C10_COMPILE_TIME_MAX_GPUS 16
