//===--- CaptureAnalysis.cpp - cudagraph-tidy -----------------------------===//

#include "CaptureAnalysis.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/Analyses/PostOrderCFGView.h"
#include "clang/Analysis/CFG.h"
#include "clang/Basic/SourceManager.h"

namespace clang::tidy::cudagraph {

const char DefaultLibraryHeaderRegex[] =
    "(^|/)(ATen|c10|caffe2|torch/csrc|thrust|cub|cuda/std|cccl|pybind11)/|"
    "(^|/)cuda[^/]*/(targets/[^/]+/)?include/";

/// How deep the walk goes into library functions that have bodies in headers.
static constexpr unsigned MaxLibraryDepth = 16;

const RegionRoot *CapturedScope::rootOf(const Stmt *S) const {
  if (!RegionStmts)
    return Root;
  auto It = RegionStmts->find(S);
  return It == RegionStmts->end() ? nullptr : It->second;
}

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
  E.Analysis->run();
  return *E.Analysis;
}

void CaptureAnalysis::reset() { cache().clear(); }

CaptureAnalysis::CaptureAnalysis(ASTContext &Ctx, const CaptureOptions &Opts)
    : Ctx(Ctx), SM(Ctx.getSourceManager()), BeginPatterns(Opts.BeginFunctions),
      EndPatterns(Opts.EndFunctions), CapturedPatterns(Opts.CapturedFunctions),
      LibraryRegex(Opts.LibraryHeaderRegex.empty() ? DefaultLibraryHeaderRegex
                                                   : Opts.LibraryHeaderRegex) {}

//===----------------------------------------------------------------------===//
// User code and library code
//===----------------------------------------------------------------------===//

bool CaptureAnalysis::isUserFile(FileID FID) const {
  auto [It, Inserted] = UserFileCache.try_emplace(FID, false);
  if (!Inserted)
    return It->second;
  SourceLocation Start = SM.getLocForStartOfFile(FID);
  bool User = Start.isValid() && !SM.isInSystemHeader(Start);
  if (User) {
    if (OptionalFileEntryRef FE = SM.getFileEntryRefForID(FID))
      User = !LibraryRegex.match(FE->getName());
    else
      User = false; // built-in buffers, command line
  }
  return UserFileCache[FID] = User;
}

bool CaptureAnalysis::isUserLocation(SourceLocation Loc) const {
  if (Loc.isInvalid())
    return false;
  return isUserFile(SM.getFileID(SM.getExpansionLoc(Loc)));
}

llvm::StringRef CaptureAnalysis::nameOf(const FunctionDecl *FD) {
  auto [It, Inserted] = NameCache.try_emplace(FD);
  if (Inserted)
    It->second = Saver.save(matchName(FD));
  return It->second;
}

std::string CaptureAnalysis::matchName(const FunctionDecl *FD) {
  std::string Name = FD->getQualifiedNameAsString();
  llvm::StringRef Stripped = stripCudaApiSuffix(Name);
  return Stripped.size() == Name.size() ? Name : Stripped.str();
}

//===----------------------------------------------------------------------===//
// Calls inside a function
//===----------------------------------------------------------------------===//

static const CXXDestructorDecl *userDestructorOf(QualType T) {
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  if (!RD || !RD->hasDefinition() || RD->hasTrivialDestructor())
    return nullptr;
  return RD->getDestructor();
}

SourceLocation CaptureAnalysis::visibleLoc(SourceLocation Loc) const {
  // A call spelled inside a library macro (cuMemAllocHost expands to
  // cuMemAllocHost_v2) is shown where the macro is used.
  if (Loc.isMacroID() && !isUserFile(SM.getFileID(SM.getSpellingLoc(Loc))))
    return SM.getExpansionLoc(Loc);
  return Loc;
}

/// The lambda an argument passes, through conversions to std::function and
/// temporaries, or null.
static const LambdaExpr *passedLambda(const Expr *Arg) {
  while (Arg) {
    Arg = Arg->IgnoreImplicit()->IgnoreParens();
    if (const auto *L = dyn_cast<LambdaExpr>(Arg))
      return L;
    if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(Arg))
      Arg = MT->getSubExpr();
    else if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(Arg))
      Arg = BT->getSubExpr();
    else if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(Arg))
      Arg = FC->getSubExpr();
    else if (const auto *CC = dyn_cast<CXXConstructExpr>(Arg);
             CC && CC->getNumArgs() == 1)
      Arg = CC->getArg(0);
    else
      return nullptr;
  }
  return nullptr;
}

