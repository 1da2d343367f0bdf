//===--- eager_launch.cu - many small eager launches ----------------------===//
//
// cudagraph-bench-launch [LAUNCHES]
//
// Times LAUNCHES eager kernel launches and async copies on one stream, the
// calls a CUPTI subscriber would see one by one. Prints one JSON line.
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.cuh"

int main(int Argc, char **Argv) {
  int Launches = Argc > 1 ? std::atoi(Argv[1]) : 100000;
  const int N = 1 << 12;
  float *X, *Y;
  BENCH_CHECK(cudaMalloc(&X, N * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&Y, N * sizeof(float)));
  BENCH_CHECK(cudaMemset(X, 0, N * sizeof(float)));
  BENCH_CHECK(cudaMemset(Y, 0, N * sizeof(float)));
  cudaStream_t S;
  BENCH_CHECK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));

  for (int I = 0; I < 1000; ++I)
    benchAxpy<<<(N + 255) / 256, 256, 0, S>>>(Y, X, 0.5f, N);
  BENCH_CHECK(cudaStreamSynchronize(S));
  double Seconds = 1e30;
  for (int Round = 0; Round < 3; ++Round) {
    auto Start = std::chrono::steady_clock::now();
    for (int I = 0; I < Launches; ++I) {
      benchAxpy<<<(N + 255) / 256, 256, 0, S>>>(Y, X, 0.5f, N);
      if (I % 64 == 0)
        BENCH_CHECK(cudaMemcpyAsync(X, Y, sizeof(float),
                                    cudaMemcpyDeviceToDevice, S));
    }
    BENCH_CHECK(cudaStreamSynchronize(S));
    Seconds = std::min(Seconds, secondsSince(Start));
  }
  BENCH_CHECK(cudaGetLastError());
  std::printf("{\"bench\":\"launch\",\"launches\":%d,\"seconds\":%.6f}\n",
              Launches, Seconds);
  return 0;
}
