// 2-D heat diffusion with overlapped halo exchange, captured per time step.
//
// The interior update runs on the capture stream; halo packing and tile
// updates run on side streams forked from it with events.

#include <cuda_runtime.h>

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

constexpr int kTiles = 4;

__global__ void interior(const float* in, float* out, int nx, int ny, float coef) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  const int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x < nx - 1 && y < ny - 1) {
    const int i = y * nx + x;
    out[i] = in[i] + coef * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] - 4.0f * in[i]);
  }
}

__global__ void pack_halo(const float* in, float* halo, int nx, int ny) {
  extern __shared__ float row[];
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < nx) {
    row[threadIdx.x] = in[nx + x];
    halo[x] = row[threadIdx.x];
    halo[nx + x] = in[(ny - 2) * nx + x];
  }
}

__global__ void apply_boundary(float* out, const float* halo, int nx, int ny) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < nx) {
    out[x] = halo[nx + x];
    out[(ny - 1) * nx + x] = halo[x];
  }
}

struct Grid {
  int nx = 4096, ny = 4096;
  float* d_in = nullptr;
  float* d_out = nullptr;
  float* d_halo = nullptr;
  size_t cells() const { return static_cast<size_t>(nx) * ny; }
};

struct Streams {
  cudaStream_t cap, halo, upload;
  cudaStream_t tiles[kTiles];
  cudaEvent_t fork_ev, join_ev, upload_done, hop1, hop2;
  cudaEvent_t tile_done[kTiles];
};

// Makes `side` wait for the work queued so far on `main_stream`.
static void fork_into(cudaStream_t side, cudaEvent_t ev, cudaStream_t main_stream) {
  CUDA_CHECK(cudaEventRecord(ev, main_stream));
  CUDA_CHECK(cudaStreamWaitEvent(side, ev, 0));
}

// Makes `main_stream` wait for the work queued so far on `side`.
static void join_into(cudaStream_t main_stream, cudaEvent_t ev, cudaStream_t side) {
  CUDA_CHECK(cudaEventRecord(ev, side));
  CUDA_CHECK(cudaStreamWaitEvent(main_stream, ev, 0));
}

static void enqueue_interior(const Grid& g, cudaStream_t s, float coef) {
  const dim3 block(32, 8);
  const dim3 grid((g.nx + 31) / 32, (g.ny + 7) / 8);
  interior<<<grid, block, 0, s>>>(g.d_in, g.d_out, g.nx, g.ny, coef);
}