/// A lambda passed to a call runs when the callee calls it, which may be
/// inside a library (std::for_each, at::parallel_for) whose body is not
/// followed: treat it as called at the call. A lambda stored in a variable
/// runs where it is called instead.
static void addLambdaArguments(const Stmt *S, std::vector<CallSite> &Out) {
  auto Add = [&](const Expr *Arg) {
    if (const LambdaExpr *L = passedLambda(Arg))
      Out.push_back({L, L->getBeginLoc(), L->getCallOperator()});
  };
  if (const auto *CE = dyn_cast<CallExpr>(S))
    llvm::for_each(CE->arguments(), Add);
  else if (const auto *CC = dyn_cast<CXXConstructExpr>(S))
    llvm::for_each(CC->arguments(), Add);
}

namespace {
/// What a condition says about capture: code written as
/// `if (cudaStreamIsCapturing(...) status == cudaStreamCaptureStatusNone)
///    cudaStreamSynchronize(s);` synchronizes only when not capturing.
enum class CaptureTest { Unknown, TrueWhenCapturing, TrueWhenNotCapturing };

CaptureTest flip(CaptureTest T) {
  switch (T) {
  case CaptureTest::TrueWhenCapturing:
    return CaptureTest::TrueWhenNotCapturing;
  case CaptureTest::TrueWhenNotCapturing:
    return CaptureTest::TrueWhenCapturing;
  case CaptureTest::Unknown:
    break;
  }
  return CaptureTest::Unknown;
}

/// The status enumerator an expression names: +1 for "not capturing"
/// (cudaStreamCaptureStatusNone, CaptureStatus::None), -1 for "capturing"
/// (...Active), 0 otherwise.
int statusConstant(const Expr *E) {
  const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  const auto *EC = DRE ? dyn_cast<EnumConstantDecl>(DRE->getDecl()) : nullptr;
  if (!EC)
    return 0;
  StringRef Name = EC->getName();
  const auto *Enum = dyn_cast<EnumDecl>(EC->getDeclContext());
  bool StatusEnum = Enum && Enum->getName().contains("CaptureStatus");
  if (Name == "cudaStreamCaptureStatusNone" ||
      Name == "CU_STREAM_CAPTURE_STATUS_NONE" || (StatusEnum && Name == "None"))
    return 1;
  if (Name == "cudaStreamCaptureStatusActive" ||
      Name == "CU_STREAM_CAPTURE_STATUS_ACTIVE" ||
      (StatusEnum && Name == "Active"))
    return -1;
  return 0;
}

bool namesCapturing(StringRef Name) {
  return Name.contains_insensitive("is_capturing") ||
         Name.contains_insensitive("iscapturing") ||
         Name.equals_insensitive("capturing");
}

CaptureTest classifyCaptureTest(const Expr *Cond) {
  if (!Cond)
    return CaptureTest::Unknown;
  Cond = Cond->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(Cond);
      UO && UO->getOpcode() == UO_LNot)
    return flip(classifyCaptureTest(UO->getSubExpr()));
  if (const auto *BO = dyn_cast<BinaryOperator>(Cond)) {
    if (BO->getOpcode() == BO_EQ || BO->getOpcode() == BO_NE) {
      int Status = statusConstant(BO->getLHS()) + statusConstant(BO->getRHS());
      if (Status == 0)
        return CaptureTest::Unknown;
      bool TrueWhenNot = (Status > 0) == (BO->getOpcode() == BO_EQ);
      return TrueWhenNot ? CaptureTest::TrueWhenNotCapturing
                         : CaptureTest::TrueWhenCapturing;
    }
    if (BO->getOpcode() == BO_LAnd) {
      // `a && b` is true only when both are: enough to know the then-branch.
      CaptureTest L = classifyCaptureTest(BO->getLHS());
      return L != CaptureTest::Unknown ? L : classifyCaptureTest(BO->getRHS());
    }
    return CaptureTest::Unknown;
  }
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Cond);
      Op && Op->getNumArgs() == 2 &&
      (Op->getOperator() == OO_EqualEqual ||
       Op->getOperator() == OO_ExclaimEqual)) {
    int Status = statusConstant(Op->getArg(0)) + statusConstant(Op->getArg(1));
    if (Status == 0)
      return CaptureTest::Unknown;
    bool TrueWhenNot = (Status > 0) == (Op->getOperator() == OO_EqualEqual);
    return TrueWhenNot ? CaptureTest::TrueWhenNotCapturing
                       : CaptureTest::TrueWhenCapturing;
  }
  // A boolean query or flag: is_capturing(), capturing_, isCapturing.
  if (Cond->getType()->isBooleanType()) {
    if (const auto *Call = dyn_cast<CallExpr>(Cond))
      if (const FunctionDecl *FD = Call->getDirectCallee())
        if (FD->getIdentifier() && namesCapturing(FD->getName()))
          return CaptureTest::TrueWhenCapturing;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Cond))
      if (DRE->getDecl()->getIdentifier() &&
          namesCapturing(DRE->getDecl()->getName().trim('_')))
        return CaptureTest::TrueWhenCapturing;
    if (const auto *ME = dyn_cast<MemberExpr>(Cond))
      if (ME->getMemberDecl()->getIdentifier() &&
          namesCapturing(ME->getMemberDecl()->getName().trim('_')))
        return CaptureTest::TrueWhenCapturing;
  }
  return CaptureTest::Unknown;
}

