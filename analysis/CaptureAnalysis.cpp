//===--- CaptureAnalysis.cpp - cudagraph analysis -------------------------===//

#include "CaptureAnalysis.h"
#include "ConditionLeaves.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <functional>

namespace clang::cudagraph {

/// How deep the walk goes into library functions that have bodies in headers.
static constexpr unsigned MaxLibraryDepth = 16;
/// How many sets of constant arguments a function is analyzed under before
/// further calls of it are analyzed without them.
static constexpr unsigned MaxBindingVariants = 8;
/// How many other calls reaching a function the same way are kept (for
/// suppressions on call sites).
static constexpr unsigned MaxOtherCalls = 16;

//===----------------------------------------------------------------------===//
// Per-translation-unit cache shared by all checks
//===----------------------------------------------------------------------===//

namespace {
struct CacheEntry {
  const ASTContext *Ctx = nullptr;
  std::string Key;
  std::unique_ptr<CaptureAnalysis> Analysis;
};
} // namespace

static std::vector<CacheEntry> &cache() {
  static std::vector<CacheEntry> Entries;
  return Entries;
}

CaptureAnalysis &CaptureAnalysis::get(ASTContext &Ctx,
                                      const CaptureOptions &Opts) {
  std::string Key = Opts.key();
  for (CacheEntry &E : cache())
    if (E.Ctx == &Ctx && E.Key == Key)
      return *E.Analysis;
  CacheEntry &E = cache().emplace_back();
  E.Ctx = &Ctx;
  E.Key = std::move(Key);
  E.Analysis.reset(new CaptureAnalysis(Ctx, Opts));
  // A unit's run for the project index: its summary holds per-function
  // facts only, so the roots and reach of this unit are not needed.
  if (!summaryOutput().empty()) {
    E.Analysis->collectUserFunctions();
    std::string Error;
    if (!writeJSONFile(summaryOutput(), toJSON(summarize(*E.Analysis)), Error))
      llvm::errs() << "cudagraph-tidy: error: " << Error << "\n";
    return *E.Analysis;
  }
  E.Analysis->run();
  return *E.Analysis;
}

void CaptureAnalysis::reset() { cache().clear(); }

CaptureAnalysis::CaptureAnalysis(ASTContext &Ctx, const CaptureOptions &Opts)
    : Ctx(Ctx), Code(Ctx.getSourceManager(), Opts.LibraryHeaderRegex),
      Apis(Opts.BeginFunctions, Opts.EndFunctions, Opts.StatusFunctions),
      Flows(std::make_unique<FlowEngine>(Ctx, Code, Apis)), Values(Ctx),
      CapturedPatterns(Opts.CapturedFunctions),
      SafePatterns(Opts.CaptureSafeFunctions),
      OpRootsSpec(Opts.CustomOpRoots) {
  forgetPointerApis();
  forgetGuardLocals();
  Flows->setOverriders(
      [this](const CXXMethodDecl *M) { return overridersOf(M); });
  const std::string &Path =
      Opts.ProjectIndex.empty() ? defaultProjectIndex() : Opts.ProjectIndex;
  if (Path.empty())
    return;
  std::shared_ptr<const ProjectIndex> Loaded =
      ProjectIndex::load(Path, IndexError);
  if (!Loaded)
    return;
  std::string Main;
  const SourceManager &SM = Ctx.getSourceManager();
  if (OptionalFileEntryRef F = SM.getFileEntryRefForID(SM.getMainFileID()))
    Main = normalPath(F->getName());
  Index = std::make_unique<IndexView>(std::move(Loaded), std::move(Main));
  Flows->setIndex(Index.get());
}

CaptureAnalysis::~CaptureAnalysis() = default;

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

CaptureContext CapturedScope::resolve(const CaptureState &State) const {
  CaptureContext C;
  C.Modes = 0;
  C.StreamGuarded = State.StreamGuarded;
  bool StreamsKnown = true;
  for (const RegionRoot *R : State.Roots) {
    const Decl *Stream = R->Owner == Function ? R->beginStream() : nullptr;
    if (!Stream)
      StreamsKnown = false;
    else if (!llvm::is_contained(C.Streams, Stream))
      C.Streams.push_back(Stream);
    if (R->K == RegionRoot::Kind::Entry) {
      C.Modes |= EntryModes;
      continue;
    }
    C.Modes |= R->Modes;
    if (!C.Root)
      C.Root = R;
  }
  if (!C.Root) {
    C.Root = EntryRoot;
    C.Chain = Context;
  }
  if (!C.Modes)
    C.Modes = AnyMode;
  if (!StreamsKnown)
    C.Streams.clear();
  return C;
}

std::optional<CaptureContext>
CapturedScope::contextOf(const Stmt *S) const {
  if ((Values && Values->Dead.contains(S)) || (Cold && Cold->contains(S)))
    return std::nullopt;
  const CaptureState *State = Flow->stateAt(S);
  if (!State || !State->capturing())
    return std::nullopt;
  return resolve(*State);
}


//===----------------------------------------------------------------------===//
// Reach
//===----------------------------------------------------------------------===//

static bool onOtherThread(const RegionRoot *Root) {
  return Root && Root->K == RegionRoot::Kind::OtherThread;
}

void CaptureAnalysis::pushSite(const CapturedSite &Site) {
  (onOtherThread(Site.Ctx.Root) ? ThreadSites : Sites).push_back(Site);
}

void CaptureAnalysis::addScope(const CapturedScope &Scope) {
  // Another thread's code is not captured: no statement of it is in a
  // capture scope, only its calls are looked at.
  if (!onOtherThread(Scope.EntryRoot)) {
    ScopesByFunction[Scope.Function].push_back(Scopes.size());
    Scopes.push_back(Scope);
  }
  for (const FlowSite &FS : Scope.Flow->Sites)
    if ((!Scope.Values || !Scope.Values->isDead(FS.Site)) &&
        !(Scope.Cold && FS.Site.S && Scope.Cold->contains(FS.Site.S)))
      addSite(FS.Site, Scope.resolve(FS.State), Scope.Function, Scope.Values);
  for (const ParamCall &PC : Scope.Flow->ParamCalls)
    ParamInvocations.push_back(
        {Scope.Function, PC.Param, Scope.resolve(PC.State)});
}

/// Whether a callable passed at \p Site runs on another thread:
/// std::thread, std::jthread, std::async, pthread_create, or a thread
/// emplaced into a container of threads.
static bool startsThread(const CallSite &Site) {
  const FunctionDecl *Starter = directCallee(Site.S);
  if (!Starter)
    return false;
  if (Starter->getDeclContext()->isTranslationUnit() ||
      Starter->getDeclContext()->isExternCContext())
    if (const IdentifierInfo *II = Starter->getIdentifier())
      return II->getName() == "pthread_create";
  const DeclContext *DC = Starter->getDeclContext();
  if (isa<CXXRecordDecl>(DC))
    DC = DC->getParent();
  if (!DC || !DC->isStdNamespace())
    return false;
  std::string Name = Starter->getQualifiedNameAsString();
  if (Name == "std::thread::thread" || Name == "std::jthread::jthread" ||
      Name == "std::async")
    return true;
  // workers.emplace_back(fn) on a std::vector<std::thread> (or deque, list).
  return emplacesThread(Starter);
}

/// What the parameters of the functions on \p Chain stand for: the variable
/// of the begin's function (or a global) each call passes for them, where
/// it passes a variable as it is (`layer(r)`, `step(r->cfg)` not).
static ParamAliases parameterAliases(const Reach *Chain) {
  llvm::SmallVector<std::pair<const ValueDecl *, const ValueDecl *>, 8> Pairs;
  for (const Reach *R = Chain; R && !R->InLibrary; R = R->Parent) {
    const auto *Call = dyn_cast_or_null<CallExpr>(R->Site.S);
    if (!Call || isa<CXXOperatorCallExpr>(Call) || !R->Function)
      continue;
    for (unsigned I = 0, N = std::min<unsigned>(Call->getNumArgs(),
                                                R->Function->getNumParams());
         I < N; ++I) {
      const auto *DRE =
          dyn_cast<DeclRefExpr>(Call->getArg(I)->IgnoreParenImpCasts());
      const ParmVarDecl *Param = R->Function->getParamDecl(I);
      if (const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
          V && !mayChange(R->Function->getBody(), Param))
        Pairs.push_back({Param, V});
    }
  }
  // From the begin's side down: a parameter passed on stands for what its
  // own caller passed.
  ParamAliases Aliases;
  for (auto [Param, Var] : llvm::reverse(Pairs)) {
    const ValueDecl *Target = Aliases.lookup(Var);
    Aliases[Param] = Target ? Target : Var;
  }
  return Aliases;
}

std::optional<CaptureContext>
CaptureAnalysis::contextOf(const FunctionDecl *FD, const Stmt *S) const {
  auto It = ScopesByFunction.find(FD);
  if (It == ScopesByFunction.end())
    return std::nullopt;
  for (unsigned I : It->second) {
    std::optional<CaptureContext> C = Scopes[I].contextOf(S);
    // Under a condition the capture never runs with, as addSite judges
    // calls: a branch of a helper under `if (use_sparse)` where
    // `use_sparse` requires `!use_graph` and the capture `use_graph`.
    if (C && C->Root && FD != C->Root->Owner && !C->Root->Guards.empty()) {
      ParamAliases Aliases = parameterAliases(C->Chain);
      if (Flows->contradictsGuards(*C->Root, FD, S, &Aliases))
        continue;
    }
    if (C)
      return C;
  }
  return std::nullopt;
}

void CaptureAnalysis::addSite(const CallSite &Site, const CaptureContext &Ctx,
                              const FunctionDecl *Function,
                              const ValueResult *CallerValues) {
  CaptureContext C = Ctx;
  // A call under a condition the capture never runs with (`if (debug())`
  // in a helper of a capture begun only when `debug()` is false).
  if (C.Root && Function != C.Root->Owner && !C.Root->Guards.empty()) {
    ParamAliases Aliases = parameterAliases(C.Chain);
    if (Flows->contradictsGuards(*C.Root, Function, Site.S, &Aliases))
      return;
  }
  // A thread started during the capture is not captured; its calls touch
  // the capture only in global mode, where the capture prohibits them from
  // any thread.
  if (Site.K == CallSite::Kind::Callable && startsThread(Site)) {
    C.Modes &= ModeGlobal;
    if (!C.Modes || C.StreamGuarded)
      return;
    if (!onOtherThread(C.Root)) {
      RegionRoot &Root = ListedRoots.emplace_back();
      Root.K = RegionRoot::Kind::OtherThread;
      Root.Loc = Site.Loc;
      Root.Call = Site.S;
      Root.Owner = Function;
      Root.Via = definitionOf(Site.Callee);
      Root.Capture = C.Root;
      Root.Modes = ModeGlobal;
      C.Root = &Root;
    }
  }
  // Begin calls are not work done under capture.
  if (Site.K != CallSite::Kind::Callable &&
      Flows->eventOf(Site.Callee) == CaptureEvent::Begin)
    return;
  // A static local's initializer has run if its function ran before the
  // capture began.
  if (Site.OnceInit && ranBefore(C.Root, Function))
    return;
  pushSite({Site, C, Function, CallerValues});
  // In the function that began the capture, a boolean the begin was guarded
  // by holds its value at calls made while the capture is open: `if (use)
  // begin(); run(use);` runs `run` with `use` true.
  // There too, the stream the capture runs on is not 0.
  bool InBeginner = C.Root && C.Root->Owner == Function;
  auto KnownArg = [&](const Expr *Arg) -> std::optional<Known> {
    if (!InBeginner)
      return std::nullopt;
    if (const Decl *Stream = capturedStream(C.Root);
        Stream && isa<DeclRefExpr>(Arg->IgnoreParenImpCasts()) &&
        storageOf(Arg) == Stream)
      return Known::nonZero();
    if (C.Root->Guards.empty() ||
        !Arg->IgnoreParenImpCasts()->getType()->isBooleanType())
      return std::nullopt;
    llvm::SmallVector<GuardFact, 2> Facts;
    llvm::SmallVector<ConditionLeaf, 2> Leaves;
    conditionLeaves(Arg, true, Leaves);
    guardFacts(Arg, true, this->Ctx, Facts);
    if (Leaves.size() != 1 || Facts.empty())
      return std::nullopt;
    for (const GuardFact &G : C.Root->Guards)
      if (G.Atom == Facts.front().Atom)
        return Known{G.Value == Facts.front().Value ? 1 : 0};
    return std::nullopt;
  };
  // Members the begin's conditions fixed hold in the methods the region
  // calls on the same object.
  Bindings HeldHere;
  const Bindings *Held = nullptr;
  if (InBeginner) {
    HeldHere = heldAt(C.Root, Function, Site);
    Held = &HeldHere;
  }
  // A virtual call may run any override the translation unit defines.
  if (const auto *M = dyn_cast_or_null<CXXMethodDecl>(Site.Callee);
      M && M->isVirtual() && !C.StreamGuarded)
    if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Site.S))
      if (const auto *ME = dyn_cast<MemberExpr>(MC->getCallee()->IgnoreParens());
          ME && !ME->hasQualifier())
        for (const FunctionDecl *Override : overridersOf(M))
          reach(Override, Site, C, nullptr,
                Values.passed(Site, Override, Function, CallerValues, KnownArg,
                              Held));
  // A virtual method of a library class may run the override of any
  // library class the unit's own code makes (`torch::optim::Adam opt(...)`
  // called through `torch::optim::Optimizer &`): the catalog judges that
  // override's name.
  if (const auto *M = dyn_cast_or_null<CXXMethodDecl>(Site.Callee);
      M && M->isVirtual() && !Code.isUserLocation(M->getLocation()))
    if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Site.S))
      if (const auto *ME = dyn_cast<MemberExpr>(MC->getCallee()->IgnoreParens());
          ME && !ME->hasQualifier())
        for (const CXXRecordDecl *Made : constructedLibraryClasses())
          if (Made != M->getParent() &&
              Made->isDerivedFrom(M->getParent()))
            if (const CXXMethodDecl *Final =
                    M->getCorrespondingMethodInClass(Made);
                Final && Final != M) {
              CallSite Dispatched = Site;
              Dispatched.Callee = Final;
              pushSite({Dispatched, C, Function, CallerValues});
            }
  const FunctionDecl *Def = definitionOf(Site.Callee);
  if (!Def)
    return;
  // A thread running callables kept in objects (a task queue): which task
  // runs while another thread's capture is open depends on the queue's
  // order, which is not visible; only tasks that capture themselves are
  // followed (a pool's workers run them side by side).
  if (Site.Held && onOtherThread(C.Root) && !globalBeginUnder(Def))
    return;
  // There too, a callable handed to a function of the unit runs only where
  // that function calls it (reachPassedCallables), not when it is handed
  // over: a task queue's `emplace(work)` keeps it for later.
  if (Site.K == CallSite::Kind::Callable && onOtherThread(C.Root))
    if (const FunctionDecl *Taker = definitionOf(directCallee(Site.S));
        Taker && Code.isUserLocation(Taker->getLocation()))
      return;
  if (Code.isUserLocation(Def->getLocation())) {
    reach(Def, Site, C, nullptr,
          Values.passed(Site, Def, Function, CallerValues, KnownArg, Held));
    return;
  }
  if (Def->isInStdNamespace() || C.StreamGuarded)
    return; // the standard library makes no CUDA calls
  // A library function: everything it calls inside the library runs now, and
  // is reported at this call (the innermost one in user code). Each call
  // into the library gets its own entry, so two calls reaching the same
  // library internals are both reported.
  Reach &Entry = Reaches.emplace_back();
  Entry.Function = Def;
  Entry.Site = Site;
  Entry.Parent = C.Chain;
  Entry.Root = C.Root;
  Entry.Modes = C.Modes;
  Entry.InLibrary = true;
  // Callbacks the library runs (a deleter, a functor) were warmed up with it.
  Entry.WarmedUp =
      warmedUpBefore(C.Root, Def) || (C.Chain && C.Chain->WarmedUp);
  std::vector<LibrarySite> Inner(librarySites(Def).begin(),
                                 librarySites(Def).end());
  for (const LibrarySite &LS : Inner) {
    CaptureContext InnerCtx = C;
    InnerCtx.Chain = &Entry;
    InnerCtx.StreamGuarded = LS.StreamGuarded;
    if (!LS.Conditional)
      pushSite({LS.Site, InnerCtx, Function, nullptr});
    // Library templates call back into user code (functors, lambdas).
    if (const FunctionDecl *InnerDef = definitionOf(LS.Site.Callee))
      if (Code.isUserLocation(InnerDef->getLocation()) && !LS.StreamGuarded)
        reach(InnerDef, LS.Site, InnerCtx);
  }
}

