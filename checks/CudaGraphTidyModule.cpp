//===--- CudaGraphTidyModule.cpp - cudagraph-tidy -------------------------===//

#include "ApiHazardCheck.h"
#include "CaptureLeftOpenCheck.h"
#include "CudaToolkitSupport.h"
#include "DataDependentBranchCheck.h"
#include "ExecUpdateErrorCheck.h"
#include "FrozenHostStateCheck.h"
#include "LegacyStreamCheck.h"
#include "RngGeneratorCheck.h"
#include "UnjoinedForkCheck.h"
#include "clang-tidy/ClangTidyModule.h"
#include "clang-tidy/ClangTidyModuleRegistry.h"
#include "llvm/Config/llvm-config.h"
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

namespace clang::tidy::cudagraph {

/// Reports nothing: makes CUDA 13 and Debian libtorch headers parse (see
/// CudaToolkitSupport.h). Every cudagraph check does the same; cudagraph-tidy
/// enables this one on every run so that parsing never depends on which
/// checks a configuration turns on.
class ParseSupportCheck : public ClangTidyCheck {
public:
  using ClangTidyCheck::ClangTidyCheck;
  void registerPPCallbacks(const SourceManager &, Preprocessor *PP,
                           Preprocessor *) override {
    addStandInHeaders(*PP);
  }
};

class CudaGraphModule : public ClangTidyModule {
public:
  void addCheckFactories(ClangTidyCheckFactories &Factories) override {
    Factories.registerCheck<CaptureLeftOpenCheck>(
        "cudagraph-capture-left-open");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-capture-unsafe-call");
    Factories.registerCheck<DataDependentBranchCheck>(
        "cudagraph-data-dependent-branch");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-device-alloc");
    Factories.registerCheck<ExecUpdateErrorCheck>(
        "cudagraph-exec-update-error");
    Factories.registerCheck<FrozenHostStateCheck>(
        "cudagraph-frozen-host-state");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-host-sync");
    Factories.registerCheck<LegacyStreamCheck>("cudagraph-legacy-stream");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-pinned-alloc");
    Factories.registerCheck<RngGeneratorCheck>("cudagraph-rng-generator");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-status-query");
    Factories.registerCheck<UnjoinedForkCheck>("cudagraph-unjoined-fork");
    Factories.registerCheck<ParseSupportCheck>(ParseSupportCheckName);
  }
};

/// The LLVM major version of the program this code runs in: shared LLVM
/// builds (Debian's, LLVM's own) export LLVMGetVersion; 0 when the program
/// does not say. CUDAGRAPH_TIDY_HOST_LLVM_MAJOR stands in for a test.
static unsigned hostLlvmMajor() {
  if (const char *Forced = std::getenv("CUDAGRAPH_TIDY_HOST_LLVM_MAJOR"))
    return static_cast<unsigned>(std::atoi(Forced));
  using GetVersion = void (*)(unsigned *, unsigned *, unsigned *);
  auto *Get =
      reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "LLVMGetVersion"));
  if (!Get)
    return 0;
  unsigned Major = 0, Minor = 0, Patch = 0;
  Get(&Major, &Minor, &Patch);
  return Major;
}

/// Registers the module with clang-tidy, in the plugin and in cudagraph-tidy.
/// A plugin loaded into another clang-tidy version would crash on the first
/// check it makes (the classes it derives from differ): it refuses instead.
static bool registerModule() {
  unsigned Host = hostLlvmMajor();
  if (Host && Host != LLVM_VERSION_MAJOR) {
    std::fprintf(stderr,
                 "error: the cudagraph-tidy plugin was built for clang-tidy "
                 "%d and cannot run in this clang-tidy (LLVM %u); load it "
                 "into clang-tidy-%d, or run the cudagraph-tidy binary, "
                 "which has the checks built in\n",
                 LLVM_VERSION_MAJOR, Host, LLVM_VERSION_MAJOR);
    std::fflush(stderr);
    std::_Exit(2);
  }
  static ClangTidyModuleRegistry::Add<CudaGraphModule> X(
      "cudagraph-module", "Checks for CUDA graph capture hazards.");
  return true;
}
[[maybe_unused]] static const bool Registered = registerModule();

} // namespace clang::tidy::cudagraph

namespace clang::tidy {
// Referenced by cudagraph-tidy's main to keep the module linked in.
// NOLINTNEXTLINE(misc-use-internal-linkage)
volatile int CudaGraphModuleAnchorSource = 0;
} // namespace clang::tidy
