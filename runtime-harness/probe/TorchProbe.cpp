//===--- TorchProbe.cpp - the probe for libtorch regions ------------------===//

#include "cudagraph/probe/TorchProbe.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace cudagraph {
namespace probe {

struct TorchProbeAccess {
  static void pass(TorchRun &R, bool Capturing, unsigned K) {
    R.Capturing = Capturing;
    R.Iteration = K;
    R.Output = at::Tensor();
  }
  static TorchRun &setup(TorchRun &R, at::cuda::CUDAGraph *Graph,
                         cudaStreamCaptureMode Mode) {
    R.Graph = Graph;
    R.Mode = Mode;
    return R;
  }
  static at::Tensor &input(TorchRun &R) { return R.Input; }
  static at::Tensor &scale(TorchRun &R) { return R.Scale; }
  static at::Tensor &pinned(TorchRun &R) { return R.Pinned; }
  static at::Generator &generator(TorchRun &R) { return R.Gen; }
  static const at::Tensor &output(const TorchRun &R) { return R.Output; }
};

namespace {

constexpr int64_t Count = 4096;
constexpr unsigned Replays = 2;

cudaStreamCaptureMode toCudaMode(const std::string &Mode) {
  if (Mode == "thread-local")
    return cudaStreamCaptureModeThreadLocal;
  if (Mode == "relaxed")
    return cudaStreamCaptureModeRelaxed;
  return cudaStreamCaptureModeGlobal;
}

at::Tensor freshValues(unsigned K) {
  std::vector<float> Values(Count);
  for (int64_t I = 0; I < Count; ++I)
    Values[I] = inputValue(static_cast<unsigned>(I), K);
  return at::from_blob(Values.data(), {Count}, at::kFloat)
      .clone()
      .to(at::kCUDA);
}

std::string firstLine(const std::string &Text) {
  return Text.substr(0, Text.find('\n'));
}

std::string messageOf(const std::exception &E) {
  if (const auto *C10 = dynamic_cast<const c10::Error *>(&E))
    return firstLine(C10->what_without_backtrace());
  return firstLine(E.what());
}

// Leaves the stream out of capture after a region failed midway, so the
// rest of the process (and the report) sees the capture end.
void closeCapture(at::cuda::CUDAGraph &Graph, cudaStream_t Stream) {
  cudaStreamCaptureStatus Status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(Stream, &Status) != cudaSuccess ||
      Status == cudaStreamCaptureStatusNone) {
    cudaGetLastError();
    return;
  }
  try {
    Graph.capture_end();
  } catch (const std::exception &) {
    // The echo of the failure; the report has it.
  }
  if (cudaStreamIsCapturing(Stream, &Status) == cudaSuccess &&
      Status != cudaStreamCaptureStatusNone) {
    cudaGraph_t Leftover = nullptr;
    cudaStreamEndCapture(Stream, &Leftover);
    if (Leftover)
      cudaGraphDestroy(Leftover);
  }
  cudaGetLastError();
}

void update(const RegionSpec &Spec, TorchRun &Run, unsigned K) {
  at::Tensor Fresh = freshValues(K);
  TorchProbeAccess::scale(Run).fill_(1.0f + K);
  if (Spec.Update)
    reinterpret_cast<TorchUpdate>(Spec.Update)(Run, Fresh);
  else
    TorchProbeAccess::input(Run).copy_(Fresh);
}

at::Tensor snapshot(const at::Tensor &T) {
  if (!T.defined())
    return T;
  return T.detach().to(at::kCPU, at::kDouble, /*non_blocking=*/false,
                       /*copy=*/true);
}

double difference(const at::Tensor &A, const at::Tensor &B) {
  if (!A.defined() || !B.defined())
    return A.defined() == B.defined() ? 0 : INFINITY;
  if (A.sizes() != B.sizes())
    return INFINITY;
  if (A.numel() == 0)
    return 0;
  at::Tensor Diff = (A - B).abs();
  // Both NaN (untouched) counts as equal; one NaN as different.
  at::Tensor NanA = A.isnan(), NanB = B.isnan();
  if (!at::equal(NanA, NanB))
    return INFINITY;
  Diff = at::where(NanA, at::zeros_like(Diff), Diff);
  return Diff.max().item<double>();
}

} // namespace

