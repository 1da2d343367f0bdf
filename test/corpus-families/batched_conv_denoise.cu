// Batched image denoiser: Gaussian blur + unsharp mask + tone-curve lookup.
//
// One graph is captured per batch size. Scratch images are pitched
// allocations; the tone curve lives in a CUDA array. A separate path keeps
// the old single-stream tool that ran everything on the default stream.

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#define CUDA_CHECK(x)                                                              \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

__global__ void gaussian3x3(const float* in, float* out, int w, int h, size_t pitch, int batch, float sigma) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int b = blockIdx.z;
  if (x <= 0 || y <= 0 || x >= w - 1 || y >= h - 1 || b >= batch) {
    return;
  }
  const float k0 = expf(-1.0f / (2.0f * sigma * sigma));
  const float* img = reinterpret_cast<const float*>(reinterpret_cast<const char*>(in) + (static_cast<size_t>(b) * h + y) * pitch);
  float* dst = reinterpret_cast<float*>(reinterpret_cast<char*>(out) + (static_cast<size_t>(b) * h + y) * pitch);
  const size_t row = pitch / sizeof(float);
  dst[x] = (img[x] + k0 * (img[x - 1] + img[x + 1] + img[x - row] + img[x + row])) / (1.0f + 4.0f * k0);
}

__global__ void unsharp(const float* in, const float* blurred, float* out, size_t count, float amount) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count) {
    out[i] = in[i] + amount * (in[i] - blurred[i]);
  }
}

struct Batch {
  int w = 1920, h = 1080, max_batch = 8;
  float* d_in = nullptr;
  float* d_blur = nullptr;
  float* d_out = nullptr;
  size_t pitch = 0;
  size_t bytes(int bs) const { return pitch * h * bs; }
};

struct Scratch {
  cudaArray_t lut = nullptr;
  float* pitched = nullptr;
  size_t pitched_pitch = 0;
  cudaPitchedPtr volume{};
  unsigned* histogram = nullptr;
};

static void launch_denoise(const Batch& b, int bs, float sigma, float amount, cudaStream_t s) {
  const dim3 block(32, 8);
  const dim3 grid((b.w + 31) / 32, (b.h + 7) / 8, bs);
  gaussian3x3<<<grid, block, 0, s>>>(b.d_in, b.d_blur, b.w, b.h, b.pitch, bs, sigma);
  const size_t count = b.bytes(bs) / sizeof(float);
  unsharp<<<static_cast<unsigned>((count + 255) / 256), 256, 0, s>>>(b.d_in, b.d_blur, b.d_out, count, amount);
}

static void ensure_lut(Scratch& sc, const float* d_curve, size_t n, cudaStream_t s) {
  if (sc.lut != nullptr) {
    CUDA_CHECK(cudaFreeArray(sc.lut)); // expect: cudagraph-device-alloc
  }
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  CUDA_CHECK(cudaMallocArray(&sc.lut, &desc, n, 1)); // expect: cudagraph-device-alloc
  CUDA_CHECK(cudaMemcpy2DToArrayAsync(sc.lut, 0, 0, d_curve, n * sizeof(float), n * sizeof(float), 1, cudaMemcpyDeviceToDevice, s));
}

static void ensure_workspace(Scratch& sc, const Batch& b) {
  if (sc.pitched == nullptr) {
    CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&sc.pitched), &sc.pitched_pitch, b.w * sizeof(float), b.h)); // expect: cudagraph-device-alloc
    CUDA_CHECK(cudaMalloc3D(&sc.volume, make_cudaExtent(b.w * sizeof(float), b.h, 4))); // expect: cudagraph-device-alloc
    CUDA_CHECK(cudaMallocManaged(&sc.histogram, 256 * sizeof(unsigned))); // expect: cudagraph-device-alloc
  }
}

