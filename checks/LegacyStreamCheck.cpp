//===--- LegacyStreamCheck.cpp - cudagraph-tidy ---------------------------===//

#include "LegacyStreamCheck.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/Lex/Lexer.h"
#include <functional>

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

/// For a legacy-stream finding at \p Site whose stream is a parameter, the
/// argument of a call up the chain that gives it the legacy stream (a
/// CXXDefaultArgExpr when that call leaves it to its default); null when
/// the stream argument at the site is itself the legacy stream.
static const Expr *passedLegacyStream(CaptureAnalysis &Analysis,
                                      const Hazard &H,
                                      const CapturedSite &Site,
                                      const MatchContext &Where,
                                      const DeclRefExpr *&Param) {
  const auto *Call = dyn_cast_or_null<CallExpr>(Site.Site.S);
  if (H.Kind != HazardKind::LegacyStream || !Call)
    return nullptr;
  const Expr *Stream = streamArgument(Call);
  Param = Stream ? dyn_cast<DeclRefExpr>(Stream->IgnoreParenImpCasts())
                 : nullptr;
  const Expr *Origin = legacyStreamOrigin(Stream, Analysis.context(), Where);
  return Param && Origin != Stream ? Origin : nullptr;
}

static SourceLocation originLoc(const Expr *Origin) {
  if (const auto *Default = dyn_cast<CXXDefaultArgExpr>(Origin))
    return Default->getUsedLocation();
  return Origin->getBeginLoc();
}

bool LegacyStreamCheck::relocate(CaptureAnalysis &Analysis, const Hazard &H,
                                 const CapturedSite &Site, SourceLocation &Loc,
                                 SourceRange &Range, std::string &Lead) {
  const DeclRefExpr *Param = nullptr;
  const Expr *Origin =
      passedLegacyStream(Analysis, H, Site, matchContextOf(Site), Param);
  if (!Origin)
    return false;
  Relocated[&Site] = Param;
  // The launcher is right for its other callers: the call that gives it
  // the legacy stream is what to change.
  Loc = Analysis.visibleLoc(originLoc(Origin));
  Range = isa<CXXDefaultArgExpr>(Origin) ? SourceRange(Loc)
                                           : Origin->getSourceRange();
  const auto *Owner = dyn_cast<FunctionDecl>(Param->getDecl()->getDeclContext());
  bool Launch = isa<CUDAKernelCallExpr>(Site.Site.S);
  Lead = Lead + (Launch ? ", launched" : ", called") + " in '" +
         (Owner ? displayName(Owner) : std::string("?")) +
         "' on the stream this call " +
         (isa<CXXDefaultArgExpr>(Origin) ? "leaves to its default,"
                                          : "passes,");
  return true;
}

