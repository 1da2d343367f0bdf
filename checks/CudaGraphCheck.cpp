//===--- CudaGraphCheck.cpp - cudagraph-tidy ------------------------------===//

#include "CudaGraphCheck.h"
#include "OpRoots.h"
#include "CudaToolkitSupport.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang::ast_matchers;

namespace clang::tidy::cudagraph {

/// Whether the enabled checks are cudagraph checks alone (compiler
/// diagnostics aside). Then nothing needs clang-tidy's walk over the whole
/// AST, headers included: the capture analysis visits user code and what
/// capture regions reach.
static bool onlyCudaGraphChecks(const ClangTidyContext &Context) {
  llvm::StringRef Globs = Context.getOptions().Checks.value_or("");
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  Globs.split(Parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef Glob : Parts) {
    Glob = Glob.trim();
    if (Glob.empty() || Glob.starts_with("-"))
      continue;
    if (!Glob.starts_with("cudagraph-") &&
        !Glob.starts_with("clang-diagnostic-"))
      return false;
  }
  return true;
}

CudaGraphCheck::CudaGraphCheck(StringRef Name, ClangTidyContext *Context)
    : ClangTidyCheck(Name, Context),
      SkipWholeAstWalk(onlyCudaGraphChecks(*Context)) {
  CaptureOpts.BeginFunctions =
      Options.getLocalOrGlobal("CaptureBeginFunctions", "").str();
  CaptureOpts.EndFunctions =
      Options.getLocalOrGlobal("CaptureEndFunctions", "").str();
  CaptureOpts.CapturedFunctions =
      Options.getLocalOrGlobal("CapturedFunctions", "").str();
  CaptureOpts.StatusFunctions =
      Options.getLocalOrGlobal("CaptureStatusFunctions", "").str();
  CaptureOpts.LibraryHeaderRegex =
      Options.getLocalOrGlobal("LibraryHeaderRegex", DefaultLibraryHeaderRegex)
          .str();
  CaptureOpts.CustomOpRoots =
      Options.getLocalOrGlobal("CustomOpRoots", CaptureOpts.CustomOpRoots)
          .str();
  CaptureOpts.ProjectIndex = Options.getLocalOrGlobal("ProjectIndex", "").str();
}

void CudaGraphCheck::storeOptions(ClangTidyOptions::OptionMap &Opts) {
  Options.store(Opts, "CaptureBeginFunctions", CaptureOpts.BeginFunctions);
  Options.store(Opts, "CaptureEndFunctions", CaptureOpts.EndFunctions);
  Options.store(Opts, "CapturedFunctions", CaptureOpts.CapturedFunctions);
  Options.store(Opts, "CaptureStatusFunctions", CaptureOpts.StatusFunctions);
  Options.store(Opts, "LibraryHeaderRegex", CaptureOpts.LibraryHeaderRegex);
  Options.store(Opts, "CustomOpRoots", CaptureOpts.CustomOpRoots);
  Options.store(Opts, "ProjectIndex", CaptureOpts.ProjectIndex);
}

void CudaGraphCheck::registerPPCallbacks(const SourceManager &SM,
                                         Preprocessor *PP,
                                         Preprocessor *ModuleExpanderPP) {
  this->PP = PP;
  addStandInHeaders(*PP);
}

bool CudaGraphCheck::perThreadDefaultStream() const {
  return PP && (PP->isMacroDefined("CUDA_API_PER_THREAD_DEFAULT_STREAM") ||
                PP->isMacroDefined("__CUDA_API_PER_THREAD_DEFAULT_STREAM"));
}

void CudaGraphCheck::registerMatchers(MatchFinder *Finder) {
  // One match per translation unit: the shared analysis walks only the code
  // that matters (user functions and what capture regions reach).
  Finder->addMatcher(translationUnitDecl().bind("tu"), this);
}

void CudaGraphCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  CaptureAnalysis &Analysis = CaptureAnalysis::get(Ctx, CaptureOpts);
  // Said once per process: every check and unit would repeat it.
  static bool IndexErrorShown = false;
  if (!Analysis.indexError().empty() && !IndexErrorShown) {
    IndexErrorShown = true;
    llvm::errs() << "cudagraph-tidy: warning: " << Analysis.indexError()
                 << "; calls across files are not followed\n";
  }
  checkCapture(Analysis);
  // This runs when the matcher walk reaches the translation unit, before it
  // descends. With no other check enabled, an empty traversal scope ends the
  // walk there: on a libtorch translation unit the walk over every header
  // costs more than the capture analysis itself.
  if (SkipWholeAstWalk) {
    Ctx.setTraversalScope({});
    TraversalScopeChanged = &Ctx;
  }
}

