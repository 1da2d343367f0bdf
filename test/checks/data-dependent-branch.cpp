// RUN: %check_cudagraph_tidy %s cudagraph-data-dependent-branch %t -- -- -std=c++17 -isystem %torch_stubs -isystem %cuda_stubs

#include <ATen/cuda/CUDAGraph.h>
#include <c10/util/Exception.h>
#include <cuda_runtime.h>
#include <torch/torch.h>

// ---------------------------------------------------------------------------
// Positive: the read is in the condition.
void direct(at::cuda::CUDAGraph &graph, at::Tensor t) {
  graph.capture_begin();
  if (t.sum().item<float>() > 0) {
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value read on the host during CUDA graph capture: the read fails capture
    // CHECK-MESSAGES: :[[@LINE-2]]:15: note: the device value is read on the host here
    // CHECK-MESSAGES: :[[@LINE-4]]:9: note: CUDA graph capture begins here
    t.mul_(2);
  }
  graph.capture_end();
}

// Positive: through locals, for every kind of branch.
void locals(at::cuda::CUDAGraph &graph, at::Tensor t, at::Tensor u) {
  graph.capture_begin();
  float m = t.max().item<float>();
  float scaled = m * 2.0f;
  if (scaled > 3)
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    // CHECK-MESSAGES: :[[@LINE-4]]:21: note: the device value is read on the host here
    t.div_(m);
  int64_t steps = u.sum().item<int64_t>();
  for (int64_t i = 0; i < steps; ++i)
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    t.add_(1);
  while (t.norm().item<double>() > 1.0)
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    t.mul_(0.5);
  bool same = t.equal(u);
  float pick = same ? 1.0f : 0.0f;
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: branch condition depends on a device value
  switch (t.argmax().item<int>()) {
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
  case 0:
    break;
  default:
    break;
  }
  int left = 3;
  do {
    --left;
  } while (t.min().item<float>() < 0 && left > 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch condition depends on a device value
  auto idx = t.nonzero();
  if (idx.size(0) > 0)
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    t.zero_();
  graph.capture_end();
  (void)pick;
}

// Positive: a raw CUDA copy into a host variable, then a branch on it.
__attribute__((unused)) static void rawCopy(cudaStream_t s, const int *devFlag) {
  cudaGraph_t g;
  int flag = 0;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(&flag, devFlag, sizeof(int), cudaMemcpyDeviceToHost, s);
  if (flag)
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    // CHECK-MESSAGES: :[[@LINE-3]]:3: note: the host variable is filled from the device here
    cudaMemsetAsync((void *)devFlag, 0, sizeof(int), s);
  cudaStreamEndCapture(s, &g);
}

// ---------------------------------------------------------------------------
// Negative: host-only conditions, reads before capture, branches after it.
void hostOnly(at::cuda::CUDAGraph &graph, at::Tensor t, bool training, int n) {
  float before = t.max().item<float>();
  graph.capture_begin();
  if (t.size(0) > 16)
    t.relu_();
  if (training && n > 2)
    t.add_(1);
  for (int i = 0; i < t.dim(); ++i)
    t.mul_(1);
  if (t.numel() == 0 || !t.is_cuda())
    t.zero_();
  if (before > 0) // read before capture: decided once, on purpose
    t.add_(before);
  graph.capture_end();
  if (t.sum().item<float>() > 0) // after capture
    t.zero_();
}

bool neverCaptured(at::Tensor t) {
  if (t.item<float>() > 0)
    return true;
  return false;
}

// ---------------------------------------------------------------------------
// Interprocedural: a helper returns the device value; a helper branches.
static bool converged(const at::Tensor &residual, double tol) {
  return residual.abs().max().item<double>() < tol;
}

static void clampIfLarge(at::Tensor &t) {
  if (t.abs().max().item<float>() > 10.0f)
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    // CHECK-MESSAGES: :[[@LINE-2]]:21: note: the device value is read on the host here
    // CHECK-MESSAGES: :[[@LINE+10]]:5: note: 'clampIfLarge' is called here during capture
    // CHECK-MESSAGES: :[[@LINE+5]]:9: note: CUDA graph capture begins here
    t.clamp_(-10, 10);
}

void solver(at::cuda::CUDAGraph &graph, at::Tensor x, at::Tensor r) {
  graph.capture_begin();
  if (!converged(r, 1e-6))
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    // CHECK-MESSAGES: :[[@LINE-2]]:8: note: 'converged' returns a device value read on the host
    clampIfLarge(x);
  graph.capture_end();
}

// ---------------------------------------------------------------------------
// Macro: TORCH_CHECK on a device value branches inside the macro.
void checked(at::cuda::CUDAGraph &graph, at::Tensor t) {
  graph.capture_begin();
  TORCH_CHECK(t.min().item<float>() >= 0, "negative input");
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
  TORCH_CHECK(t.dim() == 2, "expected a matrix");
  graph.capture_end();
}

// ---------------------------------------------------------------------------
// Template and lambda.
template <typename T> T threshold(const at::Tensor &t) {
  T v = t.mean().item<T>();
  return v > T(0) ? v : T(0);
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: branch condition depends on a device value
}

void templateAndLambda(at::cuda::CUDAGraph &graph, at::Tensor t) {
  auto maybeScale = [&] {
    if (t.max().item<float>() > 1)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch condition depends on a device value
      t.div_(2);
  };
  graph.capture_begin();
  threshold<float>(t);
  maybeScale();
  graph.capture_end();
}

// A host copy's shape is known on the host; its values came from the device.
void hostCopyShape(at::cuda::CUDAGraph &graph, at::Tensor box) {
  graph.capture_begin();
  auto host = box.cpu();
  if (host.dim() != 2 || host.size(0) != 3)
    return;
  if (host[0][1].item<float>() != 0)
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    // CHECK-MESSAGES: :[[@LINE-5]]:19: note: the device value is read on the host here
    box.zero_();
  graph.capture_end();
}

// A converted host copy keeps the device tensor's shape: the loop bound is
// host metadata, the element read in the loop is device data.
void convertedCopyShape(at::cuda::CUDAGraph &graph, at::Tensor groups,
                        at::Tensor y) {
  graph.capture_begin();
  auto host = groups.cpu().to(at::kInt).contiguous();
  auto *sizes = static_cast<int *>(host.data_ptr());
  for (int i = 0; i < host.size(0); ++i)
    if (sizes[i] > 0)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch condition depends on a device value
      y.select(0, i).zero_();
  auto picked = groups.cpu().nonzero();
  if (picked.size(0) > 4)
    // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: branch condition depends on a device value
    y.zero_();
  graph.capture_end();
}

// A helper's path that the capture never takes: `sparse` requires
// `!cfg->graphs`, and the capture is begun only under `cfg->graphs` (held
// in a copy, `capture`). Its count reads and the branches on them run
// eagerly, never captured.
struct MoeConfig {
  int graphs;
  int have_perm;
};
static void moeLayer(MoeConfig *cfg, int *d_counts, float *d_out,
                     cudaStream_t s) {
  int sparse = cfg->have_perm && !cfg->graphs;
  if (sparse) {
    int counts[8];
    cudaMemcpy(counts, d_counts, sizeof(counts), cudaMemcpyDeviceToHost);
    for (int e = 0; e < 8; ++e) {
      if (counts[e] <= 0)
        continue;
      cudaMemsetAsync(d_out + e, 0, sizeof(float), s);
    }
    return;
  }
  cudaMemsetAsync(d_out, 0, 8 * sizeof(float), s);
}
void moeForward(MoeConfig *cfg, int *d_counts, float *d_out, cudaStream_t s,
                cudaGraph_t *g) {
  int capture = cfg->graphs;
  if (capture)
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  moeLayer(cfg, d_counts, d_out, s);
  if (capture)
    cudaStreamEndCapture(s, g);
}
// Positive: the same helper's branch with the capture begun on the other
// condition.
static void denseLayer(MoeConfig *cfg, int *d_counts, float *d_out,
                       cudaStream_t s) {
  int dense = cfg->have_perm && !cfg->graphs;
  if (!dense) {
    int counts[8];
    cudaMemcpy(counts, d_counts, sizeof(counts), cudaMemcpyDeviceToHost);
    for (int e = 0; e < 8; ++e)
      if (counts[e] > 0)
        // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: branch condition depends on a device value
        // CHECK-MESSAGES: :[[@LINE-4]]:5: note: the host variable is filled from the device here
        cudaMemsetAsync(d_out + e, 0, sizeof(float), s);
  }
}
void denseForward(MoeConfig *cfg, int *d_counts, float *d_out, cudaStream_t s,
                  cudaGraph_t *g) {
  if (cfg->graphs) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    denseLayer(cfg, d_counts, d_out, s);
    cudaStreamEndCapture(s, g);
  }
}
