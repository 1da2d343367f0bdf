//===--- PinnedAllocCheck.h - cudagraph-tidy ---------------------------*- C++
//-*-===//

#ifndef CUDAGRAPH_TIDY_PINNED_ALLOC_CHECK_H
#define CUDAGRAPH_TIDY_PINNED_ALLOC_CHECK_H

#include "ApiHazardCheck.h"

namespace clang::tidy::cudagraph {

/// Finds pinned host memory allocation, release and registration that run while
/// a CUDA stream is being captured.
///
/// The APIs come from catalog/Hazards.def; the ExtraFunctions option adds
/// more. For the user-facing documentation see docs/checks/pinned-alloc.md.
class PinnedAllocCheck : public ApiHazardCheck {
public:
  PinnedAllocCheck(StringRef Name, ClangTidyContext *Context)
      : ApiHazardCheck(Name, Context) {}
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_PINNED_ALLOC_CHECK_H
