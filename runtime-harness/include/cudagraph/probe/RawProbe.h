//===--- RawProbe.h - the probe for raw CUDA regions ------------*- C++ -*-===//
//
// A raw region gets a RawRun: the stream to use (a side stream when running
// eagerly, the capture stream when capturing), a static device input and
// output of count() floats, and scratch buffers for regions whose hazard is
// an allocation or a release. See Probe.h for the protocol.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_PROBE_RAWPROBE_H
#define CUDAGRAPH_PROBE_RAWPROBE_H

#include "cudagraph/probe/Probe.h"

#include <cuda_runtime.h>

namespace cudagraph {
namespace probe {

class RawRun {
public:
  /// The stream the region enqueues on.
  cudaStream_t stream() const { return Stream; }
  /// A second non-blocking stream, never capturing by itself.
  cudaStream_t otherStream() const { return Other; }
  bool capturing() const { return Capturing; }
  cudaStreamCaptureMode mode() const { return Mode; }
  /// Where the capture pass stores the captured graph.
  cudaGraph_t *graph() { return &Graph; }

  /// The static input (the probe copies fresh values in before each
  /// replay) and the output the probe compares.
  float *input() const { return Input; }
  float *output() const { return Output; }
  /// A host buffer of count() floats the probe compares too.
  float *hostOutput() const { return HostOutput; }
  /// A new device buffer holding this pass's input: what a program that
  /// rebinds its input pointer every step would pass.
  float *freshInput();
  int count() const { return Count; }
  int blocks() const { return (Count + 255) / 256; }
  /// 0 for warm-up and capture, K for replay K and its eager twin.
  unsigned iteration() const { return Iteration; }

  /// An event recorded and completed before the pass.
  cudaEvent_t completedEvent() const { return Completed; }
  /// Fresh per pass and never freed by the probe: the region may free them.
  void *deviceScratch();
  void *pinnedScratch();
  void *hostScratch();

  /// Remembers the first failure of the pass; returns E.
  cudaError_t check(cudaError_t E);
  /// Records what end-capture returned.
  void endCapture(cudaError_t E) {
    EndResult = E;
    Ended = true;
  }

private:
  friend struct RawProbeAccess;
  cudaStream_t Stream = nullptr, Other = nullptr;
  bool Capturing = false;
  cudaStreamCaptureMode Mode = cudaStreamCaptureModeGlobal;
  cudaGraph_t Graph = nullptr;
  float *Input = nullptr, *Output = nullptr, *HostOutput = nullptr;
  int Count = 0;
  unsigned Iteration = 0;
  cudaEvent_t Completed = nullptr;
  cudaError_t FirstError = cudaSuccess;
  cudaError_t FirstCaptureError = cudaSuccess;
  cudaError_t EndResult = cudaSuccess;
  bool Ended = false;
};

using RawBody = void (*)(RawRun &);
/// Replaces the probe's launch of replay K: changes what the region reads,
/// then launches Exec on R.stream() (R.iteration() is K).
using RawReplay = void (*)(RawRun &, cudaGraphExec_t Exec);

/// Runs one raw region (the probe's RunOne for raw fixtures).
Result runRawRegion(const RegionSpec &Spec, const std::string &Mode);
/// The main of a raw fixture executable.
int rawProbeMain(int Argc, char **Argv);

} // namespace probe
} // namespace cudagraph

/// Defines a raw region: a function of `RawRun &R` registered under Name
/// for catalog hazard Hazard, with RegionFlags.
#define CUDAGRAPH_RAW_REGION_EX(Fn, Name, Hazard, Flags)                       \
  static void Fn(::cudagraph::probe::RawRun &R);                               \
  static const ::cudagraph::probe::Registrar Fn##Registrar(                    \
      {Name, Hazard, __FILE__, __LINE__, ::cudagraph::probe::Flavour::Raw,     \
       Flags, ::cudagraph::probe::erasedFunction(&Fn), nullptr});              \
  static void Fn(::cudagraph::probe::RawRun &R)

#define CUDAGRAPH_RAW_REGION(Fn, Name, Hazard)                                 \
  CUDAGRAPH_RAW_REGION_EX(Fn, Name, Hazard, 0u)

/// A raw region whose replays run through Replay (a RawReplay), for regions
/// whose subject is what changes between replays.
#define CUDAGRAPH_RAW_REGION_REPLAY(Fn, Name, Hazard, Flags, Replay)           \
  static void Fn(::cudagraph::probe::RawRun &R);                               \
  static const ::cudagraph::probe::Registrar Fn##Registrar(                    \
      {Name, Hazard, __FILE__, __LINE__, ::cudagraph::probe::Flavour::Raw,     \
       Flags, ::cudagraph::probe::erasedFunction(&Fn),                         \
       ::cudagraph::probe::erasedFunction(                                     \
           static_cast<::cudagraph::probe::RawReplay>(Replay))});              \
  static void Fn(::cudagraph::probe::RawRun &R)

#endif // CUDAGRAPH_PROBE_RAWPROBE_H
