//===--- UnjoinedForkCheck.h - cudagraph-tidy -------------------*- C++ -*-===//
//
// cudagraph-unjoined-fork: streams forked into a capture and never joined
// back before it ends (end-capture fails with 904), and capturing streams
// waiting on an event recorded before the capture began (905).
//
// Per capture region the check gathers the event records and waits that run
// under it: in the function holding the begin and in the functions it calls
// while capturing, with their parameters bound to the caller's arguments.
// Each stream and event is named by the storage it lives in (a variable, a
// field, an array as a whole, the object and method returning it, the
// current libtorch stream under its guard). A wait on an event recorded on
// stream X is an edge X -> Y; the streams reached from the capturing stream
// are in the capture, and each of them must reach the capturing stream back.
// A region with a record or wait whose stream or event cannot be named, or
// that hands events to code the check cannot see, is not judged.
// For the user-facing documentation see docs/checks/unjoined-fork.md.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_UNJOINEDFORKCHECK_H
#define CUDAGRAPH_TIDY_UNJOINEDFORKCHECK_H

#include "CudaGraphCheck.h"

namespace clang::tidy::cudagraph {

class UnjoinedForkCheck : public CudaGraphCheck {
public:
  UnjoinedForkCheck(StringRef Name, ClangTidyContext *Context);

protected:
  void checkCapture(CaptureAnalysis &Analysis) override;

private:
  class RegionWalk;
  void checkRegion(CaptureAnalysis &Analysis, const RegionRoot &Root,
                   const FunctionFlow &Flow);

  const Hazard *Fork = nullptr;
  const Hazard *Isolation = nullptr;
  const Hazard *Bound = nullptr;
  const std::vector<Hazard> Hazards;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_UNJOINEDFORKCHECK_H
