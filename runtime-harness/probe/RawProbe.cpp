//===--- RawProbe.cpp - the probe for raw CUDA regions --------------------===//

#include "cudagraph/probe/RawProbe.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace cudagraph {
namespace probe {

float *RawRun::freshInput() {
  float *Buffer = nullptr;
  if (cudaMalloc(&Buffer, Count * sizeof(float)) != cudaSuccess)
    return Input;
  std::vector<float> Values(Count);
  for (int I = 0; I < Count; ++I)
    Values[I] = inputValue(I, Iteration);
  cudaMemcpy(Buffer, Values.data(), Count * sizeof(float),
             cudaMemcpyHostToDevice);
  return Buffer;
}

void *RawRun::deviceScratch() {
  void *P = nullptr;
  cudaMalloc(&P, 4096);
  return P;
}

void *RawRun::pinnedScratch() {
  void *P = nullptr;
  cudaMallocHost(&P, 4096);
  return P;
}

void *RawRun::hostScratch() { return std::calloc(1, 1 << 16); }

cudaError_t RawRun::check(cudaError_t E) {
  // "Not ready" answers a query; it is no failure.
  if (E == cudaErrorNotReady)
    return E;
  if (E != cudaSuccess && FirstError == cudaSuccess)
    FirstError = E;
  if (E >= 900 && E <= 908 && FirstCaptureError == cudaSuccess)
    FirstCaptureError = E;
  return E;
}

struct RawProbeAccess {
  static void reset(RawRun &R, cudaStream_t Stream, bool Capturing,
                    unsigned Iteration) {
    R.Stream = Stream;
    R.Capturing = Capturing;
    R.Iteration = Iteration;
    R.Graph = nullptr;
    R.FirstError = R.FirstCaptureError = R.EndResult = cudaSuccess;
    R.Ended = false;
  }
  static RawRun &setup(RawRun &R, int Count, cudaStream_t Other,
                       cudaStreamCaptureMode Mode, cudaEvent_t Completed) {
    R.Count = Count;
    R.Other = Other;
    R.Mode = Mode;
    R.Completed = Completed;
    cudaMalloc(&R.Input, Count * sizeof(float));
    cudaMalloc(&R.Output, Count * sizeof(float));
    R.HostOutput = static_cast<float *>(std::calloc(Count, sizeof(float)));
    return R;
  }
  static cudaError_t firstError(const RawRun &R) { return R.FirstError; }
  static cudaError_t firstCaptureError(const RawRun &R) {
    return R.FirstCaptureError;
  }
  static bool ended(const RawRun &R) { return R.Ended; }
  static cudaError_t endResult(const RawRun &R) { return R.EndResult; }
  static cudaGraph_t graph(const RawRun &R) { return R.Graph; }
};

namespace {

constexpr int Count = 4096;
constexpr unsigned Replays = 2;

cudaStreamCaptureMode toCudaMode(const std::string &Mode) {
  if (Mode == "thread-local")
    return cudaStreamCaptureModeThreadLocal;
  if (Mode == "relaxed")
    return cudaStreamCaptureModeRelaxed;
  return cudaStreamCaptureModeGlobal;
}

void writeInput(RawRun &Run, unsigned K) {
  std::vector<float> Values(Count);
  for (int I = 0; I < Count; ++I)
    Values[I] = inputValue(I, K);
  cudaMemcpy(Run.input(), Values.data(), Count * sizeof(float),
             cudaMemcpyHostToDevice);
}

// Outputs start from a value no region writes, so work missing from a
// replay shows up as a difference.
void clearOutputs(RawRun &Run) {
  cudaMemset(Run.output(), 0xff, Count * sizeof(float));
  std::memset(Run.hostOutput(), 0xff, Count * sizeof(float));
  cudaDeviceSynchronize();
}

std::vector<float> readOutputs(RawRun &Run) {
  std::vector<float> Out(2 * Count);
  cudaMemcpy(Out.data(), Run.output(), Count * sizeof(float),
             cudaMemcpyDeviceToHost);
  std::memcpy(Out.data() + Count, Run.hostOutput(), Count * sizeof(float));
  return Out;
}

double maxDiff(const std::vector<float> &A, const std::vector<float> &B) {
  double Max = 0;
  for (size_t I = 0; I < A.size(); ++I) {
    bool NanA = std::isnan(A[I]), NanB = std::isnan(B[I]);
    if (NanA && NanB)
      continue; // Both untouched.
    if (NanA != NanB)
      return INFINITY;
    Max = std::max(Max, static_cast<double>(std::fabs(A[I] - B[I])));
  }
  return Max;
}

std::string errorText(cudaError_t E) {
  return std::string(cudaGetErrorName(E)) + ": " + cudaGetErrorString(E);
}

} // namespace

Result runRawRegion(const RegionSpec &Spec, const std::string &Mode) {
  Result R;
  R.Region = Spec.Name;
  R.Hazard = Spec.Hazard;
  R.Mode = Mode;
  auto Body = reinterpret_cast<RawBody>(Spec.Body);

  cudaStream_t Side, Capture, Other;
  cudaStreamCreateWithFlags(&Side, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&Other, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&Capture, (Spec.Flags & BlockingCaptureStream)
                                          ? cudaStreamDefault
                                          : cudaStreamNonBlocking);
  cudaEvent_t Completed;
  cudaEventCreate(&Completed);
  cudaEventRecord(Completed, Side);
  RawRun Run;
  RawProbeAccess::setup(Run, Count, Other, toCudaMode(Mode), Completed);
  cudaDeviceSynchronize();

  // Warm-up: the region must work eagerly.
  writeInput(Run, 0);
  clearOutputs(Run);
  RawProbeAccess::reset(Run, Side, false, 0);
  Body(Run);
  cudaError_t Eager = cudaDeviceSynchronize();
  if (Eager == cudaSuccess)
    Eager = RawProbeAccess::firstError(Run);
  if (Eager == cudaSuccess)
    Eager = cudaGetLastError();
  if (Eager != cudaSuccess) {
    R.V = Verdict::EagerFailed;
    R.Message = errorText(Eager);
    HarnessLink::get().collect(R);
    return R;
  }

  // Capture.
  writeInput(Run, 0);
  clearOutputs(Run);
  RawProbeAccess::reset(Run, Capture, true, 0);
  Body(Run);
  cudaGraph_t Graph = RawProbeAccess::graph(Run);
  cudaError_t End = RawProbeAccess::endResult(Run);
  cudaStreamCaptureStatus Status = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(Capture, &Status);
  cudaError_t FirstCapture = RawProbeAccess::firstCaptureError(Run);
  std::string LeftOpen;
  if (Status == cudaStreamCaptureStatusActive && !RawProbeAccess::ended(Run) &&
      FirstCapture == cudaSuccess) {
    // The region returned with its capture still open and nothing failed:
    // do what its caller would next, use the stream, and record the result.
    cudaError_t Again = cudaStreamBeginCapture(Capture, toCudaMode(Mode));
    cudaError_t Sync = cudaStreamSynchronize(Capture);
    FirstCapture = Sync != cudaSuccess ? Sync : Again;
    LeftOpen = "the region returned with the capture open; beginning "
               "capture on the stream again returned " +
               errorText(Again) + ", synchronizing it returned " +
               errorText(Sync);
    cudaStreamIsCapturing(Capture, &Status);
  }
  if (Status != cudaStreamCaptureStatusNone) {
    // The region left the capture open (it bailed out early): close it so
    // the echo is recorded and the stream is usable again.
    cudaGraph_t Leftover = nullptr;
    End = cudaStreamEndCapture(Capture, &Leftover);
    if (!Graph)
      Graph = Leftover;
  }
  bool CaptureFailed = FirstCapture != cudaSuccess || End != cudaSuccess ||
                       !Graph;
  R.CudaError = FirstCapture != cudaSuccess ? FirstCapture : End;
  if (!LeftOpen.empty())
    R.Message = LeftOpen;
  cudaGetLastError();

  cudaGraphExec_t Exec = nullptr;
  if (!CaptureFailed) {
    cudaError_t Inst = cudaGraphInstantiate(&Exec, Graph, 0);
    if (Inst != cudaSuccess) {
      CaptureFailed = true;
      R.CudaError = Inst;
      R.Message = "instantiate: " + errorText(Inst);
      cudaGetLastError();
    }
  }
  if (CaptureFailed && R.Message.empty() && R.CudaError)
    R.Message = errorText(static_cast<cudaError_t>(R.CudaError));

  // Replays against eager runs on the same fresh inputs.
  if (!CaptureFailed) {
    for (unsigned K = 1; K <= Replays; ++K) {
      writeInput(Run, K);
      clearOutputs(Run);
      RawProbeAccess::reset(Run, Capture, false, K);
      if (Spec.Update)
        reinterpret_cast<RawReplay>(Spec.Update)(Run, Exec);
      else
        cudaGraphLaunch(Exec, Capture);
      cudaStreamSynchronize(Capture);
      std::vector<float> Replayed = readOutputs(Run);

      writeInput(Run, K);
      clearOutputs(Run);
      RawProbeAccess::reset(Run, Side, false, K);
      Body(Run);
      cudaDeviceSynchronize();
      std::vector<float> Expected = readOutputs(Run);
      double Diff = (Spec.Flags & NoCompare) ? 0 : maxDiff(Replayed, Expected);
      R.MaxDiff = std::max(R.MaxDiff, Diff);
      ++R.Replays;
    }
    cudaGetLastError();
  }
  HarnessLink::get().collect(R);
  R.V = decide(R, CaptureFailed, false, 1e-5);
  return R;
}

static void initDevice() { cudaFree(nullptr); }

int rawProbeMain(int Argc, char **Argv) {
  return probeMain(Argc, Argv, Flavour::Raw, initDevice, runRawRegion);
}

} // namespace probe
} // namespace cudagraph
