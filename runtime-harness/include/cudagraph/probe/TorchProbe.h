//===--- TorchProbe.h - the probe for libtorch regions ----------*- C++ -*-===//
//
// A libtorch region gets a TorchRun: the graph to capture into, a static
// input tensor, a device scale tensor, and setOutput() for the tensor the
// probe compares. The probe runs the region under a CUDAStreamGuard on a
// pool stream, so the region's current stream is the capture stream. See
// Probe.h for the protocol.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_PROBE_TORCHPROBE_H
#define CUDAGRAPH_PROBE_TORCHPROBE_H

#include "cudagraph/probe/Probe.h"

#include <ATen/Tensor.h>
#include <ATen/core/Generator.h>
#include <cuda_runtime_api.h>

namespace at {
namespace cuda {
struct CUDAGraph;
} // namespace cuda
} // namespace at

namespace cudagraph {
namespace probe {

class TorchRun {
public:
  bool capturing() const { return Capturing; }
  at::cuda::CUDAGraph &graph() { return *Graph; }
  cudaStreamCaptureMode mode() const { return Mode; }
  /// The static input: N floats on the GPU. The default update copies the
  /// replay's fresh values into it; a region may rebind it in its update.
  at::Tensor &input() { return Input; }
  /// A one-element device tensor holding 1 + iteration().
  at::Tensor &scale() { return Scale; }
  /// Pinned host memory allocated before capture (N floats).
  at::Tensor &pinnedBuffer() { return Pinned; }
  /// A generator that is not registered with the graph.
  at::Generator &generator() { return Gen; }
  /// 0 for warm-up and capture, K for replay K and its eager twin.
  unsigned iteration() const { return Iteration; }
  /// The tensor the probe compares between replay and eager execution.
  void setOutput(const at::Tensor &T) { Output = T; }

private:
  friend struct TorchProbeAccess;
  bool Capturing = false;
  at::cuda::CUDAGraph *Graph = nullptr;
  cudaStreamCaptureMode Mode = cudaStreamCaptureModeGlobal;
  at::Tensor Input, Scale, Pinned, Output;
  at::Generator Gen;
  unsigned Iteration = 0;
};

using TorchBody = void (*)(TorchRun &);
using TorchUpdate = void (*)(TorchRun &, const at::Tensor &Fresh);

Result runTorchRegion(const RegionSpec &Spec, const std::string &Mode);
int torchProbeMain(int Argc, char **Argv);

} // namespace probe
} // namespace cudagraph

/// Defines a libtorch region: a function of `TorchRun &R`. Update, if not
/// null, replaces the default input update (R.input().copy_(Fresh)); with
/// the UpdateReplays flag it also replays the graph (R.graph().replay()).
#define CUDAGRAPH_TORCH_REGION_EX(Fn, Name, Hazard, Flags, Update)             \
  static void Fn(::cudagraph::probe::TorchRun &R);                             \
  static const ::cudagraph::probe::Registrar Fn##Registrar(                    \
      {Name, Hazard, __FILE__, __LINE__, ::cudagraph::probe::Flavour::Torch,   \
       Flags, ::cudagraph::probe::erasedFunction(&Fn),                         \
       ::cudagraph::probe::erasedFunction(Update)});                           \
  static void Fn(::cudagraph::probe::TorchRun &R)

#define CUDAGRAPH_TORCH_REGION(Fn, Name, Hazard)                               \
  CUDAGRAPH_TORCH_REGION_EX(Fn, Name, Hazard, 0u, nullptr)

#endif // CUDAGRAPH_PROBE_TORCHPROBE_H
