//===--- ApiHazardCheck.h - cudagraph-tidy ----------------------*- C++ -*-===//
//
// Reports calls to the catalog's APIs of one check that run under capture,
// directly in a region or in a function reached from one, and the calls a
// global-mode capture prohibits from every thread made by threads that may
// run while such a capture is open. Registered as
// cudagraph-host-sync, cudagraph-status-query, cudagraph-pinned-alloc,
// cudagraph-device-alloc and cudagraph-capture-unsafe-call;
// the APIs come from catalog/Hazards.def and the ExtraFunctions option adds
// more.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_APIHAZARDCHECK_H
#define CUDAGRAPH_TIDY_APIHAZARDCHECK_H

#include "CudaGraphCheck.h"
#include "llvm/ADT/DenseSet.h"

namespace clang::tidy::cudagraph {

class ApiHazardCheck : public CudaGraphCheck {
public:
  ApiHazardCheck(StringRef Name, ClangTidyContext *Context);
  void storeOptions(ClangTidyOptions::OptionMap &Opts) override;

protected:
  void checkCapture(CaptureAnalysis &Analysis) override;
  /// Fix-its for a finding of \p H at \p Site, where the rewrite is
  /// mechanical and keeps the program's meaning under capture:
  /// - a synchronous copy or memset becomes its *Async form on the capturing
  ///   stream, when that stream is in scope and every argument is written;
  /// - `pinned.copy_(src)` becomes `pinned.copy_(src, /*non_blocking=*/true)`;
  /// - `t.nonzero()` becomes `t.nonzero_static(...)` with a TODO where the
  ///   size goes (it does not compile until the size is written).
  virtual std::vector<FixItHint> fixesFor(CaptureAnalysis &Analysis,
                                          const Hazard &H,
                                          const CapturedSite &Site);
  /// Notes (with fix-its applied only under --fix-notes) for a finding of
  /// \p H at \p Site, emitted right after the warning (none by default).
  virtual void notesFor(CaptureAnalysis &Analysis, const Hazard &H,
                        const CapturedSite &Site) {}
  /// Whether a finding of \p H at \p Site belongs where its cause is
  /// written rather than at the call: sets \p Loc, \p Range and \p Lead
  /// (the subject of the message) and returns true.
  virtual bool relocate(CaptureAnalysis &Analysis, const Hazard &H,
                        const CapturedSite &Site, SourceLocation &Loc,
                        SourceRange &Range, std::string &Lead) {
    return false;
  }

  const std::string ExtraFunctions;
  const std::vector<Hazard> Hazards;

private:
  /// Reports \p Site if it uses one of Hazards; \p OtherThread: the call
  /// runs on another thread while a global-mode capture is open.
  void checkSite(CaptureAnalysis &Analysis, const CapturedSite &Site,
                 bool OtherThread);
  /// Captures already given a finding of a hazard reported once per
  /// capture (PoollessAlloc), in this translation unit.
  llvm::DenseSet<const RegionRoot *> ReportedOnce;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_APIHAZARDCHECK_H
