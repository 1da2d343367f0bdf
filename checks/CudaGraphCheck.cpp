//===--- CudaGraphCheck.cpp - cudagraph-tidy ------------------------------===//

#include "CudaGraphCheck.h"
#include "CudaToolkitSupport.h"
#include "OpRoots.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang::ast_matchers;

namespace clang::tidy::cudagraph {

/// Whether the enabled checks are cudagraph checks alone (compiler
/// diagnostics aside). Then nothing needs clang-tidy's walk over the whole
/// AST, headers included: the capture analysis visits user code and what
/// capture regions reach.
static bool onlyCudaGraphChecks(const ClangTidyContext &Context) {
  // value_or returns a copy: keep it alive while the parts point into it.
  std::string Globs = Context.getOptions().Checks.value_or("");
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  llvm::StringRef(Globs).split(Parts, ',', -1, /*KeepEmpty=*/false);
  // Globs apply in order, later ones winning: the defaults'
  // `clang-analyzer-*` before a `-*` enables nothing.
  llvm::SmallVector<llvm::StringRef, 4> Others;
  for (llvm::StringRef Glob : Parts) {
    Glob = Glob.trim();
    if (Glob.consume_front("-")) {
      llvm::StringRef Prefix = Glob;
      bool Wild = Prefix.consume_back("*");
      llvm::erase_if(Others, [&](llvm::StringRef Other) {
        return Wild ? Other.starts_with(Prefix) : Other == Glob;
      });
      continue;
    }
    if (!Glob.empty() && !Glob.starts_with("cudagraph-") &&
        !Glob.starts_with("clang-diagnostic-") && Glob != ParseSupportCheckName)
      Others.push_back(Glob);
  }
  return Others.empty();
}

/// The cudagraph checks of this run, and how many of them have had their
/// translation-unit match for the current unit: the walk may end only after
/// the last, since ending it also drops the AST's parent map, which the
/// checks' analysis reads.
static unsigned LiveChecks = 0, ChecksMatchedThisUnit = 0;

CudaGraphCheck::~CudaGraphCheck() { --LiveChecks; }

CudaGraphCheck::CudaGraphCheck(StringRef Name, ClangTidyContext *Context)
    : ClangTidyCheck(Name, Context),
      SkipWholeAstWalk(onlyCudaGraphChecks(*Context)) {
  ++LiveChecks;
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
  CaptureOpts.CaptureSafeFunctions =
      Options.getLocalOrGlobal("CaptureSafeFunctions", "").str();
  BaselinePath = Options.getLocalOrGlobal("Baseline", "").str();
  MaxChainNotes = Options.getLocalOrGlobal("MaxChainNotes", 8u);
  MaxCallSiteNotes = Options.getLocalOrGlobal("MaxCallSiteNotes", 8u);
  // The plugin's way to a baseline (cudagraph-tidy's --baseline loads it
  // before the checks exist); read once per process.
  FindingFilters &Filters = findingFilters();
  if (!BaselinePath.empty() && !Filters.HasBaseline) {
    std::string Error;
    if (!Filters.loadBaseline(BaselinePath, Error)) {
      llvm::errs() << "cudagraph-tidy: error: " << Error << "\n";
      Filters.HasBaseline = true; // said once; no finding is in it
    }
  }
}

void CudaGraphCheck::storeOptions(ClangTidyOptions::OptionMap &Opts) {
  Options.store(Opts, "CaptureBeginFunctions", CaptureOpts.BeginFunctions);
  Options.store(Opts, "CaptureEndFunctions", CaptureOpts.EndFunctions);
  Options.store(Opts, "CapturedFunctions", CaptureOpts.CapturedFunctions);
  Options.store(Opts, "CaptureStatusFunctions", CaptureOpts.StatusFunctions);
  Options.store(Opts, "LibraryHeaderRegex", CaptureOpts.LibraryHeaderRegex);
  Options.store(Opts, "CustomOpRoots", CaptureOpts.CustomOpRoots);
  Options.store(Opts, "ProjectIndex", CaptureOpts.ProjectIndex);
  Options.store(Opts, "CaptureSafeFunctions", CaptureOpts.CaptureSafeFunctions);
  Options.store(Opts, "Baseline", BaselinePath);
  Options.store(Opts, "MaxChainNotes", MaxChainNotes);
  Options.store(Opts, "MaxCallSiteNotes", MaxCallSiteNotes);
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
  const SourceManager &SM = Ctx.getSourceManager();
  if (OptionalFileEntryRef Main = SM.getFileEntryRefForID(SM.getMainFileID()))
    findingLog().Units[realPathOf(Main->getName())] |=
        Ctx.getDiagnostics().hasErrorOccurred();
  checkCapture(Analysis);
  // This runs when the matcher walk reaches the translation unit, before it
  // descends. With no other check enabled, an empty traversal scope ends the
  // walk there: on a libtorch translation unit the walk over every header
  // costs more than the capture analysis itself.
  // Every cudagraph check matches the unit in the same step, one after the
  // other: the last one ends the walk.
  if (SkipWholeAstWalk && ++ChecksMatchedThisUnit >= LiveChecks) {
    Ctx.setTraversalScope({});
    TraversalScopeChanged = &Ctx;
  }
}

void CudaGraphCheck::onEndOfTranslationUnit() {
  ChecksMatchedThisUnit = 0;
  if (TraversalScopeChanged) {
    TraversalScopeChanged->setTraversalScope(
        {TraversalScopeChanged->getTranslationUnitDecl()});
    TraversalScopeChanged = nullptr;
  }
  Reported.clear();
  Nolints.clear();
  Occurrences.clear();
  Prints.clear();
  Hidden.clear();
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
                                  const Reach *Chain, const RegionRoot *Root,
                                  llvm::ArrayRef<FixItHint> Fixes) {
  if (Reported.count(Loc.getRawEncoding()) ||
      !admit(Analysis, H, Loc, Chain, Root))
    return false;
  Reported.insert(Loc.getRawEncoding());
  StringRef Instead = !H.TorchInstead.empty() && Analysis.isLibtorchCode(Where)
                          ? H.TorchInstead
                          : H.Instead;
  // A left-open capture is about the capture itself, not work inside it;
  // frozen state is reported where it changes, after the capture.
  StringRef During = H.Kind == HazardKind::LeftOpen ||
                             H.Kind == HazardKind::DefaultStreamBegin ||
                             H.Kind == HazardKind::FrozenState ||
                             H.Kind == HazardKind::CapturedEvent ||
                             H.Kind == HazardKind::EagerEventRecord ||
                             H.Kind == HazardKind::UpdateFailure
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
                                       bool RelaxedAllows, const Reach *Chain,
                                       const RegionRoot *Root) {
  if (Reported.count(Loc.getRawEncoding()) ||
      !admit(Analysis, H, Loc, Chain, Root))
    return false;
  Reported.insert(Loc.getRawEncoding());
  auto D =
      diag(Loc, "%0 %1 on a thread that may run while a global-mode CUDA "
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

std::optional<std::string>
CudaGraphCheck::capturingStreamInScope(const CapturedSite &Site) {
  if (Site.Ctx.Chain)
    return std::nullopt;
  return capturingStream(Site.Ctx.Root, Site.Function);
}

std::optional<std::string>
CudaGraphCheck::capturingStream(const RegionRoot *Root,
                                const FunctionDecl *At) {
  if (!Root || Root->K != RegionRoot::Kind::BeginApi || At != Root->Owner)
    return std::nullopt;
  const auto *Call = dyn_cast_or_null<CallExpr>(Root->Call);
  if (!Call || isa<CXXMemberCallExpr>(Call) || Call->getNumArgs() < 1)
    return std::nullopt;
  const auto *DRE =
      dyn_cast<DeclRefExpr>(Call->getArg(0)->IgnoreParenImpCasts());
  if (!DRE || !isa<VarDecl>(DRE->getDecl()) || DRE->hasQualifier())
    return std::nullopt;
  return DRE->getDecl()->getNameAsString();
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

/// The argument \p Site (a call of \p Callee) passes for parameter \p Index.
static const Expr *argumentAt(const CallSite &Site, const FunctionDecl *Callee,
                              unsigned Index) {
  if (Site.K == CallSite::Kind::Call && !Site.Indirect)
    if (const CallExpr *Call = Site.call()) {
      const auto *M = dyn_cast<CXXMethodDecl>(Callee);
      unsigned Offset =
          isa<CXXOperatorCallExpr>(Call) && M && !M->isStatic() ? 1 : 0;
      return Index + Offset < Call->getNumArgs() ? Call->getArg(Index + Offset)
                                                 : nullptr;
    }
  if (Site.K == CallSite::Kind::Construct)
    if (const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(Site.S))
      return Index < Construct->getNumArgs() ? Construct->getArg(Index)
                                             : nullptr;
  return nullptr;
}

ArgumentsFn CudaGraphCheck::argumentsAlong(const Reach *Chain) {
  return [Chain](const ParmVarDecl *P, unsigned Level,
                 llvm::SmallVectorImpl<PassedArgument> &Out) {
    const auto *Owner = dyn_cast<FunctionDecl>(P->getDeclContext());
    if (!Owner)
      return false;
    const Reach *R = Chain;
    unsigned L = 0;
    for (; R && L < Level; ++L)
      R = R->Parent;
    // Up to the call into P's function (past lambdas it holds).
    for (; R && !R->InLibrary; R = R->Parent, ++L) {
      if (R->Function->getCanonicalDecl() != Owner->getCanonicalDecl())
        continue;
      unsigned Index = P->getFunctionScopeIndex();
      const Expr *Arg = argumentAt(R->Site, R->Function, Index);
      if (!Arg)
        return false;
      Out.push_back({Arg, L + 1});
      // Other calls reaching it the same way: their own callers are not
      // followed.
      for (const Reach::Other &O : R->Others) {
        const Expr *OtherArg = argumentAt(O.Site, R->Function, Index);
        if (!OtherArg)
          return false;
        Out.push_back({OtherArg, NoLevel});
      }
      return true;
    }
    return false;
  };
}

MatchContext CudaGraphCheck::matchContextOf(const CapturedSite &Site) const {
  MatchContext Where{Site.Ctx.Modes, Site.Ctx.StreamGuarded,
                     perThreadDefaultStream()};
  Where.OtherThread =
      Site.Ctx.Root && Site.Ctx.Root->K == RegionRoot::Kind::OtherThread;
  Where.Arguments = argumentsAlong(Site.Ctx.Chain);
  return Where;
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
                                   const Reach *Chain, const RegionRoot *Root) {
  struct Step {
    const CallSite *Site;
    const FunctionDecl *Function, *Invoker;
  };
  std::vector<Step> Steps;
  const SourceManager &SM = Analysis.context().getSourceManager();
  llvm::DenseSet<const Reach *> Seen;
  for (const Reach *R = Chain; R && Seen.insert(R).second;) {
    // A call the user marked NOLINT is not shown when another call reaches
    // the function the same way.
    const CallSite *Site = &R->Site;
    const Reach *Parent = R->Parent;
    const FunctionDecl *Invoker = R->Invoker;
    if (stepHidden(Analysis, SM, R->Site, R->Parent, R->Root))
      for (const Reach::Other &O : R->Others)
        if (!stepHidden(Analysis, SM, O.Site, O.Parent, O.Root)) {
          Site = &O.Site;
          Parent = O.Parent;
          Invoker = O.Invoker;
          if (!Parent)
            Root = O.Root;
          break;
        }
    bool Shown = Site->Loc.isValid() && Analysis.isUserLocation(Site->Loc);
    // The thread's start: the root's own note says it.
    if (Root && Root->K == RegionRoot::Kind::OtherThread &&
        Site->S == Root->Call)
      Shown = false;
    if (Shown)
      Steps.push_back({Site, R->Function, Invoker});
    R = Parent;
  }
  // A long chain keeps the calls nearest the finding and the call in the
  // capture region; the middle is counted.
  size_t Keep = std::max(2u, MaxChainNotes);
  // On another thread the chain runs beside the capture, not in it.
  StringRef When = Root && Root->K == RegionRoot::Kind::OtherThread
                       ? "on that thread"
                       : "during capture";
  for (size_t I = 0; I < Steps.size(); ++I) {
    const Step &R = Steps[I];
    if (Steps.size() > Keep && I + 1 >= Keep && I + 1 < Steps.size()) {
      if (I + 1 == Keep)
        diag(Steps.back().Site->Loc, "... (%0 more calls)", DiagnosticIDs::Note)
            << static_cast<unsigned>(Steps.size() - Keep);
      continue;
    }
    const FunctionDecl *F = R.Function;
    if (R.Invoker)
      diag(R.Site->Loc, "'%0' is passed here to '%1', which calls it %2",
           DiagnosticIDs::Note)
          << displayName(F) << displayName(R.Invoker) << When;
    else if (std::string By = ownedObjectCall(*R.Site); !By.empty())
      diag(R.Site->Loc,
           isa<CXXDestructorDecl>(F)
               ? "%0 destroys a '%1' here %2, which runs its destructor"
               : "%0 constructs a '%1' here %2",
           DiagnosticIDs::Note)
          << By << cast<CXXMethodDecl>(F)->getParent()->getNameAsString()
          << When;
    else if (isa<CXXDestructorDecl>(F))
      diag(R.Site->Loc,
           "the destructor '%0' runs %1 when this variable goes out of scope",
           DiagnosticIDs::Note)
          << displayName(F) << When;
    else if (displayName(F) == "lambda")
      diag(R.Site->Loc, "the lambda runs %0", DiagnosticIDs::Note) << When;
    else if (R.Site->ByType)
      diag(R.Site->Loc,
           "this call through a function pointer may run '%0' %1: the "
           "program stores '%0' in a pointer of this type",
           DiagnosticIDs::Note)
          << displayName(F) << When;
    else
      diag(R.Site->Loc, "'%0' is called here %1", DiagnosticIDs::Note)
          << displayName(F) << When;
    if (I == 0)
      addOtherCallNotes(Analysis, Chain, *R.Site, When);
  }
  addRootNote(Root);
}

std::string CudaGraphCheck::ownedObjectCall(const CallSite &Site) {
  if (Site.K != CallSite::Kind::Call ||
      !(isa_and_nonnull<CXXDestructorDecl>(Site.Callee) ||
        isa_and_nonnull<CXXConstructorDecl>(Site.Callee)))
    return "";
  const FunctionDecl *Direct = directCallee(Site.S);
  if (!Direct || Direct == Site.Callee)
    return "";
  if (const auto *M = dyn_cast<CXXMethodDecl>(Direct);
      M && (M->isCopyAssignmentOperator() || M->isMoveAssignmentOperator()))
    return "the assignment";
  return "'" + Direct->getNameAsString() + "'";
}

void CudaGraphCheck::addOtherCallNotes(CaptureAnalysis &Analysis,
                                       const Reach *Chain,
                                       const CallSite &Shown,
                                       StringRef When) {
  // The other calls of the function that holds the finding, made the same
  // way under the capture (a sync helper called after each stage, a buffer
  // class made twice): each one is a place the fix may go. Calls,
  // constructions and scope ends, up to MaxCallSiteNotes of them.
  if (!Chain || Chain->Invoker || Chain->InLibrary ||
      Shown.K == CallSite::Kind::Callable)
    return;
  const SourceManager &SM = Analysis.context().getSourceManager();
  llvm::SmallVector<SourceLocation, 4> Places{Shown.Loc};
  unsigned Listed = 0;
  for (const Reach::Other &O : Chain->Others) {
    if (Listed == MaxCallSiteNotes)
      break;
    if (O.Invoker || O.Site.K == CallSite::Kind::Callable ||
        !O.Site.Loc.isValid() ||
        !Analysis.isUserLocation(O.Site.Loc) ||
        llvm::is_contained(Places, O.Site.Loc) ||
        stepHidden(Analysis, SM, O.Site, O.Parent, O.Root))
      continue;
    Places.push_back(O.Site.Loc);
    if (std::string By = ownedObjectCall(O.Site); !By.empty())
      diag(O.Site.Loc,
           isa<CXXDestructorDecl>(Chain->Function)
               ? "%0 also destroys a '%1' here %2"
               : "%0 also constructs a '%1' here %2",
           DiagnosticIDs::Note)
          << By
          << cast<CXXMethodDecl>(Chain->Function)
                 ->getParent()
                 ->getNameAsString()
          << When;
    else if (O.Site.K == CallSite::Kind::LocalDtor)
      diag(O.Site.Loc,
           "the destructor '%0' also runs %1 when this variable goes out of "
           "scope",
           DiagnosticIDs::Note)
          << displayName(Chain->Function) << When;
    else
      diag(O.Site.Loc, "'%0' is also called here %1", DiagnosticIDs::Note)
          << displayName(Chain->Function) << When;
    ++Listed;
  }
}

bool CudaGraphCheck::rootHidden(const SourceManager &SM,
                                const RegionRoot *Root) {
  return Root && Root->Loc.isValid() &&
         (Root->K == RegionRoot::Kind::OtherThread ||
          Root->K == RegionRoot::Kind::OpEntry) &&
         nolintAt(SM, Root->Loc);
}

bool CudaGraphCheck::stepHidden(CaptureAnalysis &Analysis,
                                const SourceManager &SM, const CallSite &Site,
                                const Reach *Parent, const RegionRoot *Root) {
  if (Site.Loc.isValid() && Analysis.isUserLocation(Site.Loc) &&
      nolintAt(SM, Site.Loc))
    return true;
  return Parent ? reachHidden(Analysis, SM, Parent) : rootHidden(SM, Root);
}

/// Whether \p Step holds for some way into \p R's function: the call the
/// walk followed or one of Reach::Others.
static bool someWayInto(
    const Reach *R,
    llvm::function_ref<bool(const CallSite &, const Reach *,
                            const RegionRoot *)>
        Step) {
  if (Step(R->Site, R->Parent, R->Root))
    return true;
  return llvm::any_of(R->Others, [&](const Reach::Other &O) {
    return Step(O.Site, O.Parent, O.Root);
  });
}

bool CudaGraphCheck::reachHidden(CaptureAnalysis &Analysis,
                                 const SourceManager &SM, const Reach *R) {
  // A path back into itself (recursion) leads to no root on its own.
  if (!HiddenWalk.insert(R).second)
    return true;
  bool Hidden = !someWayInto(R, [&](const CallSite &Site, const Reach *Parent,
                                    const RegionRoot *Root) {
    return !stepHidden(Analysis, SM, Site, Parent, Root);
  });
  HiddenWalk.erase(R);
  return Hidden;
}

bool CudaGraphCheck::changedAt(const SourceManager &SM, SourceLocation Loc) {
  SourceLocation FileLoc = SM.getFileLoc(Loc);
  OptionalFileEntryRef E = SM.getFileEntryRefForID(SM.getFileID(FileLoc));
  return E && findingFilters().changed(realPathOf(E->getName()),
                                       SM.getSpellingLineNumber(FileLoc));
}

bool CudaGraphCheck::stepChanged(CaptureAnalysis &Analysis,
                                 const SourceManager &SM, const CallSite &Site,
                                 const Reach *Parent, const RegionRoot *Root) {
  if (Site.Loc.isValid() && Analysis.isUserLocation(Site.Loc) &&
      changedAt(SM, Site.Loc))
    return true;
  if (Parent)
    return reachChanged(Analysis, SM, Parent);
  return Root && Root->Loc.isValid() && changedAt(SM, Root->Loc);
}

bool CudaGraphCheck::reachChanged(CaptureAnalysis &Analysis,
                                  const SourceManager &SM, const Reach *R) {
  // A path back into itself (recursion) adds no line of its own.
  if (!ChangedWalk.insert(R).second)
    return false;
  bool Changed = someWayInto(R, [&](const CallSite &Site, const Reach *Parent,
                                    const RegionRoot *Root) {
    return stepChanged(Analysis, SM, Site, Parent, Root);
  });
  ChangedWalk.erase(R);
  return Changed;
}

bool CudaGraphCheck::nolintAt(const SourceManager &SM, SourceLocation Loc) {
  SourceLocation FileLoc = SM.getFileLoc(Loc);
  FileID File = SM.getFileID(FileLoc);
  std::unique_ptr<NolintLines> &Lines = Nolints[File];
  if (!Lines)
    Lines = std::make_unique<NolintLines>(SM.getBufferData(File));
  return Lines->suppresses(SM.getSpellingLineNumber(FileLoc), getID());
}

/// The innermost function of \p Functions whose definition holds \p Loc.
static const FunctionDecl *
functionHolding(const SourceManager &SM,
                llvm::ArrayRef<const FunctionDecl *> Functions,
                SourceLocation Loc) {
  const FunctionDecl *Best = nullptr;
  for (const FunctionDecl *FD : Functions) {
    SourceRange R = FD->getSourceRange();
    SourceLocation B = SM.getFileLoc(R.getBegin()),
                   E = SM.getFileLoc(R.getEnd());
    if (SM.isBeforeInTranslationUnit(Loc, B) ||
        SM.isBeforeInTranslationUnit(E, Loc))
      continue;
    if (!Best || SM.isBeforeInTranslationUnit(
                     SM.getFileLoc(Best->getSourceRange().getBegin()), B))
      Best = FD;
  }
  return Best;
}

bool CudaGraphCheck::admit(CaptureAnalysis &Analysis, const Hazard &H,
                           SourceLocation Loc, const Reach *Chain,
                           const RegionRoot *Root) {
  const SourceManager &SM = Analysis.context().getSourceManager();
  FindingLog &Log = findingLog();
  const FindingFilters &Filters = findingFilters();
  SourceLocation FileLoc = SM.getFileLoc(Loc);

  // A location reached by several chains counts once: as hidden while no
  // chain reports it.
  auto Hide = [&](unsigned FindingLog::*Counter) {
    auto [It, New] = Hidden.try_emplace(Loc.getRawEncoding(), Counter);
    if (New)
      ++(Log.*Counter);
    return false;
  };
  // NOLINT on the user's call sites that lead here (a thread's start and an
  // op's registration count; a capture's begin does not, so one comment
  // there cannot hide a whole region): hidden when every way the analysis
  // knows into the finding's function passes one. clang-tidy itself handles
  // the finding's own line.
  if (Chain ? reachHidden(Analysis, SM, Chain) : rootHidden(SM, Root))
    return Hide(&FindingLog::SuppressedOnChain);

  // The fingerprint: check, hazard, function, file name and line text.
  FileID File = SM.getFileID(FileLoc);
  OptionalFileEntryRef Entry = SM.getFileEntryRefForID(File);
  std::string RealFile = Entry ? realPathOf(Entry->getName()) : "";
  StringRef Buffer = SM.getBufferData(File);
  unsigned Offset = SM.getFileOffset(FileLoc);
  size_t LineBegin = Buffer.rfind('\n', Offset);
  LineBegin = LineBegin == StringRef::npos ? 0 : LineBegin + 1;
  StringRef LineText = Buffer.slice(LineBegin, Buffer.find('\n', Offset));
  const FunctionDecl *Holder =
      functionHolding(SM, Analysis.userFunctions(), FileLoc);
  std::string Function = Holder ? Holder->getQualifiedNameAsString() : "";
  std::string FileName = llvm::sys::path::filename(RealFile).str();
  std::string &Print = Prints[Loc.getRawEncoding()];
  if (Print.empty()) {
    std::string Key =
        fingerprintKey(getID(), H.Id, Function, FileName, LineText);
    Print = fingerprintOf(Key, Occurrences[Key]++);
  }
  if (Filters.HasBaseline && Filters.Baseline.contains(Print))
    return Hide(&FindingLog::InBaseline);
  // Changed: the finding's line, a user call site on any chain into it, or
  // the line a capture it runs under begins on.
  if (Filters.HasChangedLines &&
      !Filters.changed(RealFile, SM.getSpellingLineNumber(FileLoc)) &&
      !(Chain ? reachChanged(Analysis, SM, Chain)
              : Root && Root->Loc.isValid() && changedAt(SM, Root->Loc)))
    return Hide(&FindingLog::OutsideChanges);
  // Reported through another chain after all.
  if (auto It = Hidden.find(Loc.getRawEncoding()); It != Hidden.end()) {
    --(Log.*(It->second));
    Hidden.erase(It);
  }
  Log.Findings.push_back(
      {RealFile, Offset, getID().str(), H.Id.str(), Function, Print});
  return true;
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
  case RegionRoot::Kind::Wrapper: {
    // A virtual hook: the override that begins is one the call may run.
    const auto *Call = dyn_cast_or_null<CallExpr>(Root->Call);
    const auto *Hook =
        Call ? dyn_cast_or_null<CXXMethodDecl>(calleeOf(Call))
             : nullptr;
    if (Hook && Hook->isVirtual() && Root->Via &&
        Hook->getCanonicalDecl() != Root->Via->getCanonicalDecl()) {
      diag(Root->Loc,
           "CUDA graph capture begins in '%0', which this virtual call of "
           "'%1' may run%2",
           DiagnosticIDs::Note)
          << displayName(Root->Via) << displayName(Hook) << Mode;
      break;
    }
    diag(Root->Loc, "CUDA graph capture begins in '%0', called here%1",
         DiagnosticIDs::Note)
        << displayName(Root->Via) << Mode;
    break;
  }
  case RegionRoot::Kind::GuardObject:
    diag(Root->Loc, "CUDA graph capture begins when '%0' is constructed here%1",
         DiagnosticIDs::Note)
        << displayName(Root->Via) << Mode;
    break;
  case RegionRoot::Kind::OpEntry:
    diag(Root->Loc,
         "'%0' is registered here as %1 '%2': it runs under CUDA graph "
         "capture %3",
         DiagnosticIDs::Note)
        << displayName(Root->Via) << registrationKindName(Root->Op->K)
        << Root->Op->Name << registrationCapturedWhen(Root->Op->K);
    break;
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
    if (Root->Pool)
      diag(Root->Loc,
           "a loop starts '%0' here on several threads: while one of them "
           "has its global-mode capture open, the calls the others make "
           "outside their own capture fail",
           DiagnosticIDs::Note)
          << displayName(Root->Via);
    else
      diag(Root->Loc,
           "'%0' starts here on another thread, which may still run while "
           "the capture is open; in global mode the capture prohibits such "
           "calls from every thread",
           DiagnosticIDs::Note)
          << displayName(Root->Via);
    if (Root->Capture && !Root->Capture->RemoteBegin.empty())
      diag(Root->Loc,
           "a global-mode capture begins in another file of the project: %0",
           DiagnosticIDs::Note)
          << shortenPaths(Root->Capture->RemoteBegin);
    else
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
