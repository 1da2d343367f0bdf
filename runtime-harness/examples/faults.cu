// faults: programs that die, fork, exec or race while a capture is open, to
// show that the harness keeps its report and leaves the program's results
// alone. runtime-harness/tools/run-faults.py runs every mode with and
// without the harness and compares.
//
//   faults MODE
//
// Every mode that finishes prints "checksum NAME HEX" lines, computed from
// device results copied back after the capture, so runs with and without the
// harness can be compared bit for bit. stdout is line-buffered so that what
// was printed before a crash is the same in both runs.
//
//   clean               capture, instantiate, replay three times
//   segv, abort         an invalidating call, then the program dies of
//                       SIGSEGV or SIGABRT with the capture still open
//   exit-open           exit(0) while a capture is open
//   fork                fork() while a capture is open; the child exits,
//                       the parent ends its capture and replays it
//   exec                a capture broken by a synchronize, then exec() of
//                       this program in "clean" mode
//   threads-local       four threads capture at once, thread-local mode
//   threads-global      four threads capture at once, global mode; each
//                       instantiates its graph once all have ended
//   threads-global-instantiate
//                       the same, but thread 0 instantiates its graph while
//                       the others still capture: in global mode that call
//                       fails (900) and invalidates their captures
//   watchdog-global     a background thread queries an event while the
//                       main thread captures in global mode (the query
//                       fails and the capture is invalidated)
//   watchdog-local      the same in thread-local mode (nothing fails)
#include "ExampleSupport.h"

#include <cuda_runtime.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
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

constexpr int N = 1 << 16;

__global__ void affine(float *Data, float Scale, float Shift, int Count) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < Count)
    Data[I] = Data[I] * Scale + Shift + 0.001f * static_cast<float>(I % 97);
}

__global__ void fill(float *Data, float Value, int Count) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < Count)
    Data[I] = Value + static_cast<float>(I % 13);
}

void check(cudaError_t E, const char *What) {
  if (E != cudaSuccess) {
    std::printf("%s: %s\n", What, cudaGetErrorName(E));
    std::exit(2);
  }
}

void say(const char *What, cudaError_t E) {
  std::printf("%s: %s\n", What, cudaGetErrorName(E));
}

