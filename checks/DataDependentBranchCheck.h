//===--- DataDependentBranchCheck.h - cudagraph-tidy ------------*- C++ -*-===//

#ifndef CUDAGRAPH_TIDY_DATA_DEPENDENT_BRANCH_CHECK_H
#define CUDAGRAPH_TIDY_DATA_DEPENDENT_BRANCH_CHECK_H

#include "CudaGraphCheck.h"
#include "llvm/ADT/DenseMap.h"

namespace clang::tidy::cudagraph {

/// Finds host branches whose condition depends on a device value read on the
/// host while a CUDA stream is being captured.
///
/// A device value is the result of a catalog call marked ReadsDevice (item,
/// cpu, nonzero, equal, ...), of a user function that returns one, or a host
/// variable filled by a device-to-host cudaMemcpy; it flows through local
/// variables. For the user-facing documentation see
/// docs/checks/data-dependent-branch.md.
class DataDependentBranchCheck : public CudaGraphCheck {
public:
  /// A host variable holding a device value: the value itself, or (Pointee)
  /// the memory it points to, as after cudaMemcpy(hostPtr, devPtr, ...).
  struct DeviceVar {
    const Stmt *Read = nullptr;
    bool Pointee = false;
  };
  using DeviceVars = llvm::DenseMap<const VarDecl *, DeviceVar>;

  DataDependentBranchCheck(StringRef Name, ClangTidyContext *Context);
  void storeOptions(ClangTidyOptions::OptionMap &Opts) override;

protected:
  void checkCapture(CaptureAnalysis &Analysis) override;

private:
  /// The read that makes \p E a device value, or null.
  const Stmt *deviceRead(CaptureAnalysis &Analysis, const Expr *E,
                         const CapturedScope *Scope, const DeviceVars &Vars);
  /// Host variables of \p FD that hold device values, with their reads.
  DeviceVars deviceVariables(CaptureAnalysis &Analysis, const FunctionDecl *FD,
                             const CapturedScope *Scope);
  /// The read whose value \p FD returns, or null.
  const Stmt *returnedRead(CaptureAnalysis &Analysis, const FunctionDecl *FD);
  bool isDeviceReadCall(CaptureAnalysis &Analysis, const CallExpr *Call);

  const std::string DeviceReadFunctions;
  const NamePatterns ExtraReads;
  std::vector<Hazard> Reads;
  llvm::DenseMap<const FunctionDecl *, const Stmt *> ReturnCache;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_DATA_DEPENDENT_BRANCH_CHECK_H