bool alwaysLeaves(const Stmt *S) {
  if (const auto *CS = dyn_cast_or_null<CompoundStmt>(S))
    return !CS->body_empty() && alwaysLeaves(CS->body_back());
  return S && (isa<ReturnStmt>(S) || isa<CXXThrowExpr>(S) ||
               isa<ContinueStmt>(S) || isa<BreakStmt>(S));
}

/// Collects the calls in a function body, marking those that a capture-status
/// test keeps out of capture.
class CallCollector {
public:
  CallCollector(std::vector<CallSite> &Out, std::vector<SourceRange> &Outside)
      : Out(Out), Outside(Outside) {}

  void collect(const Stmt *S, bool Quiet = false) {
    if (!S)
      return;
    if (const auto *L = dyn_cast<LambdaExpr>(S)) {
      // The body is a function of its own; only the captures run here.
      for (const Expr *Init : L->capture_inits())
        collect(Init, Quiet);
      return;
    }
    if (const auto *If = dyn_cast<IfStmt>(S)) {
      CaptureTest Test = classifyCaptureTest(If->getCond());
      collect(If->getInit(), Quiet);
      collect(If->getConditionVariableDeclStmt(), Quiet);
      collect(If->getCond(), Quiet);
      collectBranch(If->getThen(),
                    Quiet || Test == CaptureTest::TrueWhenNotCapturing);
      collectBranch(If->getElse(),
                    Quiet || Test == CaptureTest::TrueWhenCapturing);
      return;
    }
    if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
      // `if (capturing) return;` keeps the rest of the block out of capture.
      bool Rest = Quiet;
      for (const Stmt *Child : CS->body()) {
        collect(Child, Rest);
        if (const auto *If = dyn_cast<IfStmt>(Child);
            If && !If->getElse() &&
            classifyCaptureTest(If->getCond()) ==
                CaptureTest::TrueWhenCapturing &&
            alwaysLeaves(If->getThen()) && !Rest) {
          Rest = true;
          Outside.push_back(SourceRange(If->getEndLoc(), CS->getRBracLoc()));
        }
      }
      return;
    }
    auto Add = [&](CallSite Site) {
      Site.OutsideCapture = Quiet;
      Out.push_back(Site);
    };
    if (const auto *CE = dyn_cast<CallExpr>(S)) {
      Add({CE, CE->getExprLoc(), CE->getDirectCallee()});
      addLambdas(CE, Add);
    } else if (const auto *CC = dyn_cast<CXXConstructExpr>(S)) {
      Add({CC, CC->getBeginLoc(), CC->getConstructor()});
      addLambdas(CC, Add);
    } else if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D))
          if (VD->hasLocalStorage() && !VD->getType()->isReferenceType())
            if (const CXXDestructorDecl *Dtor = userDestructorOf(VD->getType()))
              Add({nullptr, VD->getLocation(), Dtor});
    }
    for (const Stmt *Child : S->children())
      collect(Child, Quiet);
  }

private:
  void collectBranch(const Stmt *S, bool Quiet) {
    if (S && Quiet)
      Outside.push_back(S->getSourceRange());
    collect(S, Quiet);
  }
  template <typename AddFn> static void addLambdas(const Stmt *S, AddFn Add) {
    std::vector<CallSite> Lambdas;
    addLambdaArguments(S, Lambdas);
    for (const CallSite &L : Lambdas)
      Add(L);
  }

  std::vector<CallSite> &Out;
  std::vector<SourceRange> &Outside;
};
} // namespace

