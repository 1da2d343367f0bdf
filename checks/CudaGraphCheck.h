//===--- CudaGraphCheck.h - cudagraph-tidy ----------------------*- C++ -*-===//
//
// The base of every cudagraph check: reads the options shared by all checks,
// runs the shared capture analysis once per translation unit and writes
// diagnostics whose notes walk the call chain back to where capture begins.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_CUDAGRAPHCHECK_H
#define CUDAGRAPH_TIDY_CUDAGRAPHCHECK_H

#include "CaptureAnalysis.h"
#include "HazardCatalog.h"
#include "FindingLog.h"
#include "HazardMatch.h"
#include "clang-tidy/ClangTidyCheck.h"

namespace clang::tidy::cudagraph {

using namespace ::clang::cudagraph;

class CudaGraphCheck : public ClangTidyCheck {
public:
  CudaGraphCheck(StringRef Name, ClangTidyContext *Context);
  ~CudaGraphCheck() override;
  void storeOptions(ClangTidyOptions::OptionMap &Opts) override;
  void registerPPCallbacks(const SourceManager &SM, Preprocessor *PP,
                           Preprocessor *ModuleExpanderPP) override;
  void registerMatchers(ast_matchers::MatchFinder *Finder) final;
  void check(const ast_matchers::MatchFinder::MatchResult &Result) final;
  void onEndOfTranslationUnit() override;

protected:
  /// Reports this check's findings from the shared analysis.
  virtual void checkCapture(CaptureAnalysis &Analysis) = 0;

  /// Reports \p H at \p Loc ("<Lead> <effect> during CUDA graph capture:
  /// <outcome>; <instead> (hazard: <id>)"), unless this check already
  /// reported there. Returns false (and emits nothing) for a duplicate.
  /// \p Where is the user function holding the call: libtorch code gets
  /// libtorch advice.
  /// \p Chain and \p Root: how the finding's code runs under capture, for
  /// the filters (NOLINT on the chain's call sites, changed lines).
  bool reportHazard(CaptureAnalysis &Analysis, const Hazard &H,
                    SourceLocation Loc, SourceRange Range, StringRef Lead,
                    const FunctionDecl *Where, const Reach *Chain,
                    const RegionRoot *Root,
                    llvm::ArrayRef<FixItHint> Fixes = {});
  /// Reports \p H at \p Loc for a call made on another thread while a
  /// global-mode capture may be open (same deduplication as reportHazard);
  /// \p RelaxedAllows: relaxed mode allows the call.
  bool reportOtherThread(CaptureAnalysis &Analysis, const Hazard &H,
                         SourceLocation Loc, SourceRange Range,
                         StringRef Lead, bool RelaxedAllows,
                         const Reach *Chain, const RegionRoot *Root);
  /// Adds notes for the call chain of \p Ctx back to where capture begins.
  void addChainNotes(CaptureAnalysis &Analysis, const Reach *Chain,
                     const RegionRoot *Root);
  /// Notes for the other calls under capture of \p Chain's function (up to
  /// MaxCallSiteNotes), after the one \p Shown in the chain.
  /// For a constructor or destructor run by a standard-library call
  /// (`std::make_unique<T>`, `v.clear()`, `p = ...` on a std::unique_ptr):
  /// how the note names that call; empty for other sites.
  static std::string ownedObjectCall(const CallSite &Site);
  void addOtherCallNotes(CaptureAnalysis &Analysis, const Reach *Chain,
                         const CallSite &Shown, StringRef When);
  /// The note saying where \p Root's capture begins.
  void addRootNote(const RegionRoot *Root);
  /// Where a hazard found at \p Site is reported: the site itself in user
  /// code, or the innermost call in user code that leads into the library
  /// function containing it. Sets \p Via to that call's reach (or null).
  static SourceLocation anchorOf(CaptureAnalysis &Analysis,
                                 const CapturedSite &Site, const Reach *&Via);
  /// What the calls on the chain \p Chain (the reach of the function holding
  /// a captured call) pass for a parameter, for HazardMatch.
  static ArgumentsFn argumentsAlong(const Reach *Chain);
  /// The MatchContext of a captured call.
  MatchContext matchContextOf(const CapturedSite &Site) const;
  /// The stream a capture records, as source text, when the code at \p Site
  /// can name it: the site is in the function that began the capture with a
  /// raw begin call given a plain variable.
  static std::optional<std::string>
  capturingStreamInScope(const CapturedSite &Site);
  /// The stream \p Root's raw begin call was given, as source text, when
  /// it is a plain variable and \p At is the function with the begin.
  static std::optional<std::string> capturingStream(const RegionRoot *Root,
                                                    const FunctionDecl *At);
  /// How a function is named in diagnostics ('Tensor::item', 'lambda').
  static std::string displayName(const FunctionDecl *FD);
  /// The first clause of a catalog outcome, for the one-line message.
  static StringRef shortOutcome(StringRef Outcome);
  /// Whether stream 0 means the per-thread default stream in this
  /// translation unit (nvcc `--default-stream per-thread`, or
  /// CUDA_API_PER_THREAD_DEFAULT_STREAM defined).
  bool perThreadDefaultStream() const;

  /// How many other call sites a note list shows (MaxCallSiteNotes).
  unsigned maxCallSiteNotes() const { return MaxCallSiteNotes; }

private:
  /// Whether a finding of \p H at \p Loc passes the filters (see
  /// FindingLog.h); logs it when it does.
  bool admit(CaptureAnalysis &Analysis, const Hazard &H, SourceLocation Loc,
             const Reach *Chain, const RegionRoot *Root);
  /// Whether a NOLINT comment for this check covers \p Loc's line.
  bool nolintAt(const SourceManager &SM, SourceLocation Loc);
  /// Whether every path through a NOLINT-free call reaching the function of
  /// \p R is closed: each passes a call site whose line has a NOLINT for
  /// this check (or a thread start, an op registration).
  bool reachHidden(CaptureAnalysis &Analysis, const SourceManager &SM,
                   const Reach *R);
  bool stepHidden(CaptureAnalysis &Analysis, const SourceManager &SM,
                  const CallSite &Site, const Reach *Parent,
                  const RegionRoot *Root);
  bool rootHidden(const SourceManager &SM, const RegionRoot *Root);
  llvm::DenseSet<const Reach *> HiddenWalk;
  /// --changed-lines: whether a user call site on some way into \p R, or
  /// the line its capture begins on, is a changed line.
  bool reachChanged(CaptureAnalysis &Analysis, const SourceManager &SM,
                    const Reach *R);
  bool stepChanged(CaptureAnalysis &Analysis, const SourceManager &SM,
                   const CallSite &Site, const Reach *Parent,
                   const RegionRoot *Root);
  bool changedAt(const SourceManager &SM, SourceLocation Loc);
  llvm::DenseSet<const Reach *> ChangedWalk;

  CaptureOptions CaptureOpts;
  std::string BaselinePath;
  unsigned MaxChainNotes;
  unsigned MaxCallSiteNotes;
  llvm::DenseMap<FileID, std::unique_ptr<NolintLines>> Nolints;
  llvm::StringMap<unsigned> Occurrences;
  llvm::DenseMap<unsigned, std::string> Prints; // fingerprint by location
  /// Locations a filter hid, with the count that holds them.
  llvm::DenseMap<unsigned, unsigned FindingLog::*> Hidden;
  Preprocessor *PP = nullptr;
  const bool SkipWholeAstWalk;
  ASTContext *TraversalScopeChanged = nullptr;
  llvm::DenseSet<unsigned> Reported;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_CUDAGRAPHCHECK_H
