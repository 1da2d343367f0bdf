// Particle-in-cell step with a fork/join across two streams, stream-ordered
// temporaries and a host callback, captured once and then updated in place
// (cudaGraphExecUpdate) when the time step changes.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define RT_CHECK(x)                                                              \
  do {                                                                           \
    cudaError_t rc_ = (x);                                                       \
    if (rc_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(rc_)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

__global__ void deposit(const float2* pos, int n, float* grid, int cells) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const int c = static_cast<int>(pos[i].x * cells) % cells;
    atomicAdd(&grid[c < 0 ? c + cells : c], 1.0f);
  }
}

__global__ void smooth(float* grid, const float* tmp, int cells) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < cells) {
    const float l = tmp[(i + cells - 1) % cells];
    const float r = tmp[(i + 1) % cells];
    grid[i] = 0.25f * l + 0.5f * tmp[i] + 0.25f * r;
  }
}

__global__ void push(float2* pos, float2* vel, const float* field, int n, int cells, float dt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const int c = static_cast<int>(pos[i].x * cells) % cells;
    vel[i].x += field[c < 0 ? c + cells : c] * dt;
    pos[i].x += vel[i].x * dt;
    pos[i].y += vel[i].y * dt;
  }
}

struct HostProgress {
  int steps_enqueued = 0;
};

static void CUDART_CB on_step_done(void* user) {
  static_cast<HostProgress*>(user)->steps_enqueued++;
}

struct State {
  int n = 1 << 20;
  int cells = 4096;
  float2* pos = nullptr;
  float2* vel = nullptr;
  float* grid = nullptr;
  float* field = nullptr;
  float* h_grid = nullptr;
};

static void enqueue_step(State& s, cudaStream_t main, cudaStream_t aux, cudaEvent_t fork, cudaEvent_t join,
                         HostProgress* progress, float dt, bool stats) {
  const int t = 256;
  RT_CHECK(cudaMemsetAsync(s.grid, 0, s.cells * sizeof(float), main));
  deposit<<<(s.n + t - 1) / t, t, 0, main>>>(s.pos, s.n, s.grid, s.cells);

  RT_CHECK(cudaEventRecord(fork, main));
  RT_CHECK(cudaStreamWaitEvent(aux, fork, 0));
  float* tmp = nullptr;
  RT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&tmp), s.cells * sizeof(float), aux));
  RT_CHECK(cudaMemcpyAsync(tmp, s.grid, s.cells * sizeof(float), cudaMemcpyDeviceToDevice, aux));
  smooth<<<(s.cells + t - 1) / t, t, 0, aux>>>(s.field, tmp, s.cells);
  RT_CHECK(cudaFreeAsync(tmp, aux));
  RT_CHECK(cudaEventRecord(join, aux));
  RT_CHECK(cudaStreamWaitEvent(main, join, 0));

  push<<<(s.n + t - 1) / t, t, 0, main>>>(s.pos, s.vel, s.field, s.n, s.cells, dt);
  if (stats) {
    RT_CHECK(cudaMemcpyAsync(s.h_grid, s.grid, s.cells * sizeof(float), cudaMemcpyDeviceToHost, main));
  }
  RT_CHECK(cudaLaunchHostFunc(main, on_step_done, progress));

  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  RT_CHECK(cudaStreamIsCapturing(main, &status));
  if (status == cudaStreamCaptureStatusActive && s.n > (1 << 24)) {
    std::fprintf(stderr, "warning: very large capture\n");
  }
}

static cudaGraph_t record(State& s, cudaStream_t main, cudaStream_t aux, cudaEvent_t fork, cudaEvent_t join,
                          HostProgress* progress, float dt, bool stats) {
  cudaGraph_t g = nullptr;
  RT_CHECK(cudaStreamBeginCapture(main, cudaStreamCaptureModeGlobal));
  enqueue_step(s, main, aux, fork, join, progress, dt, stats);
  RT_CHECK(cudaStreamEndCapture(main, &g));
  return g;
}

int main(int argc, char** argv) {
  const bool stats = argc > 1;
  State s;
  RT_CHECK(cudaMalloc(&s.pos, s.n * sizeof(float2)));
  RT_CHECK(cudaMalloc(&s.vel, s.n * sizeof(float2)));
  RT_CHECK(cudaMalloc(&s.grid, s.cells * sizeof(float)));
  RT_CHECK(cudaMalloc(&s.field, s.cells * sizeof(float)));
  RT_CHECK(cudaMallocHost(&s.h_grid, s.cells * sizeof(float)));
  RT_CHECK(cudaMemset(s.pos, 0, s.n * sizeof(float2)));
  RT_CHECK(cudaMemset(s.vel, 0, s.n * sizeof(float2)));

  int device = 0;
  RT_CHECK(cudaGetDevice(&device));
  int sms = 0;
  RT_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));

  cudaStream_t main_stream, aux_stream;
  RT_CHECK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
  RT_CHECK(cudaStreamCreateWithFlags(&aux_stream, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  RT_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  RT_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  HostProgress progress;

  enqueue_step(s, main_stream, aux_stream, fork, join, &progress, 1e-3f, stats);
  RT_CHECK(cudaStreamSynchronize(main_stream));

  cudaGraph_t graph = record(s, main_stream, aux_stream, fork, join, &progress, 1e-3f, stats);
  cudaGraphExec_t exec = nullptr;
  RT_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  for (int epoch = 0; epoch < 4; ++epoch) {
    for (int i = 0; i < 250; ++i) {
      RT_CHECK(cudaGraphLaunch(exec, main_stream));
    }
    RT_CHECK(cudaStreamSynchronize(main_stream));
    if (cudaEventQuery(join) != cudaSuccess) {
      std::fprintf(stderr, "join event not complete after sync\n");
    }

    // Halve the time step: re-record and patch the executable graph.
    cudaGraph_t updated = record(s, main_stream, aux_stream, fork, join, &progress, 1e-3f / (2 << epoch), stats);
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(exec, updated, &info) != cudaSuccess) {
      RT_CHECK(cudaGraphExecDestroy(exec));
      RT_CHECK(cudaGraphInstantiate(&exec, updated, 0));
    }
    RT_CHECK(cudaGraphDestroy(graph));
    graph = updated;
  }

  RT_CHECK(cudaDeviceSynchronize());
  std::vector<float> grid(s.cells);
  RT_CHECK(cudaMemcpy(grid.data(), s.grid, s.cells * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("%d steps on %d SMs, grid[0]=%f\n", progress.steps_enqueued, sms, grid[0]);

  RT_CHECK(cudaGraphExecDestroy(exec));
  RT_CHECK(cudaGraphDestroy(graph));
  RT_CHECK(cudaFreeHost(s.h_grid));
  RT_CHECK(cudaFree(s.pos));
  RT_CHECK(cudaFree(s.vel));
  RT_CHECK(cudaFree(s.grid));
  RT_CHECK(cudaFree(s.field));
  return 0;
}