bool CaptureAnalysis::runsOutsideCapture(const FunctionDecl *FD,
                                         const Stmt *S) {
  (void)callsIn(FD);
  auto It = OutsideCache.find(FD);
  if (It == OutsideCache.end() || It->second.empty())
    return false;
  SourceLocation Loc = SM.getExpansionLoc(S->getBeginLoc());
  for (const SourceRange &R : It->second) {
    SourceLocation B = SM.getExpansionLoc(R.getBegin());
    SourceLocation E = SM.getExpansionLoc(R.getEnd());
    if (SM.isPointWithin(Loc, B, E))
      return true;
  }
  return false;
}

llvm::ArrayRef<CallSite> CaptureAnalysis::callsIn(const FunctionDecl *FD) {
  auto [It, Inserted] = CallsCache.try_emplace(FD);
  if (Inserted) {
    std::vector<CallSite> Calls;
    std::vector<SourceRange> Outside;
    CallCollector Collector(Calls, Outside);
    if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(FD))
      for (const CXXCtorInitializer *Init : Ctor->inits())
        if (Init->isWritten())
          Collector.collect(Init->getInit());
    Collector.collect(FD->getBody());
    OutsideCache[FD] = std::move(Outside);
    for (CallSite &Site : Calls)
      Site.Loc = visibleLoc(Site.Loc);
    // The map may have grown meanwhile; look the slot up again.
    CallsCache[FD] = std::move(Calls);
  }
  return CallsCache[FD];
}

static const FunctionDecl *definitionOf(const FunctionDecl *FD) {
  const FunctionDecl *Def = nullptr;
  if (FD && FD->hasBody(Def) && Def && !Def->isDependentContext())
    return Def;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Begin and end events
//===----------------------------------------------------------------------===//

/// The catalog's capture APIs of one role ('B'egin or 'E'nd).
static NamePatterns captureApis(char Role) {
  struct Entry {
    char Role;
    const char *Names;
  };
  static const Entry Entries[] = {
#define CUDAGRAPH_CAPTURE(R, Names) {#R[0], Names},
#include "Hazards.def"
  };
  NamePatterns Patterns;
  for (const Entry &E : Entries)
    if (E.Role == Role)
      Patterns.add(E.Names);
  return Patterns;
}

static const NamePatterns &builtinBegin() {
  static const NamePatterns P = captureApis('B');
  return P;
}

static const NamePatterns &builtinEnd() {
  static const NamePatterns P = captureApis('E');
  return P;
}

CaptureAnalysis::Event CaptureAnalysis::apiEvent(const FunctionDecl *FD) {
  if (!FD)
    return Event::None;
  // Cheap filter before building the qualified name.
  if (BeginPatterns.empty() && EndPatterns.empty()) {
    const IdentifierInfo *II = FD->getIdentifier();
    if (!II || !II->getName().contains_insensitive("capture"))
      return Event::None;
  }
  llvm::StringRef Name = nameOf(FD);
  if (builtinBegin().matches(Name) || BeginPatterns.matches(Name))
    return Event::Begin;
  if (builtinEnd().matches(Name) || EndPatterns.matches(Name))
    return Event::End;
  return Event::None;
}

bool CaptureAnalysis::hasCaptureEvents(const FunctionDecl *FD) {
  auto [It, Inserted] = EventsCache.try_emplace(FD, -1);
  if (!Inserted)
    return It->second == 1;
  bool Found = false;
  for (const CallSite &Site : callsIn(FD)) {
    if (apiEvent(Site.Callee) != Event::None) {
      Found = true;
      break;
    }
    const FunctionDecl *Def = definitionOf(Site.Callee);
    if (Def && Def != FD && isUserLocation(Def->getLocation()) &&
        hasCaptureEvents(Def)) {
      Found = true;
      break;
    }
  }
  EventsCache[FD] = Found ? 1 : 0;
  return Found;
}

//===----------------------------------------------------------------------===//
// The region dataflow
//===----------------------------------------------------------------------===//

/// The flag a condition tests (`use_graph`, `!opts.graphs`, `this->capture_`).
static bool guardOf(const Expr *Cond, RegionGuard &Guard) {
  if (!Cond)
    return false;
  bool Negated = false;
  Cond = Cond->IgnoreParenImpCasts();
  while (const auto *UO = dyn_cast<UnaryOperator>(Cond)) {
    if (UO->getOpcode() != UO_LNot)
      return false;
    Negated = !Negated;
    Cond = UO->getSubExpr()->IgnoreParenImpCasts();
  }
  Guard = RegionGuard();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Cond)) {
    Guard.Decl = DRE->getDecl();
  } else if (const auto *ME = dyn_cast<MemberExpr>(Cond)) {
    const Expr *Base = ME->getBase()->IgnoreParenImpCasts();
    if (const auto *BaseRef = dyn_cast<DeclRefExpr>(Base))
      Guard.Base = BaseRef->getDecl();
    else if (!isa<CXXThisExpr>(Base))
      return false;
    Guard.Decl = ME->getMemberDecl();
  } else {
    return false;
  }
  Guard.Value = !Negated; // value of the flag when the condition is true
  return true;
}

