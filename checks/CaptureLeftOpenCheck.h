//===--- CaptureLeftOpenCheck.h - cudagraph-tidy ----------------*- C++ -*-===//
//
// Finds paths that return from a function while the capture it began is
// still open: an early return, or an error-check macro that returns,
// between a begin and the end that the other paths reach; and end calls
// given the legacy stream instead of the capturing one, which end nothing.
// For the user-facing documentation see docs/checks/capture-left-open.md.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_CAPTURELEFTOPENCHECK_H
#define CUDAGRAPH_TIDY_CAPTURELEFTOPENCHECK_H

#include "CudaGraphCheck.h"

namespace clang::tidy::cudagraph {

class CaptureLeftOpenCheck : public CudaGraphCheck {
public:
  CaptureLeftOpenCheck(StringRef Name, ClangTidyContext *Context);

protected:
  void checkCapture(CaptureAnalysis &Analysis) override;

private:
  const Hazard *LeftOpen;

  static bool inScopeAt(const RegionRoot &Root, const FunctionDecl *Function,
                        const Stmt *Use);
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_CAPTURELEFTOPENCHECK_H