/// Whether \p E (an argument, without its `&`) designates state that
/// outlives the call: a global, a static local, a field, or a parameter of
/// \p Caller that \p CallerOutliving marks.
static bool outlivingState(const Expr *E, const FunctionDecl *Caller,
                           uint64_t CallerOutliving) {
  const Decl *D = storageOf(E);
  if (const auto *VD = dyn_cast_or_null<VarDecl>(D)) {
    if (isa<ParmVarDecl>(VD))
      return isOutlivingParam(VD, Caller, CallerOutliving);
    return VD->hasGlobalStorage();
  }
  return D && isa<FieldDecl>(D);
}

/// Reach::OutlivingParams of \p Def called at \p Site from \p Caller:
/// `ensure(&g_buf, &g_cap, n)` marks the first two parameters.
static uint64_t outlivingParams(const FunctionDecl *Def, const CallSite &Site,
                                const FunctionDecl *Caller,
                                uint64_t CallerOutliving) {
  const CallExpr *Call = Site.call();
  if (!Call || Site.K != CallSite::Kind::Call || Site.Indirect ||
      isa<CXXOperatorCallExpr>(Call))
    return 0;
  uint64_t Mask = 0;
  for (unsigned I = 0, N = std::min({Def->getNumParams(), Call->getNumArgs(),
                                     64u});
       I < N; ++I) {
    QualType T = Def->getParamDecl(I)->getType();
    const Expr *Arg = Call->getArg(I)->IgnoreParenImpCasts();
    bool Outlives = false;
    if (T->isPointerType() && !T->getPointeeType().isConstQualified()) {
      if (const auto *UO = dyn_cast<UnaryOperator>(Arg);
          UO && UO->getOpcode() == UO_AddrOf)
        Outlives = outlivingState(UO->getSubExpr(), Caller, CallerOutliving);
      else if (const auto *DRE = dyn_cast<DeclRefExpr>(Arg);
               DRE && isa<ParmVarDecl>(DRE->getDecl()) &&
               DRE->getType()->isPointerType())
        Outlives = outlivingState(Arg, Caller, CallerOutliving);
    } else if (T->isLValueReferenceType() &&
               !T.getNonReferenceType().isConstQualified()) {
      Outlives = outlivingState(Arg, Caller, CallerOutliving);
    }
    if (Outlives)
      Mask |= uint64_t(1) << I;
  }
  return Mask;
}

void CaptureAnalysis::reach(const FunctionDecl *Def, const CallSite &Site,
                            const CaptureContext &C,
                            const FunctionDecl *Invoker, Bindings Args) {
  if (C.StreamGuarded)
    return; // only device-wide waits matter there, and they are calls here
  if (isCaptureSafe(Def) || runsOnDeviceOnly(Def))
    return; // device code makes no host call
  // Python captures models, not benchmarks: a function that times its own
  // work on every call (cudaEventElapsedTime) cannot run captured, so the
  // op that reaches it is run eagerly (`benchmark_*` bindings).
  if (isOpRoot(C.Root) && timesItsWork(Def))
    return;
  if (!Args.empty() && !Reached.count({Def, C.Modes, Args.key()}) &&
      Variants[{Def, C.Modes}] >= MaxBindingVariants)
    Args = Bindings();
  // A warm-up of a function ran what it calls too: first uses below it are
  // done as well.
  bool Warm = warmedUpBefore(C.Root, Def) || (C.Chain && C.Chain->WarmedUp);
  uint64_t Outliving = 0;
  if (Warm)
    Outliving = outlivingParams(
        Def, Site, C.Chain ? C.Chain->Function : C.Root ? C.Root->Owner : nullptr,
        C.Chain ? C.Chain->OutlivingParams : 0);
  auto Key = std::make_tuple(
      Def, C.Modes,
      Args.key() + (Warm ? "warm" + std::to_string(Outliving) : ""));
  if (auto It = Reached.find(Key); It != Reached.end()) {
    if (It->second->Others.size() < MaxOtherCalls)
      It->second->Others.push_back({Site, C.Chain, C.Root, Invoker});
    return;
  }
  if (!Args.empty())
    ++Variants[{Def, C.Modes}];
  Reach &R = Reaches.emplace_back();
  R.Function = Def;
  R.Site = Site;
  R.Parent = C.Chain;
  R.Root = C.Root;
  R.Modes = C.Modes;
  R.Invoker = Invoker;
  R.Args = std::move(Args);
  R.WarmedUp = Warm;
  R.OutlivingParams = Outliving;
  Reached[Key] = &R;
  Worklist.push_back(&R);
}

