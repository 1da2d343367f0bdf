// multi_gpu_nccl: one process, one thread per GPU, each capturing its own
// graph; with NCCL, an all-reduce inside the captured step. Needs two or
// more GPUs.
//
//   multi_gpu_nccl MODE
//
//   capture-each        each GPU captures and replays its own step (global
//                       mode, all captures open at once)
//   allreduce           each GPU captures step, all-reduce, step (global
//                       mode) and replays it; the result is checked against
//                       the host's arithmetic
//   allreduce-watchdog  as allreduce, while a background thread queries an
//                       event during the captures (global mode: the query
//                       fails with 900 and invalidates them)
//   allreduce-watchdog-local
//                       the same with thread-local captures: nothing fails
//
// Prints "checksum NAME HEX" for every replayed result and "allreduce
// correct"/"allreduce WRONG" after checking the all-reduced values.
#include "ExampleSupport.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int N = 1 << 14;

__global__ void fillRank(float *Data, int Rank, int Count) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < Count)
    Data[I] = static_cast<float>(Rank + 1) + static_cast<float>(I % 7);
}

__global__ void twice(float *Data, int Count) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < Count)
    Data[I] = Data[I] * 2.0f;
}

void check(cudaError_t E, const char *What) {
  if (E != cudaSuccess) {
    std::printf("%s: %s\n", What, cudaGetErrorName(E));
    std::exit(2);
  }
}

void checkNccl(ncclResult_t R, const char *What) {
  if (R != ncclSuccess) {
    std::printf("%s: %s\n", What, ncclGetErrorString(R));
    std::exit(2);
  }
}

uint64_t checksum(const std::vector<float> &Host) {
  return example::fnv1a(Host.data(), Host.size() * sizeof(float));
}

struct Rank {
  int Device = 0;
  float *Data = nullptr;
  cudaStream_t Stream = nullptr;
  cudaEvent_t Event = nullptr;
  ncclComm_t Comm = nullptr;
  cudaGraphExec_t Exec = nullptr;
  cudaError_t End = cudaSuccess;
};

void captureRank(Rank &R, int RankId, bool AllReduce,
                 cudaStreamCaptureMode Mode, example::Gate &Begun,
                 example::Gate &Queried, example::Gate &Ended) {
  check(cudaSetDevice(R.Device), "cudaSetDevice");
  check(cudaStreamBeginCapture(R.Stream, Mode), "cudaStreamBeginCapture");
  twice<<<(N + 255) / 256, 256, 0, R.Stream>>>(R.Data, N);
  if (AllReduce) {
    ncclResult_t Reduce =
        ncclAllReduce(R.Data, R.Data, N, ncclFloat, ncclSum, R.Comm, R.Stream);
    if (Reduce != ncclSuccess)
      std::printf("rank %d: ncclAllReduce in capture: %s\n", RankId,
                  ncclGetErrorString(Reduce));
  }
  twice<<<(N + 255) / 256, 256, 0, R.Stream>>>(R.Data, N);
  Begun.arriveAndWait();
  Queried.arriveAndWait();
  cudaGraph_t Graph = nullptr;
  R.End = cudaStreamEndCapture(R.Stream, &Graph);
  // Instantiating while another thread's global-mode capture is open fails
  // with 900 (measured): every rank ends before any instantiates.
  Ended.arriveAndWait();
  if (R.End == cudaSuccess && Graph)
    check(cudaGraphInstantiate(&R.Exec, Graph, 0), "cudaGraphInstantiate");
  if (Graph)
    cudaGraphDestroy(Graph);
}

