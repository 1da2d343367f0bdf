//===--- DataDependentBranchCheck.h - cudagraph-tidy ------------*- C++ -*-===//
//
// Finds host branches whose condition depends on a device value read on the
// host while a CUDA stream is being captured.
//
// A device value is the result of a catalog call marked ReadsDevice (item,
// cpu, nonzero, equal, ...), of a user function that returns one, or host
// memory filled by a device-to-host cudaMemcpy (a variable, an array, a
// std::vector through data()). It flows through local variables in
// statement order: a branch before the read, or on a variable overwritten
// with a host value since, is not a finding. For the user-facing
// documentation see docs/checks/data-dependent-branch.md.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_DATA_DEPENDENT_BRANCH_CHECK_H
#define CUDAGRAPH_TIDY_DATA_DEPENDENT_BRANCH_CHECK_H

#include "CudaGraphCheck.h"
#include "llvm/ADT/DenseMap.h"

namespace clang::tidy::cudagraph {

class DataDependentBranchCheck : public CudaGraphCheck {
public:
  DataDependentBranchCheck(StringRef Name, ClangTidyContext *Context);
  void storeOptions(ClangTidyOptions::OptionMap &Opts) override;

protected:
  void checkCapture(CaptureAnalysis &Analysis) override;

private:
  class DeviceValueFlow;

  /// Whether \p Call reads a device value on the host (item, nonzero, ...).
  bool isDeviceReadCall(CaptureAnalysis &Analysis, const CallExpr *Call);
  /// The read whose value \p FD returns, or null.
  const Stmt *returnedRead(CaptureAnalysis &Analysis, const FunctionDecl *FD);
  void checkFunction(CaptureAnalysis &Analysis, const FunctionDecl *FD);

  const std::string DeviceReadFunctions;
  const NamePatterns ExtraReads;
  std::vector<Hazard> Reads;
  const Hazard *BranchHazard = nullptr;
  llvm::DenseMap<const FunctionDecl *, const Stmt *> ReturnCache;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_DATA_DEPENDENT_BRANCH_CHECK_H
