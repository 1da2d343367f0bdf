//===--- ExecUpdateErrorCheck.cpp - cudagraph-tidy ------------------------===//

#include "ExecUpdateErrorCheck.h"
#include "GraphUpdates.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"

namespace clang::tidy::cudagraph {

ExecUpdateErrorCheck::ExecUpdateErrorCheck(StringRef Name,
                                           ClangTidyContext *Context)
    : CudaGraphCheck(Name, Context),
      FatalCheck(findHazard("exec-update-fatal-check")),
      ErrorLeft(findHazard("exec-update-error-left")) {
  assert(FatalCheck && ErrorLeft && "the catalog lacks the update hazards");
}

void ExecUpdateErrorCheck::checkCapture(CaptureAnalysis &Analysis) {
  ASTContext &Ctx = Analysis.context();
  const SourceManager &SM = Ctx.getSourceManager();
  GraphUpdateFacts Facts(Ctx, Analysis.code());
  for (const FunctionDecl *FD : Analysis.userFunctions()) {
    for (const GraphUpdateIssue &I : Facts.issuesIn(FD)) {
      // An update written as an error-check macro's argument is shown where
      // it is written.
      SourceLocation Loc = SM.getFileLoc(I.Update->getBeginLoc());
      if (!Analysis.isUserLocation(Loc))
        continue;
      std::string Lead =
          "'" + displayName(calleeOf(I.Update)) + "'";
      SourceRange Range(Loc, SM.getFileLoc(I.Update->getEndLoc()));
      if (I.K == GraphUpdateIssue::Kind::FatalCheck) {
        if (!reportHazard(Analysis, *FatalCheck, Loc, Range, Lead, FD,
                          nullptr, nullptr))
          continue;
        diag(SM.getFileLoc(I.Fallback->getBeginLoc()),
             "the fallback for a failed update, which no failed update "
             "reaches",
             DiagnosticIDs::Note);
        continue;
      }
      const CallExpr *Read = I.Read;
      bool Elsewhere = false;
      if (!Read) {
        // The path returns with the error set: the next check of the last
        // error on this thread reports it.
        Read = Facts.firstCheckedRead(Analysis.userFunctions());
        if (!Read)
          continue;
        Elsewhere = true;
      }
      if (!reportHazard(Analysis, *ErrorLeft, Loc, Range, Lead, FD, nullptr,
                        nullptr))
        continue;
      if (I.Via)
        diag(SM.getFileLoc(I.Via->getBeginLoc()),
             "'%0' is called here after the failed update",
             DiagnosticIDs::Note)
            << displayName(calleeOf(I.Via));
      if (Elsewhere)
        diag(SM.getFileLoc(FD->getBody()->getEndLoc()),
             "a path where the update failed leaves '%0' with the error "
             "still set",
             DiagnosticIDs::Note)
            << displayName(FD);
      diag(SM.getFileLoc(Read->getBeginLoc()),
           Elsewhere ? "a later check of the last error, such as this one, "
                       "reports 910 from the failed update"
                     : "this check of the last error reports 910 from the "
                       "failed update",
           DiagnosticIDs::Note);
    }
  }
}

} // namespace clang::tidy::cudagraph
