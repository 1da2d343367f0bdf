//===--- HazardMatch.h - cudagraph analysis ---------------------*- C++ -*-===//
//
// Decides whether one call is a use of a catalog hazard, in the capture
// modes it runs under.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_HAZARDMATCH_H
#define CUDAGRAPH_ANALYSIS_HAZARDMATCH_H

#include "CallSites.h"
#include "HazardCatalog.h"
#include "UserCode.h"

namespace clang::cudagraph {

/// Where a call runs: the capture modes it may run in, and whether a
/// capture-status test says its stream is not capturing.
struct MatchContext {
  ModeSet Modes = AnyMode;
  bool StreamGuarded = false;
};

/// The first hazard in \p Hazards that \p Site uses in \p Where, or null.
const Hazard *matchHazard(CodeClassifier &Code, llvm::ArrayRef<Hazard> Hazards,
                          const CallSite &Site,
                          const MatchContext &Where = MatchContext());

/// True for a tensor copy to the CPU that does not pass non_blocking=true.
bool isBlockingHostCopy(const CallExpr *Call);

} // namespace clang::cudagraph

#endif // CUDAGRAPH_ANALYSIS_HAZARDMATCH_H
