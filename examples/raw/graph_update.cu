// A relaxation solver that re-captures its step every iteration (the number
// of sweeps adapts to the residual, so the graph's topology changes now and
// then) and applies the new graph to one executable with
// cudaGraphExecUpdate. An update from a graph of another topology fails with
// cudaErrorGraphExecUpdateFailure (910); the code must then instantiate the
// new graph. Two of the three ways of writing that below go wrong.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t status_ = (call);                                              \
    if (status_ != cudaSuccess) {                                              \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                   cudaGetErrorString(status_));                               \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void relax(float *x, const float *b, int n, float omega) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    x[i] += omega * (0.5f * (x[i - 1] + x[i + 1] + b[i]) - x[i]);
}

__global__ void residual(const float *x, const float *b, float *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    r[i] = b[i] + x[i - 1] + x[i + 1] - 2.f * x[i];
}

struct Problem {
  float *x = nullptr, *b = nullptr, *r = nullptr;
  int n = 0;
};

// Captures `sweeps` relaxations and one residual into a new graph.
static cudaGraph_t capture_step(cudaStream_t s, const Problem &p, int sweeps) {
  cudaGraph_t graph = nullptr;
  unsigned blocks = (p.n + 255) / 256;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < sweeps; ++i)
    relax<<<blocks, 256, 0, s>>>(p.x, p.b, p.n, 0.8f);
  residual<<<blocks, 256, 0, s>>>(p.x, p.b, p.r, p.n);
  CHECK(cudaStreamEndCapture(s, &graph));
  return graph;
}

// Wrong: CHECK exits when the update fails, so the re-instantiation below it
// is dead code and the solver stops the first time the sweep count changes.
static void refresh_checked(cudaGraphExec_t &exec, cudaGraph_t graph) {
  cudaGraphExecUpdateResultInfo info;
  CHECK(cudaGraphExecUpdate(exec, graph, &info));
  if (info.result != cudaGraphExecUpdateSuccess) {
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
  }
}

// Wrong: the failure is handled, but 910 stays the thread's last error, so
// the launch check below reports it as if the launch had failed.
static void refresh_and_launch(cudaGraphExec_t &exec, cudaGraph_t graph,
                               cudaStream_t s) {
  if (cudaGraphExecUpdate(exec, graph, nullptr) != cudaSuccess) {
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
  }
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaGetLastError());
}

// Right: compare the status with the update failure, clear the last error,
// then instantiate the new graph.
static void refresh(cudaGraphExec_t &exec, cudaGraph_t graph) {
  cudaGraphExecUpdateResultInfo info;
  cudaError_t status = cudaGraphExecUpdate(exec, graph, &info);
  if (status == cudaErrorGraphExecUpdateFailure) {
    (void)cudaGetLastError();
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
  } else {
    CHECK(status);
  }
}

int main() {
  Problem p;
  p.n = 1 << 16;
  CHECK(cudaMalloc(&p.x, p.n * sizeof(float)));
  CHECK(cudaMalloc(&p.b, p.n * sizeof(float)));
  CHECK(cudaMalloc(&p.r, p.n * sizeof(float)));
  CHECK(cudaMemset(p.x, 0, p.n * sizeof(float)));
  CHECK(cudaMemset(p.b, 0, p.n * sizeof(float)));

  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph = capture_step(s, p, 4);
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphDestroy(graph));

  for (int iter = 0; iter < 30; ++iter) {
    int sweeps = 4 + iter / 10; // more sweeps as the solve goes on
    graph = capture_step(s, p, sweeps);
    switch (iter % 3) {
    case 0:
      refresh_checked(exec, graph);
      CHECK(cudaGraphLaunch(exec, s));
      break;
    case 1:
      refresh(exec, graph);
      CHECK(cudaGraphLaunch(exec, s));
      break;
    default:
      refresh_and_launch(exec, graph, s);
    }
    CHECK(cudaGraphDestroy(graph));
  }
  CHECK(cudaStreamSynchronize(s));
  std::printf("done\n");
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(p.x));
  CHECK(cudaFree(p.b));
  CHECK(cudaFree(p.r));
  return 0;
}
