#pragma once
#include <cuda_runtime.h>

void encode_step(cudaStream_t s, float *x, int n);
void capture_step(cudaStream_t s, float *x, int n);
void start_reclaimer();
void start_pollers(int count);
void start_capturer(cudaStream_t s, float *x, int n);
