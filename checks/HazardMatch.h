//===--- HazardMatch.h - cudagraph-tidy -------------------------*- C++ -*-===//
//
// Decides whether one call is a use of a catalog hazard.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_HAZARDMATCH_H
#define CUDAGRAPH_TIDY_HAZARDMATCH_H

#include "CaptureAnalysis.h"
#include "HazardCatalog.h"

namespace clang::tidy::cudagraph {

/// The first hazard in \p Hazards that \p Site uses, or null.
const Hazard *matchHazard(CaptureAnalysis &Analysis,
                          llvm::ArrayRef<Hazard> Hazards, const CallSite &Site);

/// True for a tensor copy to the CPU that does not pass non_blocking=true.
bool isBlockingHostCopy(const CallExpr *Call);

/// True when \p E is a compile-time constant that converts to true, looking
/// through std::optional and implicit conversions.
bool isConstantTrue(const Expr *E, const ASTContext &Ctx);

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_HAZARDMATCH_H
