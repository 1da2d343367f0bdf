//===--- Probe.h - run one region eagerly, captured, replayed ---*- C++ -*-===//
//
// The probe API tests one region of code for CUDA graph capture: it runs the
// region eagerly on a side stream (warm-up), captures it (global mode unless
// the region asks otherwise), instantiates the graph, replays it with fresh
// inputs copied into the static inputs, and compares each replay against an
// eager run on the same inputs. The verdict is one of:
//
//   captured           captured, and every replay equals eager execution
//   capture_error      a CUDA capture error (code, and the root-cause call
//                      when the injection library is loaded)
//   framework_error    the framework threw during capture (message)
//   escaped_work       work ran outside the graph during capture
//   silent_divergence  captured, but replays differ from eager (max diff)
//   eager_failed       the region fails even without capture
//
// A region is a function that calls the real capture API itself, guarded by
// R.capturing(), so a static analyzer sees its body between begin and end:
//
//   CUDAGRAPH_RAW_REGION(syncPositive, "raw.device-synchronize.pos",
//                        "device-synchronize") {
//     if (R.capturing())
//       R.check(cudaStreamBeginCapture(R.stream(), R.mode()));
//     ...
//     R.check(cudaDeviceSynchronize());
//     if (R.capturing())
//       R.endCapture(cudaStreamEndCapture(R.stream(), R.graph()));
//   }
//
// Region names and hazard ids are checked against catalog/Hazards.def.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_PROBE_PROBE_H
#define CUDAGRAPH_PROBE_PROBE_H

#include <cstddef>
#include <string>
#include <vector>

namespace cudagraph {
namespace probe {

enum class Verdict {
  Captured,
  CaptureError,
  FrameworkError,
  EscapedWork,
  SilentDivergence,
  EagerFailed,
};

const char *toString(Verdict V);

/// Region options (RegionSpec::Flags).
enum RegionFlags : unsigned {
  /// Outputs are random: compare shapes and finiteness, not values.
  NoCompare = 1u << 0,
  /// Capture on a stream created without cudaStreamNonBlocking.
  BlockingCaptureStream = 1u << 1,
  /// Capture in thread-local / relaxed mode instead of global.
  ThreadLocalMode = 1u << 2,
  RelaxedMode = 1u << 3,
  /// The region's update function replays the graph itself after changing
  /// the inputs (libtorch regions), so the replay is in the region's code.
  UpdateReplays = 1u << 4,
};

enum class Flavour { Raw, Torch };

struct RegionSpec {
  const char *Name;
  const char *Hazard; ///< A catalog hazard id.
  const char *File;
  int Line; ///< Where the region's function begins.
  Flavour Kind;
  unsigned Flags;
  void *Body;   ///< void (*)(RawRun &) or void (*)(TorchRun &).
  /// Optional: the input update before replay K (libtorch), or the step
  /// that replaces the probe's launch of replay K (raw); null = default.
  void *Update;
};

std::vector<RegionSpec> &registry();

/// A region function (or nullptr) as the untyped pointer RegionSpec keeps.
inline void *erasedFunction(std::nullptr_t) { return nullptr; }
template <typename Fn> void *erasedFunction(Fn *F) {
  return reinterpret_cast<void *>(F);
}

struct Registrar {
  explicit Registrar(const RegionSpec &Spec) { registry().push_back(Spec); }
};

struct Result {
  std::string Region;
  std::string Hazard;
  std::string Mode;
  Verdict V = Verdict::Captured;
  int CudaError = 0;         ///< The capture error code, if any.
  std::string RootCauseApi;  ///< From the injection library, if loaded.
  int RootCauseResult = 0;
  std::string Message;       ///< Framework message or failure detail.
  double MaxDiff = 0;
  unsigned Escapes = 0;
  std::string EscapeApi;
  unsigned Replays = 0;
  bool HarnessLoaded = false;
};

/// The injection library's control functions, when it is loaded.
class HarnessLink {
public:
  static HarnessLink &get();
  bool loaded() const { return SetRegionFn != nullptr; }
  void setRegion(const std::string &Name);
  void write(const std::string &JsonLine);
  /// Fills the region's root cause and escapes into R.
  void collect(Result &R);

private:
  HarnessLink();
  void (*SetRegionFn)(const char *) = nullptr;
  void (*WriteFn)(const char *) = nullptr;
  int (*StatsFn)(void *) = nullptr;
};

/// Records a verdict: one JSON line in the harness report (or on stdout when
/// the harness is not loaded) and one line for people on stdout.
void report(const RegionSpec &Spec, const Result &R);

/// Combines what the probe and the harness saw into the final verdict.
Verdict decide(const Result &R, bool CaptureFailed, bool FrameworkFailed,
               double Tolerance);

/// Shared main: --list, --region NAME, --all, --mode global|thread-local|
/// relaxed. InitDevice starts CUDA (which loads the injection library);
/// RunOne runs one region and returns its result.
int probeMain(int Argc, char **Argv, Flavour Kind, void (*InitDevice)(),
              Result (*RunOne)(const RegionSpec &, const std::string &Mode));

/// The mode a region asks for, or the --mode override.
std::string regionMode(const RegionSpec &Spec, const std::string &Override);

/// Deterministic input values for replay K (K = 0 is the warm-up).
float inputValue(unsigned Index, unsigned K);

} // namespace probe
} // namespace cudagraph

#endif // CUDAGRAPH_PROBE_PROBE_H
