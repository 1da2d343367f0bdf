//===--- ExecUpdateErrorCheck.h - cudagraph-tidy ----------------*- C++ -*-===//
//
// Finds graph updates whose failure the code mishandles: an error check
// that ends the program in front of the fallback that re-instantiates, and
// a handled failure whose error stays in the runtime's last error for the
// next unrelated check. For the user-facing documentation see
// docs/checks/exec-update-error.md.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_EXECUPDATEERRORCHECK_H
#define CUDAGRAPH_TIDY_EXECUPDATEERRORCHECK_H

#include "CudaGraphCheck.h"

namespace clang::tidy::cudagraph {

class ExecUpdateErrorCheck : public CudaGraphCheck {
public:
  ExecUpdateErrorCheck(StringRef Name, ClangTidyContext *Context);

protected:
  void checkCapture(CaptureAnalysis &Analysis) override;

private:
  const Hazard *FatalCheck;
  const Hazard *ErrorLeft;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_EXECUPDATEERRORCHECK_H