/// FNV-1a over the bytes of a device buffer.
void printChecksum(const std::string &Name, const float *Device) {
  std::vector<float> Host(N);
  check(cudaMemcpy(Host.data(), Device, N * sizeof(float),
                   cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  uint64_t Hash = example::fnv1a(Host.data(), Host.size() * sizeof(float));
  std::printf("checksum %s %016llx\n", Name.c_str(),
              static_cast<unsigned long long>(Hash));
}

void enqueueStep(float *Data, cudaStream_t Stream, float Scale) {
  affine<<<(N + 255) / 256, 256, 0, Stream>>>(Data, Scale, 0.5f, N);
  affine<<<(N + 255) / 256, 256, 0, Stream>>>(Data, 1.0f / Scale, -0.25f, N);
}

/// Buffers and a stream made before any capture.
struct Setup {
  float *Data = nullptr;
  cudaStream_t Stream = nullptr;
  cudaEvent_t Event = nullptr;
  Setup() {
    check(cudaMalloc(&Data, N * sizeof(float)), "cudaMalloc");
    fill<<<(N + 255) / 256, 256>>>(Data, 1.0f, N);
    check(cudaStreamCreateWithFlags(&Stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
    check(cudaEventCreate(&Event), "cudaEventCreate");
    check(cudaEventRecord(Event, Stream), "cudaEventRecord");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
};

/// Ends the capture on Stream, replays the graph Replays times and prints
/// the checksum of Data.
void finishAndReplay(const std::string &Name, cudaStream_t Stream, float *Data,
                     int Replays) {
  cudaGraph_t Graph = nullptr;
  cudaError_t End = cudaStreamEndCapture(Stream, &Graph);
  say(("end capture " + Name).c_str(), End);
  if (End != cudaSuccess || !Graph)
    return;
  cudaGraphExec_t Exec = nullptr;
  check(cudaGraphInstantiate(&Exec, Graph, 0), "cudaGraphInstantiate");
  for (int I = 0; I < Replays; ++I)
    check(cudaGraphLaunch(Exec, Stream), "cudaGraphLaunch");
  check(cudaStreamSynchronize(Stream), "cudaStreamSynchronize");
  printChecksum(Name, Data);
  cudaGraphExecDestroy(Exec);
  cudaGraphDestroy(Graph);
}

int runClean() {
  Setup S;
  check(cudaStreamBeginCapture(S.Stream, cudaStreamCaptureModeGlobal),
        "cudaStreamBeginCapture");
  enqueueStep(S.Data, S.Stream, 2.0f);
  finishAndReplay("clean", S.Stream, S.Data, 3);
  return 0;
}

/// Opens a capture and breaks it with a device synchronize (900), leaving
/// it open.
void openBrokenCapture(Setup &S) {
  check(cudaStreamBeginCapture(S.Stream, cudaStreamCaptureModeGlobal),
        "cudaStreamBeginCapture");
  enqueueStep(S.Data, S.Stream, 2.0f);
  say("cudaDeviceSynchronize in capture", cudaDeviceSynchronize());
}

int runSegv() {
  Setup S;
  printChecksum("before", S.Data);
  openBrokenCapture(S);
  volatile int *Nowhere = nullptr;
  *Nowhere = 1;
  return 0;
}

int runAbort() {
  Setup S;
  printChecksum("before", S.Data);
  openBrokenCapture(S);
  std::abort();
}

int runExitOpen() {
  Setup S;
  printChecksum("before", S.Data);
  check(cudaStreamBeginCapture(S.Stream, cudaStreamCaptureModeGlobal),
        "cudaStreamBeginCapture");
  enqueueStep(S.Data, S.Stream, 2.0f);
  std::exit(0);
}

int runFork() {
  Setup S;
  check(cudaStreamBeginCapture(S.Stream, cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
  enqueueStep(S.Data, S.Stream, 2.0f);
  std::fflush(stdout);
  pid_t Child = fork();
  if (Child == 0) {
    // CUDA is not usable after fork(); the child only reports and leaves.
    std::printf("child: exiting\n");
    std::exit(0);
  }
  int Status = 0;
  waitpid(Child, &Status, 0);
  std::printf("child status: %d\n",
              WIFEXITED(Status) ? WEXITSTATUS(Status) : -1);
  finishAndReplay("fork", S.Stream, S.Data, 3);
  return 0;
}

int runExec(const char *Self) {
  {
    Setup S;
    openBrokenCapture(S);
    cudaGraph_t Graph = nullptr;
    say("end capture broken", cudaStreamEndCapture(S.Stream, &Graph));
    cudaGetLastError();
  }
  std::fflush(stdout);
  execl(Self, Self, "clean", static_cast<char *>(nullptr));
  std::perror("execl");
  return 3;
}

int runThreads(cudaStreamCaptureMode Mode, const char *Tag,
               bool InstantiateEarly = false) {
  constexpr int Threads = 4;
  std::vector<float *> Data(Threads);
  std::vector<cudaStream_t> Streams(Threads);
  for (int T = 0; T < Threads; ++T) {
    check(cudaMalloc(&Data[T], N * sizeof(float)), "cudaMalloc");
    fill<<<(N + 255) / 256, 256>>>(Data[T], static_cast<float>(T), N);
    check(cudaStreamCreateWithFlags(&Streams[T], cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  example::Gate AllBegun(Threads), AllEnded(Threads), FirstInstantiated(1);
  std::vector<cudaGraphExec_t> Execs(Threads, nullptr);
  std::vector<cudaError_t> Ends(Threads, cudaSuccess);
  std::vector<cudaError_t> Instantiated(Threads, cudaSuccess);
  std::vector<std::thread> Workers;
  for (int T = 0; T < Threads; ++T)
    Workers.emplace_back([&, T] {
      check(cudaStreamBeginCapture(Streams[T], Mode), "cudaStreamBeginCapture");
      enqueueStep(Data[T], Streams[T], 1.5f + static_cast<float>(T));
      AllBegun.arriveAndWait();
      if (InstantiateEarly && T != 0)
        FirstInstantiated.wait();
      cudaGraph_t Graph = nullptr;
      Ends[T] = cudaStreamEndCapture(Streams[T], &Graph);
      // In global mode, instantiating while another thread captures is
      // itself an unsafe call: wait for every capture to end first.
      if (!InstantiateEarly)
        AllEnded.arriveAndWait();
      if (Ends[T] == cudaSuccess) {
        cudaError_t Made = cudaGraphInstantiate(&Execs[T], Graph, 0);
        if (Made != cudaSuccess) {
          Execs[T] = nullptr;
          Instantiated[T] = Made;
        }
      }
      if (InstantiateEarly && T == 0)
        FirstInstantiated.arriveAndWait();
      if (Graph)
        cudaGraphDestroy(Graph);
    });
  for (std::thread &W : Workers)
    W.join();
  for (int T = 0; T < Threads; ++T) {
    std::string Name = std::string(Tag) + "-" + std::to_string(T);
    say(("end capture " + Name).c_str(), Ends[T]);
    if (Instantiated[T] != cudaSuccess)
      say(("instantiate " + Name).c_str(), Instantiated[T]);
    if (!Execs[T])
      continue;
    for (int I = 0; I < 3; ++I)
      check(cudaGraphLaunch(Execs[T], Streams[T]), "cudaGraphLaunch");
    check(cudaStreamSynchronize(Streams[T]), "cudaStreamSynchronize");
    printChecksum(Name, Data[T]);
  }
  return 0;
}

/// A background thread that queries an event while the main thread
/// captures, as a communication library's watchdog does.
int runWatchdog(cudaStreamCaptureMode Mode, const char *Tag) {
  Setup S;
  std::mutex M;
  std::condition_variable Cv;
  int Phase = 0; // 1: capture open; 2: query done.
  cudaError_t Query = cudaSuccess;
  std::thread Watchdog([&] {
    std::unique_lock<std::mutex> Lock(M);
    Cv.wait(Lock, [&] { return Phase == 1; });
    Query = cudaEventQuery(S.Event);
    Phase = 2;
    Cv.notify_all();
  });
  check(cudaStreamBeginCapture(S.Stream, Mode), "cudaStreamBeginCapture");
  enqueueStep(S.Data, S.Stream, 2.0f);
  {
    std::unique_lock<std::mutex> Lock(M);
    Phase = 1;
    Cv.notify_all();
    Cv.wait(Lock, [&] { return Phase == 2; });
  }
  Watchdog.join();
  say("cudaEventQuery in the watchdog", Query);
  finishAndReplay(Tag, S.Stream, S.Data, 3);
  cudaGetLastError();
  return 0;
}

} // namespace

int main(int Argc, char **Argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string Mode = Argc > 1 ? Argv[1] : "";
  if (Mode == "clean")
    return runClean();
  if (Mode == "segv")
    return runSegv();
  if (Mode == "abort")
    return runAbort();
  if (Mode == "exit-open")
    return runExitOpen();
  if (Mode == "fork")
    return runFork();
  if (Mode == "exec")
    return runExec("/proc/self/exe");
  if (Mode == "threads-local")
    return runThreads(cudaStreamCaptureModeThreadLocal, "threads-local");
  if (Mode == "threads-global")
    return runThreads(cudaStreamCaptureModeGlobal, "threads-global");
  if (Mode == "threads-global-instantiate")
    return runThreads(cudaStreamCaptureModeGlobal, "threads-global-instantiate",
                      /*InstantiateEarly=*/true);
  if (Mode == "watchdog-global")
    return runWatchdog(cudaStreamCaptureModeGlobal, "watchdog-global");
  if (Mode == "watchdog-local")
    return runWatchdog(cudaStreamCaptureModeThreadLocal, "watchdog-local");
  std::fprintf(stderr,
               "usage: faults clean|segv|abort|exit-open|fork|exec|"
               "threads-local|threads-global|threads-global-instantiate|"
               "watchdog-global|"
               "watchdog-local\n");
  return 2;
}