const Decl *CaptureAnalysis::capturedStream(const RegionRoot *Root) {
  if (!Root || Root->K != RegionRoot::Kind::BeginApi)
    return nullptr;
  const Expr *Stream = streamArgument(dyn_cast_or_null<CallExpr>(Root->Call));
  // A variable, not an element (`streams[i]` says nothing of `streams[0]`)
  // nor another object's field; a member of `this` is in beganUnder().
  if (!Stream || !isa<DeclRefExpr>(Stream->IgnoreParenImpCasts()))
    return nullptr;
  const Decl *D = storageOf(Stream);
  const auto *VD = dyn_cast_or_null<ValueDecl>(D);
  return VD && !VD->getType()->isReferenceType() ? D : nullptr;
}

const Bindings &CaptureAnalysis::beganUnder(const RegionRoot *Root) {
  auto [It, Inserted] = BeganUnderMemo.try_emplace(Root);
  if (!Inserted)
    return It->second;
  Bindings Facts;
  for (auto [Cond, Value] : Root->Conditions)
    memberFacts(Cond, Value, Ctx, Facts);
  if (Root->K == RegionRoot::Kind::BeginApi)
    if (const Expr *Stream =
            streamArgument(dyn_cast_or_null<CallExpr>(Root->Call)))
      if (MemberPath Path = memberPathOf(Stream); !Path.empty())
        Facts.bindMember(Path, Known::nonZero());
  setAfterEnd(Root, Facts);
  return BeganUnderMemo[Root] = std::move(Facts);
}

void CaptureAnalysis::setAfterEnd(const RegionRoot *Root, Bindings &Facts) {
  if (Root->K != RegionRoot::Kind::BeginApi || !Root->Call || !Root->Owner ||
      !Root->Owner->getBody())
    return;
  const SourceManager &SM = Ctx.getSourceManager();
  auto Before = [&](const Stmt *A, const Stmt *B) {
    return SM.isBeforeInTranslationUnit(SM.getExpansionLoc(A->getBeginLoc()),
                                        SM.getExpansionLoc(B->getBeginLoc()));
  };
  // The first end after the begin, in source order.
  const Stmt *End = nullptr;
  for (const CallSite &Site : Flows->callsIn(Root->Owner))
    if (Site.K == CallSite::Kind::Call && Site.S &&
        Flows->eventOf(Site.Callee) == CaptureEvent::End &&
        Before(Root->Call, Site.S) && (!End || Before(Site.S, End)))
      End = Site.S;
  if (!End)
    return;
  // Boolean members of `this` stored to: by a constant after the end, and
  // anywhere from the begin to the end (those are not known).
  llvm::SmallVector<std::pair<MemberPath, bool>, 2> After;
  llvm::SmallVector<MemberPath, 2> During;
  forEachStmt(Root->Owner->getBody(), [&](const Stmt *St) {
    bool Plain = false;
    const Expr *Target = assignedBy(St, &Plain);
    if (!Target)
      return;
    MemberPath Path = memberPathOf(Target);
    if (Path.empty() || !Path.back()->getType()->isBooleanType())
      return;
    if (Before(End, St)) {
      const auto *Op = dyn_cast<BinaryOperator>(St);
      const auto *Value =
          Op ? dyn_cast<CXXBoolLiteralExpr>(Op->getRHS()->IgnoreParenImpCasts())
             : nullptr;
      if (Plain && Value)
        After.push_back({Path, Value->getValue()});
      else
        During.push_back(Path); // not a constant: nothing known
    } else if (Before(Root->Call, St)) {
      During.push_back(Path);
    }
  });
  for (const auto &[Path, Value] : After) {
    bool Mixed = llvm::is_contained(During, Path) ||
                 llvm::any_of(After, [&, &Path = Path, Value = Value](
                                         const auto &P) {
                   return P.first == Path && P.second != Value;
                 });
    if (!Mixed && !Facts.findMember(Path))
      Facts.bindMember(Path, Known{Value ? 0 : 1});
  }
}

Bindings CaptureAnalysis::heldAt(const RegionRoot *Root,
                                 const FunctionDecl *Function,
                                 const CallSite &Site) {
  const Bindings &All = beganUnder(Root);
  if (All.Members.empty() || !Root->Call || !Site.S)
    return All;
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation Begin = SM.getExpansionLoc(Root->Call->getBeginLoc());
  SourceLocation At = SM.getExpansionLoc(Site.S->getBeginLoc());
  // Methods called on the object after the begin, before this call.
  llvm::SmallVector<const FunctionDecl *, 4> Between;
  for (const CallSite &Other : Flows->callsIn(Function)) {
    const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Other.S);
    if (Other.K != CallSite::Kind::Call || !MC || !MC->getMethodDecl())
      continue;
    const Expr *Obj = MC->getImplicitObjectArgument();
    if (!Obj || !isa<CXXThisExpr>(Obj->IgnoreParenImpCasts()))
      continue;
    SourceLocation L = SM.getExpansionLoc(MC->getBeginLoc());
    if (SM.isBeforeInTranslationUnit(Begin, L) &&
        SM.isBeforeInTranslationUnit(L, At))
      Between.push_back(MC->getMethodDecl());
  }
  if (Between.empty())
    return All;
  Bindings Out = All;
  Out.Members.clear();
  for (const auto &[Path, Value] : All.Members)
    if (llvm::none_of(Between, [&](const FunctionDecl *M) {
          return Values.mayChangeMember(M, Path);
        }))
      Out.Members.push_back({Path, Value});
  return Out;
}

bool CaptureAnalysis::isCaptureSafe(const FunctionDecl *FD) {
  if (!FD)
    return false;
  if (const FunctionDecl *Pattern = FD->getTemplateInstantiationPattern())
    FD = Pattern;
  for (const FunctionDecl *D : FD->redecls())
    for (const auto *A : D->specific_attrs<AnnotateAttr>())
      if (A->getAnnotation() == "cudagraph::capture_safe")
        return true;
  return !SafePatterns.empty() && SafePatterns.matches(Code.nameOf(FD));
}

bool CaptureAnalysis::isOpRoot(const RegionRoot *Root) {
  return Root && (Root->K == RegionRoot::Kind::OpEntry ||
                  (Root->K == RegionRoot::Kind::CrossFile && Root->Cross &&
                   Root->Cross->OpRoot));
}

/// Whether \p S, run from its start, calls an elapsed-time API outside any
/// branch (loops are fine: a timing loop runs its body).
static bool timesUnconditionally(const Stmt *S) {
  if (!S || isa<LambdaExpr>(S) || isa<IfStmt>(S) || isa<SwitchStmt>(S) ||
      isa<AbstractConditionalOperator>(S) || isa<CXXCatchStmt>(S))
    return false;
  if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isLogicalOp())
    return timesUnconditionally(BO->getLHS());
  if (const auto *Call = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *FD = calleeOf(Call);
        FD && FD->getIdentifier()) {
      if (isElapsedTimeApi(stripCudaApiSuffix(FD->getName())))
        return true;
    }
  for (const Stmt *Child : S->children())
    if (timesUnconditionally(Child))
      return true;
  return false;
}

bool CaptureAnalysis::timesItsWork(const FunctionDecl *Def) {
  auto [It, Inserted] = TimesWork.try_emplace(Def, false);
  if (Inserted)
    It->second = Def->getBody() && timesUnconditionally(Def->getBody());
  return It->second;
}

/// Whether \p Root's begin runs only after its function ran eagerly before:
/// it runs under a fact on a field or global that the function itself
/// counts up (`if (r->warm >= 2) begin(s); ... r->warm++;`), or sets after
/// the begin to a value the fact allows (`if (r->warm) begin(s); ...
/// r->warm = 1;`). Those runs did the first-use work of what the region
/// calls.
static bool capturesAfterWarmUps(const RegionRoot &Root) {
  if (!Root.Owner || !Root.Owner->getBody() || !Root.Call)
    return false;
  const ASTContext &Ctx = Root.Owner->getASTContext();
  const SourceManager &SM = Ctx.getSourceManager();
  // Facts that the first run fails: `count >= k` (k > 0), `flag != 0`.
  llvm::SmallVector<const GuardFact *, 2> Warm;
  for (const GuardFact &G : Root.Guards)
    if (!G.Loop && G.HasRange && (G.Except ? G.Lo == 0 : G.Lo > 0))
      Warm.push_back(&G);
  if (Warm.empty())
    return false;
  SourceLocation Begin = SM.getExpansionLoc(Root.Call->getBeginLoc());
  bool Warmed = false;
  forEachStmt(Root.Owner->getBody(), [&](const Stmt *S) {
    const Expr *Target = nullptr, *Stored = nullptr;
    bool Up = false;
    if (const auto *UO = dyn_cast<UnaryOperator>(S);
        UO && UO->isIncrementOp()) {
      Target = UO->getSubExpr();
      Up = true;
    } else if (const auto *CA = dyn_cast<CompoundAssignOperator>(S);
               CA && CA->getOpcode() == BO_AddAssign) {
      Target = CA->getLHS();
      Up = true;
    } else if (const auto *BO = dyn_cast<BinaryOperator>(S);
               BO && BO->getOpcode() == BO_Assign) {
      Target = BO->getLHS();
      Stored = BO->getRHS();
    }
    if (!Target || Warmed)
      return;
    // Members and globals only: a local starts again on every call.
    const Expr *Base = Target->IgnoreParenImpCasts();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Base)) {
      const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
      if (!VD || VD->hasLocalStorage())
        return;
    } else if (!isa<MemberExpr>(Base)) {
      return;
    }
    GuardFact F;
    bool Known = storedFact(Target, Stored, Ctx, F);
    for (const GuardFact *G : Warm) {
      if (G->Subject != F.Subject)
        continue;
      if (Up || (Known && !G->excludes(F) &&
                 SM.isBeforeInTranslationUnit(
                     Begin, SM.getExpansionLoc(S->getBeginLoc()))))
        Warmed = true;
    }
  });
  return Warmed;
}