void CudaGraphCheck::onEndOfTranslationUnit() {
  if (TraversalScopeChanged) {
    TraversalScopeChanged->setTraversalScope(
        {TraversalScopeChanged->getTranslationUnitDecl()});
    TraversalScopeChanged = nullptr;
  }
  Reported.clear();
  CaptureAnalysis::reset();
}

StringRef CudaGraphCheck::shortOutcome(StringRef Outcome) {
  size_t Cut = Outcome.size();
  for (StringRef Stop : {"; ", ", and end-capture", " and end-capture"})
    Cut = std::min(Cut, Outcome.find(Stop));
  return Outcome.take_front(Cut);
}

/// \p Range as a diagnostic highlights it: within one file, not in a
/// macro.
static std::optional<CharSourceRange> shownRange(CaptureAnalysis &Analysis,
                                                 SourceRange Range) {
  const SourceManager &SM = Analysis.context().getSourceManager();
  if (Range.isValid() && Range.getBegin().isFileID() &&
      Range.getEnd().isFileID() &&
      SM.getFileID(Range.getBegin()) == SM.getFileID(Range.getEnd()))
    return CharSourceRange::getTokenRange(Range);
  return std::nullopt;
}

bool CudaGraphCheck::reportHazard(CaptureAnalysis &Analysis, const Hazard &H,
                                  SourceLocation Loc, SourceRange Range,
                                  StringRef Lead, const FunctionDecl *Where,
                                  llvm::ArrayRef<FixItHint> Fixes) {
  if (!Reported.insert(Loc.getRawEncoding()).second)
    return false;
  StringRef Instead = !H.TorchInstead.empty() && Analysis.isLibtorchCode(Where)
                          ? H.TorchInstead
                          : H.Instead;
  // A left-open capture is about the capture itself, not work inside it;
  // frozen state is reported where it changes, after the capture.
  StringRef During = H.Kind == HazardKind::LeftOpen ||
                             H.Kind == HazardKind::DefaultStreamBegin ||
                             H.Kind == HazardKind::FrozenState
                         ? ""
                         : " during CUDA graph capture";
  auto D = diag(Loc, "%0 %1%2: %3; %4 (hazard: %5)")
           << Lead << H.Effect << During << shortOutcome(H.Outcome) << Instead
           << H.Id;
  if (std::optional<CharSourceRange> R = shownRange(Analysis, Range))
    D << *R;
  for (const FixItHint &Fix : Fixes)
    D << Fix;
  return true;
}

bool CudaGraphCheck::reportOtherThread(CaptureAnalysis &Analysis,
                                       const Hazard &H, SourceLocation Loc,
                                       SourceRange Range, StringRef Lead,
                                       bool RelaxedAllows) {
  if (!Reported.insert(Loc.getRawEncoding()).second)
    return false;
  auto D = diag(Loc,
                "%0 %1 on a thread that may run while a global-mode CUDA "
                "graph capture is open: in global mode the capture prohibits "
                "this call from every thread, so it fails with "
                "cudaErrorStreamCaptureUnsupported (900) and end-capture "
                "fails with 901; begin the capture with "
                "cudaStreamCaptureModeThreadLocal, or make the call after "
                "the capture ends%2 (hazard: %3)")
           << Lead << H.Effect
           << (RelaxedAllows ? " (or switch this thread to relaxed mode "
                               "around it with "
                               "cudaThreadExchangeStreamCaptureMode)"
                             : "")
           << H.Id;
  if (std::optional<CharSourceRange> R = shownRange(Analysis, Range))
    D << *R;
  return true;
}

std::string CudaGraphCheck::displayName(const FunctionDecl *FD) {
  if (const auto *MD = dyn_cast<CXXMethodDecl>(FD)) {
    if (MD->getParent()->isLambda())
      return "lambda";
    std::string Class = MD->getParent()->getNameAsString();
    if (Class == "TensorBase") // users write Tensor; TensorBase is internal
      Class = "Tensor";
    if (isa<CXXConstructorDecl>(MD))
      return Class;
    return Class + "::" + FD->getNameAsString();
  }
  return stripCudaApiSuffix(FD->getNameAsString()).str();
}

