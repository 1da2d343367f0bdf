// Histogram equalisation of 8-bit frames, captured once and replayed per frame.
//
// Histogram and CDF use CUB with caller-provided temporary storage. The
// chroma planes are processed on a side stream that is joined back; a host
// callback marks frame completion for the pacing thread.

#include <cuda_runtime.h>
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_scan.cuh>

#include <atomic>
#include <cstdint>
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

__global__ void fill_frame(uint8_t* p, size_t n, uint8_t v) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    p[i] = static_cast<uint8_t>(v + (i & 63));
  }
}

__global__ void remap(const uint8_t* in, uint8_t* out, const int* cdf, size_t n, int total) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    out[i] = static_cast<uint8_t>((255LL * cdf[in[i]]) / total);
  }
}

__global__ void halve_chroma(uint8_t* uv, size_t n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    uv[i] = static_cast<uint8_t>((uv[i] + 128) / 2);
  }
}

static std::atomic<int> g_frames_done{0};

static void CUDART_CB on_frame_done(void*) { g_frames_done.fetch_add(1); }

// Project wrapper: every preview capture is relaxed.
class PreviewRecorder {
 public:
  explicit PreviewRecorder(cudaStream_t s) : s_(s) {}
  void begin() { CUDA_CHECK(cudaStreamBeginCapture(s_, cudaStreamCaptureModeRelaxed)); }
  cudaGraph_t end() {
    cudaGraph_t g = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(s_, &g));
    return g;
  }

 private:
  cudaStream_t s_;
};

struct Frame {
  int w = 1920, h = 1080;
  uint8_t* luma = nullptr;
  uint8_t* chroma = nullptr;
  uint8_t* out = nullptr;
  size_t luma_bytes() const { return static_cast<size_t>(w) * h; }
  size_t chroma_bytes() const { return luma_bytes() / 2; }
};

