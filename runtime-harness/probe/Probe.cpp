//===--- Probe.cpp - region registry, verdicts and the shared main --------===//

#include "cudagraph/probe/Probe.h"
#include "cudagraph/harness/Catalog.h"
#include "cudagraph/harness/HarnessControl.h"
#include "cudagraph/harness/Json.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace cudagraph {
namespace probe {

using harness::JsonObject;

const char *toString(Verdict V) {
  switch (V) {
  case Verdict::Captured:
    return "captured";
  case Verdict::CaptureError:
    return "capture_error";
  case Verdict::FrameworkError:
    return "framework_error";
  case Verdict::EscapedWork:
    return "escaped_work";
  case Verdict::SilentDivergence:
    return "silent_divergence";
  case Verdict::EagerFailed:
    return "eager_failed";
  }
  return "captured";
}

std::vector<RegionSpec> &registry() {
  static std::vector<RegionSpec> Regions;
  return Regions;
}

HarnessLink &HarnessLink::get() {
  static HarnessLink Link;
  return Link;
}

HarnessLink::HarnessLink() {
  // The driver loaded the library with dlopen; find it by the same path.
  const char *Path = std::getenv("CUDA_INJECTION64_PATH");
  if (!Path || !*Path)
    return;
  void *Lib = dlopen(Path, RTLD_NOW | RTLD_NOLOAD);
  if (!Lib)
    return;
  auto *Version = reinterpret_cast<int (*)()>(
      dlsym(Lib, "cudagraphHarnessControlVersion"));
  if (!Version || Version() != CUDAGRAPH_HARNESS_CONTROL_VERSION)
    return;
  SetRegionFn = reinterpret_cast<void (*)(const char *)>(
      dlsym(Lib, "cudagraphHarnessSetRegion"));
  WriteFn =
      reinterpret_cast<void (*)(const char *)>(dlsym(Lib, "cudagraphHarnessWrite"));
  StatsFn = reinterpret_cast<int (*)(void *)>(
      dlsym(Lib, "cudagraphHarnessRegionStats"));
  if (!WriteFn || !StatsFn)
    SetRegionFn = nullptr;
}

void HarnessLink::setRegion(const std::string &Name) {
  if (SetRegionFn)
    SetRegionFn(Name.c_str());
}

void HarnessLink::write(const std::string &JsonLine) {
  if (WriteFn)
    WriteFn(JsonLine.c_str());
  else
    std::cout << JsonLine << std::endl;
}

void HarnessLink::collect(Result &R) {
  R.HarnessLoaded = loaded();
  if (!StatsFn)
    return;
  CudagraphRegionStats Stats;
  if (StatsFn(&Stats) != 0)
    return;
  R.RootCauseApi = Stats.RootCauseApi;
  R.RootCauseResult = Stats.RootCauseResult;
  R.Escapes = Stats.Escapes;
  R.EscapeApi = Stats.EscapeApi;
}

Verdict decide(const Result &R, bool CaptureFailed, bool FrameworkFailed,
               double Tolerance) {
  // A framework error that wraps a CUDA capture error is reported as the
  // capture error, with the framework's message kept alongside.
  if (CaptureFailed || (FrameworkFailed && R.RootCauseResult))
    return Verdict::CaptureError;
  if (FrameworkFailed)
    return Verdict::FrameworkError;
  if (R.Escapes)
    return Verdict::EscapedWork;
  if (!(R.MaxDiff <= Tolerance)) // NaN diverges too.
    return Verdict::SilentDivergence;
  return Verdict::Captured;
}

void report(const RegionSpec &Spec, const Result &R) {
  const harness::HazardInfo *Hazard = harness::findHazard(Spec.Hazard);
  JsonObject O;
  O.add("event", "verdict");
  O.add("region", R.Region);
  O.add("hazard", Spec.Hazard);
  O.add("check", Hazard ? Hazard->Check : "");
  O.add("flavour", Spec.Kind == Flavour::Raw ? "raw" : "torch");
  O.add("file", Spec.File);
  O.add("line", Spec.Line);
  O.add("mode", R.Mode);
  O.add("verdict", toString(R.V));
  if (R.CudaError)
    O.add("result", R.CudaError);
  if (!R.RootCauseApi.empty()) {
    O.add("root_cause_api", R.RootCauseApi);
    O.add("root_cause_result", R.RootCauseResult);
  }
  if (!R.Message.empty())
    O.add("message", R.Message);
  O.add("max_diff", R.MaxDiff);
  O.add("escapes", R.Escapes);
  if (!R.EscapeApi.empty())
    O.add("escape_api", R.EscapeApi);
  O.add("replays", R.Replays);
  O.addBool("harness", R.HarnessLoaded);
  O.add("pid", static_cast<int64_t>(getpid()));
  HarnessLink::get().write(O.str());

  std::printf("%-48s %-18s", R.Region.c_str(), toString(R.V));
  if (R.CudaError)
    std::printf(" %d", R.CudaError);
  if (!R.RootCauseApi.empty())
    std::printf(" root cause %s", R.RootCauseApi.c_str());
  if (R.Escapes)
    std::printf(" escapes %u (%s)", R.Escapes, R.EscapeApi.c_str());
  if (R.V == Verdict::SilentDivergence)
    std::printf(" max diff %g", R.MaxDiff);
  if (!R.Message.empty())
    std::printf(" : %s", R.Message.substr(0, R.Message.find('\n')).c_str());
  std::printf("\n");
  std::fflush(stdout);
}

std::string regionMode(const RegionSpec &Spec, const std::string &Override) {
  if (!Override.empty())
    return Override;
  if (Spec.Flags & ThreadLocalMode)
    return "thread-local";
  if (Spec.Flags & RelaxedMode)
    return "relaxed";
  return "global";
}

float inputValue(unsigned Index, unsigned K) {
  // Varies with both arguments and stays well inside float precision.
  return std::sin(0.37f * static_cast<float>(Index) + 1.3f * K) + 0.5f * K +
         1.0f;
}

static void usage(const char *Argv0) {
  std::cerr << "usage: " << Argv0
            << " --list | --region NAME [--mode M] | --all [--mode M]\n";
}

int probeMain(int Argc, char **Argv, Flavour Kind, void (*InitDevice)(),
              Result (*RunOne)(const RegionSpec &, const std::string &)) {
  std::string Region, Mode;
  bool List = false, All = false;
  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I];
    if (Arg == "--list")
      List = true;
    else if (Arg == "--all")
      All = true;
    else if (Arg == "--region" && I + 1 < Argc)
      Region = Argv[++I];
    else if (Arg == "--mode" && I + 1 < Argc)
      Mode = Argv[++I];
    else {
      usage(Argv[0]);
      return 2;
    }
  }
  if (!Mode.empty() && Mode != "global" && Mode != "thread-local" &&
      Mode != "relaxed") {
    std::cerr << "unknown mode '" << Mode << "'\n";
    return 2;
  }
  // A region must name a hazard the catalog knows.
  int Status = 0;
  for (const RegionSpec &Spec : registry()) {
    if (Spec.Kind != Kind)
      continue;
    if (!harness::findHazard(Spec.Hazard)) {
      std::cerr << Spec.File << ":" << Spec.Line << ": region " << Spec.Name
                << " names unknown hazard '" << Spec.Hazard << "'\n";
      Status = 2;
    }
  }
  if (Status)
    return Status;
  if (List) {
    for (const RegionSpec &Spec : registry())
      if (Spec.Kind == Kind)
        std::cout << Spec.Name << "\t" << Spec.Hazard << "\t" << Spec.File
                  << "\t" << Spec.Line << "\n";
    return 0;
  }
  if (Region.empty() && !All) {
    usage(Argv[0]);
    return 2;
  }
  InitDevice();
  bool Found = false;
  for (const RegionSpec &Spec : registry()) {
    if (Spec.Kind != Kind || (!All && Region != Spec.Name))
      continue;
    Found = true;
    HarnessLink::get().setRegion(Spec.Name);
    Result R = RunOne(Spec, regionMode(Spec, Mode));
    report(Spec, R);
    HarnessLink::get().setRegion("");
  }
  if (!Found) {
    std::cerr << "no region named '" << Region << "'\n";
    return 2;
  }
  return 0;
}

} // namespace probe
} // namespace cudagraph
