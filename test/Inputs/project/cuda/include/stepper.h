// A project's own header in a directory named like the toolkit's
// (cuda/include): user code, not library code.
#pragma once
#include <cuda_runtime.h>

inline void settle(cudaStream_t s) { cudaStreamSynchronize(s); }
