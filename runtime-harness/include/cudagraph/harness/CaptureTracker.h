//===--- CaptureTracker.h - capture bookkeeping and root causes -*- C++ -*-===//
//
// The part of the harness that decides what to report. It knows which
// captures are open, nests driver calls under the runtime call that made
// them (so a failing cudaStreamSynchronize is reported once, with its
// cuStreamSynchronize attached), marks the first capture error of each
// capture as its root cause (901 afterwards is an echo), and flags work that
// reaches a stream that is not capturing while a capture is open.
//
// It sees only decoded events (ApiEvent, ThrowEvent) and returns reports, so
// the CUPTI glue, the replay tool and the unit tests drive the same code.
// Not thread-safe: callers serialize.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_HARNESS_CAPTURETRACKER_H
#define CUDAGRAPH_HARNESS_CAPTURETRACKER_H

#include "cudagraph/harness/Events.h"

#include <map>
#include <optional>
#include <vector>

namespace cudagraph {
namespace harness {

/// What happened in the current region, for the probe's verdict.
struct RegionStats {
  unsigned CaptureErrors = 0; ///< Root causes seen.
  unsigned Escapes = 0;
  unsigned FrameworkErrors = 0;
  std::string FirstRootCauseApi;
  int FirstRootCauseResult = 0;
  std::string FirstEscapeApi;
  std::string FirstFrameworkMessage;
};

class CaptureTracker {
public:
  /// A capture between its begin and its end.
  struct OpenCapture {
    uint64_t Id = 0;
    uint64_t Stream = 0;
    CaptureMode Mode = CaptureMode::Unknown;
    uint64_t Thread = 0;      ///< The thread that began it.
    uint64_t RootCauseSeq = 0;
    std::string RootCauseApi; ///< Its first capture error, if any.
    int RootCauseResult = 0;
  };

  /// Records an API enter or exit; returns the reports it completes.
  std::vector<Report> onApi(const ApiEvent &E);
  /// Records a thrown exception; returns a report when it matters.
  std::vector<Report> onThrow(const ThrowEvent &E);

  /// Whether any capture is open, that is, whether work and errors matter.
  bool anyCaptureOpen() const { return !Open.empty(); }
  /// Whether the thread has no call in flight (its reports are out).
  bool threadIdle(uint64_t Thread) const { return !Stacks.count(Thread); }
  size_t openCaptureCount() const { return Open.size(); }
  /// The captures open now, oldest first.
  const std::vector<OpenCapture> &openCaptures() const { return Open; }

  /// Names the region later reports belong to ("" for none) and starts its
  /// statistics afresh.
  void setRegion(std::string Name);
  const std::string &region() const { return Region; }
  const RegionStats &regionStats() const { return Stats; }

  /// Forgets in-flight calls of every thread except capture begin/end. The
  /// glue calls this when it stops listening to most callbacks, since the
  /// exits of calls in flight will never arrive.
  void dropInFlightCalls();

private:

  struct InnerCall {
    std::string Name;
    int Result = 0;
    StreamState Stream;
  };

  struct Frame {
    ApiDomain Domain;
    uint32_t Cbid;
    std::string Name;
    ApiRole Role;
    std::optional<InnerCall> Error; ///< First capture error underneath.
    std::optional<InnerCall> Work;  ///< Decoded work target.
    std::optional<InnerCall> Begin; ///< A capture that began underneath.
    std::optional<InnerCall> End;   ///< A capture that ended underneath.
    uint64_t BeginCaptureId = 0;
    std::optional<OpenCapture> Ended; ///< State of the capture that ended.
  };

  std::vector<Report> onExit(const ApiEvent &E);
  void applyOwnEffects(Frame &F, const ApiEvent &E);
  static void mergeInto(Frame &Parent, const Frame &Child, int ChildResult);
  std::vector<Report> finish(const Frame &F, const ApiEvent &E);

  Report makeReport(ReportKind Kind, const ApiEvent &E, const Frame &F);
  /// The open captures an error or work on this thread/stream belongs to.
  std::vector<OpenCapture *> affectedCaptures(uint64_t Thread,
                                              const StreamState &S);
  OpenCapture *findOpen(uint64_t Id, uint64_t Stream);

  std::vector<OpenCapture> Open;
  /// The capture each thread ended last: a framework error thrown right
  /// after end-capture failed (libtorch's capture_end) echoes its root cause.
  std::map<uint64_t, OpenCapture> LastEnded;
  std::map<uint64_t, std::vector<Frame>> Stacks; ///< In-flight calls by thread.
  uint64_t NextSeq = 1;
  uint64_t NextSyntheticId = 1ull << 62; ///< For captures whose id is unknown.
  std::string Region;
  RegionStats Stats;
};

} // namespace harness
} // namespace cudagraph

#endif // CUDAGRAPH_HARNESS_CAPTURETRACKER_H
