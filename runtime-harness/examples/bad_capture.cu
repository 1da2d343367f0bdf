// bad_capture: a CUDA program that breaks its own graph capture, to show
// what the harness reports. Run it under the harness:
//
//   cudagraph-run -o report.jsonl -- bad_capture [sync|escape|query|crash|clean]
//
// "sync" synchronizes the device inside the capture: the harness names
// cudaDeviceSynchronize and the line below as the root cause, and the 901
// that end-capture returns as its echo. "escape" launches a kernel on the
// legacy stream inside the capture: no error, but the harness reports the
// launch as work that escaped the graph. "crash" aborts right after the
// failing call: the report written so far survives.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void scale(float *Data, float Factor, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Data[I] *= Factor;
}

static const char *name(cudaError_t E) { return cudaGetErrorName(E); }

int main(int Argc, char **Argv) {
  const char *Mode = Argc > 1 ? Argv[1] : "sync";
  const int N = 1024;
  float *Data = nullptr;
  cudaMalloc(&Data, N * sizeof(float));
  cudaMemset(Data, 0, N * sizeof(float));
  cudaStream_t Stream;
  cudaStreamCreateWithFlags(&Stream, cudaStreamNonBlocking);
  cudaEvent_t Event;
  cudaEventCreate(&Event);
  cudaDeviceSynchronize();

  cudaGraph_t Graph = nullptr;
  cudaStreamBeginCapture(Stream, cudaStreamCaptureModeGlobal);
  scale<<<(N + 255) / 256, 256, 0, Stream>>>(Data, 2.0f, N);
  if (std::strcmp(Mode, "sync") == 0) {
    cudaError_t E = cudaDeviceSynchronize();
    std::printf("cudaDeviceSynchronize in capture: %s\n", name(E));
  } else if (std::strcmp(Mode, "escape") == 0) {
    scale<<<(N + 255) / 256, 256>>>(Data, 3.0f, N);
  } else if (std::strcmp(Mode, "crash") == 0) {
    cudaDeviceSynchronize();
    std::abort();
  } else if (std::strcmp(Mode, "query") == 0) {
    cudaError_t E = cudaEventQuery(Event);
    std::printf("cudaEventQuery in capture: %s\n", name(E));
  }
  cudaError_t End = cudaStreamEndCapture(Stream, &Graph);
  std::printf("cudaStreamEndCapture: %s\n", name(End));
  cudaGetLastError();
  if (Graph)
    cudaGraphDestroy(Graph);
  cudaFree(Data);
  return 0;
}