Result runTorchRegion(const RegionSpec &Spec, const std::string &Mode) {
  Result R;
  R.Region = Spec.Name;
  R.Hazard = Spec.Hazard;
  R.Mode = Mode;
  auto Body = reinterpret_cast<TorchBody>(Spec.Body);

  at::TensorOptions Options = at::device(at::kCUDA).dtype(at::kFloat);
  at::cuda::CUDAGraph Graph;
  TorchRun Run;
  TorchProbeAccess::setup(Run, &Graph, toCudaMode(Mode));
  TorchProbeAccess::input(Run) = freshValues(0);
  TorchProbeAccess::scale(Run) = at::full({1}, 1.0f, Options);
  TorchProbeAccess::pinned(Run) =
      at::zeros({Count}, at::TensorOptions().dtype(at::kFloat).pinned_memory(true));
  TorchProbeAccess::generator(Run) = at::cuda::detail::createCUDAGenerator();

  c10::cuda::CUDAStream Side = c10::cuda::getStreamFromPool();
  c10::cuda::CUDAStreamGuard Guard(Side);

  // Regions may work on streams of their own; every wait below is for the
  // whole device so no output is read before it is written.

  // Warm-up, twice, as libtorch recommends before capture.
  try {
    for (int I = 0; I < 2; ++I) {
      TorchProbeAccess::pass(Run, false, 0);
      Body(Run);
    }
    c10::cuda::device_synchronize();
  } catch (const std::exception &E) {
    R.V = Verdict::EagerFailed;
    R.Message = messageOf(E);
    HarnessLink::get().collect(R);
    return R;
  }

  // Capture.
  bool FrameworkFailed = false;
  at::Tensor Captured;
  try {
    TorchProbeAccess::pass(Run, true, 0);
    Body(Run);
    Captured = TorchProbeAccess::output(Run);
  } catch (const std::exception &E) {
    FrameworkFailed = true;
    R.Message = messageOf(E);
    closeCapture(Graph, Side.stream());
  }

  if (!FrameworkFailed) {
    try {
      for (unsigned K = 1; K <= Replays; ++K) {
        update(Spec, Run, K);
        if (!(Spec.Flags & UpdateReplays))
          Graph.replay();
        c10::cuda::device_synchronize();
        at::Tensor Replayed = snapshot(Captured);

        TorchProbeAccess::pass(Run, false, K);
        Body(Run);
        c10::cuda::device_synchronize();
        at::Tensor Expected = snapshot(TorchProbeAccess::output(Run));
        double Diff =
            (Spec.Flags & NoCompare) ? 0 : difference(Replayed, Expected);
        R.MaxDiff = std::max(R.MaxDiff, Diff);
        ++R.Replays;
      }
    } catch (const std::exception &E) {
      R.V = Verdict::EagerFailed;
      R.Message = "replay: " + messageOf(E);
      HarnessLink::get().collect(R);
      return R;
    }
  }
  HarnessLink::get().collect(R);
  if (R.RootCauseResult)
    R.CudaError = R.RootCauseResult;
  R.V = decide(R, false, FrameworkFailed, 1e-5);
  return R;
}

static void initDevice() {
  // Creating a CUDA tensor initializes the driver, which loads the
  // injection library.
  at::empty({1}, at::device(at::kCUDA));
}

int torchProbeMain(int Argc, char **Argv) {
  return probeMain(Argc, Argv, Flavour::Torch, initDevice, runTorchRegion);
}

} // namespace probe
} // namespace cudagraph