// Tone-mapping graph with lazily created scratch; the histogram reset runs on a side stream.
static cudaGraphExec_t capture_tonemap(const Batch& b, Scratch& sc, const float* d_curve, size_t curve_len,
                                       const float* h_params_pinned, float* d_params, cudaStream_t s,
                                       cudaStream_t side, cudaEvent_t fork_ev, cudaEvent_t params_ready) {
  cudaGraph_t g;
  cudaGraphExec_t exec;
  // Exposure parameters are staged on the side stream ahead of the capture.
  CUDA_CHECK(cudaMemcpyAsync(d_params, h_params_pinned, 2 * sizeof(float), cudaMemcpyHostToDevice, side));
  CUDA_CHECK(cudaEventRecord(params_ready, side));
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  ensure_lut(sc, d_curve, curve_len, s);
  ensure_workspace(sc, b);
  CUDA_CHECK(cudaMemcpyAsync(d_params + 2, h_params_pinned + 2, 2 * sizeof(float), cudaMemcpyHostToDevice)); // expect: cudagraph-legacy-stream
  CUDA_CHECK(cudaMemsetAsync(sc.pitched, 0, sc.pitched_pitch * b.h, s));
  CUDA_CHECK(cudaMemcpy2DAsync(sc.pitched, sc.pitched_pitch, b.d_out, b.pitch, b.w * sizeof(float), b.h, cudaMemcpyDeviceToDevice, s));
  CUDA_CHECK(cudaEventRecord(fork_ev, s));
  CUDA_CHECK(cudaStreamWaitEvent(side, fork_ev, 0)); // expect: cudagraph-unjoined-fork
  CUDA_CHECK(cudaMemsetAsync(sc.histogram, 0, 256 * sizeof(unsigned), side));
  CUDA_CHECK(cudaStreamWaitEvent(s, params_ready, 0)); // expect: cudagraph-unjoined-fork
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  CUDA_CHECK(cudaGraphDestroy(g));
  return exec;
}

// Relaxed capture: a private scratch image is fine here.
static cudaGraphExec_t capture_preview(const Batch& b, cudaStream_t s) {
  cudaGraph_t g;
  cudaGraphExec_t exec;
  float* preview = nullptr;
  size_t preview_pitch = 0;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&preview), &preview_pitch, b.w * sizeof(float) / 4, b.h / 4));
  CUDA_CHECK(cudaMemcpy2DAsync(preview, preview_pitch, b.d_out, b.pitch * 4, b.w * sizeof(float) / 4, b.h / 4, cudaMemcpyDeviceToDevice, s));
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  CUDA_CHECK(cudaGraphDestroy(g));
  return exec;
}

// The original single-stream tool.
static cudaGraphExec_t capture_default_stream_tool(const Batch& b, float amount) {
  cudaGraph_t g;
  cudaGraphExec_t exec;
  const size_t count = b.bytes(1) / sizeof(float);
  CUDA_CHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal)); // expect: cudagraph-legacy-stream
  void* args[] = {const_cast<float**>(&b.d_in), const_cast<float**>(&b.d_blur), const_cast<float**>(&b.d_out), const_cast<size_t*>(&count), &amount};
  CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&unsharp), dim3(static_cast<unsigned>((count + 255) / 256)), dim3(256), args, 0, nullptr)); // expect: cudagraph-legacy-stream
  CUDA_CHECK(cudaMemcpyAsync(b.d_blur, b.d_out, b.bytes(1), cudaMemcpyDeviceToDevice, cudaStreamLegacy)); // expect: cudagraph-legacy-stream
  CUDA_CHECK(cudaStreamEndCapture(0, &g));
  CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  CUDA_CHECK(cudaGraphDestroy(g));
  return exec;
}

// One graph per batch size; sigma and amount are baked into the graphs.
class Denoiser {
 public:
  Denoiser(const Batch& b, cudaStream_t s) : b_(b), s_(s) {}
  ~Denoiser() { destroy(); }