bool CaptureAnalysis::beginsWithoutPool(const RegionRoot *Root) {
  if (!Root)
    return false;
  const FunctionDecl *Wrapper = nullptr;
  const FunctionDecl *BeginFn = nullptr;
  if (Root->K == RegionRoot::Kind::BeginApi && Root->Call) {
    if (const auto *Call = dyn_cast<CallExpr>(Root->Call))
      BeginFn = calleeOf(Call);
  } else if (Root->K == RegionRoot::Kind::Wrapper && Root->Via) {
    Wrapper = definitionOf(Root->Via);
    if (Wrapper)
      for (const CallSite &Site : Flows->callsIn(Wrapper))
        if (Site.K == CallSite::Kind::Call && Site.Callee &&
            Flows->eventOf(Site.Callee) == CaptureEvent::Begin) {
          BeginFn = Site.Callee;
          break;
        }
  }
  if (!BeginFn)
    return false;
  StringRef Name = stripCudaApiSuffix(Code.nameOf(BeginFn));
  if (Name != "cudaStreamBeginCapture" && Name != "cuStreamBeginCapture" &&
      Name != "cudaStreamBeginCaptureToGraph" &&
      Name != "cuStreamBeginCaptureToGraph")
    return false;
  auto RegistersPool = [&](const FunctionDecl *FD) {
    if (!FD)
      return false;
    for (const CallSite &Site : Flows->callsIn(FD))
      if (Site.Callee && Site.Callee->getIdentifier() &&
          (Site.Callee->getName().contains("AllocateToPool") ||
           Site.Callee->getName().contains("StreamToPool")))
        return true;
    return false;
  };
  return !RegistersPool(Root->Owner) && !RegistersPool(Wrapper);
}

bool CaptureAnalysis::warmedUpBefore(const RegionRoot *Root,
                                     const FunctionDecl *Def) {
  if (!Root || !Def)
    return false;
  // Python runs a model eagerly before it captures it (torch.compile's
  // warm-up pass, make_graphed_callables' warm-up iterations, the serving
  // engines' warm-up runs): a registered op's first-use branches have run.
  // Not an XLA handler's: XLA may record its first execution into a command
  // buffer, which is why handlers fill their caches at the initialization
  // stage.
  if (isOpRoot(Root))
    return Root->K == RegionRoot::Kind::OpEntry
               ? Root->Op && registrationWarmedUp(Root->Op->K)
               : Root->Cross->OpWarmedUp;
  const FunctionDecl *Holder = nullptr;
  SourceLocation Begin;
  if (Root->K == RegionRoot::Kind::BeginApi && Root->Call) {
    Holder = Root->Owner;
    Begin = Root->Call->getBeginLoc();
  } else if (Root->K == RegionRoot::Kind::Wrapper && Root->Via) {
    Holder = definitionOf(Root->Via);
    if (Holder)
      for (const CallSite &Site : Flows->callsIn(Holder))
        if (Site.K == CallSite::Kind::Call && Site.S &&
            Flows->eventOf(Site.Callee) == CaptureEvent::Begin) {
          Begin = Site.S->getBeginLoc();
          break;
        }
  }
  if (!Holder || Begin.isInvalid())
    return false;
  if (Root->K == RegionRoot::Kind::BeginApi && capturesAfterWarmUps(*Root))
    return true;
  const SourceManager &SM = Ctx.getSourceManager();
  // A call, or a construction (an object made the same way before the
  // begin: `Buffer warm(n, "tag");`).
  for (const CallSite &Site : Flows->callsIn(Holder))
    if ((Site.K == CallSite::Kind::Call ||
         Site.K == CallSite::Kind::Construct) &&
        Site.S && definitionOf(Site.Callee) == Def &&
        SM.isBeforeInTranslationUnit(SM.getExpansionLoc(Site.S->getBeginLoc()),
                                     SM.getExpansionLoc(Begin)))
      return true;
  // Run on the way to the begin: by a function the holder calls first
  // (`prepare(ctx); capture(ctx);` where prepare sizes the workspace), or
  // by what every caller of the holder runs before calling it.
  return ranBefore(Root, Def);
}

void CaptureAnalysis::reachFrom(const FunctionDecl *Holder,
                                llvm::function_ref<bool(const CallSite &)> Take,
                                llvm::DenseSet<const FunctionDecl *> &Ran) {
  llvm::SmallVector<const FunctionDecl *, 32> Work;
  auto Follow = [&](const CallSite &Site) {
    if (const FunctionDecl *Def = definitionOf(Site.Callee);
        Def && !Def->isInStdNamespace() &&
        Ran.insert(Def->getCanonicalDecl()).second)
      Work.push_back(Def);
  };
  for (const CallSite &Site : Flows->callsIn(Holder))
    if (Site.S && Site.K != CallSite::Kind::LocalDtor && Take(Site))
      Follow(Site);
  while (!Work.empty() && Ran.size() < MaxPreBeginFunctions)
    for (const CallSite &Site : Flows->callsIn(Work.pop_back_val()))
      if (Site.K != CallSite::Kind::LocalDtor)
        Follow(Site);
}

bool CaptureAnalysis::ranBefore(const RegionRoot *Root,
                                const FunctionDecl *FD) {
  if (!Root || !FD || Root->K != RegionRoot::Kind::BeginApi || !Root->Call ||
      !Root->Owner)
    return false;
  const SourceManager &SM = Ctx.getSourceManager();
  auto [It, Inserted] = PreBeginReach.try_emplace(Root);
  if (Inserted) {
    SourceLocation Begin = SM.getExpansionLoc(Root->Call->getBeginLoc());
    reachFrom(
        Root->Owner,
        [&](const CallSite &Site) {
          return SM.isBeforeInTranslationUnit(
              SM.getExpansionLoc(Site.S->getBeginLoc()), Begin);
        },
        It->second);
  }
  if (It->second.contains(FD->getCanonicalDecl()))
    return true;
  // What every caller of the begin's function ran before the call (its
  // arguments included: `run_captured(Gemm(...), ...)` constructs the
  // functor, whose constructor warms the handle up, before the capture).
  auto [CIt, CInserted] = CallerPreBeginReach.try_emplace(Root->Owner);
  if (CInserted) {
    auto Callers = Flows->callersOf(Root->Owner);
    bool Known = !Callers.empty() &&
                 llvm::none_of(Callers, [](const auto &C) { return !C.first; });
    bool First = true;
    for (auto [Caller, Call] : Known ? Callers : decltype(Callers)()) {
      llvm::DenseSet<const FunctionDecl *> Here;
      SourceLocation End = SM.getExpansionLoc(Call->getEndLoc());
      reachFrom(
          Caller,
          [&](const CallSite &Site) {
            return Site.S != Call &&
                   SM.isBeforeInTranslationUnit(
                       SM.getExpansionLoc(Site.S->getBeginLoc()), End);
          },
          Here);
      if (First) {
        CIt->second = std::move(Here);
        First = false;
      } else {
        llvm::DenseSet<const FunctionDecl *> Both;
        for (const FunctionDecl *F : CIt->second)
          if (Here.contains(F))
            Both.insert(F);
        CIt->second = std::move(Both);
      }
    }
  }
  return CIt->second.contains(FD->getCanonicalDecl());
}

namespace {
/// Collects the statements that run only on some paths through a body:
/// branches of if/switch/?:, right operands of && and ||, loop bodies (not
/// `do { } while (0)`), handlers.
class ConditionalCollector {
public:
  explicit ConditionalCollector(llvm::DenseSet<const Stmt *> &Out) : Out(Out) {}
  void walk(const Stmt *S, bool Conditional) {
    if (!S || isa<LambdaExpr>(S))
      return;
    if (Conditional)
      Out.insert(S);
    if (const auto *If = dyn_cast<IfStmt>(S)) {
      walk(If->getInit(), Conditional);
      walk(If->getConditionVariableDeclStmt(), Conditional);
      walk(If->getCond(), Conditional);
      walk(If->getThen(), true);
      walk(If->getElse(), true);
      return;
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isLogicalOp()) {
      walk(BO->getLHS(), Conditional);
      walk(BO->getRHS(), true);
      return;
    }
    if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S)) {
      walk(CO->getCond(), Conditional);
      walk(CO->getTrueExpr(), true);
      walk(CO->getFalseExpr(), true);
      return;
    }
    if (const auto *Do = dyn_cast<DoStmt>(S)) {
      bool Once = !isRepeatingLoop(Do);
      walk(Do->getBody(), Conditional || !Once);
      walk(Do->getCond(), Conditional || !Once);
      return;
    }
    bool Body = isa<ForStmt>(S) || isa<WhileStmt>(S) ||
                isa<CXXForRangeStmt>(S) || isa<SwitchStmt>(S) ||
                isa<CXXCatchStmt>(S);
    for (const Stmt *Child : S->children())
      walk(Child, Conditional || Body);
  }

private:
  llvm::DenseSet<const Stmt *> &Out;
};
} // namespace

const llvm::DenseSet<const Stmt *> &
CaptureAnalysis::conditionalStmts(const FunctionDecl *FD) {
  std::unique_ptr<llvm::DenseSet<const Stmt *>> &Set = ConditionalCache[FD];
  if (!Set) {
    Set = std::make_unique<llvm::DenseSet<const Stmt *>>();
    ConditionalCollector(*Set).walk(FD->getBody(), false);
  }
  return *Set;
}

const llvm::DenseSet<const Stmt *> &
CaptureAnalysis::firstUseStmts(const FunctionDecl *FD, uint64_t Outliving) {
  std::unique_ptr<llvm::DenseSet<const Stmt *>> &Set =
      FirstUseCache[{FD, Outliving}];
  if (!Set) {
    Set = std::make_unique<llvm::DenseSet<const Stmt *>>();
    llvm::SmallVector<const Stmt *, 8> Arms;
    WarmUp.coldArms(FD, Arms, Outliving);
    for (const Stmt *Arm : Arms)
      ConditionalCollector(*Set).walk(Arm, true);
  }
  return *Set;
}

