//===--- HazardCatalog.h - cudagraph analysis -------------------*- C++ -*-===//
//
// The catalog of CUDA graph capture hazards (catalog/Hazards.def) as the
// analysis and the checks see it: every entry with its check, how a use is
// recognized, the capture modes that allow it and the text of its diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_HAZARDCATALOG_H
#define CUDAGRAPH_ANALYSIS_HAZARDCATALOG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace clang::cudagraph {

/// Capture modes as a bit set: a region whose mode is not a compile-time
/// constant may be in any of them.
enum ModeBits : unsigned {
  ModeGlobal = 1,
  ModeThreadLocal = 2,
  ModeRelaxed = 4,
  AnyMode = 7
};
using ModeSet = unsigned;

/// "global", "thread-local", "relaxed", or a list of them.
std::string describeModes(ModeSet Modes);

enum class HazardKind {
  Callee,
  HostCopy,
  HostUpload,
  TensorPrint,
  PinnedFlag,
  LegacyStream,
  UncapturedStream,
  DefaultStreamBegin,
  ThrustPolicy,
  TempStorageRun,
  MaskSelect,
  UnregisteredGenerator,
  Branch,
  LeftOpen,
  StreamFork,
  UncapturedWait,
  CapturedEvent,
  EagerEventRecord,
  FrozenState,
  UpdateFailure,
  PoollessAlloc,
  RuntimeOnly
};
enum class GpuVerdict {
  CaptureError,
  FrameworkError,
  SilentEager,
  SilentFrozen,
  CapturedNow,
  UpdateError
};

/// A list of '|'- or ';'-separated globs over qualified names. '*' matches any
/// run of characters; a leading '!' excludes. The patterns are split once.
class NamePatterns {
public:
  NamePatterns() = default;
  explicit NamePatterns(llvm::StringRef Spec) { add(Spec); }
  void add(llvm::StringRef Spec);
  bool matches(llvm::StringRef QualifiedName) const;
  /// True when no pattern can match (no included pattern).
  bool empty() const { return Included.empty(); }

private:
  std::vector<std::string> Included, Excluded;
};

/// Strips the versioned and per-thread-stream suffixes the CUDA headers add
/// through macros (cuMemAllocHost_v2, cudaMemcpy_ptds, ...).
llvm::StringRef stripCudaApiSuffix(llvm::StringRef Name);

struct Hazard {
  llvm::StringRef Id;
  llvm::StringRef Check;
  HazardKind Kind;
  NamePatterns Names;
  bool ReadsDevice;
  GpuVerdict Verdict;
  llvm::StringRef Effect;
  llvm::StringRef Outcome;
  llvm::StringRef Instead;
  /// What to write instead in libtorch code (empty: Instead).
  llvm::StringRef TorchInstead;
  /// The call waits on every stream of the device.
  bool DeviceWide = false;
  /// Acquires or releases a resource caching code keeps between calls
  /// (memory, a library handle): in code warmed up before the capture, the
  /// way of a branch on the cache's contents that does it is the miss.
  bool CachedResource = false;
  /// Modes that allow some or all of the hazard's APIs.
  struct Allowance {
    ModeSet Modes;
    NamePatterns Names; // empty: every API of the hazard
    bool AllNames;
  };
  llvm::SmallVector<Allowance, 1> AllowedIn;
  /// Calls doing the same work in a form capture records; code choosing
  /// between them and the hazard by a value is reported only when a
  /// constant selects the hazard.
  NamePatterns SafeForms;
  /// Calls that fail on another thread too while a global-mode capture is
  /// open (measured): 900 there, 901 at that capture's end.
  struct ThreadRule {
    NamePatterns Names; // empty: every API of the hazard
    bool AllNames;
  };
  llvm::SmallVector<ThreadRule, 1> FailsOnOtherThread;

  /// Whether a call of \p Api on a thread other than the capturing one
  /// fails while a global-mode capture is open.
  bool failsOnOtherThread(llvm::StringRef Api) const;

  /// Whether every mode in \p Modes allows a call of \p Api (its matching
  /// name; may be empty for hazards without an API list).
  bool allowedInAll(ModeSet Modes, llvm::StringRef Api) const;
};

/// Every catalog entry, in file order.
llvm::ArrayRef<Hazard> allHazards();

/// A check of the catalog: its name and one-line summary.
struct CheckEntry {
  llvm::StringRef Name;
  llvm::StringRef Summary;
};
/// Every check of the catalog, in file order.
llvm::ArrayRef<CheckEntry> allChecks();
/// The entry with id \p Id, or null.
const Hazard *findHazard(llvm::StringRef Id);

/// The entries a check reports, plus user additions: \p ExtraFunctions adds
/// Callee entries (globs) that share the first entry's texts.
std::vector<Hazard> hazardsForCheck(llvm::StringRef CheckName,
                                    llvm::StringRef ExtraFunctions = "");

} // namespace clang::cudagraph

#endif // CUDAGRAPH_ANALYSIS_HAZARDCATALOG_H
