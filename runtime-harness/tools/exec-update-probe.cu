//===--- exec-update-probe.cu - what a failed graph update leaves behind --===//
//
// An executable graph updated from a graph of another topology: what does
// cudaGraphExecUpdate (and the driver's cuGraphExecUpdate) return, what does
// the runtime's last error hold afterwards, and does it survive later calls
// that succeed (an instantiation, a launch, a synchronize) until it is read?
// argv[1] selects the case:
//   same        update from a graph of the same topology (the control)
//   topology    update from a graph with one more kernel node
//   cleared     topology, then (void)cudaGetLastError() before the later check
//   peek        topology, then cudaPeekAtLastError() twice
//   driver      topology through cuGraphExecUpdate (driver API)
// Prints one line per observation; exec-update-probe.sh runs every case.
//
//===----------------------------------------------------------------------===//
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <string>

__global__ void addOne(float *p) { p[threadIdx.x] += 1.f; }

static cudaGraph_t captureKernels(cudaStream_t s, float *d, int kernels) {
  cudaGraph_t g = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < kernels; ++i)
    addOne<<<1, 32, 0, s>>>(d);
  cudaStreamEndCapture(s, &g);
  return g;
}

static const char *name(cudaError_t e) { return cudaGetErrorName(e); }

int main(int argc, char **argv) {
  std::string what = argc > 1 ? argv[1] : "topology";
  float *d = nullptr;
  cudaMalloc(&d, 4096);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t first = captureKernels(s, d, 1);
  cudaGraphExec_t exec = nullptr;
  cudaGraphInstantiate(&exec, first, 0);
  std::printf("%s: last error before update: %s\n", what.c_str(), name(cudaGetLastError()));

  cudaGraph_t next = captureKernels(s, d, what == "same" ? 1 : 2);
  if (what == "driver") {
    CUgraphExecUpdateResultInfo info{};
    CUresult r = cuGraphExecUpdate((CUgraphExec)exec, (CUgraph)next, &info);
    const char *rn = nullptr;
    cuGetErrorName(r, &rn);
    std::printf("%s: cuGraphExecUpdate returned %s (%d), result %d\n", what.c_str(),
                rn ? rn : "?", (int)r, (int)info.result);
  } else {
    cudaGraphExecUpdateResultInfo info{};
    cudaError_t r = cudaGraphExecUpdate(exec, next, &info);
    std::printf("%s: cudaGraphExecUpdate returned %s (%d), result %d\n", what.c_str(),
                name(r), (int)r, (int)info.result);
  }
  if (what == "cleared")
    (void)cudaGetLastError();
  if (what == "peek") {
    std::printf("%s: peek 1: %s\n", what.c_str(), name(cudaPeekAtLastError()));
    std::printf("%s: peek 2: %s\n", what.c_str(), name(cudaPeekAtLastError()));
  }
  // The usual fallback: destroy and instantiate again, launch, synchronize,
  // each checked by its own return value.
  cudaError_t destroyErr = cudaGraphExecDestroy(exec);
  cudaError_t instErr = cudaGraphInstantiate(&exec, next, 0);
  cudaError_t launchErr = cudaGraphLaunch(exec, s);
  addOne<<<1, 32, 0, s>>>(d);
  cudaError_t syncErr = cudaStreamSynchronize(s);
  std::printf("%s: fallback destroy %s instantiate %s launch %s sync %s\n", what.c_str(),
              name(destroyErr), name(instErr), name(launchErr), name(syncErr));
  // The check a launch macro makes after the kernels.
  std::printf("%s: later cudaGetLastError: %s\n", what.c_str(), name(cudaGetLastError()));
  std::printf("%s: second cudaGetLastError: %s\n", what.c_str(), name(cudaGetLastError()));
  return 0;
}