void LegacyStreamCheck::notesFor(CaptureAnalysis &Analysis, const Hazard &H,
                                 const CapturedSite &Site) {
  const DeclRefExpr *Param = Relocated.lookup(&Site);
  if (!Param)
    return;
  diag(Analysis.visibleLoc(Site.Site.Loc),
       "'%0' is %select{launched|called}1 here on '%2'", DiagnosticIDs::Note)
      << (Site.Site.Callee ? displayName(Site.Site.Callee) : std::string("?"))
      << !isa<CUDAKernelCallExpr>(Site.Site.S) << Param->getDecl()->getName();
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

/// Whether \p Cond reads \p Also or a variable that \p Arm assigns.
static bool readsSetBy(const Expr *Cond, const Stmt *Arm,
                       const VarDecl *Also) {
  llvm::SmallPtrSet<const Decl *, 4> Set;
  if (Also)
    Set.insert(Also);
  forEachStmt(Arm, [&](const Stmt *T) {
    if (const auto *BO = dyn_cast<BinaryOperator>(T);
        BO && BO->isAssignmentOp())
      if (const auto *DRE =
              dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
        Set.insert(DRE->getDecl());
  });
  bool Reads = false;
  forEachStmt(Cond, [&](const Stmt *C) {
    if (const auto *Ref = dyn_cast<DeclRefExpr>(C))
      Reads |= Set.contains(Ref->getDecl());
  });
  return Reads;
}

/// Whether \p Cond is true exactly when \p V is the default stream:
/// `v == 0`, `0 == v`, `v == nullptr`, `!v`.
static bool testsDefault(const Expr *Cond, const VarDecl *V,
                         const ASTContext &Ctx) {
  auto Names = [&](const Expr *E) {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return DRE && DRE->getDecl() == V;
  };
  Cond = Cond->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(Cond))
    return UO->getOpcode() == UO_LNot && Names(UO->getSubExpr());
  const auto *BO = dyn_cast<BinaryOperator>(Cond);
  if (!BO || BO->getOpcode() != BO_EQ)
    return false;
  return (Names(BO->getLHS()) &&
          streamValue(BO->getRHS(), Ctx) == StreamValue::Default) ||
         (Names(BO->getRHS()) &&
          streamValue(BO->getLHS(), Ctx) == StreamValue::Default);
}

const IfStmt *LegacyStreamCheck::leftDefaultBy(const FunctionDecl *Owner,
                                               const Stmt *Begin,
                                               const VarDecl *Stream) {
  if (!Owner || !Owner->getBody() || !Stream->hasLocalStorage() ||
      Stream->getType()->isReferenceType())
    return nullptr;
  const ASTContext &Ctx = Owner->getASTContext();
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation At = SM.getExpansionLoc(Begin->getBeginLoc());
  ParentMap PM(Owner->getBody());
  // The conditions the begin sits under: one that reads what the test's
  // arm sets (`if (!local_stream) begin(s)`) may exclude that path.
  llvm::SmallVector<const Expr *, 4> Around;
  for (const Stmt *S = PM.getParent(Begin); S; S = PM.getParent(S))
    if (const auto *If = dyn_cast<IfStmt>(S))
      Around.push_back(If->getCond());
    else if (const auto *While = dyn_cast<WhileStmt>(S))
      Around.push_back(While->getCond());
  const IfStmt *Found = nullptr;
  bool SetLater = false;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
    if (!S || SetLater)
      return;
    SourceLocation From = SM.getExpansionLoc(S->getBeginLoc());
    if (!SM.isBeforeInTranslationUnit(From, At))
      return; // at or after the begin
    const auto *If = dyn_cast<IfStmt>(S);
    SourceLocation End = SM.getExpansionLoc(S->getEndLoc());
    bool Before = SM.isBeforeInTranslationUnit(End, At);
    if (If && Before && !If->getInit() && !If->getConditionVariable() &&
        testsDefault(If->getCond(), Stream, Ctx) && If->getThen() &&
        !mayChange(If->getThen(), Stream) && !mayLeave(If->getThen())) {
      if (llvm::none_of(Around, [&](const Expr *Cond) {
            return readsSetBy(Cond, If->getThen(), nullptr);
          }))
        Found = If;
      return;
    }
    if (Found && Before && mayChange(S, Stream)) {
      SetLater = true; // assigned between the test and the begin
      return;
    }
    // A later exit on the stream or on what the arm set
    // (`if (local_stream) return;`) takes that path away.
    if (Found && Before && If && mayLeave(If->getThen()) &&
        readsSetBy(If->getCond(), Found->getThen(), Stream)) {
      Found = nullptr;
      return;
    }
    if (Before && !isa<CompoundStmt>(S)) {
      // A whole statement before the begin: a test inside it counts.
      if (!Found || !mayChange(S, Stream))
        for (const Stmt *Child : S->children())
          Walk(Child);
      return;
    }
    for (const Stmt *Child : S->children())
      Walk(Child);
  };
  Walk(Owner->getBody());
  return SetLater ? nullptr : Found;
}

/// Whether \p Stream, a local handle of \p Owner, holds nothing but what
/// its declaration gives it: no initializer (an indeterminate handle; a
/// created stream is written through `&s`) or the default stream, and no
/// assignment, address or non-const reference anywhere in \p Owner.
static bool neverCreated(const FunctionDecl *Owner, const VarDecl *Stream,
                         const ASTContext &Ctx, bool PerThread) {
  if (!Owner || !Owner->getBody() || !Stream->hasLocalStorage() ||
      isa<ParmVarDecl>(Stream) || !Stream->getType()->isPointerType() ||
      cast<Decl>(Stream->getDeclContext())->getCanonicalDecl() !=
          Owner->getCanonicalDecl())
    return false;
  if (const Expr *Init = Stream->getInit();
      Init && !isa<ImplicitValueInitExpr>(Init->IgnoreParenImpCasts()) &&
      !isLegacyStream(streamValue(Init, Ctx), PerThread))
    return false;
  return !mayChange(Owner->getBody(), Stream);
}

