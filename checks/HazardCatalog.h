//===--- HazardCatalog.h - cudagraph-tidy -----------------------*- C++ -*-===//
//
// The catalog of CUDA graph capture hazards (catalog/Hazards.def) as seen by
// the checks: every entry with its check name, how a use is recognized and the
// text of its diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_HAZARDCATALOG_H
#define CUDAGRAPH_TIDY_HAZARDCATALOG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace clang::tidy::cudagraph {

enum class HazardKind {
  Callee,
  HostCopy,
  HostUpload,
  TensorPrint,
  PinnedFlag,
  Branch,
  RuntimeOnly
};
enum class HazardFlags : unsigned { None = 0, ReadsDevice = 1 };
enum class GpuVerdict {
  CaptureError,
  FrameworkError,
  SilentEager,
  SilentFrozen,
  CapturedNow
};

/// A list of '|'- or ';'-separated globs over qualified names. '*' matches any
/// run of characters; a leading '!' excludes.
class NamePatterns {
public:
  NamePatterns() = default;
  explicit NamePatterns(llvm::StringRef Spec) { add(Spec); }
  void add(llvm::StringRef Spec);
  bool matches(llvm::StringRef QualifiedName) const;
  /// True when no pattern can match (no included pattern).
  bool empty() const { return Empty; }

private:
  std::string Specs;
  bool Empty = true;
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
};

/// Every catalog entry, in file order.
llvm::ArrayRef<Hazard> allHazards();

/// The entries a check reports, plus user additions: \p ExtraFunctions adds
/// Callee entries (globs) that share the first entry's texts.
std::vector<Hazard> hazardsForCheck(llvm::StringRef CheckName,
                                    llvm::StringRef ExtraFunctions = "");

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_HAZARDCATALOG_H
