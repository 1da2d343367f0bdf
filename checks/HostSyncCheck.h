//===--- HostSyncCheck.h - cudagraph-tidy ---------------------------*- C++
//-*-===//

#ifndef CUDAGRAPH_TIDY_HOST_SYNC_CHECK_H
#define CUDAGRAPH_TIDY_HOST_SYNC_CHECK_H

#include "ApiHazardCheck.h"

namespace clang::tidy::cudagraph {

/// Finds host synchronizations and blocking device-to-host reads that run while
/// a CUDA stream is being captured.
///
/// The APIs come from catalog/Hazards.def; the ExtraFunctions option adds
/// more. For the user-facing documentation see docs/checks/host-sync.md.
class HostSyncCheck : public ApiHazardCheck {
public:
  HostSyncCheck(StringRef Name, ClangTidyContext *Context)
      : ApiHazardCheck(Name, Context) {}
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_HOST_SYNC_CHECK_H
