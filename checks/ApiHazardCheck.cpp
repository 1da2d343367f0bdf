//===--- ApiHazardCheck.cpp - cudagraph-tidy ------------------------------===//

#include "ApiHazardCheck.h"
#include "HazardMatch.h"

namespace clang::tidy::cudagraph {

ApiHazardCheck::ApiHazardCheck(StringRef Name, ClangTidyContext *Context)
    : CudaGraphCheck(Name, Context),
      ExtraFunctions(Options.get("ExtraFunctions", "")),
      Hazards(hazardsForCheck(Name, ExtraFunctions)) {}

void ApiHazardCheck::storeOptions(ClangTidyOptions::OptionMap &Opts) {
  CudaGraphCheck::storeOptions(Opts);
  Options.store(Opts, "ExtraFunctions", ExtraFunctions);
}

void ApiHazardCheck::checkCapture(CaptureAnalysis &Analysis) {
  for (const ReachedSite &Site : Analysis.sites()) {
    const Hazard *H = matchHazard(Analysis, Hazards, Site.Site);
    if (!H)
      continue;
    const Reach *Via = nullptr;
    SourceLocation Loc = anchorOf(Analysis, Site, Via);
    if (Loc.isInvalid())
      continue;
    std::string Api = H->Kind == HazardKind::TensorPrint
                          ? "operator<<' on a tensor"
                          : displayName(Site.Site.Callee) + "'";
    std::string Message;
    if (Via)
      Message = ("call to '" + displayName(Via->Function) + "' reaches '" +
                 Api + " in library code, which " + H->Effect)
                    .str();
    else
      Message = ("'" + Api + " " + H->Effect).str();
    Message +=
        (" during CUDA graph capture: " + H->Outcome + "; " + H->Instead).str();
    if (!reportOnce(Loc, Message))
      continue;
    addChainNotes(Analysis, Via ? Via->Parent : Site.Context, Site.Root);
  }
}

} // namespace clang::tidy::cudagraph