  void build() {
    destroy();
    built_sigma_ = sigma_;
    for (int bs = 1; bs <= b_.max_batch; bs *= 2) {
      cudaGraph_t g;
      CUDA_CHECK(cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal));
      const dim3 block(32, 8);
      const dim3 grid((b_.w + 31) / 32, (b_.h + 7) / 8, bs);
      gaussian3x3<<<grid, block, 0, s_>>>(b_.d_in, b_.d_blur, b_.w, b_.h, b_.pitch, bs, sigma_);
      const size_t count = b_.bytes(bs) / sizeof(float);
      unsharp<<<static_cast<unsigned>((count + 255) / 256), 256, 0, s_>>>(b_.d_in, b_.d_blur, b_.d_out, count, amount_);
      CUDA_CHECK(cudaStreamEndCapture(s_, &g));
      CUDA_CHECK(cudaGraphInstantiate(&graphs_[bs], g, 0));
      CUDA_CHECK(cudaGraphDestroy(g));
    }
  }

  void process(const std::vector<int>& arrivals) {
    for (size_t i = 0; i < arrivals.size(); ++i) {
      int bs = 1;
      while (bs < arrivals[i]) {
        bs *= 2;
      }
      if (i == 3) {
        amount_ = 0.8f; // expect: cudagraph-frozen-host-state
      }
      CUDA_CHECK(cudaGraphLaunch(graphs_.at(bs), s_));
    }
  }

  // A new noise estimate: rebuild when it moved.
  void retune(float estimated_sigma) {
    sigma_ = estimated_sigma;
    if (sigma_ != built_sigma_) {
      build();
    }
    CUDA_CHECK(cudaGraphLaunch(graphs_.at(b_.max_batch), s_));
  }

  float amount() const { return amount_; }

 private:
  void destroy() {
    for (auto& kv : graphs_) {
      CUDA_CHECK(cudaGraphExecDestroy(kv.second));
    }
    graphs_.clear();
  }

  const Batch& b_;
  cudaStream_t s_;
  float sigma_ = 1.2f;
  float amount_ = 0.6f;
  float built_sigma_ = 0.0f;
  std::map<int, cudaGraphExec_t> graphs_;
};

int main(int argc, char** argv) {
  Batch b;
  CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&b.d_in), &b.pitch, b.w * sizeof(float), b.h * b.max_batch));
  size_t p2 = 0, p3 = 0;
  CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&b.d_blur), &p2, b.w * sizeof(float), b.h * b.max_batch));
  CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&b.d_out), &p3, b.w * sizeof(float), b.h * b.max_batch));
  cudaStream_t s, side;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t fork_ev, params_ready;
  CUDA_CHECK(cudaEventCreateWithFlags(&fork_ev, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&params_ready, cudaEventDisableTiming));
  float* h_params = nullptr;
  float* d_params = nullptr;
  CUDA_CHECK(cudaMallocHost(&h_params, 4 * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_params, 4 * sizeof(float)));
  std::vector<float> curve(1024);
  for (size_t i = 0; i < curve.size(); ++i) {
    curve[i] = std::pow(static_cast<float>(i) / 1023.0f, 1.0f / 2.2f);
  }

  float* d_curve = nullptr;
  CUDA_CHECK(cudaMalloc(&d_curve, curve.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d_curve, curve.data(), curve.size() * sizeof(float), cudaMemcpyHostToDevice));

  launch_denoise(b, 1, 1.2f, 0.6f, s);  // eager warm-up
  Denoiser denoiser(b, s);
  denoiser.build();
  Scratch sc;
  cudaGraphExec_t tonemap = capture_tonemap(b, sc, d_curve, curve.size(), h_params, d_params, s, side, fork_ev, params_ready);
  cudaGraphExec_t preview = capture_preview(b, s);

  denoiser.process({3, 8, 1, 5, 2});
  CUDA_CHECK(cudaGraphLaunch(tonemap, s));
  denoiser.retune(argc > 1 ? 2.0f : 1.2f);
  CUDA_CHECK(cudaGraphLaunch(preview, s));

  cudaGraphExec_t tool = capture_default_stream_tool(b, denoiser.amount());
  CUDA_CHECK(cudaGraphLaunch(tool, 0));
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaDeviceSynchronize());

  CUDA_CHECK(cudaGraphExecDestroy(tool));
  CUDA_CHECK(cudaGraphExecDestroy(preview));
  CUDA_CHECK(cudaGraphExecDestroy(tonemap));
  CUDA_CHECK(cudaFreeArray(sc.lut));
  CUDA_CHECK(cudaFree(sc.pitched));
  CUDA_CHECK(cudaFree(sc.volume.ptr));
  CUDA_CHECK(cudaFree(sc.histogram));
  CUDA_CHECK(cudaFree(d_curve));
  CUDA_CHECK(cudaEventDestroy(params_ready));
  CUDA_CHECK(cudaEventDestroy(fork_ev));
  CUDA_CHECK(cudaStreamDestroy(side));
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFreeHost(h_params));
  CUDA_CHECK(cudaFree(d_params));
  CUDA_CHECK(cudaFree(b.d_out));
  CUDA_CHECK(cudaFree(b.d_blur));
  CUDA_CHECK(cudaFree(b.d_in));
  return 0;
}
