// Histogram equalization of a video stream, written against the driver API.
// Host buffers are allocated at start-up; each frame's upload, histogram,
// equalization and download are captured once and the graph is replayed.

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void die_on(CUresult r, const char* expr, int line) {
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    cuGetErrorName(r, &name);
    std::fprintf(stderr, "line %d: %s returned %s\n", line, expr, name ? name : "unknown");
    std::abort();
  }
}
#define DRV(expr) die_on((expr), #expr, __LINE__)

__global__ void histogram256(const uint8_t* img, int n, unsigned int* hist) {
  __shared__ unsigned int local[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&local[img[i]], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&hist[i], local[i]);
}

__global__ void build_lut(const unsigned int* hist, int n, uint8_t* lut) {
  if (threadIdx.x == 0) {
    unsigned int cdf = 0;
    for (int i = 0; i < 256; ++i) {
      cdf += hist[i];
      lut[i] = static_cast<uint8_t>((255.0f * cdf) / n);
    }
  }
}

__global__ void apply_lut(uint8_t* img, int n, const uint8_t* lut) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) img[i] = lut[img[i]];
}

struct Equalizer {
  int n = 1280 * 720;
  CUstream stream = nullptr;
  CUstream side = nullptr;
  CUevent fork = nullptr, join = nullptr;
  CUdeviceptr d_img = 0, d_hist = 0, d_lut = 0;
  void* h_in = nullptr;
  void* h_out = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;

  void setup() {
    DRV(cuMemAlloc(&d_img, n));
    DRV(cuMemAlloc(&d_hist, 256 * sizeof(unsigned int)));
    DRV(cuMemAlloc(&d_lut, 256));
    DRV(cuMemAllocHost(&h_in, n));
    DRV(cuMemHostAlloc(&h_out, n, CU_MEMHOSTALLOC_PORTABLE));
    DRV(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    DRV(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
    DRV(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    DRV(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
  }

  void enqueue(bool keep_histogram) {
    cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    cudaStream_t s2 = reinterpret_cast<cudaStream_t>(side);
    DRV(cuMemcpyHtoDAsync(d_img, h_in, n, stream));
    DRV(cuMemsetD32Async(d_hist, 0, 256, stream));
    histogram256<<<64, 256, 0, s>>>(reinterpret_cast<const uint8_t*>(d_img), n,
                                    reinterpret_cast<unsigned int*>(d_hist));
    DRV(cuEventRecord(fork, stream));
    DRV(cuStreamWaitEvent(side, fork, 0));
    build_lut<<<1, 32, 0, s2>>>(reinterpret_cast<const unsigned int*>(d_hist), n,
                                reinterpret_cast<uint8_t*>(d_lut));
    DRV(cuEventRecord(join, side));
    DRV(cuStreamWaitEvent(stream, join, 0));
    apply_lut<<<(n + 255) / 256, 256, 0, s>>>(reinterpret_cast<uint8_t*>(d_img), n,
                                              reinterpret_cast<const uint8_t*>(d_lut));
    DRV(cuMemcpyDtoHAsync(h_out, d_img, n, stream));
    if (keep_histogram && n > 0) {
      DRV(cuMemsetD8Async(d_lut, 0, 256, stream));
    }
  }

  void capture(bool keep_histogram) {
    enqueue(keep_histogram);
    DRV(cuStreamSynchronize(stream));

    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    DRV(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    DRV(cuStreamIsCapturing(stream, &st));
    enqueue(keep_histogram);
    DRV(cuStreamEndCapture(stream, &graph));
    DRV(cuGraphInstantiate(&exec, graph, 0));

    if (cuStreamQuery(side) != CUDA_SUCCESS) {
      DRV(cuCtxSynchronize());
    }
  }

  void frame(const uint8_t* src, uint8_t* dst) {
    std::memcpy(h_in, src, n);
    DRV(cuGraphLaunch(exec, stream));
    DRV(cuStreamSynchronize(stream));
    std::memcpy(dst, h_out, n);
  }

  void teardown() {
    DRV(cuGraphExecDestroy(exec));
    DRV(cuGraphDestroy(graph));
    DRV(cuEventDestroy(fork));
    DRV(cuEventDestroy(join));
    DRV(cuStreamDestroy(stream));
    DRV(cuStreamDestroy(side));
    DRV(cuMemFreeHost(h_in));
    DRV(cuMemFreeHost(h_out));
    DRV(cuMemFree(d_img));
    DRV(cuMemFree(d_hist));
    DRV(cuMemFree(d_lut));
  }
};

}  // namespace

int main(int argc, char** argv) {
  DRV(cuInit(0));
  CUdevice dev;
  DRV(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  DRV(cuDevicePrimaryCtxRetain(&ctx, dev));
  DRV(cuCtxSetCurrent(ctx));

  Equalizer eq;
  eq.setup();
  eq.capture(argc > 1);
  uint8_t* in = static_cast<uint8_t*>(std::malloc(eq.n));
  uint8_t* out = static_cast<uint8_t*>(std::malloc(eq.n));
  std::memset(in, 77, eq.n);
  for (int f = 0; f < 300; ++f) {
    eq.frame(in, out);
  }
  CUevent done;
  DRV(cuEventCreate(&done, 0));
  DRV(cuEventRecord(done, eq.stream));
  while (cuEventQuery(done) == CUDA_ERROR_NOT_READY) {
  }
  DRV(cuEventSynchronize(done));
  std::printf("out[0] = %u\n", out[0]);
  eq.teardown();
  std::free(in);
  std::free(out);
  DRV(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