// Halo on a side stream, joined before the boundary is applied.
static cudaGraphExec_t capture_overlapped(Grid& g, Streams& st, float coef) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(st.cap, cudaStreamCaptureModeGlobal));
  fork_into(st.halo, st.fork_ev, st.cap);
  pack_halo<<<(g.nx + 255) / 256, 256, 256 * sizeof(float), st.halo>>>(g.d_in, g.d_halo, g.nx, g.ny);
  enqueue_interior(g, st.cap, coef);
  join_into(st.cap, st.join_ev, st.halo);
  apply_boundary<<<(g.nx + 255) / 256, 256, 0, st.cap>>>(g.d_out, g.d_halo, g.nx, g.ny);
  CUDA_CHECK(cudaStreamEndCapture(st.cap, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// cap -> halo -> upload -> cap.
static cudaGraphExec_t capture_chained(Grid& g, Streams& st, float coef) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(st.cap, cudaStreamCaptureModeGlobal));
  CUDA_CHECK(cudaEventRecord(st.fork_ev, st.cap));
  CUDA_CHECK(cudaStreamWaitEvent(st.halo, st.fork_ev, 0));
  pack_halo<<<(g.nx + 255) / 256, 256, 256 * sizeof(float), st.halo>>>(g.d_in, g.d_halo, g.nx, g.ny);
  CUDA_CHECK(cudaEventRecord(st.hop1, st.halo));
  CUDA_CHECK(cudaStreamWaitEvent(st.upload, st.hop1, 0));
  apply_boundary<<<(g.nx + 255) / 256, 256, 0, st.upload>>>(g.d_in, g.d_halo, g.nx, g.ny);
  CUDA_CHECK(cudaEventRecord(st.hop2, st.upload));
  CUDA_CHECK(cudaStreamWaitEvent(st.cap, st.hop2, 0));
  enqueue_interior(g, st.cap, coef);
  CUDA_CHECK(cudaStreamEndCapture(st.cap, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// One stream per horizontal tile; every tile stream is joined.
static cudaGraphExec_t capture_tiled(Grid& g, Streams& st, float coef) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  const int rows = g.ny / kTiles;
  CUDA_CHECK(cudaStreamBeginCapture(st.cap, cudaStreamCaptureModeGlobal));
  CUDA_CHECK(cudaEventRecord(st.fork_ev, st.cap));
  for (int t = 0; t < kTiles; ++t) {
    CUDA_CHECK(cudaStreamWaitEvent(st.tiles[t], st.fork_ev, 0));
    const dim3 block(32, 8);
    const dim3 grid((g.nx + 31) / 32, (rows + 7) / 8);
    interior<<<grid, block, 0, st.tiles[t]>>>(g.d_in + t * rows * g.nx, g.d_out + t * rows * g.nx, g.nx, rows, coef);
    CUDA_CHECK(cudaEventRecord(st.tile_done[t], st.tiles[t]));
  }
  for (int t = 0; t < kTiles; ++t) {
    CUDA_CHECK(cudaStreamWaitEvent(st.cap, st.tile_done[t], 0));
  }
  CUDA_CHECK(cudaStreamEndCapture(st.cap, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// Earlier version of the overlapped step, kept behind a flag.
static cudaGraphExec_t capture_legacy_step(Grid& g, Streams& st, float coef) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  const int rows = g.ny / kTiles;
  CUDA_CHECK(cudaEventRecord(st.upload_done, st.upload));
  CUDA_CHECK(cudaStreamWaitEvent(st.cap, st.upload_done, cudaEventWaitDefault));
  CUDA_CHECK(cudaStreamBeginCapture(st.cap, cudaStreamCaptureModeGlobal));
  CUDA_CHECK(cudaStreamWaitEvent(st.cap, st.upload_done, 0)); // expect: cudagraph-unjoined-fork
  CUDA_CHECK(cudaStreamWaitEvent(st.cap, st.upload_done, cudaEventWaitExternal));
  fork_into(st.halo, st.fork_ev, st.cap); // expect: cudagraph-unjoined-fork
  pack_halo<<<(g.nx + 255) / 256, 256, 256 * sizeof(float)>>>(g.d_in, g.d_halo, g.nx, g.ny); // expect: cudagraph-legacy-stream
  pack_halo<<<(g.nx + 255) / 256, 256, 256 * sizeof(float), st.halo>>>(g.d_in, g.d_halo, g.nx, g.ny);
  enqueue_interior(g, st.cap, coef);
  CUDA_CHECK(cudaEventRecord(st.fork_ev, st.cap));
  for (int t = 0; t < kTiles; ++t) {
    CUDA_CHECK(cudaStreamWaitEvent(st.tiles[t], st.fork_ev, 0)); // expect: cudagraph-unjoined-fork
    apply_boundary<<<(g.nx + 255) / 256, 256, 0, st.tiles[t]>>>(g.d_out + t * rows * g.nx, g.d_halo, g.nx, rows);
  }
  apply_boundary<<<(g.nx + 255) / 256, 256, 0, 0>>>(g.d_out, g.d_halo, g.nx, g.ny); // expect: cudagraph-legacy-stream
  CUDA_CHECK(cudaFree(g.d_halo)); // expect: cudagraph-device-alloc
  CUDA_CHECK(cudaMallocAsync(&g.d_halo, 2 * sizeof(float) * g.nx, st.cap));
  CUDA_CHECK(cudaStreamEndCapture(st.cap, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

int main(int argc, char** argv) {
  const bool use_legacy = argc > 1;
  Grid g;
  CUDA_CHECK(cudaMalloc(&g.d_in, g.cells() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&g.d_out, g.cells() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&g.d_halo, 2 * sizeof(float) * g.nx));
  Streams st;
  for (cudaStream_t* s : {&st.cap, &st.halo, &st.upload}) {
    CUDA_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
  }
  for (int t = 0; t < kTiles; ++t) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&st.tiles[t], cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&st.tile_done[t], cudaEventDisableTiming));
  }
  for (cudaEvent_t* e : {&st.fork_ev, &st.join_ev, &st.upload_done, &st.hop1, &st.hop2}) {
    CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  }

  const float coef = 0.2f;
  cudaGraphExec_t step = use_legacy ? capture_legacy_step(g, st, coef) : capture_overlapped(g, st, coef);
  cudaGraphExec_t chained = capture_chained(g, st, coef);
  cudaGraphExec_t tiled = capture_tiled(g, st, coef);

  // Ping-pong without recapture: the graphs keep reading the original buffers.
  for (int it = 0; it < 100; ++it) {
    float* next_in = g.d_out;
    g.d_out = g.d_in; // expect: cudagraph-frozen-host-state
    g.d_in = next_in; // expect: cudagraph-frozen-host-state
    CUDA_CHECK(cudaGraphLaunch(step, st.cap));
  }
  CUDA_CHECK(cudaGraphLaunch(chained, st.cap));
  CUDA_CHECK(cudaGraphLaunch(tiled, st.cap));
  CUDA_CHECK(cudaStreamSynchronize(st.cap));

  CUDA_CHECK(cudaGraphExecDestroy(tiled));
  CUDA_CHECK(cudaGraphExecDestroy(chained));
  CUDA_CHECK(cudaGraphExecDestroy(step));
  CUDA_CHECK(cudaFree(g.d_halo));
  CUDA_CHECK(cudaFree(g.d_out));
  CUDA_CHECK(cudaFree(g.d_in));
  return 0;
}