/// The value \p Guard's flag has on the edge from \p P to \p B, when P
/// branches on it.
static std::optional<bool> edgeValue(const CFGBlock &P, const CFGBlock &B,
                                     const RegionGuard &Want) {
  RegionGuard Tested;
  if (P.succ_size() != 2 ||
      !guardOf(dyn_cast_or_null<Expr>(P.getTerminatorCondition()), Tested) ||
      Tested.Decl != Want.Decl || Tested.Base != Want.Base)
    return std::nullopt;
  bool TrueEdge = P.succ_begin()->getReachableBlock() == &B;
  bool FalseEdge = (P.succ_begin() + 1)->getReachableBlock() == &B;
  if (TrueEdge == FalseEdge)
    return std::nullopt;
  return TrueEdge ? Tested.Value : !Tested.Value;
}

/// The flag under which block \p B runs, when its only predecessor branches
/// on one.
static RegionGuard guardOfBlock(const CFGBlock &B) {
  const CFGBlock *Only = nullptr;
  for (const CFGBlock::AdjacentBlock &Pred : B.preds())
    if (const CFGBlock *P = Pred.getReachableBlock()) {
      if (Only)
        return {};
      Only = P;
    }
  RegionGuard Guard;
  if (!Only ||
      !guardOf(dyn_cast_or_null<Expr>(Only->getTerminatorCondition()), Guard))
    return {};
  std::optional<bool> Value = edgeValue(*Only, B, Guard);
  if (!Value)
    return {};
  Guard.Value = *Value;
  return Guard;
}

namespace {
/// Runs the "may be capturing" dataflow over one function's CFG. The state is
/// the root of the capture that may be open, or null.
class RegionDataflow {
public:
  using EventFn = llvm::function_ref<const RegionRoot *(
      const CFGBlock &, const CFGElement &, const RegionRoot *State,
      bool &IsEvent)>;
  using RecordFn = llvm::function_ref<void(
      const CFGElement *, const Stmt *Terminator, const RegionRoot *State)>;

  RegionDataflow(const CFG &Cfg, EventFn OnElement)
      : Cfg(Cfg), OnElement(OnElement), Order(&Cfg) {}

  /// Returns the state at exit for \p Entry at entry.
  const RegionRoot *solve(const RegionRoot *Entry) {
    In.clear();
    Out.clear();
    bool Changed = true;
    for (unsigned Iter = 0; Changed && Iter < 64; ++Iter) {
      Changed = false;
      for (const CFGBlock *B : Order) {
        const RegionRoot *State = inState(B, Entry);
        const RegionRoot *&Slot = In[B];
        if (!Slot && State) {
          Slot = State;
          Changed = true;
        }
        const RegionRoot *NewOut = transfer(*B, Slot, nullptr);
        const RegionRoot *&OutSlot = Out[B];
        if (!OutSlot && NewOut) {
          OutSlot = NewOut;
          Changed = true;
        }
      }
    }
    return In.lookup(&Cfg.getExit());
  }

  void record(RecordFn Record) {
    for (const CFGBlock *B : Order)
      transfer(*B, In.lookup(B), &Record);
  }

private:
  const RegionRoot *inState(const CFGBlock *B, const RegionRoot *Entry) {
    if (B == &Cfg.getEntry())
      return Entry;
    for (const CFGBlock::AdjacentBlock &Pred : B->preds())
      if (const CFGBlock *P = Pred.getReachableBlock())
        if (B != &Cfg.getExit() || !abandonsFunction(*P))
          if (const RegionRoot *S = Out.lookup(P))
            if (!contradictsGuard(*S, *P, *B))
              return S;
    return nullptr;
  }