llvm::ArrayRef<CaptureAnalysis::LibrarySite>
CaptureAnalysis::librarySites(const FunctionDecl *Def) {
  auto It = LibraryCache.find(Def);
  if (It != LibraryCache.end())
    return It->second;
  std::vector<LibrarySite> Result;
  llvm::DenseSet<const FunctionDecl *> Seen{Def};
  struct Item {
    const FunctionDecl *F;
    unsigned Depth;
    bool Conditional;
  };
  std::vector<Item> Stack{{Def, 1, false}};
  while (!Stack.empty()) {
    Item I = Stack.back();
    Stack.pop_back();
    const FunctionFlow &Flow = Flows->flow(I.F, /*EntryCapturing=*/true);
    const llvm::DenseSet<const Stmt *> &Conditional = conditionalStmts(I.F);
    for (const FlowSite &FS : Flow.Sites) {
      bool Cond = I.Conditional ||
                  (FS.Site.S ? Conditional.contains(FS.Site.S)
                             : FS.Site.Var && Conditional.contains(
                                                  FS.Site.Var->getInit()));
      // A static local's initializer in the library runs on the first
      // call only, like a branch on library state.
      Cond |= FS.Site.OnceInit;
      Result.push_back({FS.Site, FS.State.StreamGuarded, Cond});
      if (FS.State.StreamGuarded)
        continue;
      const FunctionDecl *Callee = definitionOf(FS.Site.Callee);
      if (Callee && I.Depth < MaxLibraryDepth &&
          !Code.isUserLocation(Callee->getLocation()) &&
          !Callee->isInStdNamespace() && Seen.insert(Callee).second)
        Stack.push_back({Callee, I.Depth + 1, Cond});
    }
  }
  return LibraryCache[Def] = std::move(Result);
}

llvm::ArrayRef<const FunctionDecl *>
CaptureAnalysis::overridersOf(const CXXMethodDecl *M) {
  if (UserFunctions.empty())
    return {}; // asked before the unit's functions are collected
  if (!Overriders) {
    Overriders.emplace();
    for (const FunctionDecl *FD : UserFunctions) {
      const auto *Method = dyn_cast<CXXMethodDecl>(FD);
      if (!Method || !Method->isVirtual())
        continue;
      llvm::SmallVector<const CXXMethodDecl *, 4> Bases(
          Method->overridden_methods());
      llvm::DenseSet<const CXXMethodDecl *> Seen;
      while (!Bases.empty()) {
        const CXXMethodDecl *Base = Bases.pop_back_val();
        if (!Seen.insert(Base->getCanonicalDecl()).second)
          continue;
        (*Overriders)[Base->getCanonicalDecl()].push_back(FD);
        Bases.append(Base->overridden_methods().begin(),
                     Base->overridden_methods().end());
      }
    }
  }
  auto It = Overriders->find(M->getCanonicalDecl());
  if (It == Overriders->end())
    return {};
  return It->second;
}

static void collectMadeClasses(const Stmt *S,
                               llvm::SmallSetVector<const CXXRecordDecl *, 16> &Out) {
  if (!S)
    return;
  auto Add = [&](QualType T) {
    if (const CXXRecordDecl *RD = T->getAsCXXRecordDecl())
      if (RD->hasDefinition())
        Out.insert(RD->getDefinition());
  };
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S))
    Add(CE->getType());
  else if (const auto *New = dyn_cast<CXXNewExpr>(S))
    Add(New->getAllocatedType());
  else if (const auto *Call = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *FD = calleeOf(Call);
        FD && FD->isInStdNamespace() && FD->getIdentifier() &&
        (FD->getName() == "make_shared" || FD->getName() == "make_unique" ||
         FD->getName() == "allocate_shared"))
      if (const TemplateArgumentList *Args =
              FD->getTemplateSpecializationArgs();
          Args && Args->size() > 0 &&
          Args->get(0).getKind() == TemplateArgument::Type)
        Add(Args->get(0).getAsType());
  for (const Stmt *Child : S->children())
    collectMadeClasses(Child, Out);
}

llvm::ArrayRef<const CXXRecordDecl *>
CaptureAnalysis::constructedLibraryClasses() {
  if (!MadeLibraryClasses) {
    MadeLibraryClasses.emplace();
    llvm::SmallSetVector<const CXXRecordDecl *, 16> Made;
    for (const FunctionDecl *FD : UserFunctions)
      collectMadeClasses(FD->getBody(), Made);
    for (const CXXRecordDecl *RD : Made)
      if (!Code.isUserLocation(RD->getLocation()) && RD->isPolymorphic())
        MadeLibraryClasses->push_back(RD);
  }
  return *MadeLibraryClasses;
}

/// Callables passed to a function that invokes the parameter while
/// capturing: `run_captured(s, work)` runs `work` under run_captured's
/// capture, wherever it is called from.
void CaptureAnalysis::reachPassedCallables() {
  if (ParamInvocations.empty())
    return;
  llvm::DenseMap<const FunctionDecl *, std::vector<unsigned>> ByFunction;
  for (unsigned I = 0; I < ParamInvocations.size(); ++I)
    ByFunction[ParamInvocations[I].Function->getCanonicalDecl()].push_back(I);
  for (const FunctionDecl *Caller : UserFunctions)
    for (const CallSite &Site : Flows->callsIn(Caller)) {
      if (Site.K != CallSite::Kind::Callable)
        continue;
      const FunctionDecl *Invoked = directCallee(Site.S);
      if (!Invoked)
        continue;
      auto It = ByFunction.find(Invoked->getCanonicalDecl());
      if (It == ByFunction.end())
        continue;
      // Member calls count the object apart; parameters match arguments.
      unsigned Offset = isa<CXXOperatorCallExpr>(Site.S) &&
                        isa<CXXMethodDecl>(Invoked);
      for (unsigned I : It->second) {
        const ParamInvocation &PI = ParamInvocations[I];
        if (PI.Param + Offset != Site.ArgIndex)
          continue;
        if (const FunctionDecl *Def = definitionOf(Site.Callee))
          if (Code.isUserLocation(Def->getLocation())) {
            CaptureContext C = PI.Ctx;
            reach(Def, Site, C, Invoked);
          }
      }
    }
}


static bool isTorchDecl(const Decl *D) {
  const DeclContext *DC = D ? D->getDeclContext() : nullptr;
  for (; DC && !DC->isTranslationUnit(); DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC);
        NS && NS->getParent()->isTranslationUnit() && NS->getIdentifier()) {
      StringRef Name = NS->getName();
      return Name == "at" || Name == "c10" || Name == "torch";
    }
  return false;
}

static bool isTorchType(QualType T) {
  const CXXRecordDecl *RD = T.getNonReferenceType()->getAsCXXRecordDecl();
  return RD && isTorchDecl(RD);
}

bool CaptureAnalysis::choosesSafeForm(const CapturedSite &Site,
                                      const Hazard &H) {
  if (H.SafeForms.empty() || !Site.Site.S)
    return false;
  return Values.hasSafeSibling(Site.Function, Site.Site.S, H.SafeForms,
                               Site.Values);
}

const CaptureAnalysis::StreamUseSets &CaptureAnalysis::streamUses() {
  if (!StreamUses) {
    StreamUses.emplace();
    auto &[Created, Joinable, Assigned] = *StreamUses;
    auto StreamStorage = [](const Expr *E) -> const Decl * {
      if (!E)
        return nullptr;
      const Expr *Bare = E->IgnoreParenImpCasts();
      if (const auto *UO = dyn_cast<UnaryOperator>(Bare);
          UO && UO->getOpcode() == UO_AddrOf)
        Bare = UO->getSubExpr()->IgnoreParenImpCasts();
      if (!isa<DeclRefExpr>(Bare) && !isa<MemberExpr>(Bare) &&
          !isa<ArraySubscriptExpr>(Bare))
        return nullptr;
      const auto *VD = dyn_cast_or_null<ValueDecl>(storageOf(Bare));
      return VD && isStreamType(VD->getType()) ? VD : nullptr;
    };
    auto Visit = [&](const Stmt *S, auto &&Self) -> void {
      if (!S)
        return;
      if (const auto *Call = dyn_cast<CallExpr>(S)) {
        const FunctionDecl *Callee = calleeOf(Call);
        StringRef Name =
            Callee ? stripCudaApiSuffix(Code.nameOf(Callee)) : StringRef();
        // The runtime and driver, their libraries, NCCL, and the launch
        // configuration of `<<<..., stream>>>`.
        bool Api = Name.starts_with("cu") || Name.starts_with("nccl") ||
                   Name.starts_with("__cuda");
        bool Creates = Name.starts_with("cudaStreamCreate") ||
                       Name.starts_with("cuStreamCreate");
        bool Joins = eventApiOf(Name).Role == EventRole::Wait ||
                     (Callee && Flows->eventOf(Callee) == CaptureEvent::Begin);
        for (unsigned I = 0; I < Call->getNumArgs(); ++I) {
          const Decl *Stream = StreamStorage(Call->getArg(I));
          if (!Stream)
            continue;
          bool ByAddress =
              isa<UnaryOperator>(Call->getArg(I)->IgnoreParenImpCasts());
          if (Creates && I == 0)
            Created.insert(Stream);
          else if (!Api || (Joins && I == 0) || ByAddress)
            Joinable.insert(Stream);
          if (ByAddress && !(Creates && I == 0))
            Assigned.insert(Stream);
        }
      } else if (const auto *Construct = dyn_cast<CXXConstructExpr>(S)) {
        for (const Expr *Arg : Construct->arguments())
          if (const Decl *Stream = StreamStorage(Arg))
            Joinable.insert(Stream); // a guard or wrapper may do anything
      } else if (const auto *BO = dyn_cast<BinaryOperator>(S);
                 BO && BO->isAssignmentOp()) {
        if (const Decl *Stream = StreamStorage(BO->getLHS())) {
          Joinable.insert(Stream);
          Assigned.insert(Stream);
        }
      } else if (const auto *DS = dyn_cast<DeclStmt>(S)) {
        for (const Decl *Member : DS->decls())
          if (const auto *VD = dyn_cast<VarDecl>(Member);
              VD && isStreamType(VD->getType()) && VD->getInit() &&
              !VD->getInit()->IgnoreParenImpCasts()->isNullPointerConstant(
                  Ctx, Expr::NPC_ValueDependentIsNotNull)) {
            Joinable.insert(VD->getCanonicalDecl());
            Assigned.insert(VD->getCanonicalDecl());
          }
      } else if (const auto *Lambda = dyn_cast<LambdaExpr>(S)) {
        for (const LambdaCapture &C : Lambda->captures())
          if (C.capturesVariable() && C.getCaptureKind() == LCK_ByRef)
            if (const auto *VD = dyn_cast<VarDecl>(C.getCapturedVar());
                VD && isStreamType(VD->getType()))
              Joinable.insert(VD->getCanonicalDecl());
      }
      for (const Stmt *Child : S->children())
        Self(Child, Self);
    };
    for (const FunctionDecl *FD : UserFunctions) {
      Visit(FD->getBody(), Visit);
      if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(FD))
        for (const CXXCtorInitializer *Init : Ctor->inits())
          if (const FieldDecl *Field = Init->getMember();
              Field && isStreamType(Field->getType()) && Init->getInit() &&
              !isa<ImplicitValueInitExpr>(Init->getInit()) &&
              !Init->getInit()->IgnoreParenImpCasts()->isNullPointerConstant(
                  Ctx, Expr::NPC_ValueDependentIsNotNull)) {
            Joinable.insert(Field->getCanonicalDecl());
            Assigned.insert(Field->getCanonicalDecl());
          }
    }
  }
  return *StreamUses;
}

