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
            H.Kind == HazardKind::ThrustPolicy) &&
           H.Names.matches(Name);
  });
}

void ApiHazardCheck::checkCapture(CaptureAnalysis &Analysis) {
  for (const CapturedSite &Site : Analysis.sites())
    checkSite(Analysis, Site, /*OtherThread=*/false);
  for (const CapturedSite &Site : Analysis.threadSites())
    checkSite(Analysis, Site, /*OtherThread=*/true);
}

void ApiHazardCheck::checkSite(CaptureAnalysis &Analysis,
                               const CapturedSite &Site, bool OtherThread) {
  MatchContext Where{Site.Ctx.Modes, Site.Ctx.StreamGuarded,
                     perThreadDefaultStream()};
  const Hazard *H = matchHazard(Analysis.code(), Hazards, Site.Site, Where);
  if (!H || Analysis.choosesSafeForm(Site, *H))
    return;
  // On another thread only the calls a global-mode capture prohibits from
  // every thread matter (measured: cudaEventQuery and cudaMalloc fail with
  // 900 there); eager copies and framework checks of the current stream do
  // not involve the capture.
  if (OtherThread &&
      (H->Verdict != GpuVerdict::CaptureError || H->Kind != HazardKind::Callee))
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
  std::string Lead =
      Via ? "call to '" + displayName(Via->Function) + "' reaches " + Api +
                " in library code, which"
          : Api;
  const Stmt *Anchor = Via ? Via->Site.S : Site.Site.S;
  SourceRange Range = Anchor ? Anchor->getSourceRange() : SourceRange();
  if (OtherThread) {
    bool Relaxed = H->allowedInAll(
        ModeRelaxed,
        stripCudaApiSuffix(Analysis.code().nameOf(Site.Site.Callee)));
    if (!reportOtherThread(Analysis, *H, Loc, Range, Lead, Relaxed,
                           Via ? Via->Parent : Site.Ctx.Chain, Site.Ctx.Root))
      return;
  } else {
    std::vector<FixItHint> Fixes;
    if (!Via)
      Fixes = fixesFor(Analysis, *H, Site);
    if (!reportHazard(Analysis, *H, Loc, Range, Lead, Site.Function,
                      Via ? Via->Parent : Site.Ctx.Chain, Site.Ctx.Root, Fixes))
      return;
    if (!Via)
      notesFor(Analysis, *H, Site);
  }
  if (Site.Ctx.StreamGuarded)
    diag(Loc,
         "a capture-status test guards this call, but it waits on every "
         "stream of the device, including streams captured elsewhere",
         DiagnosticIDs::Note);
  addChainNotes(Analysis, Via ? Via->Parent : Site.Ctx.Chain, Site.Ctx.Root);
}

} // namespace clang::tidy::cudagraph
