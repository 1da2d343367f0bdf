// A project header with a launch spelled `<< <...>> >`.
#pragma once
#include <cuda_runtime.h>

__global__ void scale(float *x, int n) {}

inline void scaleOnDefault(float *x, int n) { scale << <1, 32 >> > (x, n); }
