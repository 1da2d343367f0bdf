// cupti_holder: a program that takes the one CUPTI subscriber slot itself,
// as a profiler would, before CUDA starts. Under cudagraph-run the harness
// cannot subscribe: it says so (stderr and a "subscriber_conflict" report
// line) and the program runs on unharmed.
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>

static void CUPTIAPI ignore(void *, CUpti_CallbackDomain, CUpti_CallbackId,
                            const void *) {}

int main() {
  CUpti_SubscriberHandle Subscriber;
  CUptiResult R = cuptiSubscribe(&Subscriber, ignore, nullptr);
  std::printf("cupti_holder: cuptiSubscribe returned %d\n", static_cast<int>(R));
  cudaStream_t Stream;
  cudaStreamCreateWithFlags(&Stream, cudaStreamNonBlocking);
  cudaGraph_t Graph = nullptr;
  cudaStreamBeginCapture(Stream, cudaStreamCaptureModeGlobal);
  cudaError_t Sync = cudaDeviceSynchronize();
  cudaError_t End = cudaStreamEndCapture(Stream, &Graph);
  std::printf("cupti_holder: sync %s, end %s\n", cudaGetErrorName(Sync),
              cudaGetErrorName(End));
  return 0;
}