int run(const std::string &Mode) {
  int Devices = 0;
  check(cudaGetDeviceCount(&Devices), "cudaGetDeviceCount");
  if (Devices < 2) {
    std::printf("needs two GPUs, found %d\n", Devices);
    return 77;
  }
  Devices = 2;
  bool AllReduce = Mode != "capture-each";
  bool Watchdog = Mode.rfind("allreduce-watchdog", 0) == 0;
  cudaStreamCaptureMode CaptureMode = Mode == "allreduce-watchdog-local"
                                          ? cudaStreamCaptureModeThreadLocal
                                          : cudaStreamCaptureModeGlobal;
  std::vector<Rank> Ranks(Devices);
  std::vector<int> DeviceList(Devices);
  for (int I = 0; I < Devices; ++I) {
    Rank &R = Ranks[I];
    R.Device = DeviceList[I] = I;
    check(cudaSetDevice(I), "cudaSetDevice");
    check(cudaMalloc(&R.Data, N * sizeof(float)), "cudaMalloc");
    check(cudaStreamCreateWithFlags(&R.Stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
    check(cudaEventCreate(&R.Event), "cudaEventCreate");
    check(cudaEventRecord(R.Event, R.Stream), "cudaEventRecord");
  }
  if (AllReduce) {
    std::vector<ncclComm_t> Comms(Devices);
    checkNccl(ncclCommInitAll(Comms.data(), Devices, DeviceList.data()),
              "ncclCommInitAll");
    for (int I = 0; I < Devices; ++I)
      Ranks[I].Comm = Comms[I];
  }
  auto Reset = [&] {
    for (int I = 0; I < Devices; ++I) {
      check(cudaSetDevice(I), "cudaSetDevice");
      fillRank<<<(N + 255) / 256, 256, 0, Ranks[I].Stream>>>(Ranks[I].Data, I,
                                                             N);
      check(cudaStreamSynchronize(Ranks[I].Stream), "cudaStreamSynchronize");
    }
  };
  Reset();

  // Ranks that run NCCL need all their captures open together: the
  // all-reduce inside them is one collective.
  example::Gate Begun(Devices + (Watchdog ? 1 : 0));
  example::Gate Queried(Devices + (Watchdog ? 1 : 0));
  example::Gate Ended(Devices);
  cudaError_t Query = cudaSuccess;
  if (AllReduce) {
    // NCCL connects its peers on the first collective (measured: it enables
    // peer access then, which fails with 900 inside a capture): one eager
    // all-reduce first, as a warm-up iteration does.
    checkNccl(ncclGroupStart(), "ncclGroupStart");
    for (int I = 0; I < Devices; ++I) {
      check(cudaSetDevice(I), "cudaSetDevice");
      checkNccl(ncclAllReduce(Ranks[I].Data, Ranks[I].Data, N, ncclFloat,
                              ncclSum, Ranks[I].Comm, Ranks[I].Stream),
                "ncclAllReduce (warm-up)");
    }
    checkNccl(ncclGroupEnd(), "ncclGroupEnd");
    Reset();
  }
  std::vector<std::thread> Threads;
  for (int I = 0; I < Devices; ++I)
    Threads.emplace_back([&, I] {
      captureRank(Ranks[I], I, AllReduce, CaptureMode, Begun, Queried, Ended);
    });
  if (Watchdog)
    Threads.emplace_back([&] {
      Begun.arriveAndWait();
      check(cudaSetDevice(0), "cudaSetDevice");
      Query = cudaEventQuery(Ranks[0].Event);
      Queried.arriveAndWait();
    });
  for (std::thread &T : Threads)
    T.join();
  if (Watchdog)
    std::printf("cudaEventQuery in the watchdog: %s\n",
                cudaGetErrorName(Query));
  cudaGetLastError();

  // Replay once from the initial values and check the arithmetic.
  Reset();
  bool AllCaptured = true;
  for (int I = 0; I < Devices; ++I) {
    std::printf("rank %d end capture: %s\n", I, cudaGetErrorName(Ranks[I].End));
    AllCaptured = AllCaptured && Ranks[I].Exec;
  }
  if (!AllCaptured)
    return 0;
  // Graph launches return at once, so one thread can start every rank's
  // part of the collective.
  for (int I = 0; I < Devices; ++I) {
    check(cudaSetDevice(I), "cudaSetDevice");
    check(cudaGraphLaunch(Ranks[I].Exec, Ranks[I].Stream), "cudaGraphLaunch");
  }
  bool Correct = true;
  for (int I = 0; I < Devices; ++I) {
    check(cudaSetDevice(I), "cudaSetDevice");
    check(cudaStreamSynchronize(Ranks[I].Stream), "cudaStreamSynchronize");
    std::vector<float> Host(N);
    check(cudaMemcpy(Host.data(), Ranks[I].Data, N * sizeof(float),
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy");
    for (int J = 0; J < N && Correct; ++J) {
      float Expected = 0;
      if (AllReduce)
        for (int K = 0; K < Devices; ++K)
          Expected +=
              4.0f * (static_cast<float>(K + 1) + static_cast<float>(J % 7));
      else
        Expected =
            4.0f * (static_cast<float>(I + 1) + static_cast<float>(J % 7));
      Correct = std::fabs(Host[J] - Expected) < 1e-3f;
    }
    std::printf("checksum %s-rank%d %016llx\n", Mode.c_str(), I,
                static_cast<unsigned long long>(checksum(Host)));
  }
  std::printf("%s %s\n", AllReduce ? "allreduce" : "per-gpu",
              Correct ? "correct" : "WRONG");
  // Graphs holding NCCL work go before their communicators (destroying a
  // communicator a live executable uses hangs).
  for (Rank &R : Ranks) {
    check(cudaSetDevice(R.Device), "cudaSetDevice");
    if (R.Exec)
      check(cudaGraphExecDestroy(R.Exec), "cudaGraphExecDestroy");
    R.Exec = nullptr;
  }
  for (Rank &R : Ranks)
    if (R.Comm)
      ncclCommDestroy(R.Comm);
  return Correct ? 0 : 1;
}

} // namespace

int main(int Argc, char **Argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string Mode = Argc > 1 ? Argv[1] : "";
  if (Mode == "capture-each" || Mode == "allreduce" ||
      Mode == "allreduce-watchdog" || Mode == "allreduce-watchdog-local")
    return run(Mode);
  std::fprintf(stderr, "usage: multi_gpu_nccl capture-each|allreduce|"
                       "allreduce-watchdog|allreduce-watchdog-local\n");
  return 2;
}
