//===--- ApiHazardCheck.cpp - cudagraph-tidy ------------------------------===//

#include "ApiHazardCheck.h"

namespace clang::tidy::cudagraph {

ApiHazardCheck::ApiHazardCheck(StringRef Name, ClangTidyContext *Context)
    : CudaGraphCheck(Name, Context),
      ExtraFunctions(Options.get("ExtraFunctions", "")),
      Hazards(hazardsForCheck(Name, ExtraFunctions)) {}

void ApiHazardCheck::storeOptions(ClangTidyOptions::OptionMap &Opts) {
  CudaGraphCheck::storeOptions(Opts);
  Options.store(Opts, "ExtraFunctions", ExtraFunctions);
}

static bool namedByCatalog(CaptureAnalysis &Analysis, const FunctionDecl *FD) {
  llvm::StringRef Name = Analysis.code().nameOf(FD);
  return llvm::any_of(allHazards(), [&](const Hazard &H) {
    return (H.Kind == HazardKind::Callee ||
            H.Kind == HazardKind::ThrustPolicy ||
            H.Kind == HazardKind::TempStorageRun) &&
           H.Names.matches(Name);
  });
}

void ApiHazardCheck::checkCapture(CaptureAnalysis &Analysis) {
  ReportedOnce.clear();
  for (const CapturedSite &Site : Analysis.sites())
    checkSite(Analysis, Site, /*OtherThread=*/false);
  for (const CapturedSite &Site : Analysis.threadSites())
    checkSite(Analysis, Site, /*OtherThread=*/true);
}

void ApiHazardCheck::checkSite(CaptureAnalysis &Analysis,
                               const CapturedSite &Site, bool OtherThread) {
  MatchContext Where = matchContextOf(Site);
  Where.IsolatedStream = [&Analysis](const Decl *D) {
    return Analysis.isIsolatedStream(D);
  };
  Where.PoollessCapture = !OtherThread && Analysis.beginsWithoutPool(Site.Ctx.Root);
  const Hazard *H = matchHazard(Analysis.code(), Hazards, Site.Site, Where);
  if (!H || Analysis.choosesSafeForm(Site, *H))
    return;
  // Every tensor of such a capture comes from the shared pool: the first
  // allocation says so for all of them.
  if (H->Kind == HazardKind::PoollessAlloc &&
      !ReportedOnce.insert(Site.Ctx.Root).second)
    return;
  // The runtime entry's name without a version suffix (`_v2`, `_ptsz`), as
  // the catalog's per-mode lists spell it.
  StringRef ApiName =
      stripCudaApiSuffix(Analysis.code().nameOf(Site.Site.Callee));
  // On another thread only the calls a global-mode capture prohibits from
  // every thread matter (the catalog's measured list: syncs, queries,
  // allocation, graph destruction); graph launches, eager copies and
  // framework checks of the current stream do not involve the capture.
  if (OtherThread &&
      ((H->Kind != HazardKind::Callee &&
        H->Kind != HazardKind::UncapturedStream) ||
       !H->failsOnOtherThread(ApiName)))
    return;
  // A call naming a stream that is not capturing, beside captures of other
  // streams this function began: a graph launch there runs eagerly (what
  // the code means); what a global or thread-local capture prohibits on
  // every stream of the thread (the other-thread list: syncs,
  // instantiation, graph destruction, cudaFree) still fails, and a relaxed
  // capture allows all of it. Measured on an H200
  // (runtime-harness/tools/other-stream-probe.cu).
  const auto *Call = dyn_cast_or_null<CallExpr>(Site.Site.S);
  bool IdleStream = !OtherThread && H->Kind == HazardKind::Callee &&
                    Site.Site.Callee == (Call ? calleeOf(Call)
                                              : nullptr) &&
                    Analysis.onIdleStream(Call, Site.Ctx);
  if (IdleStream &&
      (!H->failsOnOtherThread(ApiName) ||
       (Site.Ctx.Modes & ~ModeRelaxed) == 0))
    return;
  const Reach *Via = nullptr;
  SourceLocation Loc = anchorOf(Analysis, Site, Via);
  if (Loc.isInvalid())
    return;
  // A library entry the catalog names itself (thrust::reduce) is reported
  // as that hazard, with its own advice, not again for what it calls.
  if (Via && namedByCatalog(Analysis, Via->Function))
    return;
  std::string Api = H->Kind == HazardKind::TensorPrint
                        ? "'operator<<' on a tensor"
                        : "'" + displayName(Site.Site.Callee) + "'";
  std::string Lead = Via ? "call to '" + displayName(Via->Function) +
                               "' reaches " + Api + " in library code, which"
                         : Api;
  const Stmt *Anchor = Via ? Via->Site.S : Site.Site.S;
  SourceRange Range = Anchor ? Anchor->getSourceRange() : SourceRange();
  if (OtherThread) {
    bool Relaxed = H->allowedInAll(ModeRelaxed, ApiName);
    if (!reportOtherThread(Analysis, *H, Loc, Range, Lead, Relaxed,
                           Via ? Via->Parent : Site.Ctx.Chain, Site.Ctx.Root))
      return;
  } else {
    std::vector<FixItHint> Fixes;
    if (!Via && !relocate(Analysis, *H, Site, Loc, Range, Lead))
      Fixes = fixesFor(Analysis, *H, Site);
    if (!reportHazard(Analysis, *H, Loc, Range, Lead, Site.Function,
                      Via ? Via->Parent : Site.Ctx.Chain, Site.Ctx.Root, Fixes))
      return;
    if (!Via)
      notesFor(Analysis, *H, Site);
  }
  if (IdleStream)
    diag(Loc,
         "the stream it names is not the one being captured, but a global "
         "or thread-local capture prohibits this call on every stream of "
         "the thread",
         DiagnosticIDs::Note);
  if (Site.Ctx.StreamGuarded)
    diag(Loc,
         "a capture-status test guards this call, but it waits on every "
         "stream of the device, including streams captured elsewhere",
         DiagnosticIDs::Note);
  addChainNotes(Analysis, Via ? Via->Parent : Site.Ctx.Chain, Site.Ctx.Root);
}

/// `name(args)` -> `nameAsync(args, stream)` when the Async form is declared
/// with one more parameter, a stream, and the call writes every argument.
static std::vector<FixItHint>
asyncOnStream(ASTContext &Ctx, const CallExpr *Call, StringRef Stream) {
  const FunctionDecl *Callee = calleeOf(Call);
  const auto *Ref =
      dyn_cast<DeclRefExpr>(Call->getCallee()->IgnoreParenImpCasts());
  if (!Callee || !Ref || !Callee->getIdentifier() ||
      Call->getBeginLoc().isMacroID() || Call->getRParenLoc().isMacroID() ||
      Ref->getNameInfo().getLoc().isMacroID())
    return {};
  for (const Expr *Arg : Call->arguments())
    if (isa<CXXDefaultArgExpr>(Arg))
      return {};
  std::string Async = (Callee->getName() + "Async").str();
  const FunctionDecl *AsyncDecl = nullptr;
  for (const NamedDecl *D :
       Callee->getDeclContext()->getRedeclContext()->lookup(
           &Ctx.Idents.get(Async)))
    if (const auto *FD = dyn_cast<FunctionDecl>(D->getUnderlyingDecl()))
      if (FD->getNumParams() == Callee->getNumParams() + 1)
        AsyncDecl = FD;
  if (!AsyncDecl)
    return {};
  QualType Last = AsyncDecl->getParamDecl(Callee->getNumParams())->getType();
  if (!Last->isPointerType() ||
      !StringRef(Last.getAsString()).contains_insensitive("stream"))
    return {};
  return {
      FixItHint::CreateReplacement(Ref->getNameInfo().getSourceRange(), Async),
      FixItHint::CreateInsertion(Call->getRParenLoc(),
                                 (Call->getNumArgs() ? ", " : "") +
                                     Stream.str())};
}

std::vector<FixItHint> ApiHazardCheck::fixesFor(CaptureAnalysis &Analysis,
                                                const Hazard &H,
                                                const CapturedSite &Site) {
  const auto *Call = dyn_cast_or_null<CallExpr>(Site.Site.S);
  if (!Call || Call->getBeginLoc().isMacroID())
    return {};
  if (H.Id == "sync-memcpy" || H.Id == "sync-memset") {
    std::optional<std::string> Stream = capturingStreamInScope(Site);
    return Stream ? asyncOnStream(Analysis.context(), Call, *Stream)
                  : std::vector<FixItHint>();
  }
  const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
  const auto *ME =
      Member ? dyn_cast<MemberExpr>(Member->getCallee()->IgnoreParens())
             : nullptr;
  if (!ME || ME->getMemberLoc().isMacroID() || Call->getRParenLoc().isMacroID())
    return {};
  StringRef Name = Member->getMethodDecl()->getName();
  // A blocking copy into pinned host memory: non_blocking makes it a copy
  // node of the graph (libtorch allows it for a pinned destination).
  if (H.Id == "tensor-to-host" && Name == "copy_" && Call->getNumArgs() >= 1 &&
      llvm::all_of(llvm::drop_begin(Call->arguments()),
                   [](const Expr *A) { return isa<CXXDefaultArgExpr>(A); }) &&
      isPinnedHostTensor(Member->getImplicitObjectArgument()))
    return {FixItHint::CreateInsertion(Call->getRParenLoc(),
                                       ", /*non_blocking=*/true")};
  // nonzero's result size depends on the data; nonzero_static's does not.
  if (H.Id == "tensor-nonzero" && Name == "nonzero" && Call->getNumArgs() == 0)
    return {FixItHint::CreateReplacement(ME->getMemberLoc(), "nonzero_static"),
            FixItHint::CreateInsertion(
                Call->getRParenLoc(),
                "/*size=*/ /* TODO: the largest number of nonzero elements; "
                "the rest is filled with fill_value */")};
  return {};
}

} // namespace clang::tidy::cudagraph
