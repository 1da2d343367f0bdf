//===--- HazardCatalog.cpp - cudagraph-tidy -------------------------------===//

#include "HazardCatalog.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>

namespace clang::tidy::cudagraph {

static bool globMatch(llvm::StringRef Pattern, llvm::StringRef Text) {
  // Iterative '*' matching with backtracking to the last star.
  size_t P = 0, T = 0, StarP = llvm::StringRef::npos, StarT = 0;
  while (T < Text.size()) {
    if (P < Pattern.size() && Pattern[P] == '*') {
      StarP = P++;
      StarT = T;
    } else if (P < Pattern.size() && Pattern[P] == Text[T]) {
      ++P;
      ++T;
    } else if (StarP != llvm::StringRef::npos) {
      P = StarP + 1;
      T = ++StarT;
    } else {
      return false;
    }
  }
  while (P < Pattern.size() && Pattern[P] == '*')
    ++P;
  return P == Pattern.size();
}

void NamePatterns::add(llvm::StringRef Spec) {
  std::string Normalized = Spec.str();
  std::replace_if(
      Normalized.begin(), Normalized.end(),
      [](char C) { return C == ';' || C == ','; }, '|');
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  llvm::StringRef(Normalized).split(Parts, '|');
  for (llvm::StringRef Part : Parts) {
    Part = Part.trim();
    if (Part.consume_front("!"))
      Exclude.push_back(Part.ltrim(':').str());
    else if (!Part.empty())
      Include.push_back(Part.ltrim(':').str());
  }
}

bool NamePatterns::matches(llvm::StringRef Name) const {
  Name = Name.ltrim(':');
  bool Included = llvm::any_of(
      Include, [&](const std::string &P) { return globMatch(P, Name); });
  return Included && llvm::none_of(Exclude, [&](const std::string &P) {
           return globMatch(P, Name);
         });
}

llvm::StringRef stripCudaApiSuffix(llvm::StringRef Name) {
  for (llvm::StringRef Suffix : {"_ptsz", "_ptds", "_v2", "_v3"})
    if (Name.consume_back(Suffix))
      return stripCudaApiSuffix(Name);
  return Name;
}

namespace {
constexpr HazardKind Callee = HazardKind::Callee;
constexpr HazardKind HostCopy = HazardKind::HostCopy;
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
