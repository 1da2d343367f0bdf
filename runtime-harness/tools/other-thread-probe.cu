//===--- other-thread-probe.cu - calls on a second thread during capture --===//
//
// Which calls does a capture open on one thread forbid on another? Thread A
// begins a capture (mode from argv[2]: global, thread, relaxed) on its own
// non-blocking stream and waits; thread B makes one call (argv[1]) on other
// streams; A then ends the capture (with argv[3] "same", A makes the call
// itself while its capture is open, on other streams). Prints B's result and A's end-capture
// result. Run each call in its own process (a failed capture can leave the
// context unusable): other-thread-probe.sh does. The catalog's
// CUDAGRAPH_HAZARD_OTHER_THREAD entries rest on its output.
//
//===----------------------------------------------------------------------===//
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

__global__ void k(float *p) { p[threadIdx.x] += 1.f; }

int main(int argc, char **argv) {
  std::string op = argv[1];
  const char *mode = argc > 2 ? argv[2] : "global";
  cudaStreamCaptureMode M = !strcmp(mode, "global") ? cudaStreamCaptureModeGlobal
                            : !strcmp(mode, "thread") ? cudaStreamCaptureModeThreadLocal
                                                      : cudaStreamCaptureModeRelaxed;
  cudaSetDevice(0);
  float *d = nullptr, *h = nullptr, *hp = nullptr;
  cudaMalloc(&d, 1024 * 4);
  h = new float[1024]();
  cudaMallocHost(&hp, 4096);
  cudaStream_t s1, s2b, s2n, s3;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreate(&s2b);
  cudaStreamCreateWithFlags(&s2n, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking);
  cudaGraph_t g0; cudaGraphExec_t e0;
  cudaStreamBeginCapture(s3, cudaStreamCaptureModeThreadLocal);
  k<<<1, 32, 0, s3>>>(d);
  cudaStreamEndCapture(s3, &g0);
  cudaGraphInstantiate(&e0, g0, 0);
  cudaEvent_t ev; cudaEventCreate(&ev);
  k<<<1, 32, 0, s2b>>>(d);
  cudaEventRecord(ev, s2b);
  cublasHandle_t hb = nullptr;
  if (op == "cublasDestroy") cublasCreate(&hb);
  cudaDeviceSynchronize();
  std::mutex mu; std::condition_variable cv; int phase = 0;
  cudaError_t beginErr, endErr, opErr = cudaSuccess; int opInt = 0;
  cudaGraph_t g = nullptr;
  cudaMemPool_t pool = nullptr;
  cudaDeviceGetDefaultMemPool(&pool, 0);
  void *pa = nullptr;
  cudaMallocAsync(&pa, 4096, s2n);
  cudaStreamSynchronize(s2n);
  auto runOp = [&] {
    void *p = nullptr;
    if (op == "cudaStreamSynchronize-blocking") { k<<<1,32,0,s2b>>>(d); opErr = cudaStreamSynchronize(s2b); }
    else if (op == "cudaStreamSynchronize-nonblocking") { k<<<1,32,0,s2n>>>(d); opErr = cudaStreamSynchronize(s2n); }
    else if (op == "cudaStreamQuery") opErr = cudaStreamQuery(s2n);
    else if (op == "cudaGraphLaunch") opErr = cudaGraphLaunch(e0, s2n);
    else if (op == "cudaGraphLaunch-blocking") opErr = cudaGraphLaunch(e0, s2b);
    else if (op == "cudaGraphExecDestroy") opErr = cudaGraphExecDestroy(e0);
    else if (op == "cudaGraphDestroy") opErr = cudaGraphDestroy(g0);
    else if (op == "cudaGraphInstantiate") { cudaGraphExec_t e1; opErr = cudaGraphInstantiate(&e1, g0, 0); }
    else if (op == "cudaDeviceSynchronize") opErr = cudaDeviceSynchronize();
    else if (op == "cudaEventSynchronize") opErr = cudaEventSynchronize(ev);
    else if (op == "cudaEventQuery") opErr = cudaEventQuery(ev);
    else if (op == "cudaMalloc") opErr = cudaMalloc(&p, 4096);
    else if (op == "cudaFree") { opErr = cudaFree(d); }
    else if (op == "cudaMallocHost") opErr = cudaMallocHost(&p, 4096);
    else if (op == "cudaFreeHost") opErr = cudaFreeHost(hp);
    else if (op == "cudaMemcpy") opErr = cudaMemcpy(d, h, 4096, cudaMemcpyHostToDevice);
    else if (op == "cudaMemcpyD2H") opErr = cudaMemcpy(h, d, 4096, cudaMemcpyDeviceToHost);
    else if (op == "cudaMemset") opErr = cudaMemset(d, 0, 4096);
    else if (op == "cudaMemcpyAsync-nonblocking") opErr = cudaMemcpyAsync(d, hp, 4096, cudaMemcpyHostToDevice, s2n);
    else if (op == "cudaMemcpyAsync-blocking") opErr = cudaMemcpyAsync(d, hp, 4096, cudaMemcpyHostToDevice, s2b);
    else if (op == "kernel-blocking") { k<<<1,32,0,s2b>>>(d); opErr = cudaGetLastError(); }
    else if (op == "kernel-legacy") { k<<<1,32>>>(d); opErr = cudaGetLastError(); }
    else if (op == "cudaStreamCreate") { cudaStream_t x; opErr = cudaStreamCreate(&x); }
    else if (op == "cudaStreamDestroy") opErr = cudaStreamDestroy(s2n);
    else if (op == "cudaEventCreate") { cudaEvent_t x; opErr = cudaEventCreate(&x); }
    else if (op == "cudaStreamAddCallback") opErr = cudaStreamAddCallback(s2n, [](cudaStream_t, cudaError_t, void *) {}, nullptr, 0);
    else if (op == "cudaLaunchHostFunc") opErr = cudaLaunchHostFunc(s2n, [](void *) {}, nullptr);
    else if (op == "cudaDeviceSetLimit") opErr = cudaDeviceSetLimit(cudaLimitStackSize, 4096);
    else if (op == "cublasCreate") { cublasHandle_t x; opInt = cublasCreate(&x); }
    else if (op == "cublasDestroy") { opInt = cublasDestroy(hb); }
    else if (op == "cudaMallocAsync") opErr = cudaMallocAsync(&p, 4096, s2n);
    else if (op == "cudaFreeAsync") opErr = cudaFreeAsync(pa, s2n);
    else if (op == "cudaMallocAsync-legacy") opErr = cudaMallocAsync(&p, 4096, 0);
    else if (op == "cudaMallocFromPoolAsync") opErr = cudaMallocFromPoolAsync(&p, 4096, pool, s2n);
    else if (op == "cudaMemPoolTrimTo") opErr = cudaMemPoolTrimTo(pool, 0);
    else if (op == "cudaGraphUpload") opErr = cudaGraphUpload(e0, s2n);
    else if (op == "cudaGraphExecUpdate") { cudaGraphExecUpdateResultInfo info; opErr = cudaGraphExecUpdate(e0, g0, &info); }
    else if (op == "cudaStreamBeginCapture") { cudaGraph_t g2; opErr = cudaStreamBeginCapture(s2n, cudaStreamCaptureModeThreadLocal); if (opErr == cudaSuccess) { k<<<1,32,0,s2n>>>(d); cudaError_t e2 = cudaStreamEndCapture(s2n, &g2); if (e2 != cudaSuccess) opErr = e2; } }
    else if (op == "cudaStreamGetCaptureInfo") { cudaStreamCaptureStatus st; opErr = cudaStreamGetCaptureInfo(s1, &st); }
    else if (op == "cudaEventRecord") opErr = cudaEventRecord(ev, s2n);
    else if (op == "cudaFuncGetAttributes") { cudaFuncAttributes a; opErr = cudaFuncGetAttributes(&a, k); }
    else if (op == "cudaMemGetInfo") { size_t f, t; opErr = cudaMemGetInfo(&f, &t); }
    else if (op == "none") {}
    else { std::printf("unknown op\n"); }
  };
  bool same = argc > 3 && !strcmp(argv[3], "same");
  std::thread B([&] {
    { std::unique_lock<std::mutex> l(mu); cv.wait(l, [&] { return phase == 1; }); }
    if (!same) runOp();
    { std::lock_guard<std::mutex> l(mu); phase = 2; } cv.notify_all();
  });
  std::thread A([&] {
    beginErr = cudaStreamBeginCapture(s1, M);
    k<<<1, 32, 0, s1>>>(d);
    { std::lock_guard<std::mutex> l(mu); phase = 1; } cv.notify_all();
    { std::unique_lock<std::mutex> l(mu); cv.wait(l, [&] { return phase == 2; }); }
    if (same) runOp();
    k<<<1, 32, 0, s1>>>(d);
    endErr = cudaStreamEndCapture(s1, &g);
  });
  A.join(); B.join();
  std::printf("%-36s %-7s %-5s op=%d(%s)%s end=%d begin=%d\n", op.c_str(), mode, same ? "same" : "other", (int)opErr, cudaGetErrorName(opErr),
              opInt ? (" cublas=" + std::to_string(opInt)).c_str() : "", (int)endErr, (int)beginErr);
  return 0;
}