SourceLocation CudaGraphCheck::anchorOf(CaptureAnalysis &Analysis,
                                        const CapturedSite &Site,
                                        const Reach *&Via) {
  Via = nullptr;
  if (Analysis.isUserLocation(Site.Site.Loc))
    return Site.Site.Loc;
  for (const Reach *R = Site.Ctx.Chain; R; R = R->Parent)
    if (R->Site.Loc.isValid() && Analysis.isUserLocation(R->Site.Loc)) {
      Via = R;
      return R->Site.Loc;
    }
  return {};
}

void CudaGraphCheck::addChainNotes(CaptureAnalysis &Analysis,
                                   const Reach *Chain,
                                   const RegionRoot *Root) {
  for (const Reach *R = Chain; R; R = R->Parent) {
    if (!R->Site.Loc.isValid() || !Analysis.isUserLocation(R->Site.Loc))
      continue;
    // The thread's start: the root's own note says it.
    if (Root && Root->K == RegionRoot::Kind::OtherThread &&
        R->Site.S == Root->Call)
      continue;
    const FunctionDecl *F = R->Function;
    if (R->Invoker)
      diag(R->Site.Loc, "'%0' is passed here to '%1', which calls it during "
                        "capture",
           DiagnosticIDs::Note)
          << displayName(F) << displayName(R->Invoker);
    else if (isa<CXXDestructorDecl>(F))
      diag(R->Site.Loc,
           "the destructor '%0' runs during capture when this "
           "variable goes out of scope",
           DiagnosticIDs::Note)
          << displayName(F);
    else if (displayName(F) == "lambda")
      diag(R->Site.Loc, "the lambda runs during capture", DiagnosticIDs::Note);
    else
      diag(R->Site.Loc, "'%0' is called here during capture",
           DiagnosticIDs::Note)
          << displayName(F);
  }
  addRootNote(Root);
}

void CudaGraphCheck::addRootNote(const RegionRoot *Root) {
  if (!Root || Root->Loc.isInvalid())
    return;
  std::string Mode;
  if (Root->Modes != AnyMode)
    Mode = " (" + describeModes(Root->Modes) + " mode)";
  switch (Root->K) {
  case RegionRoot::Kind::BeginApi:
  case RegionRoot::Kind::Entry:
    diag(Root->Loc, "CUDA graph capture begins here%0", DiagnosticIDs::Note)
        << Mode;
    break;
  case RegionRoot::Kind::Wrapper:
    diag(Root->Loc, "CUDA graph capture begins in '%0', called here%1",
         DiagnosticIDs::Note)
        << displayName(Root->Via) << Mode;
    break;
  case RegionRoot::Kind::GuardObject:
    diag(Root->Loc, "CUDA graph capture begins when '%0' is constructed here%1",
         DiagnosticIDs::Note)
        << displayName(Root->Via) << Mode;
    break;
  case RegionRoot::Kind::OpEntry: {
    static const char *const What[] = {"custom op", "Python binding",
                                       "autograd function"};
    diag(Root->Loc,
         "'%0' is registered here as %1 '%2': it runs under CUDA graph "
         "capture when a captured model calls it",
         DiagnosticIDs::Note)
        << displayName(Root->Via) << What[static_cast<int>(Root->Op->K)]
        << Root->Op->Name;
    break;
  }
  case RegionRoot::Kind::CrossFile: {
    std::string Chain;
    for (const std::string &Step : Root->Cross->Chain)
      Chain += (Chain.empty() ? "" : "; ") + shortenPaths(Step);
    if (Root->Cross->OpRoot)
      diag(Root->Loc, "%0", DiagnosticIDs::Note) << Chain;
    else
      diag(Root->Loc,
           "'%0' runs under CUDA graph capture begun in another file: %1",
           DiagnosticIDs::Note)
          << displayName(Root->Via) << Chain;
    break;
  }
  case RegionRoot::Kind::OtherThread:
    diag(Root->Loc,
         "'%0' starts here on another thread, which may still run while the "
         "capture is open; in global mode the capture prohibits such calls "
         "from every thread",
         DiagnosticIDs::Note)
        << displayName(Root->Via);
    addRootNote(Root->Capture);
    break;
  case RegionRoot::Kind::Listed:
    diag(Root->Loc,
         "'%0' is listed in CapturedFunctions and runs under CUDA graph "
         "capture",
         DiagnosticIDs::Note)
        << Root->Via->getNameAsString();
    break;
  }
}

} // namespace clang::tidy::cudagraph
