//===--- CaptureLeftOpenCheck.cpp - cudagraph-tidy ------------------------===//

#include "CaptureLeftOpenCheck.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"

namespace clang::tidy::cudagraph {

CaptureLeftOpenCheck::CaptureLeftOpenCheck(StringRef Name,
                                           ClangTidyContext *Context)
    : CudaGraphCheck(Name, Context),
      LeftOpen(findHazard("capture-left-open")) {
  assert(LeftOpen && "the catalog lacks capture-left-open");
}

void CaptureLeftOpenCheck::checkCapture(CaptureAnalysis &Analysis) {
  const SourceManager &SM = Analysis.context().getSourceManager();
  for (const OpenReturn &Open : Analysis.openReturns()) {
    // A return spelled in a macro (an error-check macro) is shown where the
    // macro is used.
    SourceLocation Loc = SM.getExpansionLoc(Open.Return->getBeginLoc());
    if (!Analysis.isUserLocation(Loc))
      continue;
    if (!reportHazard(Analysis, *LeftOpen, Loc, SourceRange(), "this path",
                      Open.Function))
      continue;
    addChainNotes(Analysis, nullptr, Open.Root);
  }
}

} // namespace clang::tidy::cudagraph