bool CaptureAnalysis::isIsolatedStream(const Decl *D) {
  if (!D)
    return false;
  const StreamUseSets &Uses = streamUses();
  const Decl *Key = D->getCanonicalDecl();
  return Uses.Created.contains(Key) && !Uses.Joinable.contains(Key);
}

bool CaptureAnalysis::onIdleStream(const CallExpr *Call,
                                   const CaptureContext &Ctx) {
  const Decl *Named = namedStream(Call);
  if (!Named || Ctx.Streams.empty() || llvm::is_contained(Ctx.Streams, Named))
    return false;
  const StreamUseSets &Uses = streamUses();
  auto Distinct = [&](const Decl *D) {
    const Decl *Key = D->getCanonicalDecl();
    return Uses.Created.contains(Key) && !Uses.Assigned.contains(Key);
  };
  return Distinct(Named) && llvm::all_of(Ctx.Streams, Distinct);
}

bool CaptureAnalysis::isLibtorchCode(const FunctionDecl *FD) {
  if (!FD)
    return false;
  auto [It, Inserted] = LibtorchCache.try_emplace(FD, false);
  if (!Inserted)
    return It->second;
  bool Torch = llvm::any_of(FD->parameters(), [](const ParmVarDecl *P) {
    return isTorchType(P->getType());
  });
  for (const CallSite &Site : Flows->callsIn(FD)) {
    if (Torch)
      break;
    Torch = isTorchDecl(Site.Callee);
  }
  return LibtorchCache[FD] = Torch;
}

void CaptureAnalysis::collectUserFunctions() {
  forEachUserFunction(
      Ctx, Code,
      [&](const FunctionDecl *FD) { UserFunctions.push_back(FD); },
      FunctionWalk::Instantiated);
}

void CaptureAnalysis::run() {
  collectUserFunctions();

  // Regions: functions with capture events, entered with no capture open.
  for (const FunctionDecl *FD : UserFunctions) {
    if (!Flows->hasEvents(FD))
      continue;
    const FunctionFlow &Flow = Flows->flow(FD, /*EntryCapturing=*/false);
    bool Captures = llvm::any_of(Flow.States, [](const auto &P) {
      return P.second.capturing();
    });
    if (Captures)
      addScope({FD, nullptr, &Flow, nullptr, 0, nullptr, nullptr});
    for (auto [Return, Root] : Flow.OpenReturns)
      OpenReturns.push_back({FD, Return, Root});
    for (auto [End, Root] : Flow.WrongStreamEnds)
      WrongStreamEnds.push_back({FD, End, Root});
    // An end wrapper entered with its caller's capture open: failures it
    // returns before its end.
    if (Flows->summary(FD).Event == CaptureEvent::End)
      for (auto [Return, Root] :
           Flows->flow(FD, /*EntryCapturing=*/true).OpenReturns)
        if (Root->K == RegionRoot::Kind::Entry)
          OpenReturns.push_back({FD, Return, Root});
  }

  // Functions the user says run under capture (ops captured from Python).
  if (!CapturedPatterns.empty())
    for (const FunctionDecl *FD : UserFunctions)
      if (CapturedPatterns.matches(Code.nameOf(FD))) {
        RegionRoot &Root = ListedRoots.emplace_back();
        Root.K = RegionRoot::Kind::Listed;
        Root.Loc = FD->getLocation();
        Root.Owner = Root.Via = FD;
        Root.Modes = AnyMode;
        CaptureContext C;
        C.Root = &Root;
        reach(FD, CallSite(), C);
      }

  drain();

  // Custom ops and Python bindings, after the regions written in C++ so a
  // function both reach is reported under the region that certainly runs.
  if (opRootsEnabled()) {
    Ops = selectedOps(/*WithDeclared=*/false);
    for (const OpRegistration &Op : Ops) {
      // An op that begins or ends a capture itself manages capture: its
      // regions are analyzed as written.
      if (Flows->hasEvents(Op.Function))
        continue;
      RegionRoot &Root = ListedRoots.emplace_back();
      Root.K = RegionRoot::Kind::OpEntry;
      Root.Loc = Op.Loc;
      Root.Owner = Root.Via = Op.Function;
      Root.Op = &Op;
      Root.Modes = AnyMode;
      CaptureContext C;
      C.Root = &Root;
      reach(Op.Function, CallSite(), C);
    }
    drain();
  }

  if (Index)
    addCrossFileRoots();

  // Last: a function some capture reaches is analyzed as captured first.
  addOtherThreadRoots();
}

/// Whether \p FD is std::thread::join, std::jthread::join, or a
/// std::future's get or wait: a thread started before it has finished.
static bool waitsForThread(const FunctionDecl *FD) {
  const auto *M = dyn_cast_or_null<CXXMethodDecl>(FD);
  if (!M || !M->getIdentifier() || !M->getParent()->isInStdNamespace())
    return false;
  StringRef Class = M->getParent()->getName(), Name = M->getName();
  if (Class == "thread" || Class == "jthread")
    return Name == "join";
  if (Class == "future" || Class == "shared_future" ||
      Class == "__basic_future")
    return Name == "get" || Name == "wait";
  return false;
}

/// Whether one of \p Calls waits for a thread (waitsForThread) strictly
/// between \p First and \p Second (expansion locations).
static bool waitedBetween(const SourceManager &SM,
                          llvm::ArrayRef<CallSite> Calls,
                          SourceLocation First, SourceLocation Second) {
  return llvm::any_of(Calls, [&](const CallSite &Other) {
    if (Other.K != CallSite::Kind::Call || !Other.S ||
        !waitsForThread(Other.Callee))
      return false;
    SourceLocation At = SM.getExpansionLoc(Other.S->getBeginLoc());
    return SM.isBeforeInTranslationUnit(First, At) &&
           SM.isBeforeInTranslationUnit(At, Second);
  });
}

bool CaptureAnalysis::isReached(const FunctionDecl *FD) const {
  auto Under = Reached.lower_bound({FD, 0, std::string()});
  return Under != Reached.end() && std::get<0>(Under->first) == FD;
}

/// Whether \p S (a thread start) is the initializer of a local whose scope
/// ends before \p Before: a std::jthread or a std::async future joins there.
static bool scopeEndsBefore(ASTContext &Ctx, const Stmt *S,
                            SourceLocation Before) {
  const SourceManager &SM = Ctx.getSourceManager();
  DynTypedNodeList Parents = Ctx.getParents(*S);
  for (unsigned Depth = 0; Depth < 8 && !Parents.empty(); ++Depth) {
    if (const auto *DS = Parents[0].get<DeclStmt>()) {
      DynTypedNodeList Outer = Ctx.getParents(*DS);
      const auto *Block = Outer.empty() ? nullptr : Outer[0].get<CompoundStmt>();
      return Block && SM.isBeforeInTranslationUnit(
                          SM.getExpansionLoc(Block->getRBracLoc()),
                          SM.getExpansionLoc(Before));
    }
    Parents = Ctx.getParents(Parents[0]);
  }
  return false;
}

/// The variable or field \p E stores into, through moves and temporaries.
static const ValueDecl *storedInto(const Expr *E) {
  E = E ? E->IgnoreParenImpCasts() : nullptr;
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E))
    return dyn_cast<VarDecl>(DRE->getDecl());
  if (const auto *ME = dyn_cast_or_null<MemberExpr>(E))
    return dyn_cast<FieldDecl>(ME->getMemberDecl());
  return nullptr;
}

static bool outlivesCalls(const ValueDecl *D) {
  if (!D)
    return false;
  if (isa<FieldDecl>(D))
    return true;
  const auto *VD = dyn_cast<VarDecl>(D);
  return VD && VD->hasGlobalStorage();
}

