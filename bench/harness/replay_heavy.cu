//===--- replay_heavy.cu - replay one captured graph many times -----------===//
//
// cudagraph-bench-replay [REPLAYS]
//
// Captures a graph of a few small kernels once, then times REPLAYS
// launches of it. Prints one JSON line with the seconds spent replaying.
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.cuh"

int main(int Argc, char **Argv) {
  int Replays = Argc > 1 ? std::atoi(Argv[1]) : 20000;
  const int N = 1 << 14, KernelsPerGraph = 8;
  float *X, *Y;
  BENCH_CHECK(cudaMalloc(&X, N * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&Y, N * sizeof(float)));
  BENCH_CHECK(cudaMemset(X, 0, N * sizeof(float)));
  BENCH_CHECK(cudaMemset(Y, 0, N * sizeof(float)));
  cudaStream_t S;
  BENCH_CHECK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));

  cudaGraph_t Graph;
  BENCH_CHECK(cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal));
  for (int K = 0; K < KernelsPerGraph; ++K)
    benchAxpy<<<(N + 255) / 256, 256, 0, S>>>(Y, X, 0.5f, N);
  BENCH_CHECK(cudaStreamEndCapture(S, &Graph));
  cudaGraphExec_t Exec;
  BENCH_CHECK(cudaGraphInstantiate(&Exec, Graph, 0));

  // Warm-up replays, then the timed ones.
  for (int I = 0; I < 100; ++I)
    BENCH_CHECK(cudaGraphLaunch(Exec, S));
  BENCH_CHECK(cudaStreamSynchronize(S));
  // The best of three loops: a transient (clock ramp, another process)
  // should not decide a ratio.
  double Seconds = 1e30;
  for (int Round = 0; Round < 3; ++Round) {
    auto Start = std::chrono::steady_clock::now();
    for (int I = 0; I < Replays; ++I)
      BENCH_CHECK(cudaGraphLaunch(Exec, S));
    BENCH_CHECK(cudaStreamSynchronize(S));
    Seconds = std::min(Seconds, secondsSince(Start));
  }
  std::printf("{\"bench\":\"replay\",\"replays\":%d,\"kernels_per_graph\":%d,"
              "\"seconds\":%.6f}\n",
              Replays, KernelsPerGraph, Seconds);
  return 0;
}
