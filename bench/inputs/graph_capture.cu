// A raw CUDA translation unit with Thrust, as CUDA extensions are written.
#include <cuda_runtime.h>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/transform.h>

__global__ void axpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

struct Square {
  __host__ __device__ float operator()(float x) const { return x * x; }
};

float total(thrust::device_vector<float> &v) {
  thrust::transform(v.begin(), v.end(), v.begin(), Square());
  return thrust::reduce(v.begin(), v.end());
}

float captureTotal(cudaStream_t s, thrust::device_vector<float> &v) {
  cudaGraph_t g = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  float r = total(v);
  cudaStreamEndCapture(s, &g);
  return r;
}

cudaGraph_t capture(cudaStream_t s, const float *x, float *y, int n) {
  cudaGraph_t g = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  axpy<<<(n + 255) / 256, 256, 0, s>>>(2.0f, x, y, n);
  cudaStreamSynchronize(s);
  cudaStreamEndCapture(s, &g);
  return g;
}