/// Whether the thread \p Site starts in \p FD outlives the call of \p FD:
/// detached (`std::thread(f).detach()`, or a local detached later), kept in
/// a field or global (`worker_ = std::thread(f)`,
/// `workers_.emplace_back(f)`, a std::async future stored there), or a
/// pthread never joined in \p FD.
static bool threadOutlivesCall(ASTContext &Ctx, const CallSite &Site,
                               const FunctionDecl *FD,
                               llvm::ArrayRef<CallSite> Calls) {
  const FunctionDecl *Starter = directCallee(Site.S);
  if (!Starter)
    return false;
  if (Starter->getIdentifier() && Starter->getName() == "pthread_create")
    return llvm::none_of(Calls, [](const CallSite &C) {
      const FunctionDecl *Callee = C.K == CallSite::Kind::Call
                                       ? directCallee(C.S)
                                       : nullptr;
      return Callee && Callee->getIdentifier() &&
             Callee->getName() == "pthread_join";
    });
  if (const auto *Emplace = dyn_cast<CXXMemberCallExpr>(Site.S))
    return outlivesCalls(storedInto(Emplace->getImplicitObjectArgument()));
  // Up from the construction (or std::async call) to what holds it.
  const Stmt *Cur = Site.S;
  for (unsigned Depth = 0; Cur && Depth < 10; ++Depth) {
    DynTypedNodeList Parents = Ctx.getParents(*Cur);
    if (Parents.empty())
      return false;
    if (const auto *ME = Parents[0].get<MemberExpr>()) {
      const auto *M = dyn_cast<CXXMethodDecl>(ME->getMemberDecl());
      return M && M->getIdentifier() && M->getName() == "detach";
    }
    if (const auto *Op = Parents[0].get<CXXOperatorCallExpr>())
      return Op->isAssignmentOp() && Op->getNumArgs() == 2 &&
             outlivesCalls(storedInto(Op->getArg(0)));
    if (const auto *Var = Parents[0].get<VarDecl>()) {
      if (outlivesCalls(Var))
        return true;
      // A local detached later in the function.
      bool Detached = false;
      std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
        if (!S || Detached)
          return;
        if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S))
          if (const CXXMethodDecl *M = MC->getMethodDecl();
              M && M->getIdentifier() && M->getName() == "detach" &&
              storedInto(MC->getImplicitObjectArgument()) == Var)
            Detached = true;
        for (const Stmt *Child : S->children())
          Walk(Child);
      };
      Walk(FD->getBody());
      return Detached;
    }
    if (const auto *Init = Parents[0].get<CXXCtorInitializer>())
      return Init->isMemberInitializer();
    // The parent map gives a member initializer's expression the
    // constructor as its parent: a thread kept in a member outlives it.
    if (const auto *Ctor = Parents[0].get<CXXConstructorDecl>()) {
      const auto *E = dyn_cast<Expr>(Cur);
      return E && llvm::any_of(Ctor->inits(), [&](const CXXCtorInitializer *I) {
               return I->isMemberInitializer() && I->getInit() &&
                      I->getInit()->IgnoreImplicit() == E->IgnoreImplicit();
             });
    }
    const Stmt *Up = Parents[0].get<Stmt>();
    if (!Up || !(isa<ImplicitCastExpr>(Up) || isa<MaterializeTemporaryExpr>(Up) ||
                 isa<CXXBindTemporaryExpr>(Up) || isa<ExprWithCleanups>(Up) ||
                 isa<CXXFunctionalCastExpr>(Up) || isa<ParenExpr>(Up) ||
                 isa<CXXConstructExpr>(Up) || isa<CallExpr>(Up)))
      return false;
    // std::move(std::thread(...)) and copies pass it on; another call takes
    // it only when it is std::move.
    if (const auto *Call = dyn_cast<CallExpr>(Up);
        Call && !isa<CXXOperatorCallExpr>(Call)) {
      const FunctionDecl *Callee = calleeOf(Call);
      if (!Callee || !Callee->isInStdNamespace() || !Callee->getIdentifier() ||
          Callee->getName() != "move")
        return false;
    }
    Cur = Up;
  }
  return false;
}

/// Whether the thread start \p S runs in a loop of \p FD's body, starting
/// one thread per iteration.
static bool startedInLoop(ASTContext &Ctx, const Stmt *S,
                          const FunctionDecl *FD) {
  DynTypedNodeList Parents = Ctx.getParents(*S);
  for (unsigned Steps = 0; !Parents.empty() && Steps < 64; ++Steps) {
    const Stmt *P = Parents[0].get<Stmt>();
    if (!P || P == FD->getBody())
      return false;
    if (isRepeatingLoop(P))
      return true;
    Parents = Ctx.getParents(*P);
  }
  return false;
}

/// A global-mode begin among \p Begins that the thread running \p Def does
/// not make itself, or null.
const RegionRoot *CaptureAnalysis::otherGlobalBegin(
    llvm::ArrayRef<const RegionRoot *> Begins, const FunctionDecl *Def) {
  llvm::DenseSet<const FunctionDecl *> Own;
  llvm::SmallVector<const FunctionDecl *, 16> Work{Def};
  while (!Work.empty() && Own.size() < 256) {
    const FunctionDecl *FD = Work.pop_back_val();
    if (!FD || !Own.insert(FD).second)
      continue;
    anySameThreadCallee(FD, [&](const FunctionDecl *Callee) {
      Work.push_back(Callee);
      return false;
    });
  }
  for (const RegionRoot *R : Begins)
    if (!Own.contains(R->Owner))
      return R;
  return nullptr;
}

void CaptureAnalysis::addOtherThreadRoots() {
  const SourceManager &SM = Ctx.getSourceManager();
  // Threads that outlive the function starting them may run while a
  // global-mode capture begun anywhere in the unit is open.
  llvm::SmallVector<const RegionRoot *, 4> GlobalBegins;
  for (const RegionRoot &R : Flows->roots())
    if (R.Call && (R.Modes & ModeGlobal) && R.K == RegionRoot::Kind::BeginApi)
      GlobalBegins.push_back(&R);
  // None here: a global-mode capture the project index knows in another
  // unit of the program overlaps the threads this unit starts just as well.
  std::set<std::string> RemoteHolders;
  if (GlobalBegins.empty() && Index)
    if (std::string Remote = Index->remoteGlobalCapture(RemoteHolders);
        !Remote.empty()) {
      RegionRoot &R = ListedRoots.emplace_back();
      R.K = RegionRoot::Kind::CrossFile;
      R.Modes = ModeGlobal;
      R.RemoteBegin = std::move(Remote);
      GlobalBegins.push_back(&R);
    }
  // The capture a note names: one begun by the same class, else the first.
  auto CaptureFor = [&](const FunctionDecl *FD) {
    const auto *Class = dyn_cast<CXXMethodDecl>(FD);
    for (const RegionRoot *R : GlobalBegins)
      if (const auto *M = dyn_cast_or_null<CXXMethodDecl>(R->Owner);
          Class && M && M->getParent() == Class->getParent())
        return R;
    return GlobalBegins.front();
  };
  // A thread \p FD starts at \p Site, running \p Def while the capture
  // \p Begin may be open.
  auto StartThread = [&](const FunctionDecl *FD, const CallSite &Site,
                         const FunctionDecl *Def, const RegionRoot *Begin) {
    RegionRoot &Root = ListedRoots.emplace_back();
    Root.K = RegionRoot::Kind::OtherThread;
    Root.Loc = Site.Loc;
    Root.Call = Site.S;
    Root.Owner = FD;
    Root.Via = Def;
    Root.Capture = Begin;
    Root.Modes = ModeGlobal;
    CaptureContext C;
    C.Root = &Root;
    C.Modes = ModeGlobal;
    reach(Def, Site, C);
  };
  llvm::DenseSet<const FunctionDecl *> Seen, HasOwnBegins;
  llvm::DenseSet<const Stmt *> Started;
  for (const FunctionDecl *FD : UserFunctions) {
    if (!Seen.insert(FD).second || !Flows->hasEvents(FD))
      continue;
    const FunctionFlow &Flow = Flows->flow(FD, /*EntryCapturing=*/false);
    llvm::SmallVector<const RegionRoot *, 2> Begins;
    for (const RegionRoot &R : Flows->roots())
      if (R.Owner == FD && R.Call && (R.Modes & ModeGlobal))
        Begins.push_back(&R);
    if (Begins.empty())
      continue;
    llvm::ArrayRef<CallSite> Calls = Flows->callsIn(FD);
    HasOwnBegins.insert(FD);
    for (const CallSite &Site : Calls) {
      if (Site.K != CallSite::Kind::Callable || !Site.S || !startsThread(Site))
        continue;
      const CaptureState *State = Flow.stateAt(Site.S);
      if (State && State->capturing())
        continue; // started inside the capture: reached from there
      const FunctionDecl *Def = definitionOf(Site.Callee);
      if (!Def || !Code.isUserLocation(Def->getLocation()))
        continue;
      SourceLocation Start = SM.getExpansionLoc(Site.S->getBeginLoc());
      for (const RegionRoot *Begin : Begins) {
        SourceLocation BeginLoc = SM.getExpansionLoc(Begin->Call->getBeginLoc());
        if (!SM.isBeforeInTranslationUnit(Start, BeginLoc))
          continue;
        if (scopeEndsBefore(Ctx, Site.S, BeginLoc) ||
            waitedBetween(SM, Calls, Start, BeginLoc))
          continue;
        Started.insert(Site.S);
        StartThread(FD, Site, Def, Begin);
        break;
      }
    }
  }
  if (!GlobalBegins.empty())
    for (const FunctionDecl *FD : UserFunctions) {
      if (HasOwnBegins.count(FD) || !FD->getBody())
        continue;
      // Run under a capture: its thread starts are that capture's (addSite).
      if (isReached(FD))
        continue;
      llvm::ArrayRef<CallSite> Calls = Flows->callsIn(FD);
      for (const CallSite &Site : Calls) {
        if (Site.K != CallSite::Kind::Callable || !Site.S ||
            !startsThread(Site))
          continue;
        const FunctionDecl *Def = definitionOf(Site.Callee);
        if (!Def || !Code.isUserLocation(Def->getLocation()) ||
            !threadOutlivesCall(Ctx, Site, FD, Calls))
          continue;
        // A thread that captures itself overlaps its own capture only when
        // several such threads run (started in a loop: a worker pool); one
        // thread overlaps the captures of others.
        const RegionRoot *Overlapped = CaptureFor(FD);
        bool Pool = false;
        // The capture of another unit may be this thread's own: one thread
        // does not overlap itself.
        if (!Overlapped->RemoteBegin.empty() &&
            callsAnyOf(Def, RemoteHolders)) {
          if (!startedInLoop(Ctx, Site.S, FD))
            continue;
          Pool = true;
        }
        if (const RegionRoot *Own = globalBeginUnder(Def)) {
          if ((Pool = startedInLoop(Ctx, Site.S, FD)))
            Overlapped = Own;
          else if (!(Overlapped = otherGlobalBegin(GlobalBegins, Def)))
            continue;
        }
        Started.insert(Site.S);
        StartThread(FD, Site, Def, Overlapped);
        ListedRoots.back().Pool = Pool;
      }
    }
  addSiblingThreadRoots(Started, StartThread);
  drain();
}

bool CaptureAnalysis::callsAnyOf(const FunctionDecl *Def,
                                 const std::set<std::string> &Keys) {
  if (Keys.empty())
    return false;
  llvm::DenseSet<const FunctionDecl *> Seen;
  llvm::SmallVector<const FunctionDecl *, 16> Work{Def};
  while (!Work.empty() && Seen.size() < 256) {
    const FunctionDecl *FD = Work.pop_back_val();
    if (!FD || !Seen.insert(FD).second || !FD->getBody())
      continue;
    for (const CallSite &Site : Flows->callsIn(FD)) {
      if (!Site.Callee ||
          (Site.K == CallSite::Kind::Callable && startsThread(Site)))
        continue;
      if (Keys.count(functionKey(Site.Callee)))
        return true;
      if (const FunctionDecl *D = definitionOf(Site.Callee);
          D && Code.isUserLocation(D->getLocation()))
        Work.push_back(D);
    }
  }
  return false;
}