  /// `if (use_graph) begin(); ... if (use_graph) end();`: the path that skips
  /// the end because use_graph is false cannot have begun the capture.
  static bool contradictsGuard(const RegionRoot &Root, const CFGBlock &P,
                               const CFGBlock &B) {
    if (!Root.Guard.Decl)
      return false;
    std::optional<bool> Value = edgeValue(P, B, Root.Guard);
    return Value && *Value != Root.Guard.Value;
  }

  /// Paths that end the program or throw do not return to the caller with a
  /// capture open: `exit(1)` in an error check after a begin call does not
  /// make the function leave a capture open.
  static bool abandonsFunction(const CFGBlock &B) {
    if (B.hasNoReturnElement())
      return true;
    for (auto It = B.rbegin(), E = B.rend(); It != E; ++It)
      if (auto S = It->getAs<CFGStmt>())
        return isa<CXXThrowExpr>(S->getStmt());
    return false;
  }

  const RegionRoot *transfer(const CFGBlock &B, const RegionRoot *State,
                             const RecordFn *Record) {
    for (const CFGElement &E : B) {
      if (Record && State)
        (*Record)(&E, nullptr, State);
      bool IsEvent = false;
      const RegionRoot *Next = OnElement(B, E, State, IsEvent);
      if (IsEvent)
        State = Next;
    }
    if (Record && State && B.getTerminatorStmt())
      (*Record)(nullptr, B.getTerminatorStmt(), State);
    return State;
  }

  const CFG &Cfg;
  EventFn OnElement;
  PostOrderCFGView Order;
  llvm::DenseMap<const CFGBlock *, const RegionRoot *> In, Out;
};
} // namespace

static std::unique_ptr<CFG> buildCFG(const FunctionDecl *FD, ASTContext &Ctx) {
  CFG::BuildOptions Options;
  Options.AddImplicitDtors = true;
  Options.AddTemporaryDtors = true;
  Options.AddInitializers = true;
  Options.setAllAlwaysAdd();
  return CFG::buildCFG(FD, FD->getBody(), &Ctx, Options);
}

static const FunctionDecl *calleeOfElement(const CFGElement &E, ASTContext &Ctx,
                                           const Stmt *&S) {
  S = nullptr;
  if (auto CS = E.getAs<CFGStmt>()) {
    S = CS->getStmt();
    if (const auto *CE = dyn_cast<CallExpr>(S))
      return CE->getDirectCallee();
    if (const auto *CC = dyn_cast<CXXConstructExpr>(S))
      return CC->getConstructor();
    return nullptr;
  }
  if (auto D = E.getAs<CFGImplicitDtor>())
    return D->getDestructorDecl(Ctx);
  return nullptr;
}

CaptureAnalysis::Event CaptureAnalysis::summaryEvent(const FunctionDecl *FD) {
  if (Event E = apiEvent(FD); E != Event::None)
    return E;
  const FunctionDecl *Def = definitionOf(FD);
  if (!Def || !isUserLocation(Def->getLocation()) || !hasCaptureEvents(Def))
    return Event::None;
  auto [It, Inserted] = SummaryCache.try_emplace(Def, Event::None);
  if (!Inserted)
    return It->second; // computed, or in progress (recursion: neutral)
  // A wrapper begins capture and leaves it open (a guard's constructor), or
  // ends a capture it did not begin (a guard's destructor). A function that
  // does both holds a region of its own; when one of its paths returns with
  // the capture still open, that is an error path, not a wrapper.
  bool Begins = false, Ends = false;
  for (const CallSite &Site : callsIn(Def)) {
    if (Site.Callee == Def)
      continue;
    Event E = summaryEvent(Site.Callee);
    Begins |= E == Event::Begin;
    Ends |= E == Event::End;
  }
  Event Result = Begins == Ends ? Event::None
                 : Begins       ? Event::Begin
                                : Event::End;
  SummaryCache[Def] = Result;
  return Result;
}

const RegionRoot *CaptureAnalysis::newRoot(SourceLocation Loc,
                                           std::string Note) {
  return &Roots.emplace_back(RegionRoot{Loc, std::move(Note)});
}

