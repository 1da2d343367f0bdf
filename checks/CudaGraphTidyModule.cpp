//===--- CudaGraphTidyModule.cpp - cudagraph-tidy -------------------------===//

#include "ApiHazardCheck.h"
#include "CaptureLeftOpenCheck.h"
#include "DataDependentBranchCheck.h"
#include "FrozenHostStateCheck.h"
#include "LegacyStreamCheck.h"
#include "RngGeneratorCheck.h"
#include "UnjoinedForkCheck.h"
#include "clang-tidy/ClangTidyModule.h"
#include "clang-tidy/ClangTidyModuleRegistry.h"

namespace clang::tidy::cudagraph {

class CudaGraphModule : public ClangTidyModule {
public:
  void addCheckFactories(ClangTidyCheckFactories &Factories) override {
    Factories.registerCheck<CaptureLeftOpenCheck>(
        "cudagraph-capture-left-open");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-capture-unsafe-call");
    Factories.registerCheck<DataDependentBranchCheck>(
        "cudagraph-data-dependent-branch");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-device-alloc");
    Factories.registerCheck<FrozenHostStateCheck>(
        "cudagraph-frozen-host-state");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-host-sync");
    Factories.registerCheck<LegacyStreamCheck>("cudagraph-legacy-stream");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-pinned-alloc");
    Factories.registerCheck<RngGeneratorCheck>("cudagraph-rng-generator");
    Factories.registerCheck<ApiHazardCheck>("cudagraph-status-query");
    Factories.registerCheck<UnjoinedForkCheck>("cudagraph-unjoined-fork");
  }
};

// Registers the module with clang-tidy, in the plugin and in cudagraph-tidy.
static ClangTidyModuleRegistry::Add<CudaGraphModule>
    X("cudagraph-module", "Checks for CUDA graph capture hazards.");

} // namespace clang::tidy::cudagraph

namespace clang::tidy {
// Referenced by cudagraph-tidy's main to keep the module linked in.
// NOLINTNEXTLINE(misc-use-internal-linkage)
volatile int CudaGraphModuleAnchorSource = 0;
} // namespace clang::tidy
