//===--- HazardCatalog.cpp - cudagraph analysis ---------------------------===//

#include "HazardCatalog.h"
#include "CatalogNames.h"

namespace clang::cudagraph {

std::string describeModes(ModeSet Modes) {
  std::string Out;
  auto Add = [&](ModeSet Bit, const char *Name) {
    if (!(Modes & Bit))
      return;
    if (!Out.empty())
      Out += " or ";
    Out += Name;
  };
  Add(ModeGlobal, "global");
  Add(ModeThreadLocal, "thread-local");
  Add(ModeRelaxed, "relaxed");
  return Out;
}

void NamePatterns::add(llvm::StringRef Spec) {
  ::cudagraph::catalog::forEachPattern(
      std::string_view(Spec.data(), Spec.size()),
      [&](std::string_view Pattern, bool Exclude) {
        (Exclude ? Excluded : Included).emplace_back(Pattern);
      });
}

bool NamePatterns::matches(llvm::StringRef Name) const {
  while (Name.starts_with(":"))
    Name = Name.drop_front();
  std::string_view N(Name.data(), Name.size());
  auto Any = [&](const std::vector<std::string> &Patterns) {
    for (const std::string &P : Patterns)
      if (::cudagraph::catalog::globMatch(P, N))
        return true;
    return false;
  };
  return Any(Included) && !Any(Excluded);
}

llvm::ArrayRef<CheckEntry> allChecks() {
  static const CheckEntry Checks[] = {
#define CUDAGRAPH_CHECK(Name, Status, Summary) {Name, Summary},
#include "Hazards.def"
  };
  return Checks;
}

llvm::StringRef stripCudaApiSuffix(llvm::StringRef Name) {
  std::string_view Stripped =
      ::cudagraph::catalog::stripCudaApiSuffix({Name.data(), Name.size()});
  return llvm::StringRef(Stripped.data(), Stripped.size());
}

bool Hazard::allowedInAll(ModeSet Modes, llvm::StringRef Api) const {
  ModeSet Allowed = 0;
  for (const Allowance &A : AllowedIn)
    if (A.AllNames || A.Names.matches(Api))
      Allowed |= A.Modes;
  return Modes && (Modes & ~Allowed) == 0;
}

bool Hazard::failsOnOtherThread(llvm::StringRef Api) const {
  return llvm::any_of(FailsOnOtherThread, [&](const ThreadRule &R) {
    return R.AllNames || R.Names.matches(Api);
  });
}

namespace {
constexpr HazardKind Callee = HazardKind::Callee;
constexpr HazardKind HostCopy = HazardKind::HostCopy;
constexpr HazardKind HostUpload = HazardKind::HostUpload;
constexpr HazardKind TensorPrint = HazardKind::TensorPrint;
constexpr HazardKind PinnedFlag = HazardKind::PinnedFlag;
constexpr HazardKind LegacyStream = HazardKind::LegacyStream;
constexpr HazardKind UncapturedStream = HazardKind::UncapturedStream;
constexpr HazardKind DefaultStreamBegin = HazardKind::DefaultStreamBegin;
constexpr HazardKind ThrustPolicy = HazardKind::ThrustPolicy;
constexpr HazardKind TempStorageRun = HazardKind::TempStorageRun;
constexpr HazardKind MaskSelect = HazardKind::MaskSelect;
constexpr HazardKind UnregisteredGenerator =
    HazardKind::UnregisteredGenerator;
constexpr HazardKind Branch = HazardKind::Branch;
constexpr HazardKind LeftOpen = HazardKind::LeftOpen;
constexpr HazardKind StreamFork = HazardKind::StreamFork;
constexpr HazardKind UncapturedWait = HazardKind::UncapturedWait;
constexpr HazardKind CapturedEvent = HazardKind::CapturedEvent;
constexpr HazardKind EagerEventRecord = HazardKind::EagerEventRecord;
constexpr HazardKind FrozenState = HazardKind::FrozenState;
constexpr HazardKind UpdateFailure = HazardKind::UpdateFailure;
constexpr HazardKind PoollessAlloc = HazardKind::PoollessAlloc;
constexpr HazardKind RuntimeOnly = HazardKind::RuntimeOnly;
constexpr bool None = false;
constexpr bool ReadsDevice = true;
constexpr GpuVerdict CaptureError = GpuVerdict::CaptureError;
constexpr GpuVerdict FrameworkError = GpuVerdict::FrameworkError;
constexpr GpuVerdict SilentEager = GpuVerdict::SilentEager;
constexpr GpuVerdict SilentFrozen = GpuVerdict::SilentFrozen;
constexpr GpuVerdict CapturedNow = GpuVerdict::CapturedNow;
constexpr GpuVerdict UpdateError = GpuVerdict::UpdateError;
constexpr ModeSet Global = ModeGlobal;
constexpr ModeSet ThreadLocal = ModeThreadLocal;
constexpr ModeSet Relaxed = ModeRelaxed;

std::vector<Hazard> buildCatalog() {
  std::vector<Hazard> Catalog = {
#define CUDAGRAPH_HAZARD(Id, Check, Kind, Names, Flags, Verdict, Effect,       \
                         Outcome, Instead)                                     \
  Hazard{Id,     Check,   Kind,    NamePatterns(Names), Flags, Verdict,        \
         Effect, Outcome, Instead, "",                  false, {}},
#include "Hazards.def"
  };
  auto Find = [&](llvm::StringRef Id) -> Hazard & {
    for (Hazard &H : Catalog)
      if (H.Id == Id)
        return H;
    llvm_unreachable("catalog aspect names an unknown hazard");
  };
  (void)Find;
#define CUDAGRAPH_HAZARD_ALLOWED_IN(Id, Mode, Names)                           \
  Find(Id).AllowedIn.push_back(                                                \
      {Mode, NamePatterns(Names), llvm::StringRef(Names).empty()});
#define CUDAGRAPH_HAZARD_DEVICE_WIDE(Id) Find(Id).DeviceWide = true;
#define CUDAGRAPH_HAZARD_OTHER_THREAD(Id, Names)                               \
  Find(Id).FailsOnOtherThread.push_back(                                       \
      {NamePatterns(Names), llvm::StringRef(Names).empty()});
#define CUDAGRAPH_HAZARD_CACHED_RESOURCE(Id) Find(Id).CachedResource = true;
#define CUDAGRAPH_HAZARD_TORCH_INSTEAD(Id, Instead) Find(Id).TorchInstead = Instead;
#define CUDAGRAPH_HAZARD_SAFE_FORM(Id, Names) Find(Id).SafeForms.add(Names);
#include "Hazards.def"
  return Catalog;
}
} // namespace

llvm::ArrayRef<Hazard> allHazards() {
  static const std::vector<Hazard> Catalog = buildCatalog();
  return Catalog;
}

const Hazard *findHazard(llvm::StringRef Id) {
  for (const Hazard &H : allHazards())
    if (H.Id == Id)
      return &H;
  return nullptr;
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
    Extra.AllowedIn.clear();
    Extra.DeviceWide = false;
    Extra.FailsOnOtherThread.clear();
    Extra.SafeForms = NamePatterns();
    Result.push_back(std::move(Extra));
  }
  return Result;
}

} // namespace clang::cudagraph
