//===--- LegacyStreamCheck.cpp - cudagraph-tidy ---------------------------===//

#include "LegacyStreamCheck.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/Lex/Lexer.h"

namespace clang::tidy::cudagraph {

std::vector<FixItHint> LegacyStreamCheck::fixesFor(CaptureAnalysis &Analysis,
                                                   const Hazard &H,
                                                   const CapturedSite &Site) {
  if (H.Kind != HazardKind::LegacyStream)
    return {};
  const auto *Call = dyn_cast_or_null<CallExpr>(Site.Site.S);
  std::optional<std::string> Stream = capturingStreamInScope(Site);
  if (!Call || !Stream || Call->getBeginLoc().isMacroID())
    return {};
  const SourceManager &SM = Analysis.context().getSourceManager();
  const LangOptions &LO = Analysis.context().getLangOpts();
  if (const auto *Launch = dyn_cast<CUDAKernelCallExpr>(Call)) {
    const CallExpr *Config = Launch->getConfig();
    if (!Config || Config->getNumArgs() < 4)
      return {};
    const Expr *Smem = Config->getArg(2), *Strm = Config->getArg(3);
    if (!isa<CXXDefaultArgExpr>(Strm)) {
      if (Strm->getBeginLoc().isMacroID())
        return {};
      return {FixItHint::CreateReplacement(Strm->getSourceRange(), *Stream)};
    }
    const Expr *Last = isa<CXXDefaultArgExpr>(Smem) ? Config->getArg(1) : Smem;
    if (Last->getEndLoc().isMacroID())
      return {};
    SourceLocation After =
        Lexer::getLocForEndOfToken(Last->getEndLoc(), 0, SM, LO);
    std::string Text = isa<CXXDefaultArgExpr>(Smem) ? ", 0, " + *Stream
                                                     : ", " + *Stream;
    return {FixItHint::CreateInsertion(After, Text)};
  }
  const Expr *Arg = streamArgument(Call);
  if (!Arg || isa<CXXDefaultArgExpr>(Arg) || Arg->getBeginLoc().isMacroID())
    return {};
  return {FixItHint::CreateReplacement(Arg->getSourceRange(), *Stream)};
}

bool LegacyStreamCheck::defaultStreamCurrent(const FunctionDecl *Owner,
                                             const Stmt *Begin) {
  if (!Owner || !Owner->getBody())
    return false;
  const ASTContext &Ctx = Owner->getASTContext();
  ParentMap PM(Owner->getBody());
  if (const Expr *Stream = nullptr; currentStreamBefore(Begin, PM, Stream))
    return Stream && streamValue(Stream, Ctx) == StreamValue::Default;
  // A program starts with the default stream current.
  return Owner->isMain();
}

void LegacyStreamCheck::checkCapture(CaptureAnalysis &Analysis) {
  ApiHazardCheck::checkCapture(Analysis);
  const Hazard *H = nullptr;
  for (const Hazard &Candidate : Hazards)
    if (Candidate.Kind == HazardKind::DefaultStreamBegin)
      H = &Candidate;
  if (!H)
    return;
  const ASTContext &Ctx = Analysis.context();
  for (const RegionRoot &Root : Analysis.flows().roots()) {
    if (Root.K != RegionRoot::Kind::BeginApi || !Root.Call ||
        !Analysis.isUserLocation(Root.Loc))
      continue;
    const auto *Call = dyn_cast<CallExpr>(Root.Call);
    const FunctionDecl *Callee = Call ? Call->getDirectCallee() : nullptr;
    if (!Callee || !Callee->getIdentifier())
      continue;
    StringRef Name = stripCudaApiSuffix(Callee->getName());
    bool OnDefault = false;
    if (Name.starts_with("cudaStreamBeginCapture") ||
        Name.starts_with("cuStreamBeginCapture"))
      OnDefault = Call->getNumArgs() >= 1 &&
                  isLegacyStream(streamValue(Call->getArg(0), Ctx),
                                 perThreadDefaultStream());
    else if (Name == "capture_begin" && isa<CXXMethodDecl>(Callee))
      OnDefault = !perThreadDefaultStream() &&
                  defaultStreamCurrent(Root.Owner, Root.Call);
    if (!OnDefault)
      continue;
    reportHazard(Analysis, *H, Root.Loc, Call->getSourceRange(),
                 "'" + displayName(Callee) + "'", Root.Owner, nullptr, &Root);
  }
}

} // namespace clang::tidy::cudagraph
