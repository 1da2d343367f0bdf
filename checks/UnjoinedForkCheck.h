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
//
// Events bound to a capture: an event recorded on a capturing stream without
// cudaEventRecordExternal fails every later host wait, query, timing and
// eager stream wait (cudaErrorInvalidValue) until recorded again outside a
// capture. Reported at the use after the end in the function holding the
// begin, and, for an event kept in an object or a global, at a record made
// under capture (in a region, or where the function's own status test says
// it is capturing) when another function uses it where its own status test
// says no capture is open, without recording it first.
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
  /// Events kept in objects or globals, recorded under capture and used
  /// where the code knows no capture is open.
  void checkEagerEvents(CaptureAnalysis &Analysis);

  /// A record of a field or global event on a capturing stream of a region.
  struct RegionRecord {
    const Decl *Event;
    const CallExpr *Call;
    const FunctionDecl *Function;
    const RegionRoot *Root;
  };
  std::vector<RegionRecord> RegionRecords;

  const Hazard *Fork = nullptr;
  const Hazard *Isolation = nullptr;
  const Hazard *Bound = nullptr;
  const Hazard *EagerRecord = nullptr;
  const std::vector<Hazard> Hazards;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_UNJOINEDFORKCHECK_H
