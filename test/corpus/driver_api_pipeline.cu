// Image post-processing pipeline built on the CUDA driver API (context,
// stream and memory management) with runtime-style kernel launches. One
// frame's worth of work is captured with cuStreamBeginCapture and replayed
// for every incoming frame.

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CU_CHECK(expr) check_cu((expr), #expr, __FILE__, __LINE__)

static inline void check_cu(CUresult r, const char* what, const char* file, int line) {
  if (r != CUDA_SUCCESS) {
    const char* msg = nullptr;
    cuGetErrorString(r, &msg);
    std::fprintf(stderr, "%s:%d: %s -> %s\n", file, line, what, msg ? msg : "?");
    std::exit(1);
  }
}

__global__ void gamma_correct(const uint8_t* __restrict__ in, float* __restrict__ out, int n, float inv_gamma) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = powf(in[i] / 255.0f, inv_gamma);
  }
}

__global__ void to_u8(const float* __restrict__ in, uint8_t* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = fminf(fmaxf(in[i], 0.0f), 1.0f);
    out[i] = static_cast<uint8_t>(v * 255.0f + 0.5f);
  }
}

struct FrameConfig {
  int width = 1920;
  int height = 1080;
  int channels = 3;
  float gamma = 2.2f;
  bool paranoid = false;
  bool histogram = false;

  size_t pixels() const { return static_cast<size_t>(width) * height * channels; }
};

class FramePipeline {
 public:
  explicit FramePipeline(const FrameConfig& cfg) : cfg_(cfg) {}

  void init() {
    CU_CHECK(cuInit(0));
    CU_CHECK(cuDeviceGet(&dev_, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev_));
    CU_CHECK(cuCtxSetCurrent(ctx_));
    CU_CHECK(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
    CU_CHECK(cuEventCreate(&frame_done_, CU_EVENT_DISABLE_TIMING));
    CU_CHECK(cuMemAlloc(&d_in_, cfg_.pixels()));
    CU_CHECK(cuMemAlloc(&d_linear_, cfg_.pixels() * sizeof(float)));
    CU_CHECK(cuMemAlloc(&d_out_, cfg_.pixels()));
    CU_CHECK(cuMemAllocHost(&h_in_, cfg_.pixels()));
  }

  void* ensure_output_buffer(size_t bytes) {
    if (bytes <= h_out_bytes_) {
      return h_out_;
    }
    if (h_out_ != nullptr) {
      CU_CHECK(cuMemFreeHost(h_out_)); // warmed up before the capture: not run while capturing
    }
    CU_CHECK(cuMemHostAlloc(&h_out_, bytes, CU_MEMHOSTALLOC_PORTABLE)); // warmed up before the capture: not run while capturing
    h_out_bytes_ = bytes;
    return h_out_;
  }

  void* histogram_buffer() {
    if (h_hist_ == nullptr) {
      CU_CHECK(cuMemAllocHost(&h_hist_, 256 * sizeof(uint32_t))); // expect: cudagraph-pinned-alloc
    }
    return h_hist_;
  }

  void adopt_user_frame(std::vector<uint8_t>& frame) {
    CU_CHECK(cuMemHostRegister(frame.data(), frame.size(), 0)); // expect: cudagraph-pinned-alloc
    user_frame_ = frame.data();
    h_in_view_ = frame.data();
  }

  void enqueue_frame() {
    const int n = static_cast<int>(cfg_.pixels());
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    cudaStream_t s = reinterpret_cast<cudaStream_t>(stream_);

    CU_CHECK(cuMemcpyHtoDAsync(d_in_, h_in_view_ ? h_in_view_ : h_in_, cfg_.pixels(), stream_));
    gamma_correct<<<blocks, threads, 0, s>>>(reinterpret_cast<const uint8_t*>(d_in_),
                                             reinterpret_cast<float*>(d_linear_), n, 1.0f / cfg_.gamma);
    to_u8<<<blocks, threads, 0, s>>>(reinterpret_cast<const float*>(d_linear_),
                                     reinterpret_cast<uint8_t*>(d_out_), n);
    CU_CHECK(cuEventRecord(frame_done_, stream_));
    if (cfg_.paranoid) {
      CU_CHECK(cuEventSynchronize(frame_done_)); // expect: cudagraph-host-sync
      CU_CHECK(cuCtxSynchronize()); // expect: cudagraph-host-sync
    }
    void* dst = ensure_output_buffer(cfg_.pixels());
    CU_CHECK(cuMemcpyDtoHAsync(dst, d_out_, cfg_.pixels(), stream_));
    if (cfg_.histogram) {
      histogram_buffer();
    }
  }

  bool frame_ready() const {
    return cuEventQuery(frame_done_) == CUDA_SUCCESS; // expect: cudagraph-status-query
  }

  // When `source` is given, frames are read straight from that host vector.
  void capture(std::vector<uint8_t>* source) {
    CU_CHECK(cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL));
    if (source != nullptr) {
      adopt_user_frame(*source);
    }
    enqueue_frame();
    if (!frame_ready()) {
      ++frames_in_flight_;
    }
    const CUresult q = cuStreamQuery(stream_); // expect: cudagraph-status-query
    if (q == CUDA_ERROR_NOT_READY) {
      CU_CHECK(cuStreamSynchronize(stream_)); // expect: cudagraph-host-sync
    }
    CU_CHECK(cuStreamEndCapture(stream_, &graph_));
    CU_CHECK(cuGraphInstantiate(&exec_, graph_, 0));
  }

  void run(int frames) {
    for (int f = 0; f < frames; ++f) {
      CU_CHECK(cuGraphLaunch(exec_, stream_));
      if (cuStreamQuery(stream_) == CUDA_ERROR_NOT_READY) {
        ++frames_in_flight_;
      }
    }
    CU_CHECK(cuStreamSynchronize(stream_));
    if (user_frame_ != nullptr) {
      CU_CHECK(cuMemHostUnregister(user_frame_));
      user_frame_ = nullptr;
    }
  }

  void shutdown() {
    CU_CHECK(cuGraphExecDestroy(exec_));
    CU_CHECK(cuGraphDestroy(graph_));
    if (h_out_ != nullptr) CU_CHECK(cuMemFreeHost(h_out_));
    if (h_hist_ != nullptr) CU_CHECK(cuMemFreeHost(h_hist_));
    CU_CHECK(cuMemFreeHost(h_in_));
    CU_CHECK(cuMemFree(d_out_));
    CU_CHECK(cuMemFree(d_linear_));
    CU_CHECK(cuMemFree(d_in_));
    CU_CHECK(cuEventDestroy(frame_done_));
    CU_CHECK(cuStreamDestroy(stream_));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev_));
  }

 private:
  FrameConfig cfg_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent frame_done_ = nullptr;
  CUdeviceptr d_in_ = 0, d_linear_ = 0, d_out_ = 0;
  void* h_in_ = nullptr;
  void* h_out_ = nullptr;
  void* h_hist_ = nullptr;
  void* user_frame_ = nullptr;
  void* h_in_view_ = nullptr;
  size_t h_out_bytes_ = 0;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  int frames_in_flight_ = 0;
};

int main(int argc, char** argv) {
  FrameConfig cfg;
  cfg.paranoid = argc > 1;
  cfg.histogram = argc > 2;
  FramePipeline pipeline(cfg);
  pipeline.init();
  pipeline.ensure_output_buffer(cfg.pixels());
  std::vector<uint8_t> frame(cfg.pixels(), 128);
  pipeline.capture(argc > 3 ? &frame : nullptr);
  pipeline.run(120);
  pipeline.shutdown();
  return 0;
}
