//===--- HazardCatalog.cpp - cudagraph-tidy -------------------------------===//

#include "HazardCatalog.h"
#include "CatalogNames.h"

namespace clang::tidy::cudagraph {

void NamePatterns::add(llvm::StringRef Spec) {
  ::cudagraph::catalog::forEachPattern(
      std::string_view(Spec.data(), Spec.size()),
      [&](std::string_view, bool Excluded) { Empty = Empty && Excluded; });
  if (!Specs.empty())
    Specs += '|';
  Specs += Spec.str();
}

bool NamePatterns::matches(llvm::StringRef Name) const {
  return !Empty && ::cudagraph::catalog::namesMatch(
                       Specs, std::string_view(Name.data(), Name.size()));
}

llvm::StringRef stripCudaApiSuffix(llvm::StringRef Name) {
  std::string_view Stripped =
      ::cudagraph::catalog::stripCudaApiSuffix({Name.data(), Name.size()});
  return llvm::StringRef(Stripped.data(), Stripped.size());
}

namespace {
constexpr HazardKind Callee = HazardKind::Callee;
constexpr HazardKind HostCopy = HazardKind::HostCopy;
constexpr HazardKind HostUpload = HazardKind::HostUpload;
constexpr HazardKind TensorPrint = HazardKind::TensorPrint;
constexpr HazardKind PinnedFlag = HazardKind::PinnedFlag;
constexpr HazardKind Branch = HazardKind::Branch;
constexpr HazardKind RuntimeOnly = HazardKind::RuntimeOnly;
constexpr bool None = false;
constexpr bool ReadsDevice = true;
constexpr GpuVerdict CaptureError = GpuVerdict::CaptureError;
constexpr GpuVerdict FrameworkError = GpuVerdict::FrameworkError;
constexpr GpuVerdict SilentEager = GpuVerdict::SilentEager;
constexpr GpuVerdict SilentFrozen = GpuVerdict::SilentFrozen;
constexpr GpuVerdict CapturedNow = GpuVerdict::CapturedNow;
} // namespace

llvm::ArrayRef<Hazard> allHazards() {
  static const std::vector<Hazard> Catalog = {
#define CUDAGRAPH_HAZARD(Id, Check, Kind, Names, Flags, Verdict, Effect,       \
                         Outcome, Instead)                                     \
  Hazard{Id,     Check,   Kind,   NamePatterns(Names), Flags, Verdict,         \
         Effect, Outcome, Instead},
#include "Hazards.def"
  };
  return Catalog;
}

std::vector<Hazard> hazardsForCheck(llvm::StringRef CheckName,
                                    llvm::StringRef ExtraFunctions) {
  std::vector<Hazard> Result;
  for (const Hazard &H : allHazards())
    if (H.Check == CheckName && H.Kind != HazardKind::RuntimeOnly)
      Result.push_back(H);
  if (!ExtraFunctions.trim().empty() && !Result.empty()) {
    Hazard Extra = Result.front();
    Extra.Id = "user-listed";
    Extra.Kind = HazardKind::Callee;
    Extra.Names = NamePatterns(ExtraFunctions);
    Extra.Effect = "is listed as a capture hazard for this check";
    Result.push_back(std::move(Extra));
  }
  return Result;
}

} // namespace clang::tidy::cudagraph