int main() {
  Frame f;
  CUDA_CHECK(cudaMalloc(&f.luma, f.luma_bytes()));
  CUDA_CHECK(cudaMalloc(&f.chroma, f.chroma_bytes()));
  CUDA_CHECK(cudaMalloc(&f.out, f.luma_bytes()));
  int* d_hist = nullptr;
  int* d_cdf = nullptr;
  CUDA_CHECK(cudaMalloc(&d_hist, 256 * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_cdf, 256 * sizeof(int)));

  // Eager initialisation on the default stream, before any capture.
  const unsigned blocks = static_cast<unsigned>((f.luma_bytes() + 255) / 256);
  fill_frame<<<blocks, 256>>>(f.luma, f.luma_bytes(), 16);
  CUDA_CHECK(cudaMemsetAsync(f.chroma, 128, f.chroma_bytes(), 0));
  CUDA_CHECK(cudaDeviceSynchronize());

  cudaStream_t s, uv_stream, scratch_stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&uv_stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&scratch_stream, cudaStreamNonBlocking));
  cudaEvent_t fork_ev, join_ev, ingest_done, temp_ev;
  CUDA_CHECK(cudaEventCreateWithFlags(&fork_ev, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&join_ev, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&ingest_done, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&temp_ev, cudaEventDisableTiming));

  // Size CUB's temporary storage once.
  size_t hist_bytes = 0, scan_bytes = 0;
  CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, hist_bytes, f.luma, d_hist, 257, 0, 256, static_cast<int>(f.luma_bytes()), s));
  CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, d_hist, d_cdf, 256, s));
  void* d_temp = nullptr;
  CUDA_CHECK(cudaMalloc(&d_temp, hist_bytes > scan_bytes ? hist_bytes : scan_bytes));

  int total = static_cast<int>(f.luma_bytes());
  // The ingest thread signals through an event recorded before the capture.
  CUDA_CHECK(cudaEventRecord(ingest_done, scratch_stream));
  CUDA_CHECK(cudaStreamWaitEvent(s, ingest_done, 0));

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CUDA_CHECK(cudaStreamWaitEvent(s, ingest_done, cudaEventWaitExternal));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  CUDA_CHECK(cudaFuncSetAttribute(remap, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  cudaPointerAttributes attr;
  CUDA_CHECK(cudaPointerGetAttributes(&attr, f.luma));
  CUDA_CHECK(cudaEventRecord(fork_ev, s));
  CUDA_CHECK(cudaStreamWaitEvent(uv_stream, fork_ev, 0));
  halve_chroma<<<static_cast<unsigned>((f.chroma_bytes() + 255) / 256), 256, 0, uv_stream>>>(f.chroma, f.chroma_bytes());
  CUDA_CHECK(cudaEventRecord(join_ev, uv_stream));
  CUDA_CHECK(cudaMemsetAsync(d_hist, 0, 256 * sizeof(int), s));
  CUDA_CHECK(cub::DeviceHistogram::HistogramEven(d_temp, hist_bytes, f.luma, d_hist, 257, 0, 256, static_cast<int>(f.luma_bytes()), s));
  CUDA_CHECK(cub::DeviceScan::InclusiveSum(d_temp, scan_bytes, d_hist, d_cdf, 256, s));
  int* d_lut_tmp = nullptr;
  CUDA_CHECK(cudaMallocAsync(&d_lut_tmp, 256 * sizeof(int), s));
  CUDA_CHECK(cudaMemcpyAsync(d_lut_tmp, d_cdf, 256 * sizeof(int), cudaMemcpyDeviceToDevice, s));
  remap<<<blocks, 256, 0, s>>>(f.luma, f.out, d_lut_tmp, f.luma_bytes(), total);
  CUDA_CHECK(cudaFreeAsync(d_lut_tmp, s));
  CUDA_CHECK(cudaStreamWaitEvent(s, join_ev, 0));
  CUDA_CHECK(cudaLaunchHostFunc(s, on_frame_done, nullptr));
  CUDA_CHECK(cudaEventDestroy(temp_ev));
  CUDA_CHECK(cudaStreamDestroy(scratch_stream));
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  // Preview graph: recorded through the relaxed wrapper, so a private buffer is allowed.
  PreviewRecorder rec(s);
  rec.begin();
  uint8_t* preview = nullptr;
  CUDA_CHECK(cudaMalloc(&preview, f.luma_bytes() / 4));
  CUDA_CHECK(cudaMemcpy2DAsync(preview, f.w / 2, f.out, f.w * 2, f.w / 2, f.h / 2, cudaMemcpyDeviceToDevice, s));
  CUDA_CHECK(cudaGraphDestroy(graph));
  graph = rec.end();
  cudaGraphExec_t preview_exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&preview_exec, graph, 0));

  // Thread-local capture of the per-thread tone tweak; stream-ordered scratch only.
  cudaGraph_t tweak = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  uint8_t* tmp = nullptr;
  CUDA_CHECK(cudaMallocAsync(&tmp, f.chroma_bytes(), s));
  CUDA_CHECK(cudaMemcpyAsync(tmp, f.chroma, f.chroma_bytes(), cudaMemcpyDeviceToDevice, s));
  halve_chroma<<<static_cast<unsigned>((f.chroma_bytes() + 255) / 256), 256, 0, s>>>(tmp, f.chroma_bytes());
  fill_frame<<<1, 64, 0, cudaStreamPerThread>>>(f.out, 64, 0);
  CUDA_CHECK(cudaFreeAsync(tmp, s));
  CUDA_CHECK(cudaStreamEndCapture(s, &tweak));
  cudaGraphExec_t tweak_exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&tweak_exec, tweak, 0));

  int frames_submitted = 0;
  for (int i = 0; i < 120; ++i) {
    ++frames_submitted;
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaGraphLaunch(tweak_exec, s));
    if (i % 30 == 0) {
      CUDA_CHECK(cudaGraphLaunch(preview_exec, s));
    }
  }
  CUDA_CHECK(cudaStreamSynchronize(s));

  // Half-resolution mode: `total` is baked into the graph, so recapture and update.
  total /= 4;
  cudaGraph_t half = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  remap<<<blocks / 4, 256, 0, s>>>(f.luma, f.out, d_cdf, f.luma_bytes() / 4, total);
  CUDA_CHECK(cudaStreamEndCapture(s, &half));
  cudaGraphExecUpdateResultInfo info;
  if (cudaGraphExecUpdate(exec, half, &info) != cudaSuccess) {
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphInstantiate(&exec, half, 0));
  }
  CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::printf("%s: %d/%d frames, %zu MiB free\n", prop.name, g_frames_done.load(), frames_submitted, free_b >> 20);

  CUDA_CHECK(cudaGraphDestroy(half));
  CUDA_CHECK(cudaGraphExecDestroy(tweak_exec));
  CUDA_CHECK(cudaGraphDestroy(tweak));
  CUDA_CHECK(cudaGraphExecDestroy(preview_exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaFree(preview));
  CUDA_CHECK(cudaFree(d_temp));
  CUDA_CHECK(cudaFree(d_cdf));
  CUDA_CHECK(cudaFree(d_hist));
  CUDA_CHECK(cudaFree(f.out));
  CUDA_CHECK(cudaFree(f.chroma));
  CUDA_CHECK(cudaFree(f.luma));
  for (cudaEvent_t e : {fork_ev, join_ev, ingest_done}) {
    CUDA_CHECK(cudaEventDestroy(e));
  }
  CUDA_CHECK(cudaStreamDestroy(uv_stream));
  CUDA_CHECK(cudaStreamDestroy(s));
  return 0;
}
