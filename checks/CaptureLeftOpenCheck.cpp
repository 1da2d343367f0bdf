//===--- CaptureLeftOpenCheck.cpp - cudagraph-tidy ------------------------===//

#include "CaptureLeftOpenCheck.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
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
    bool Throws = llvm::any_of(Analysis.openReturns(), [&](const OpenReturn &O) {
      return O.Function == Group.Function && O.Root == Group.Root &&
             isa<CXXThrowExpr>(O.Return) &&
             SM.getExpansionLoc(O.Return->getBeginLoc()) == Group.Locs.front();
    });
    if (Throws)
      H.Effect = "throws while the capture it began is still open";
    if (!reportHazard(Analysis, H, Group.Locs.front(), SourceRange(),
                      "this path", Group.Function, nullptr, Group.Root))
      continue;
    for (SourceLocation Other : llvm::drop_begin(Group.Locs))
      diag(Other, "this path also returns with the capture open",
           DiagnosticIDs::Note);
    addChainNotes(Analysis, nullptr, Group.Root);
  }
  // An end given the legacy stream (`cudaStreamEndCapture(0, &g)`) while
  // the capture is on another stream: the fix is at that call, so each one
  // carries its own warning.
  for (const WrongStreamEnd &Wrong : Analysis.wrongStreamEnds()) {
    SourceLocation Loc = SM.getExpansionLoc(Wrong.End->getBeginLoc());
    if (!Analysis.isUserLocation(Loc))
      continue;
    Hazard H = *LeftOpen;
    // Measured: 401 on an H200 (raw.capture-left-open.pos-legacy-end).
    H.Effect = "ends a capture on the legacy stream, not on the stream this "
               "capture began on: it fails with cudaErrorIllegalState (401) "
               "and ends nothing";
    H.Instead = H.TorchInstead =
        "pass the stream the capture began on (the one given to the begin "
        "call)";
    llvm::SmallVector<FixItHint, 1> Fixes;
    const Expr *Arg = streamArgument(Wrong.End);
    if (std::optional<std::string> Stream =
            capturingStream(Wrong.Root, Wrong.Function);
        Stream && Arg && !Arg->getBeginLoc().isMacroID() &&
        inScopeAt(*Wrong.Root, Wrong.Function, Wrong.End))
      Fixes.push_back(
          FixItHint::CreateReplacement(Arg->getSourceRange(), *Stream));
    if (!reportHazard(Analysis, H, Loc, Wrong.End->getSourceRange(),
                      "this call", Wrong.Function, nullptr, Wrong.Root, Fixes))
      continue;
    addChainNotes(Analysis, nullptr, Wrong.Root);
  }
}

/// Whether the variable \p Root's begin call names its stream with is in
/// scope at \p Use, a statement of \p Function: a parameter, or a local
/// declared in a block that holds Use.
bool CaptureLeftOpenCheck::inScopeAt(const RegionRoot &Root,
                                     const FunctionDecl *Function,
                                     const Stmt *Use) {
  const auto *Begin = dyn_cast_or_null<CallExpr>(Root.Call);
  const Expr *Arg = Begin ? streamArgument(Begin) : nullptr;
  const auto *DRE =
      Arg ? dyn_cast<DeclRefExpr>(Arg->IgnoreParenImpCasts()) : nullptr;
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || !Function->getBody())
    return false;
  if (isa<ParmVarDecl>(VD))
    return true;
  ParentMap PM(Function->getBody());
  bool InScope = false;
  forEachStmt(Function->getBody(), [&](const Stmt *S) {
    const auto *DS = dyn_cast<DeclStmt>(S);
    if (InScope || !DS || !llvm::is_contained(DS->decls(), VD))
      return;
    const Stmt *Block = PM.getParent(DS);
    for (const Stmt *P = PM.getParent(Use); P && Block; P = PM.getParent(P))
      if (P == Block) {
        InScope = true;
        return;
      }
  });
  return InScope;
}

} // namespace clang::tidy::cudagraph
