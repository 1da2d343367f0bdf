//===--- captured-event-probe.cu - events recorded inside a capture -------===//
//
// What does an event recorded on a capturing stream allow once the capture
// has ended? argv[1] names the use made eagerly after the end, argv[2] the
// capture mode (global, thread, relaxed), argv[3] how the event was
// recorded in the capture (plain, external) and whether it was recorded
// eagerly before the capture too (argv[4] "pre"). Prints the use's result
// and the end-capture result. captured-event-probe.sh runs every case, one
// process each.
//
//===----------------------------------------------------------------------===//
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <string>

__global__ void k(float *p) { p[threadIdx.x] += 1.f; }

int main(int argc, char **argv) {
  std::string use = argv[1];
  const char *mode = argc > 2 ? argv[2] : "global";
  bool external = argc > 3 && !strcmp(argv[3], "external");
  bool pre = argc > 4 && !strcmp(argv[4], "pre");
  cudaStreamCaptureMode M = !strcmp(mode, "global") ? cudaStreamCaptureModeGlobal
                            : !strcmp(mode, "thread") ? cudaStreamCaptureModeThreadLocal
                                                      : cudaStreamCaptureModeRelaxed;
  float *d = nullptr;
  cudaMalloc(&d, 4096);
  cudaStream_t s, other;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
  cudaEvent_t ev, start;
  cudaEventCreate(&ev);
  cudaEventCreate(&start);
  cudaEventRecord(start, other);
  if (pre) {
    k<<<1, 32, 0, s>>>(d);
    cudaEventRecord(ev, s);
  }
  cudaDeviceSynchronize();
  cudaGraph_t g = nullptr;
  cudaError_t beginErr = cudaStreamBeginCapture(s, M);
  k<<<1, 32, 0, s>>>(d);
  cudaError_t recErr = external ? cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal)
                                : cudaEventRecord(ev, s);
  k<<<1, 32, 0, s>>>(d);
  cudaError_t endErr = cudaStreamEndCapture(s, &g);
  cudaGraphExec_t e = nullptr;
  if (use.rfind("launch-", 0) == 0) {
    cudaGraphInstantiate(&e, g, 0);
    cudaGraphLaunch(e, s);
    cudaStreamSynchronize(s);
    use = use.substr(7);
  }
  cudaError_t useErr = cudaSuccess;
  float ms = 0;
  if (use == "sync") useErr = cudaEventSynchronize(ev);
  else if (use == "query") useErr = cudaEventQuery(ev);
  else if (use == "wait") { useErr = cudaStreamWaitEvent(other, ev, 0); if (useErr == cudaSuccess) useErr = cudaStreamSynchronize(other); }
  else if (use == "elapsed") useErr = cudaEventElapsedTime(&ms, start, ev);
  else if (use == "rerecord") { useErr = cudaEventRecord(ev, other); if (useErr == cudaSuccess) useErr = cudaEventSynchronize(ev); }
  else if (use == "none") {}
  else std::printf("unknown use\n");
  cudaError_t later = cudaDeviceSynchronize();
  std::printf("%-16s %-7s %-8s %-3s record=%d end=%d use=%d(%s) device=%d begin=%d\n", argv[1], mode,
              external ? "external" : "plain", pre ? "pre" : "-", (int)recErr, (int)endErr, (int)useErr,
              cudaGetErrorName(useErr), (int)later, (int)beginErr);
  return 0;
}