void LegacyStreamCheck::checkCapture(CaptureAnalysis &Analysis) {
  Relocated.clear();
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
    const FunctionDecl *Callee = Call ? calleeOf(Call) : nullptr;
    if (!Callee || !Callee->getIdentifier())
      continue;
    StringRef Name = stripCudaApiSuffix(Callee->getName());
    bool OnDefault = false;
    const IfStmt *LeftBy = nullptr;
    const VarDecl *StreamVar = nullptr, *Unset = nullptr;
    if (Name.starts_with("cudaStreamBeginCapture") ||
        Name.starts_with("cuStreamBeginCapture")) {
      OnDefault = Call->getNumArgs() >= 1 &&
                  isLegacyStream(streamValue(Call->getArg(0), Ctx),
                                 perThreadDefaultStream());
      if (!OnDefault && Call->getNumArgs() >= 1 && !perThreadDefaultStream())
        if (const auto *DRE = dyn_cast<DeclRefExpr>(
                Call->getArg(0)->IgnoreParenImpCasts()))
          if ((StreamVar = dyn_cast<VarDecl>(DRE->getDecl()))) {
            if (neverCreated(Root.Owner, StreamVar, Ctx,
                             perThreadDefaultStream()))
              Unset = StreamVar;
            else
              LeftBy = leftDefaultBy(Root.Owner, Call, StreamVar);
            OnDefault = Unset || LeftBy;
          }
    }
    else if (Name == "capture_begin" && isa<CXXMethodDecl>(Callee))
      OnDefault = !perThreadDefaultStream() &&
                  defaultStreamCurrent(Root.Owner, Root.Call);
    if (!OnDefault)
      continue;
    Hazard Shown = *H;
    if (LeftBy)
      Shown.Effect = "may begin capture on the default stream";
    if (Unset && !Unset->getInit())
      Shown.Effect = "begins capture on a stream that is never created "
                     "(an indeterminate handle; zero is the default stream)";
    if (!reportHazard(Analysis, Shown, Root.Loc, Call->getSourceRange(),
                      "'" + displayName(Callee) + "'", Root.Owner, nullptr,
                      &Root))
      continue;
    if (Unset) {
      diag(Analysis.visibleLoc(Unset->getLocation()),
           "'%0' is declared here and no stream is ever created into it or "
           "assigned to it",
           DiagnosticIDs::Note)
          << Unset->getName();
      noteEagerWork(Analysis, Root, Unset);
      continue;
    }
    if (!LeftBy)
      continue;
    diag(Analysis.visibleLoc(LeftBy->getBeginLoc()),
         "'%0' is the default stream on the path through this test, whose "
         "branch does not assign it",
         DiagnosticIDs::Note)
        << StreamVar->getName();
    noteEagerWork(Analysis, Root, StreamVar);
  }
}

void LegacyStreamCheck::noteEagerWork(CaptureAnalysis &Analysis,
                                      const RegionRoot &Root,
                                      const VarDecl *Stream) {
  // On the path where the begin names the legacy stream no capture starts,
  // and the work the region meant to record on that stream runs eagerly.
  const SourceManager &SM = Analysis.context().getSourceManager();
  llvm::SmallVector<const CallExpr *, 8> Work;
  for (const CapturedSite &Site : Analysis.sites()) {
    const auto *Call = dyn_cast_or_null<CallExpr>(Site.Site.S);
    if (!Call || Site.Ctx.Root != &Root || Site.Ctx.Chain ||
        Site.Function != Root.Owner || namedStream(Call) != Stream ||
        llvm::is_contained(Work, Call))
      continue;
    const FunctionDecl *Callee = calleeOf(Call);
    if (Analysis.flows().eventOf(Callee) != CaptureEvent::None ||
        hasCaptureStatusOutput(Callee))
      continue; // the end of the region, a status query
    Work.push_back(Call);
  }
  llvm::sort(Work, [&](const CallExpr *A, const CallExpr *B) {
    return SM.isBeforeInTranslationUnit(A->getBeginLoc(), B->getBeginLoc());
  });
  if (Work.size() > maxCallSiteNotes())
    Work.resize(maxCallSiteNotes());
  for (const CallExpr *Call : Work)
    diag(Analysis.visibleLoc(Call->getBeginLoc()),
         "on that path this work on '%0' runs eagerly on the legacy stream "
         "and is missing from the graph",
         DiagnosticIDs::Note)
        << Stream->getName();
}

} // namespace clang::tidy::cudagraph