bool CaptureAnalysis::anySameThreadCallee(
    const FunctionDecl *FD, llvm::function_ref<bool(const FunctionDecl *)> Fn) {
  if (!FD->getBody())
    return false;
  for (const CallSite &Site : Flows->callsIn(FD)) {
    if (Site.K == CallSite::Kind::Callable && startsThread(Site))
      continue; // a thread it starts runs that callable, not this one
    const FunctionDecl *Def = definitionOf(Site.Callee);
    if (Def && Code.isUserLocation(Def->getLocation()) && Fn(Def))
      return true;
  }
  return false;
}

const RegionRoot *CaptureAnalysis::globalBeginUnder(const FunctionDecl *FD,
                                                    unsigned Depth,
                                                    bool *Cut) {
  if (!FD)
    return nullptr;
  if (auto It = BeginUnderMemo.find(FD); It != BeginUnderMemo.end())
    return It->second;
  // A function being searched already (recursion): nothing found yet, and
  // the answer is not final.
  if (!BeginUnderActive.insert(FD).second) {
    if (Cut)
      *Cut = true;
    return nullptr;
  }
  const RegionRoot *Found = nullptr;
  bool Truncated = false;
  if (Flows->hasEvents(FD))
    for (const RegionRoot &R : Flows->roots())
      if (R.Owner == FD && R.Call && (R.Modes & ModeGlobal)) {
        Found = &R;
        break;
      }
  if (!Found)
    anySameThreadCallee(FD, [&](const FunctionDecl *Def) {
      return Def != FD &&
             (Found = globalBeginUnder(Def, Depth + 1, &Truncated));
    });
  BeginUnderActive.erase(FD);
  // "None" found while a caller was still being searched may be wrong (the
  // begin may lie below that caller): it is kept only when final, at the
  // start of the search or with no recursion met. Each function is searched
  // once otherwise, so the walk goes as deep as the calls go.
  if (Found || !Truncated || Depth == 0)
    BeginUnderMemo[FD] = Found;
  else if (Cut)
    *Cut = true;
  return Found;
}

/// Threads one function starts side by side, none joined before the other
/// starts: when one of them begins a global-mode capture, the others may run
/// while it is open (a watchdog thread next to the capturing workers).
void CaptureAnalysis::addSiblingThreadRoots(
    const llvm::DenseSet<const Stmt *> &Started,
    llvm::function_ref<void(const FunctionDecl *, const CallSite &,
                            const FunctionDecl *, const RegionRoot *)>
        StartThread) {
  const SourceManager &SM = Ctx.getSourceManager();
  for (const FunctionDecl *FD : UserFunctions) {
    if (!FD->getBody())
      continue;
    // Run under a capture: its thread starts are that capture's (addSite).
    if (isReached(FD))
      continue;
    llvm::ArrayRef<CallSite> Calls = Flows->callsIn(FD);
    struct Start {
      const CallSite *Site;
      const FunctionDecl *Def;
      const RegionRoot *Begin;
    };
    llvm::SmallVector<Start, 4> Starts;
    for (const CallSite &Site : Calls)
      if (Site.K == CallSite::Kind::Callable && Site.S && startsThread(Site))
        if (const FunctionDecl *Def = definitionOf(Site.Callee);
            Def && Code.isUserLocation(Def->getLocation()))
          Starts.push_back({&Site, Def, globalBeginUnder(Def)});
    if (Starts.size() < 2 ||
        llvm::none_of(Starts, [](const Start &S) { return S.Begin; }))
      continue;
    auto At = [&](const Stmt *S) { return SM.getExpansionLoc(S->getBeginLoc()); };
    // Whether a thread is waited for between the two starts.
    auto JoinedBetween = [&](const Stmt *A, const Stmt *B) {
      SourceLocation First = At(A), Second = At(B);
      if (SM.isBeforeInTranslationUnit(Second, First))
        std::swap(First, Second);
      return waitedBetween(SM, Calls, First, Second);
    };
    for (const Start &Other : Starts) {
      if (Other.Begin || Started.contains(Other.Site->S))
        continue;
      for (const Start &Capturing : Starts)
        if (Capturing.Begin && Capturing.Site != Other.Site &&
            !JoinedBetween(Capturing.Site->S, Other.Site->S)) {
          StartThread(FD, *Other.Site, Other.Def, Capturing.Begin);
          break;
        }
    }
  }
}

/// Whether \p Name (a Python binding's name, `Class.method` or `method`)
/// is a method of Python's object, iteration or context protocols
/// (`__init__`, `__next__`, `__enter__`, `__repr__`, ...): code that makes,
/// feeds or shows an object, which Python runs outside a captured forward
/// pass (a camera's or loader's `__next__` fills the inputs a replay reads).
/// `__call__` and the operators are compute and stay roots.
static bool isProtocolBinding(StringRef Name) {
  StringRef Method = Name.rsplit('.').second;
  if (Method.empty())
    Method = Name;
  static constexpr StringRef Protocol[] = {
      "__init__",      "__new__",     "__del__",       "__iter__",
      "__next__",      "__aiter__",   "__anext__",     "__enter__",
      "__exit__",      "__aenter__",  "__aexit__",     "__repr__",
      "__str__",       "__format__",  "__len__",       "__bool__",
      "__hash__",      "__getstate__", "__setstate__", "__reduce__",
      "__reduce_ex__", "__copy__",    "__deepcopy__"};
  return llvm::is_contained(Protocol, Method);
}

std::vector<OpRegistration> CaptureAnalysis::selectedOps(bool WithDeclared) {
  std::vector<OpRegistration> Selected;
  if (!opRootsEnabled())
    return Selected;
  NamePatterns Narrow(OpRootsSpec);
  // Only exclusions (`!*_shuffle,!*repack*`): every other op.
  if (Narrow.empty() && !StringRef(OpRootsSpec).trim().empty())
    Narrow.add("*");
  for (OpRegistration &Op : findOpRegistrations(Ctx, Code, WithDeclared)) {
    if (!Narrow.empty() && !Narrow.matches(Op.Name) &&
        !Narrow.matches(Code.nameOf(Op.Function)))
      continue;
    if (Op.K == OpRegistration::Kind::Pybind && isProtocolBinding(Op.Name))
      continue;
    // A bound method of an object that captures its own graphs (a decoder
    // class with a `decode_graph()` that begins a capture beside its eager
    // `decode_loop()`): Python drives such an object step by step and lets
    // it capture, rather than capturing around its methods.
    if (const auto *M = dyn_cast<CXXMethodDecl>(Op.Function);
        Op.K == OpRegistration::Kind::Pybind && M && M->isInstance() &&
        capturesItself(M->getParent()))
      continue;
    Selected.push_back(std::move(Op));
  }
  return Selected;
}

bool CaptureAnalysis::capturesItself(const CXXRecordDecl *Class) {
  if (!Class)
    return false;
  Class = Class->getCanonicalDecl();
  auto [It, Inserted] = CapturingClasses.try_emplace(Class, false);
  if (!Inserted)
    return It->second;
  const CXXRecordDecl *Def = Class->getDefinition();
  bool Captures = false;
  if (Def)
    for (const CXXMethodDecl *M : Def->methods()) {
      const FunctionDecl *Body = definitionOf(M);
      if (Body && Code.isUserLocation(Body->getLocation()) &&
          Flows->hasEvents(Body)) {
        Captures = true;
        break;
      }
    }
  // A method the class inherits counts as its own: a bound subclass of a
  // runner whose base class records the graphs.
  if (Def && !Captures)
    for (const CXXBaseSpecifier &Base : Def->bases())
      if (capturesItself(Base.getType()->getAsCXXRecordDecl())) {
        Captures = true;
        break;
      }
  CapturingClasses[Class] = Captures;
  return Captures;
}

void CaptureAnalysis::addCrossFileRoots() {
  llvm::DenseSet<const FunctionDecl *> Done;
  for (const auto &Entry : Reached)
    Done.insert(std::get<0>(Entry.first));
  std::vector<std::pair<const FunctionDecl *, const CrossReach *>> Roots;
  llvm::DenseSet<const FunctionDecl *> Seen;
  for (const FunctionDecl *FD : UserFunctions) {
    const FunctionDecl *Def = definitionOf(FD);
    if (!Def || !Seen.insert(Def).second || Done.contains(Def))
      continue;
    if (const CrossReach *R = Index->crossReach(Def))
      Roots.push_back({Def, R});
  }
  // Shortest chains first: a function reached from an earlier root in this
  // unit is analyzed there, with the calls that lead to it.
  llvm::stable_sort(Roots, [](const auto &L, const auto &R) {
    return L.second->Chain.size() < R.second->Chain.size();
  });
  for (auto [Def, R] : Roots) {
    if (isReached(Def))
      continue;
    RegionRoot &Root = ListedRoots.emplace_back();
    Root.K = RegionRoot::Kind::CrossFile;
    Root.Loc = Def->getLocation();
    Root.Owner = Root.Via = Def;
    Root.Cross = R;
    Root.Modes = R->Modes ? R->Modes : AnyMode;
    CaptureContext C;
    C.Root = &Root;
    C.Modes = Root.Modes;
    reach(Def, CallSite(), C);
    drain();
  }
}

bool CaptureAnalysis::opRootsEnabled() {
  if (!OpRootsDecided) {
    OpRootsDecided = true;
    StringRef Spec = StringRef(OpRootsSpec).trim();
    OpRootsOn = !(Spec.empty() || Spec.equals_insensitive("false") ||
                  Spec.equals_insensitive("none") || Spec == "0");
    if (Spec.equals_insensitive("true") || Spec.equals_insensitive("all") ||
        Spec == "1" || Spec == "*")
      OpRootsSpec.clear();
  }
  return OpRootsOn;
}

void CaptureAnalysis::drain() {
  for (unsigned Round = 0; Round < 4; ++Round) {
    while (!Worklist.empty()) {
      const Reach *R = Worklist.front();
      Worklist.pop_front();
      const ValueResult *Facts = Values.under(R->Function, R->Args);
      const FunctionFlow &Flow = Flows->flow(
          R->Function, true, Facts ? &Facts->Branches : nullptr,
          R->Args.key(), onOtherThread(R->Root));
      addScope({R->Function, R, &Flow, R->Root, R->Modes, Facts,
                R->WarmedUp ? &firstUseStmts(R->Function, R->OutlivingParams)
                             : nullptr});
    }
    size_t Before = Reaches.size();
    reachPassedCallables();
    if (Reaches.size() == Before)
      break;
  }
}

} // namespace clang::cudagraph
