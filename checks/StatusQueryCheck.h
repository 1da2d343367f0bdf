//===--- StatusQueryCheck.h - cudagraph-tidy ---------------------------*- C++
//-*-===//

#ifndef CUDAGRAPH_TIDY_STATUS_QUERY_CHECK_H
#define CUDAGRAPH_TIDY_STATUS_QUERY_CHECK_H

#include "ApiHazardCheck.h"

namespace clang::tidy::cudagraph {

/// Finds event and stream status queries that run while a CUDA stream is being
/// captured.
///
/// The APIs come from catalog/Hazards.def; the ExtraFunctions option adds
/// more. For the user-facing documentation see docs/checks/status-query.md.
class StatusQueryCheck : public ApiHazardCheck {
public:
  StatusQueryCheck(StringRef Name, ClangTidyContext *Context)
      : ApiHazardCheck(Name, Context) {}
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_STATUS_QUERY_CHECK_H
