//===--- other-stream-probe.cu - work beside a capture on another stream --===//
//
// What do calls that name a stream that is not capturing do while another
// stream of the same thread captures? argv[1] names the call, argv[2] the
// capture mode (global, thread, relaxed). Prints the call's result and the
// end-capture result. other-stream-probe.sh runs every case, one process
// each.
//
//===----------------------------------------------------------------------===//
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <string>

__global__ void k(float *p) { p[threadIdx.x] += 1.f; }

int main(int argc, char **argv) {
  std::string use = argc > 1 ? argv[1] : "graph-launch";
  const char *mode = argc > 2 ? argv[2] : "global";
  cudaStreamCaptureMode M = !strcmp(mode, "global") ? cudaStreamCaptureModeGlobal
                            : !strcmp(mode, "thread") ? cudaStreamCaptureModeThreadLocal
                                                      : cudaStreamCaptureModeRelaxed;
  float *d = nullptr, *spare = nullptr;
  cudaMalloc(&d, 4096);
  cudaMalloc(&spare, 4096);
  cudaStream_t idle, capturing;
  cudaStreamCreateWithFlags(&idle, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&capturing, cudaStreamNonBlocking);
  // A graph made and instantiated before, launched on the idle stream.
  cudaGraph_t made = nullptr;
  cudaStreamBeginCapture(idle, cudaStreamCaptureModeGlobal);
  k<<<1, 32, 0, idle>>>(d);
  cudaStreamEndCapture(idle, &made);
  cudaGraphExec_t exec = nullptr;
  cudaGraphInstantiate(&exec, made, 0);
  cudaEvent_t ev;
  cudaEventCreate(&ev);
  cudaEventRecord(ev, idle);
  cudaDeviceSynchronize();

  cudaError_t beginErr = cudaStreamBeginCapture(capturing, M);
  k<<<1, 32, 0, capturing>>>(d);
  cudaError_t err = cudaSuccess;
  if (use == "graph-launch")
    err = cudaGraphLaunch(exec, idle);
  else if (use == "graph-exec-destroy")
    err = cudaGraphExecDestroy(exec);
  else if (use == "graph-instantiate") {
    cudaGraphExec_t again = nullptr;
    err = cudaGraphInstantiate(&again, made, 0);
  } else if (use == "stream-sync")
    err = cudaStreamSynchronize(idle);
  else if (use == "event-sync")
    err = cudaEventSynchronize(ev);
  else if (use == "free")
    err = cudaFree(spare);
  else if (use == "kernel")
    k<<<1, 32, 0, idle>>>(d), err = cudaGetLastError();
  cudaGraph_t g = nullptr;
  cudaError_t endErr = cudaStreamEndCapture(capturing, &g);
  std::printf("%-20s %-8s begin=%d call=%d (%s) end=%d (%s)\n", use.c_str(), mode,
              (int)beginErr, (int)err, cudaGetErrorName(err), (int)endErr,
              cudaGetErrorName(endErr));
  return 0;
}