void CaptureAnalysis::analyzeRegions(const FunctionDecl *FD) {
  std::unique_ptr<CFG> Cfg = buildCFG(FD, Ctx);
  if (!Cfg)
    return;
  llvm::DenseMap<const void *, const RegionRoot *> RootOfBegin;
  auto OnElement = [&](const CFGBlock &B, const CFGElement &E,
                       const RegionRoot *State,
                       bool &IsEvent) -> const RegionRoot * {
    const Stmt *S;
    const FunctionDecl *Callee = calleeOfElement(E, Ctx, S);
    if (!Callee)
      return State;
    Event Ev = summaryEvent(Callee);
    if (Ev == Event::None)
      return State;
    IsEvent = true;
    if (Ev == Event::End)
      return nullptr;
    const void *Key = S ? static_cast<const void *>(S) : Callee;
    const RegionRoot *&Root = RootOfBegin[Key];
    if (!Root) {
      SourceLocation Loc =
          visibleLoc(S ? (isa<CallExpr>(S) ? cast<CallExpr>(S)->getExprLoc()
                                           : S->getBeginLoc())
                       : FD->getLocation());
      std::string Note = "CUDA graph capture begins here";
      if (apiEvent(Callee) == Event::None)
        Note = isa<CXXConstructorDecl>(Callee)
                   ? "CUDA graph capture begins when '" +
                         cast<CXXConstructorDecl>(Callee)
                             ->getParent()
                             ->getNameAsString() +
                         "' is constructed here"
                   : "CUDA graph capture begins in '" +
                         Callee->getNameAsString() + "', called here";
      Root = newRoot(Loc, std::move(Note));
      const_cast<RegionRoot *>(Root)->Guard = guardOfBlock(B);
    }
    return Root;
  };
  RegionDataflow Flow(*Cfg, OnElement);
  Flow.solve(nullptr);

  auto &Set = RegionSets.emplace_back();
  std::vector<std::pair<CallSite, const RegionRoot *>> RegionCalls;
  Flow.record([&](const CFGElement *E, const Stmt *Terminator,
                  const RegionRoot *State) {
    if (Terminator) {
      if (!runsOutsideCapture(FD, Terminator))
        Set.try_emplace(Terminator, State);
      return;
    }
    const Stmt *S;
    const FunctionDecl *Callee = calleeOfElement(*E, Ctx, S);
    if (S && runsOutsideCapture(FD, S))
      return;
    if (S)
      Set.try_emplace(S, State);
    // Begin and end events are not work done under capture.
    if (Callee && summaryEvent(Callee) != Event::None)
      return;
    if (S && (isa<CallExpr>(S) || isa<CXXConstructExpr>(S))) {
      SourceLocation Loc =
          isa<CallExpr>(S) ? cast<CallExpr>(S)->getExprLoc() : S->getBeginLoc();
      RegionCalls.push_back({{S, Loc, Callee}, State});
      std::vector<CallSite> Lambdas;
      addLambdaArguments(S, Lambdas);
      for (const CallSite &L : Lambdas)
        RegionCalls.push_back({L, State});
    } else if (auto D = E->getAs<CFGAutomaticObjDtor>())
      if (Callee && isUserLocation(Callee->getLocation()))
        RegionCalls.push_back(
            {{nullptr, D->getVarDecl()->getLocation(), Callee}, State});
  });
  if (Set.empty())
    return;
  Scopes.push_back({FD, nullptr, nullptr, &Set});
  for (auto &[Site, Root] : RegionCalls) {
    Site.Loc = visibleLoc(Site.Loc);
    addSite(Site, nullptr, Root);
  }
}

//===----------------------------------------------------------------------===//
// Reach
//===----------------------------------------------------------------------===//

void CaptureAnalysis::addSite(const CallSite &Site, const Reach *Context,
                              const RegionRoot *Root) {
  Sites.push_back({Site, Context, Root});
  const FunctionDecl *Def = definitionOf(Site.Callee);
  if (!Def)
    return;
  if (isUserLocation(Def->getLocation())) {
    reachUserFunction(Def, Site, Context, Root);
    return;
  }
  if (Def->isInStdNamespace())
    return; // the standard library makes no CUDA calls
  // A library function: everything it calls inside the library runs now, and
  // is reported at this call (the innermost one in user code). Each call
  // into the library gets its own entry, so two calls reaching the same
  // library internals are both reported.
  const Reach &Entry =
      Reaches.emplace_back(Reach{Def, Site, Context, Root, /*Library=*/true});
  for (const CallSite &Inner : librarySites(Def)) {
    Sites.push_back({Inner, &Entry, Root});
    // Library templates call back into user code (functors, lambdas).
    if (const FunctionDecl *InnerDef = definitionOf(Inner.Callee))
      if (isUserLocation(InnerDef->getLocation()))
        reachUserFunction(InnerDef, Inner, &Entry, Root);
  }
}

