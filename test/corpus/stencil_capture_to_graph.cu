// Builds one CUDA graph for a multi-stage 2-D stencil solver by capturing
// each stage into a pre-created graph (cudaStreamBeginCaptureToGraph), then
// instantiates and replays it for every time step.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                               \
  do {                                                                         \
    const cudaError_t status_ = (call);                                        \
    if (status_ != cudaSuccess) {                                              \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(status_)); \
      std::exit(2);                                                            \
    }                                                                          \
  } while (false)

__constant__ float c_weights[9];

__global__ void stencil3x3(const float* __restrict__ in, float* __restrict__ out, int w, int h, size_t pitch) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x <= 0 || y <= 0 || x >= w - 1 || y >= h - 1) return;
  const size_t stride = pitch / sizeof(float);
  float acc = 0.0f;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      acc += c_weights[(dy + 1) * 3 + (dx + 1)] * in[(y + dy) * stride + (x + dx)];
  out[y * stride + x] = acc;
}

__global__ void apply_boundary(float* grid, int w, int h, size_t pitch, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = pitch / sizeof(float);
  if (i < w) {
    grid[i] = value;
    grid[(h - 1) * stride + i] = value;
  }
  if (i < h) {
    grid[i * stride] = value;
    grid[i * stride + (w - 1)] = value;
  }
}

struct Grid {
  int w = 2048, h = 2048;
  size_t pitch = 0;
  float* a = nullptr;
  float* b = nullptr;
};

struct StageOptions {
  bool reload_weights = false;
  bool upload_initial = false;
  bool wait_for_io = false;
};

class StencilGraphBuilder {
 public:
  StencilGraphBuilder(Grid& g, cudaStream_t compute, cudaStream_t io) : g_(g), compute_(compute), io_(io) {
    CK(cudaEventCreateWithFlags(&io_done_, cudaEventDisableTiming));
  }

  void upload_weights(const float* host_weights, bool async) {
    if (async) {
      CK(cudaMemcpyToSymbolAsync(c_weights, host_weights, 9 * sizeof(float), 0, cudaMemcpyHostToDevice, compute_));
    } else {
      CK(cudaMemcpyToSymbol(c_weights, host_weights, 9 * sizeof(float))); // expect: cudagraph-host-sync
    }
  }

  void upload_initial(const std::vector<float>& host) {
    CK(cudaMemcpy2D(g_.a, g_.pitch, host.data(), g_.w * sizeof(float), g_.w * sizeof(float), g_.h, cudaMemcpyHostToDevice)); // expect: cudagraph-host-sync
  }

  void upload_initial_async(const float* pinned_host) {
    CK(cudaMemcpy2DAsync(g_.a, g_.pitch, pinned_host, g_.w * sizeof(float), g_.w * sizeof(float), g_.h, cudaMemcpyHostToDevice, compute_));
  }

  void enqueue_stage(int stage, const StageOptions& opt) {
    const dim3 block(16, 16);
    const dim3 grid((g_.w + block.x - 1) / block.x, (g_.h + block.y - 1) / block.y);
    float* src = (stage % 2 == 0) ? g_.a : g_.b;
    float* dst = (stage % 2 == 0) ? g_.b : g_.a;
    if (opt.reload_weights) {
      upload_weights(weights_.data(), /*async=*/stage > 0);
    }
    stencil3x3<<<grid, block, 0, compute_>>>(src, dst, g_.w, g_.h, g_.pitch);
    apply_boundary<<<(g_.w > g_.h ? g_.w : g_.h) / 256 + 1, 256, 0, compute_>>>(dst, g_.w, g_.h, g_.pitch, 0.0f);
    if (opt.wait_for_io) {
      if (cudaStreamQuery(io_) != cudaSuccess) { // expect: cudagraph-status-query
        CK(cudaEventSynchronize(io_done_)); // expect: cudagraph-host-sync
      }
    }
  }

  cudaGraph_t build(int stages, const StageOptions& opt, const std::vector<float>& initial) {
    cudaGraph_t graph;
    CK(cudaGraphCreate(&graph, 0));
    for (int s = 0; s < stages; ++s) {
      CK(cudaStreamBeginCaptureToGraph(compute_, graph, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
      if (s == 0 && opt.upload_initial) {
        upload_initial(initial);
      }
      enqueue_stage(s, opt);
      cudaGraph_t captured = nullptr;
      CK(cudaStreamEndCapture(compute_, &captured));
      if (cudaStreamQuery(io_) == cudaErrorNotReady) {
        CK(cudaStreamSynchronize(io_));
      }
    }
    return graph;
  }

  void set_weights(const std::vector<float>& w) { weights_ = w; }

 private:
  Grid& g_;
  cudaStream_t compute_, io_;
  cudaEvent_t io_done_ = nullptr;
  std::vector<float> weights_ = std::vector<float>(9, 1.0f / 9.0f);
};

int main(int argc, char** argv) {
  Grid g;
  CK(cudaMallocPitch(&g.a, &g.pitch, g.w * sizeof(float), g.h));
  CK(cudaMallocPitch(&g.b, &g.pitch, g.w * sizeof(float), g.h));
  CK(cudaMemset2D(g.a, g.pitch, 0, g.w * sizeof(float), g.h));
  CK(cudaMemset2D(g.b, g.pitch, 0, g.w * sizeof(float), g.h));

  cudaStream_t compute, io;
  CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&io, cudaStreamNonBlocking));

  StencilGraphBuilder builder(g, compute, io);
  std::vector<float> initial(static_cast<size_t>(g.w) * g.h, 1.0f);
  builder.upload_initial(initial);
  const float laplace[9] = {0.f, .25f, 0.f, .25f, 0.f, .25f, 0.f, .25f, 0.f};
  builder.upload_weights(laplace, /*async=*/false);

  StageOptions opt;
  opt.reload_weights = argc > 1;
  opt.upload_initial = argc > 2;
  opt.wait_for_io = argc > 3;
  cudaGraph_t graph = builder.build(8, opt, initial);

  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int t = 0; t < 500; ++t) {
    CK(cudaGraphLaunch(exec, compute));
  }
  CK(cudaStreamSynchronize(compute));

  std::vector<float> result(static_cast<size_t>(g.w) * g.h);
  CK(cudaMemcpy2D(result.data(), g.w * sizeof(float), g.a, g.pitch, g.w * sizeof(float), g.h, cudaMemcpyDeviceToHost));
  std::printf("center = %f\n", result[result.size() / 2 + g.w / 2]);

  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaFree(g.a));
  CK(cudaFree(g.b));
  return 0;
}
