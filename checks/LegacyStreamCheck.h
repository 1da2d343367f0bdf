//===--- LegacyStreamCheck.h - cudagraph-tidy -------------------*- C++ -*-===//
//
// cudagraph-legacy-stream: work sent to the legacy default stream while a
// capture is open (a launch without a stream, an Async call on stream 0, a
// libtorch guard making the default stream current), which runs eagerly and
// is missing from the graph; and captures begun on the default stream.
// A fix-it passes the capturing stream when the launch sits in the function
// that began the capture on a named stream.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_LEGACYSTREAMCHECK_H
#define CUDAGRAPH_TIDY_LEGACYSTREAMCHECK_H

#include "ApiHazardCheck.h"

namespace clang::tidy::cudagraph {

class LegacyStreamCheck : public ApiHazardCheck {
public:
  using ApiHazardCheck::ApiHazardCheck;

protected:
  void checkCapture(CaptureAnalysis &Analysis) override;
  std::vector<FixItHint> fixesFor(CaptureAnalysis &Analysis, const Hazard &H,
                                  const CapturedSite &Site) override;
  /// A launch on a stream parameter given the legacy stream by a caller up
  /// the chain is reported at that caller's argument, with a note at the
  /// launch.
  bool relocate(CaptureAnalysis &Analysis, const Hazard &H,
                const CapturedSite &Site, SourceLocation &Loc,
                SourceRange &Range, std::string &Lead) override;
  void notesFor(CaptureAnalysis &Analysis, const Hazard &H,
                const CapturedSite &Site) override;

private:
  /// The stream parameter of each site relocate moved to its caller, for
  /// the note notesFor adds at the launch.
  llvm::DenseMap<const CapturedSite *, const DeclRefExpr *> Relocated;
  /// Whether the libtorch current stream is the default stream where
  /// \p Begin (a capture_begin call in \p Owner) runs, on every path.
  bool defaultStreamCurrent(const FunctionDecl *Owner, const Stmt *Begin);
  /// A test before \p Begin in \p Owner that finds local stream \p Stream
  /// to be the default stream and takes an arm that neither assigns it nor
  /// leaves (`if (stream == 0) { local = true; get_stream(0); }`, the new
  /// stream's result dropped), with nothing assigning it from there to the
  /// begin: the begin runs on the default stream on that path. Null: none.
  const IfStmt *leftDefaultBy(const FunctionDecl *Owner, const Stmt *Begin,
                              const VarDecl *Stream);
  /// Notes the calls of \p Root's region (in its own function) that name
  /// \p Stream: where the begin names the legacy stream they run eagerly.
  void noteEagerWork(CaptureAnalysis &Analysis, const RegionRoot &Root,
                     const VarDecl *Stream);
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_LEGACYSTREAMCHECK_H
