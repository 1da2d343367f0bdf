//===--- CaptureLeftOpenCheck.cpp - cudagraph-tidy ------------------------===//

#include "CaptureLeftOpenCheck.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace clang::tidy::cudagraph {

CaptureLeftOpenCheck::CaptureLeftOpenCheck(StringRef Name,
                                           ClangTidyContext *Context)
    : CudaGraphCheck(Name, Context),
      LeftOpen(findHazard("capture-left-open")) {
  assert(LeftOpen && "the catalog lacks capture-left-open");
}

void CaptureLeftOpenCheck::checkCapture(CaptureAnalysis &Analysis) {
  const SourceManager &SM = Analysis.context().getSourceManager();
  // One finding per capture a function begins, like a leak reported once per
  // allocation: every early exit of a region has the same fix (end the
  // capture on error paths, or a guard object), so the first exit in source
  // order carries the warning and the others are listed in notes.
  struct Exits {
    const FunctionDecl *Function;
    const RegionRoot *Root;
    llvm::SmallVector<SourceLocation, 4> Locs;
  };
  llvm::SmallVector<Exits, 4> Groups;
  for (const OpenReturn &Open : Analysis.openReturns()) {
    // A return spelled in a macro (an error-check macro) is shown where the
    // macro is used.
    SourceLocation Loc = SM.getExpansionLoc(Open.Return->getBeginLoc());
    if (!Analysis.isUserLocation(Loc))
      continue;
    auto *Group = llvm::find_if(Groups, [&](const Exits &G) {
      return G.Function == Open.Function && G.Root == Open.Root;
    });
    if (Group == Groups.end()) {
      Groups.push_back({Open.Function, Open.Root, {}});
      Group = &Groups.back();
    }
    if (!llvm::is_contained(Group->Locs, Loc))
      Group->Locs.push_back(Loc);
  }
  for (Exits &Group : Groups) {
    llvm::sort(Group.Locs, [&](SourceLocation A, SourceLocation B) {
      return SM.isBeforeInTranslationUnit(A, B);
    });
    // An end wrapper's failure before its end: the capture is the caller's.
    Hazard H = *LeftOpen;
    if (Group.Root->K == RegionRoot::Kind::Entry)
      H.Effect = "returns a failure before the end-capture call below it, "
                 "leaving open the capture its caller began";
    if (!reportHazard(Analysis, H, Group.Locs.front(), SourceRange(),
                      "this path", Group.Function, nullptr, Group.Root))
      continue;
    for (SourceLocation Other : llvm::drop_begin(Group.Locs))
      diag(Other, "this path also returns with the capture open",
           DiagnosticIDs::Note);
    addChainNotes(Analysis, nullptr, Group.Root);
  }
}

} // namespace clang::tidy::cudagraph