void CaptureAnalysis::reachUserFunction(const FunctionDecl *Def,
                                        const CallSite &Site,
                                        const Reach *Context,
                                        const RegionRoot *Root) {
  if (ReachedFunctions.count(Def))
    return;
  Reach &R = Reaches.emplace_back(Reach{Def, Site, Context, Root, false});
  ReachedFunctions[Def] = &R;
  Worklist.push_back(&R);
}

llvm::ArrayRef<CallSite>
CaptureAnalysis::librarySites(const FunctionDecl *Def) {
  auto It = LibraryCache.find(Def);
  if (It != LibraryCache.end())
    return It->second;
  std::vector<CallSite> Result;
  llvm::DenseSet<const FunctionDecl *> Seen{Def};
  std::vector<std::pair<const FunctionDecl *, unsigned>> Stack{{Def, 1}};
  while (!Stack.empty()) {
    auto [F, Depth] = Stack.back();
    Stack.pop_back();
    for (const CallSite &Site : callsIn(F)) {
      if (Site.OutsideCapture)
        continue;
      Result.push_back(Site);
      const FunctionDecl *Callee = definitionOf(Site.Callee);
      if (Callee && Depth < MaxLibraryDepth &&
          !isUserLocation(Callee->getLocation()) &&
          !Callee->isInStdNamespace() && Seen.insert(Callee).second)
        Stack.push_back({Callee, Depth + 1});
    }
  }
  return LibraryCache[Def] = std::move(Result);
}

namespace {
class UserFunctionCollector
    : public RecursiveASTVisitor<UserFunctionCollector> {
public:
  UserFunctionCollector(const CaptureAnalysis &A,
                        std::vector<const FunctionDecl *> &Out)
      : A(A), Out(Out) {}
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool shouldVisitLambdaBody() const { return true; }

  bool TraverseDecl(Decl *D) {
    if (!D)
      return true;
    if (!isa<TranslationUnitDecl>(D) && !isa<NamespaceDecl>(D) &&
        !isa<LinkageSpecDecl>(D) && !A.isUserLocation(D->getLocation()))
      return true;
    return RecursiveASTVisitor::TraverseDecl(D);
  }
  bool VisitFunctionDecl(FunctionDecl *FD) {
    if (FD->doesThisDeclarationHaveABody() && !FD->isDependentContext())
      Out.push_back(FD);
    return true;
  }
  bool VisitLambdaExpr(LambdaExpr *L) {
    const CXXMethodDecl *Op = L->getCallOperator();
    if (Op && Op->hasBody() && !Op->isDependentContext())
      Out.push_back(Op);
    return true;
  }

private:
  const CaptureAnalysis &A;
  std::vector<const FunctionDecl *> &Out;
};
} // namespace

void CaptureAnalysis::run() {
  UserFunctionCollector(*this, UserFunctions)
      .TraverseDecl(Ctx.getTranslationUnitDecl());

  for (const FunctionDecl *FD : UserFunctions)
    if (hasCaptureEvents(FD))
      analyzeRegions(FD);

  if (!CapturedPatterns.empty())
    for (const FunctionDecl *FD : UserFunctions)
      if (!ReachedFunctions.count(FD) &&
          CapturedPatterns.matches(matchName(FD))) {
        const RegionRoot *Root = newRoot(
            FD->getLocation(), "'" + FD->getNameAsString() +
                                   "' is listed in CapturedFunctions and runs "
                                   "under CUDA graph capture");
        Reach &R = Reaches.emplace_back(Reach{FD, {}, nullptr, Root, false});
        ReachedFunctions[FD] = &R;
        Worklist.push_back(&R);
      }

  while (!Worklist.empty()) {
    const Reach *R = Worklist.front();
    Worklist.pop_front();
    Scopes.push_back({R->Function, R, R->Root, nullptr});
    // callsIn may rehash the cache; copy the sites first.
    std::vector<CallSite> Calls(callsIn(R->Function).begin(),
                                callsIn(R->Function).end());
    for (const CallSite &Site : Calls)
      if (!Site.OutsideCapture)
        addSite(Site, R, R->Root);
  }
}

} // namespace clang::tidy::cudagraph
