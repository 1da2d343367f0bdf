// Fused Adam optimizer step captured as a CUDA graph.
//
// Gradients arrive from a backward pass that runs on its own stream. The
// optimizer step (unscale, inf check, Adam update) is captured once and
// replayed every iteration.

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(x)                                                              \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

__global__ void zero_flag(int* flag) { *flag = 0; }

__global__ void unscale_grads(float* g, int n, float inv_scale, int* found_inf) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = g[i] * inv_scale;
    if (!isfinite(v)) {
      atomicExch(found_inf, 1);
    }
    g[i] = v;
  }
}

__global__ void adam_update(float* p, const float* g, float* m, float* v, int n, float lr,
                            float beta1, float beta2, float eps, float wd, int step,
                            const int* found_inf) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || *found_inf) {
    return;
  }
  const float grad = g[i] + wd * p[i];
  m[i] = beta1 * m[i] + (1.0f - beta1) * grad;
  v[i] = beta2 * v[i] + (1.0f - beta2) * grad * grad;
  const float mhat = m[i] / (1.0f - powf(beta1, static_cast<float>(step)));
  const float vhat = v[i] / (1.0f - powf(beta2, static_cast<float>(step)));
  p[i] -= lr * mhat / (sqrtf(vhat) + eps);
}

// Same update, hyper-parameters read from device memory at replay time.
__global__ void adam_update_dev(float* p, const float* g, float* m, float* v, int n,
                                const float* lr, const int* step, float beta1, float beta2,
                                float eps) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) {
    return;
  }
  m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
  v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
  const float t = static_cast<float>(*step);
  p[i] -= *lr * (m[i] / (1.0f - powf(beta1, t))) / (sqrtf(v[i] / (1.0f - powf(beta2, t))) + eps);
}

struct AdamState {
  int n = 0;
  float* exp_avg = nullptr;
  float* exp_avg_sq = nullptr;
};

// Moments are allocated on the first step.
static void ensure_moments(AdamState& st, int n) {
  if (st.exp_avg == nullptr) {
    st.n = n;
    CUDA_CHECK(cudaMalloc(&st.exp_avg, 2 * sizeof(float) * n)); // expect: cudagraph-device-alloc
    st.exp_avg_sq = st.exp_avg + n;
    CUDA_CHECK(cudaMemsetAsync(st.exp_avg, 0, 2 * sizeof(float) * n, cudaStreamPerThread));
  }
}

static float lr_at(int step, float base) {
  const float warm = step < 100 ? static_cast<float>(step) / 100.0f : 1.0f;
  return base * warm / std::sqrt(static_cast<float>(step > 100 ? step - 99 : 1));
}

int main() {
  const int n = 1 << 22;
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  float* d_params = nullptr;
  float* grads_a = nullptr;
  float* grads_b = nullptr;
  int* d_found_inf = nullptr;
  float* d_lr = nullptr;
  int* d_step = nullptr;
  CUDA_CHECK(cudaMalloc(&d_params, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&grads_a, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&grads_b, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&d_found_inf, sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_lr, sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_step, sizeof(int)));

  cudaStream_t opt_stream, bwd_stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&opt_stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&bwd_stream, cudaStreamNonBlocking));
  cudaEvent_t grads_ready;
  CUDA_CHECK(cudaEventCreateWithFlags(&grads_ready, cudaEventDisableTiming));

  const float base_lr = 3e-4f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, wd = 0.01f;
  float inv_scale = 1.0f / 65536.0f;
  float lr = lr_at(1, base_lr);
  int step = 1;
  float* d_grads = grads_a;
  AdamState state;

  // The backward pass of iteration 0 finished on bwd_stream.
  CUDA_CHECK(cudaMemsetAsync(grads_a, 0, sizeof(float) * n, bwd_stream));
  CUDA_CHECK(cudaEventRecord(grads_ready, bwd_stream));
  CUDA_CHECK(cudaStreamWaitEvent(opt_stream, grads_ready, 0));

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(opt_stream, cudaStreamCaptureModeGlobal));
  CUDA_CHECK(cudaStreamWaitEvent(opt_stream, grads_ready, 0)); // expect: cudagraph-unjoined-fork
  ensure_moments(state, n);
  zero_flag<<<1, 1>>>(d_found_inf); // expect: cudagraph-legacy-stream
  unscale_grads<<<blocks, threads, 0>>>(d_grads, n, inv_scale, d_found_inf); // expect: cudagraph-legacy-stream
  adam_update<<<blocks, threads, 0, opt_stream>>>(d_params, d_grads, state.exp_avg, state.exp_avg_sq, n, lr, beta1, beta2, eps, wd, step, d_found_inf);
  CUDA_CHECK(cudaStreamEndCapture(opt_stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  for (int it = 1; it <= 200; ++it) {
    ++step; // expect: cudagraph-frozen-host-state
    lr = lr_at(step, base_lr); // expect: cudagraph-frozen-host-state
    d_grads = (it % 2 == 0) ? grads_a : grads_b; // expect: cudagraph-frozen-host-state
    CUDA_CHECK(cudaGraphLaunch(exec, opt_stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(opt_stream));

  // Loss-scale back-off: the scale is baked into the graph, so the step is
  // recaptured and the executable graph updated in place.
  inv_scale *= 2.0f;
  {
    cudaGraph_t updated = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(opt_stream, cudaStreamCaptureModeGlobal));
    zero_flag<<<1, 1, 0, opt_stream>>>(d_found_inf);
    unscale_grads<<<blocks, threads, 0, opt_stream>>>(d_grads, n, inv_scale, d_found_inf);
    adam_update<<<blocks, threads, 0, opt_stream>>>(d_params, d_grads, state.exp_avg, state.exp_avg_sq, n, lr, beta1, beta2, eps, wd, step, d_found_inf);
    CUDA_CHECK(cudaStreamEndCapture(opt_stream, &updated));
    cudaGraphExecUpdateResultInfo info;
    CUDA_CHECK(cudaGraphExecUpdate(exec, updated, &info));
    CUDA_CHECK(cudaGraphDestroy(updated));
  }
  CUDA_CHECK(cudaGraphLaunch(exec, opt_stream));

  // Graph-friendly variant: lr and step live on the device.
  cudaGraph_t dev_graph = nullptr;
  cudaGraphExec_t dev_exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(opt_stream, cudaStreamCaptureModeGlobal));
  if (exec != nullptr) {
    CUDA_CHECK(cudaGraphExecDestroy(exec)); // expect: cudagraph-capture-unsafe-call
    exec = nullptr;
  }
  adam_update_dev<<<blocks, threads, 0, opt_stream>>>(d_params, grads_a, state.exp_avg, state.exp_avg_sq, n, d_lr, d_step, beta1, beta2, eps);
  CUDA_CHECK(cudaStreamEndCapture(opt_stream, &dev_graph));
  CUDA_CHECK(cudaGraphInstantiate(&dev_exec, dev_graph, 0));
  for (int it = 0; it < 100; ++it) {
    const float next_lr = lr_at(step + it, base_lr);
    const int next_step = step + it;
    CUDA_CHECK(cudaMemcpyAsync(d_lr, &next_lr, sizeof(float), cudaMemcpyHostToDevice, opt_stream));
    CUDA_CHECK(cudaMemcpyAsync(d_step, &next_step, sizeof(int), cudaMemcpyHostToDevice, opt_stream));
    CUDA_CHECK(cudaGraphLaunch(dev_exec, opt_stream));
    CUDA_CHECK(cudaStreamSynchronize(opt_stream));
  }

  CUDA_CHECK(cudaGraphExecDestroy(dev_exec));
  CUDA_CHECK(cudaGraphDestroy(dev_graph));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaEventDestroy(grads_ready));
  CUDA_CHECK(cudaStreamDestroy(bwd_stream));
  CUDA_CHECK(cudaStreamDestroy(opt_stream));
  CUDA_CHECK(cudaFree(state.exp_avg));
  CUDA_CHECK(cudaFree(d_step));
  CUDA_CHECK(cudaFree(d_lr));
  CUDA_CHECK(cudaFree(d_found_inf));
  CUDA_CHECK(cudaFree(grads_b));
  CUDA_CHECK(cudaFree(grads_a));
  CUDA_CHECK(cudaFree(d_params));
  return 0;
}
