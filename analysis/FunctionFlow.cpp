//===--- FunctionFlow.cpp - cudagraph analysis ----------------------------===//

#include "FunctionFlow.h"
#include "ConditionLeaves.h"
#include "ProjectIndex.h"
#include "ForwardAnalysis.h"
#include "HazardCatalog.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/CFG.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <optional>

namespace clang::cudagraph {

//===----------------------------------------------------------------------===//
// The state lattice
//===----------------------------------------------------------------------===//

bool CaptureState::join(const CaptureState &Other) {
  bool Guarded = (Roots.empty() || StreamGuarded) &&
                 (Other.Roots.empty() || Other.StreamGuarded);
  llvm::SmallVector<const RegionRoot *, 2> Merged;
  std::set_union(Roots.begin(), Roots.end(), Other.Roots.begin(),
                 Other.Roots.end(), std::back_inserter(Merged));
  if (Merged.empty())
    Guarded = false;
  // A capture's learned facts hold where it is open: those both sides keep,
  // or one side's when the capture is open on that side only.
  auto Same = [](const auto &A, const auto &B) {
    return A.first == B.first && A.second.Atom == B.second.Atom &&
           A.second.Value == B.second.Value;
  };
  decltype(Learned) Facts;
  for (const auto &P : Learned)
    if (!llvm::is_contained(Other.Roots, P.first) ||
        llvm::any_of(Other.Learned, [&](const auto &Q) { return Same(P, Q); }))
      Facts.push_back(P);
  for (const auto &Q : Other.Learned)
    if (!llvm::is_contained(Roots, Q.first))
      Facts.push_back(Q);
  bool Changed = Merged != Roots || Guarded != StreamGuarded ||
                 Facts.size() != Learned.size();
  Roots = std::move(Merged);
  StreamGuarded = Guarded;
  Learned = std::move(Facts);
  return Changed;
}

bool CaptureState::operator==(const CaptureState &O) const {
  if (Roots != O.Roots || StreamGuarded != O.StreamGuarded ||
      Learned.size() != O.Learned.size())
    return false;
  return llvm::all_of(Learned, [&](const auto &P) {
    return llvm::any_of(O.Learned, [&](const auto &Q) {
      return P.first == Q.first && P.second.Atom == Q.second.Atom &&
             P.second.Value == Q.second.Value;
    });
  });
}

const CaptureState *FunctionFlow::stateAt(const Stmt *S) const {
  if (Whole)
    return &Entry;
  auto It = States.find(S);
  return It == States.end() ? nullptr : &It->second;
}

//===----------------------------------------------------------------------===//
// Engine: calls, events, summaries
//===----------------------------------------------------------------------===//

FlowEngine::FlowEngine(ASTContext &Ctx, CodeClassifier &Code,
                       const CaptureApis &Apis)
    : Ctx(Ctx), Code(Code), Apis(Apis), Tests(Apis, Code, Ctx, Thunk, Registry) {
  EntryRootObject.K = RegionRoot::Kind::Entry;
}

FlowEngine::~FlowEngine() = default;

llvm::ArrayRef<CallSite> FlowEngine::callsIn(const FunctionDecl *FD) {
  auto It = CallsCache.find(FD);
  if (It != CallsCache.end())
    return It->second;
  std::vector<CallSite> Calls = collectCalls(FD, &Pointers);
  for (CallSite &Site : Calls)
    Site.Loc = Code.visibleLoc(Site.Loc);
  return CallsCache[FD] = std::move(Calls);
}

const Decl *RegionRoot::beginStream() const {
  return K == Kind::BeginApi ? namedStream(Call) : nullptr;
}

CaptureEvent FlowEngine::eventOf(const FunctionDecl *Callee) {
  if (!Callee)
    return CaptureEvent::None;
  CaptureEvent E = Apis.eventOf(Callee, Code.nameOf(Callee));
  if (E != CaptureEvent::None)
    return E;
  if (const FunctionDecl *Override = capturingOverride(Callee))
    return summary(Override).Event;
  const FunctionDecl *Def = definitionOf(Callee);
  if (!Def) {
    if (const IndexedFunction *F = external(Callee))
      return F->Event;
    // A project function defined in another unit that the index does not
    // describe: one that takes the stream and writes a graph handle, the
    // shape of `cudaStreamEndCapture(stream, &graph)`, ends the capture
    // (`dtw.run(stream, graph, exec)` declared in a header, defined in
    // dtw.cu). Taking the region on past it would report that unit's
    // callers for work done after the end.
    if (Code.isUserLocation(Callee->getCanonicalDecl()->getLocation()) &&
        hasEndCaptureShape(Callee))
      return CaptureEvent::End;
    return CaptureEvent::None;
  }
  if (!Code.isUserLocation(Def->getLocation()) || !hasEvents(Def))
    return CaptureEvent::None;
  return summary(Def).Event;
}

/// Whether \p S calls a method by its qualified name (`Base::hook(s)`),
/// which dispatches to that method and no override.
static bool callsQualified(const Stmt *S) {
  const auto *Call = dyn_cast_or_null<CXXMemberCallExpr>(S);
  const auto *ME =
      Call ? dyn_cast<MemberExpr>(Call->getCallee()->IgnoreParens()) : nullptr;
  return ME && ME->hasQualifier();
}

CaptureEvent FlowEngine::eventOfCall(const Stmt *S,
                                     const FunctionDecl *Callee) {
  if (!Callee || !callsQualified(S) || !capturingOverride(Callee))
    return eventOf(Callee);
  const FunctionDecl *Def = definitionOf(Callee);
  return Def && Code.isUserLocation(Def->getLocation()) && hasEvents(Def)
             ? summary(Def).Event
             : CaptureEvent::None;
}

const FunctionDecl *FlowEngine::capturingOverride(const FunctionDecl *Callee) {
  const auto *M = dyn_cast_or_null<CXXMethodDecl>(Callee);
  if (!M || !M->isVirtual() || !Overriders ||
      !Code.isUserLocation(M->getCanonicalDecl()->getLocation()))
    return nullptr;
  M = M->getCanonicalDecl();
  auto [It, Inserted] = OverrideCache.try_emplace(M, nullptr);
  if (!Inserted)
    return It->second;
  const FunctionDecl *Own = definitionOf(M);
  if (Own && hasEvents(Own))
    return nullptr;
  const FunctionDecl *Found = nullptr;
  CaptureEvent Agreed = CaptureEvent::None;
  for (const FunctionDecl *O : Overriders(M)) {
    const FunctionDecl *Def = definitionOf(O);
    if (!Def || !Code.isUserLocation(Def->getLocation()) || !hasEvents(Def))
      continue;
    CaptureEvent E = summary(Def).Event;
    if (E == CaptureEvent::None)
      continue;
    if (Found && E != Agreed)
      return OverrideCache[M] = nullptr;
    if (!Found) {
      Found = Def;
      Agreed = E;
    }
  }
  return OverrideCache[M] = Found;
}

const IndexedFunction *FlowEngine::external(const FunctionDecl *FD) {
  if (!Index || !FD || FD->hasBody() ||
      !Code.isUserLocation(FD->getCanonicalDecl()->getLocation()))
    return nullptr;
  return Index->external(FD);
}

bool FlowEngine::hasEvents(const FunctionDecl *FD) {
  auto [It, Inserted] = EventsCache.try_emplace(FD, Tri::InProgress);
  if (!Inserted)
    return It->second == Tri::Yes;
  bool Found = false;
  for (const CallSite &Site : callsIn(FD)) {
    if (Apis.eventOf(Site.Callee, Site.Callee ? Code.nameOf(Site.Callee)
                                              : llvm::StringRef()) !=
        CaptureEvent::None) {
      Found = true;
      break;
    }
    const FunctionDecl *Def = definitionOf(Site.Callee);
    if (Def && Def != FD && Code.isUserLocation(Def->getLocation()) &&
        hasEvents(Def)) {
      Found = true;
      break;
    }
    if (!Def && eventOf(Site.Callee) != CaptureEvent::None) {
      Found = true;
      break;
    }
    if (Def && Def != FD && capturingOverride(Site.Callee) &&
        !callsQualified(Site.S)) {
      Found = true;
      break;
    }
  }
  EventsCache[FD] = Found ? Tri::Yes : Tri::No;
  return Found;
}

void forEachStmt(const Stmt *S, llvm::function_ref<void(const Stmt *)> Fn) {
  if (!S)
    return;
  Fn(S);
  if (isa<LambdaExpr>(S))
    return;
  for (const Stmt *Child : S->children())
    forEachStmt(Child, Fn);
}

const Expr *assignedBy(const Stmt *S, bool *Plain) {
  if (Plain)
    *Plain = false;
  if (const auto *BO = dyn_cast_or_null<BinaryOperator>(S);
      BO && BO->isAssignmentOp()) {
    if (Plain)
      *Plain = BO->getOpcode() == BO_Assign;
    return BO->getLHS();
  }
  if (const auto *UO = dyn_cast_or_null<UnaryOperator>(S);
      UO && UO->isIncrementDecrementOp())
    return UO->getSubExpr();
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(S);
      Op && Op->getNumArgs() >= 1 &&
      (Op->isAssignmentOp() || Op->getOperator() == OO_PlusPlus ||
       Op->getOperator() == OO_MinusMinus)) {
    if (Plain)
      *Plain = Op->getOperator() == OO_Equal;
    return Op->getArg(0);
  }
  return nullptr;
}

bool changesHere(const Stmt *S, const VarDecl *V) {
  if (!S)
    return false;
  auto Names = [&](const Expr *E) {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return DRE && DRE->getDecl() == V;
  };
  if (const Expr *Target = assignedBy(S); Target && Names(Target))
    return true;
  if (const auto *UO = dyn_cast<UnaryOperator>(S);
      UO && UO->getOpcode() == UO_AddrOf && Names(UO->getSubExpr()))
    return true;
  if (const auto *Call = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *FD = calleeOf(Call))
      for (unsigned I = 0; I < Call->getNumArgs() && I < FD->getNumParams();
           ++I) {
        QualType T = FD->getParamDecl(I)->getType();
        if (T->isReferenceType() && !T->getPointeeType().isConstQualified() &&
            Names(Call->getArg(I)))
          return true;
      }
  return false;
}

bool mayChange(const Stmt *S, const VarDecl *V) {
  if (!S)
    return false;
  return changesHere(S, V) ||
         llvm::any_of(S->children(),
                      [&](const Stmt *Child) { return mayChange(Child, V); });
}

bool mayLeave(const Stmt *S) {
  if (!S)
    return false;
  if (isa<ReturnStmt>(S) || isa<CXXThrowExpr>(S) || isa<BreakStmt>(S) ||
      isa<ContinueStmt>(S) || isa<GotoStmt>(S))
    return true;
  if (const auto *Call = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *FD = calleeOf(Call);
        FD && FD->isNoReturn())
      return true;
  return llvm::any_of(S->children(),
                      [](const Stmt *Child) { return mayLeave(Child); });
}

/// The condition a branch statement tests.
static const Expr *conditionOf(const Stmt *S) {
  if (const auto *If = dyn_cast<IfStmt>(S))
    return If->getCond();
  if (const auto *W = dyn_cast<WhileStmt>(S))
    return W->getCond();
  if (const auto *F = dyn_cast<ForStmt>(S))
    return F->getCond();
  if (const auto *D = dyn_cast<DoStmt>(S))
    return D->getCond();
  if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S))
    return CO->getCond();
  if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isLogicalOp())
    return BO->getLHS();
  return nullptr;
}

bool FlowEngine::alwaysFails(const FunctionDecl *FD) {
  if (!FD)
    return false;
  auto [It, Inserted] = FailsCache.try_emplace(FD, false);
  if (!Inserted)
    return It->second;
  bool Fails = false;
  llvm::StringRef Name = Code.nameOf(FD);
  for (const Hazard &H : allHazards())
    if (H.Kind == HazardKind::Callee && H.Verdict == GpuVerdict::CaptureError &&
        H.AllowedIn.empty() && H.Names.matches(Name)) {
      Fails = true;
      break;
    }
  return FailsCache[FD] = Fails;
}

namespace {
/// The global variables and fields that record open captures: functions
/// calling a begin API add to them or increment them, and functions calling
/// an end API remove from them or decrement them. A container that only
/// grows (results, graphs kept for replay) is not one. Only the project's
/// own code is visited.
class RegistryFinder {
public:
  RegistryFinder(CodeClassifier &Code, const CaptureApis &Apis)
      : Code(Code), Apis(Apis) {}

  void visit(const FunctionDecl *FD) {
    const Stmt *Body = FD->getBody();
    bool Begins = false, Ends = false;
    forEachStmt(Body, [&](const Stmt *S) {
      if (const auto *Call = dyn_cast<CallExpr>(S))
        if (const FunctionDecl *Callee = calleeOf(Call)) {
          CaptureEvent E = Apis.eventOf(Callee, Code.nameOf(Callee));
          Begins |= E == CaptureEvent::Begin;
          Ends |= E == CaptureEvent::End;
        }
    });
    if (Begins)
      collect(Body, /*Adds=*/true, Added);
    if (Ends)
      collect(Body, /*Adds=*/false, Removed);
  }

  /// Added to where a capture begins and removed from where one ends.
  void result(llvm::DenseSet<const Decl *> &Out) const {
    for (const Decl *D : Added)
      if (Removed.contains(D))
        Out.insert(D);
  }

private:
  void collect(const Stmt *Body, bool Adds, llvm::DenseSet<const Decl *> &Out) {
    static constexpr llvm::StringLiteral AddNames[] = {
        "insert",     "emplace",       "push_back",   "emplace_back", "push",
        "push_front", "emplace_front", "try_emplace", "insert_or_assign"};
    static constexpr llvm::StringLiteral RemoveNames[] = {
        "erase", "pop_back", "pop", "pop_front", "clear", "extract"};
    forEachStmt(Body, [&](const Stmt *S) {
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S)) {
        const CXXMethodDecl *M = MC->getMethodDecl();
        if (M && !M->isConst() && M->getIdentifier() &&
            (Adds ? llvm::is_contained(AddNames, M->getName())
                  : llvm::is_contained(RemoveNames, M->getName())))
          add(MC->getImplicitObjectArgument(), false, Out);
      } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S)) {
        if (Adds && Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2)
          if (const auto *M =
                  dyn_cast_or_null<CXXMethodDecl>(calleeOf(Op));
              M && !M->isConst())
            add(Op->getArg(0), false, Out);
      } else if (const auto *UO = dyn_cast<UnaryOperator>(S)) {
        if (Adds ? UO->isIncrementOp() : UO->isDecrementOp())
          add(UO->getSubExpr(), true, Out);
      } else if (const auto *CA = dyn_cast<CompoundAssignOperator>(S)) {
        if (CA->getOpcode() == (Adds ? BO_AddAssign : BO_SubAssign))
          add(CA->getLHS(), true, Out);
      }
    });
  }

  static void add(const Expr *E, bool Counter,
                  llvm::DenseSet<const Decl *> &Out) {
    const ValueDecl *D = globalOrField(E);
    if (D && (!Counter || D->getType()->isIntegerType()))
      Out.insert(D->getCanonicalDecl());
  }

  CodeClassifier &Code;
  const CaptureApis &Apis;
  llvm::DenseSet<const Decl *> Added, Removed;
};
} // namespace

bool FlowEngine::isRegistry(const ValueDecl *D) {
  if (!Registries) {
    Registries.emplace();
    RegistryFinder Finder(Code, Apis);
    forEachUserFunction(Ctx, Code,
                        [&](const FunctionDecl *FD) { Finder.visit(FD); });
    Finder.result(*Registries);
  }
  return Registries->contains(D->getCanonicalDecl());
}

bool FlowEngine::hasCaptureTests(const FunctionDecl *FD) {
  auto [It, Inserted] = TestsCache.try_emplace(FD, Tri::InProgress);
  if (!Inserted)
    return It->second == Tri::Yes;
  bool Found = false;
  const Stmt *Body = FD->getBody();
  forEachStmt(Body, [&](const Stmt *S) {
    if (Found)
      return;
    if (const Expr *Cond = conditionOf(S))
      Found = Tests.classify(Cond, Body) != CaptureTest::Unknown;
  });
  TestsCache[FD] = Found ? Tri::Yes : Tri::No;
  return Found;
}

CaptureTest FlowEngine::returnedTest(const FunctionDecl *FD) {
  const FunctionDecl *Def = definitionOf(FD);
  if (!Def)
    if (const IndexedFunction *F = external(FD))
      return F->Test;
  if (!Def || Def->getReturnType()->isVoidType())
    return CaptureTest::Unknown;
  auto [It, Inserted] = ReturnedTestCache.try_emplace(Def, CaptureTest::Unknown);
  if (!Inserted)
    return It->second; // known, or in progress
  std::optional<CaptureTest> Result;
  bool Mixed = false;
  const Stmt *Body = Def->getBody();
  forEachStmt(Body, [&](const Stmt *S) {
    const auto *Ret = dyn_cast<ReturnStmt>(S);
    if (!Ret || !Ret->getRetValue() || Mixed)
      return;
    CaptureTest T = Tests.classify(Ret->getRetValue(), Body);
    if (Result && *Result != T)
      Mixed = true;
    Result = T;
  });
  CaptureTest T = Mixed || !Result ? CaptureTest::Unknown : *Result;
  ReturnedTestCache[Def] = T;
  return T;
}

const FunctionSummary &FlowEngine::summary(const FunctionDecl *Def) {
  auto It = SummaryCache.find(Def);
  if (It != SummaryCache.end())
    return It->second; // computed, or in progress (recursion: neutral)
  SummaryCache[Def] = FunctionSummary();
  FunctionSummary S;
  if (hasEvents(Def)) {
    const FunctionFlow &F = flow(Def, /*EntryCapturing=*/false);
    if (F.HasBegin && !F.HasEnd && F.Exit.capturing()) {
      S.Event = CaptureEvent::Begin;
      for (const RegionRoot *R : F.Exit.Roots)
        S.Modes |= R->Modes;
      S.ModeParam = modeParam(Def, F.Exit.Roots);
      // A guard returned by value whose callable ends the capture.
      forEachStmt(Def->getBody(), [&](const Stmt *St) {
        const auto *Ret = dyn_cast<ReturnStmt>(St);
        if (!Ret || S.ReturnedObjectEnds)
          return;
        forEachStmt(Ret->getRetValue(), [&](const Stmt *Inner) {
          if (const auto *L = dyn_cast<LambdaExpr>(Inner))
            if (const FunctionDecl *Op = definitionOf(L->getCallOperator()))
              S.ReturnedObjectEnds |= hasEvents(Op) &&
                                      summary(Op).Event == CaptureEvent::End;
        });
      });
    } else if (F.HasEnd && !F.HasBegin) {
      S.Event = CaptureEvent::End;
    }
  }
  return SummaryCache[Def] = S;
}

/// The parameter of \p Def that every capture in \p Roots takes its mode
/// from, or -1.
int FlowEngine::modeParam(const FunctionDecl *Def,
                          llvm::ArrayRef<const RegionRoot *> Roots) {
  int Param = -1;
  for (const RegionRoot *R : Roots) {
    const auto *Call = dyn_cast_or_null<CallExpr>(R->Call);
    if (!Call || R->Owner != Def)
      return -1;
    const Expr *Arg = modeArgOf(Call);
    const auto *DRE =
        Arg ? dyn_cast<DeclRefExpr>(Arg->IgnoreParenImpCasts()) : nullptr;
    const auto *P = DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
    if (!P || P->getDeclContext() != Def ||
        (Param >= 0 && Param != static_cast<int>(P->getFunctionScopeIndex())))
      return -1;
    Param = P->getFunctionScopeIndex();
  }
  return Param;
}

const Expr *FlowEngine::modeArgOf(const CallExpr *Call) {
  const FunctionDecl *Callee = calleeOf(Call);
  if (!Callee)
    return nullptr;
  if (Apis.eventOf(Callee, Code.nameOf(Callee)) == CaptureEvent::Begin)
    return Apis.beginModeArg(Call, Code.nameOf(Callee));
  // A wrapper that forwards its own mode parameter.
  const FunctionDecl *Def = definitionOf(Callee);
  if (!Def || !hasEvents(Def))
    return nullptr;
  int Param = summary(Def).ModeParam;
  if (Param < 0 || static_cast<unsigned>(Param) >= Call->getNumArgs())
    return nullptr;
  return Call->getArg(Param);
}

bool FlowEngine::endsThroughHolder(const VarDecl *VD) {
  auto [It, Inserted] = HolderCache.try_emplace(VD, false);
  if (!Inserted)
    return It->second;
  bool Ends = false;
  const Expr *Init = VD->getInit();
  if (Init && VD->hasLocalStorage()) {
    Init = Init->IgnoreImplicit();
    if (const auto *Cleanup = dyn_cast<ExprWithCleanups>(Init))
      Init = Cleanup->getSubExpr()->IgnoreImplicit();
    // `auto guard = begin_guarded(s);`: the returned object ends it.
    if (const auto *Call = dyn_cast<CallExpr>(Init->IgnoreParenImpCasts())) {
      if (const FunctionDecl *Def = definitionOf(calleeOf(Call)))
        Ends = Code.isUserLocation(Def->getLocation()) && hasEvents(Def) &&
               summary(Def).ReturnedObjectEnds;
      else if (const IndexedFunction *F = external(calleeOf(Call)))
        Ends = F->ReturnedObjectEnds;
    }
    // `ScopeExit guard([&] { end(s); });`: the object holds the callable.
    if (!Ends && destructorOf(VD->getType())) {
      std::vector<CallSite> Sites;
      forEachStmt(Init, [&](const Stmt *S) {
        if (isa<CallExpr>(S) || isa<CXXConstructExpr>(S))
          appendCallSites(S, S->getBeginLoc(), Sites, /*Stored=*/true);
      });
      for (const CallSite &Site : Sites)
        if (Site.K == CallSite::Kind::Callable)
          if (const FunctionDecl *Def = definitionOf(Site.Callee))
            Ends |= Code.isUserLocation(Def->getLocation()) &&
                    hasEvents(Def) && summary(Def).Event == CaptureEvent::End;
    }
  }
  HolderCache[VD] = Ends;
  return Ends;
}

namespace {
/// A condition on the way to a statement, and its value there.
struct WayCondition {
  const Expr *Cond;
  bool Value;
  const Stmt *Loop; // a loop's own condition
};
} // namespace

bool alwaysExits(const Stmt *S) {
  if (!S)
    return false;
  if (const auto *E = dyn_cast<Expr>(S))
    S = E->IgnoreImplicit();
  if (isa<ReturnStmt>(S) || isa<CXXThrowExpr>(S) || isa<BreakStmt>(S) ||
      isa<ContinueStmt>(S))
    return true;
  if (const auto *Call = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *Callee = calleeOf(Call))
      return Callee->isNoReturn();
  if (const auto *CS = dyn_cast<CompoundStmt>(S))
    return llvm::any_of(CS->body(), [](const Stmt *C) {
      return !isa<LabelStmt>(C) && alwaysExits(C);
    });
  if (const auto *If = dyn_cast<IfStmt>(S))
    return If->getElse() && alwaysExits(If->getThen()) &&
           alwaysExits(If->getElse());
  if (const auto *Do = dyn_cast<DoStmt>(S)) // a macro's do { } while (0)
    return alwaysExits(Do->getBody()) &&
           !llvm::any_of(Do->getBody()->children(), [](const Stmt *C) {
             return isa<BreakStmt>(C) || isa<ContinueStmt>(C);
           });
  return false;
}

/// The variables and fields \p Cond reads.
static void readStorage(const Stmt *S, llvm::SmallPtrSetImpl<const Decl *> &Out) {
  if (!S)
    return;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    Out.insert(DRE->getDecl()->getCanonicalDecl());
  else if (const auto *ME = dyn_cast<MemberExpr>(S))
    Out.insert(ME->getMemberDecl()->getCanonicalDecl());
  for (const Stmt *Child : S->children())
    readStorage(Child, Out);
}

/// Whether \p S assigns (or increments) a variable or field of \p Read.
static bool writesStorage(const Stmt *S,
                          const llvm::SmallPtrSetImpl<const Decl *> &Read) {
  if (!S || isa<LambdaExpr>(S))
    return false;
  if (const Expr *Target = assignedBy(S))
    if (const Decl *D = storageOf(Target); D && Read.contains(D))
      return true;
  for (const Stmt *Child : S->children())
    if (writesStorage(Child, Read))
      return true;
  return false;
}

/// The conditions on every way from the start of \p S to \p Target: the
/// if-conditions around it, loop conditions, and the conditions of early
/// exits before it in the same block (`if (!ready) return;`), as long as
/// nothing between assigns what they read.
/// Stores on the way into \p Target after the conditions around it were
/// tested (`if (graphs && r->captured == 0) { r->captured = -1; begin(s);
/// }`): a store replaces what the conditions said of its operand in
/// \p Guards, and a store of a constant becomes a fact.
static void storedOnTheWay(const Stmt *Body, const Stmt *Target,
                           const ASTContext &Ctx,
                           llvm::SmallVectorImpl<GuardFact> &Guards) {
  if (!Body || !Target)
    return;
  ParentMap PM(const_cast<Stmt *>(Body));
  llvm::SmallVector<std::pair<const CompoundStmt *, const Stmt *>, 4> Blocks;
  for (const Stmt *Child = Target, *P = PM.getParent(Target); P;
       Child = P, P = PM.getParent(P)) {
    if (const auto *CS = dyn_cast<CompoundStmt>(P))
      Blocks.push_back({CS, Child});
    else if (isa<IfStmt, ForStmt, WhileStmt, DoStmt, CXXForRangeStmt,
                 SwitchStmt, LambdaExpr, CXXTryStmt, CXXCatchStmt>(P))
      break;
  }
  // Outermost block first: statement order.
  for (auto [Block, Child] : llvm::reverse(Blocks))
    for (const Stmt *St : Block->body()) {
      if (St == Child)
        break;
      forEachStmt(St, [&](const Stmt *In) {
        const Expr *Written = nullptr, *Stored = nullptr;
        if (const auto *BO = dyn_cast<BinaryOperator>(In);
            BO && BO->isAssignmentOp()) {
          Written = BO->getLHS();
          // Only a plain store at the top of the statement always runs.
          if (BO->getOpcode() == BO_Assign &&
              In == (isa<Expr>(St) ? cast<Expr>(St)->IgnoreImplicit() : St))
            Stored = BO->getRHS();
        } else if (const auto *UO = dyn_cast<UnaryOperator>(In);
                   UO && UO->isIncrementDecrementOp()) {
          Written = UO->getSubExpr();
        }
        if (!Written)
          return;
        GuardFact Fact;
        bool Known = storedFact(Written, Stored, Ctx, Fact);
        if (Fact.Subject == llvm::FoldingSetNodeID())
          return;
        llvm::erase_if(Guards, [&](const GuardFact &G) {
          return (G.constrainsSubject() && G.Subject == Fact.Subject) ||
                 G.Atom == Fact.Subject;
        });
        if (Known)
          Guards.push_back(std::move(Fact));
      });
    }
}

static bool enclosingConditions(const Stmt *S, const Stmt *Target,
                                llvm::SmallVectorImpl<WayCondition> &Out) {
  if (!S)
    return false;
  if (S == Target)
    return true;
  if (isa<LambdaExpr>(S))
    return false;
  if (const auto *If = dyn_cast<IfStmt>(S)) {
    size_t Mark = Out.size();
    Out.push_back({If->getCond(), true, nullptr});
    if (enclosingConditions(If->getThen(), Target, Out))
      return true;
    Out.resize(Mark);
    Out.push_back({If->getCond(), false, nullptr});
    if (enclosingConditions(If->getElse(), Target, Out))
      return true;
    Out.resize(Mark);
    return enclosingConditions(If->getCond(), Target, Out) ||
           enclosingConditions(If->getInit(), Target, Out) ||
           enclosingConditions(If->getConditionVariableDeclStmt(), Target,
                               Out);
  }
  if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
    size_t Mark = Out.size();
    // Early exits seen so far in this block, with what their conditions
    // read.
    struct Exit {
      size_t At;
      llvm::SmallPtrSet<const Decl *, 4> Read;
    };
    llvm::SmallVector<Exit, 2> Exits;
    for (auto It = CS->body_begin(), End = CS->body_end(); It != End; ++It) {
      const Stmt *Child = *It;
      if (enclosingConditions(Child, Target, Out)) {
        // The facts hold through the region only if nothing from here on
        // assigns what they read (`status = begin(...)` itself, say).
        for (const Exit &E : Exits)
          if (Out[E.At].Cond &&
              std::any_of(It, End, [&](const Stmt *Later) {
                return writesStorage(Later, E.Read);
              }))
            Out[E.At].Cond = nullptr;
        return true;
      }
      const Stmt *Rest = Child;
      if (const auto *If = dyn_cast<IfStmt>(Child);
          If && !If->getInit() && !If->getConditionVariable() &&
          !If->isConsteval()) {
        std::optional<bool> After;
        if (alwaysExits(If->getThen()))
          After = false;
        else if (If->getElse() && alwaysExits(If->getElse()))
          After = true;
        if (After) {
          // Each fact on its own: an assignment to one operand leaves the
          // others standing.
          llvm::SmallVector<ConditionLeaf, 4> Leaves;
          conditionLeaves(If->getCond(), *After, Leaves);
          for (auto [Leaf, Value] : Leaves) {
            Exit &E = Exits.emplace_back();
            E.At = Out.size();
            readStorage(Leaf, E.Read);
            Out.push_back({Leaf, Value, nullptr});
          }
          Rest = *After ? If->getThen() : If->getElse();
        }
      }
      // A later assignment to what an exit's condition read makes it say
      // nothing about the statements after.
      for (const Exit &E : Exits)
        if (Out[E.At].Cond && writesStorage(Rest, E.Read))
          Out[E.At].Cond = nullptr;
    }
    Out.resize(Mark);
    return false;
  }
  // A begin in a loop body ran with the loop condition true.
  const Expr *LoopCond = nullptr;
  const Stmt *LoopBody = nullptr;
  if (const auto *For = dyn_cast<ForStmt>(S)) {
    LoopCond = For->getCond();
    LoopBody = For->getBody();
  } else if (const auto *While = dyn_cast<WhileStmt>(S)) {
    LoopCond = While->getCond();
    LoopBody = While->getBody();
  }
  if (LoopBody) {
    size_t Mark = Out.size();
    Out.push_back({LoopCond, true, S});
    if (enclosingConditions(LoopBody, Target, Out))
      return true;
    Out.resize(Mark);
  }
  // The right operand of `a && b` runs with `a` true, of `a || b` with `a`
  // false: `if (ok && verbose < 2 && begin(s) == cudaSuccess)`.
  if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isLogicalOp()) {
    if (enclosingConditions(BO->getLHS(), Target, Out))
      return true;
    size_t Mark = Out.size();
    Out.push_back({BO->getLHS(), BO->getOpcode() == BO_LAnd, nullptr});
    if (enclosingConditions(BO->getRHS(), Target, Out))
      return true;
    Out.resize(Mark);
    return false;
  }
  for (const Stmt *Child : S->children())
    if (Child != LoopBody && enclosingConditions(Child, Target, Out))
      return true;
  return false;
}

/// The innermost loop inside \p S whose body holds \p Target, or null.
static const Stmt *enclosingLoop(const Stmt *S, const Stmt *Target,
                                 const Stmt *Loop = nullptr) {
  if (!S || isa<LambdaExpr>(S))
    return nullptr;
  if (S == Target)
    return Loop;
  // `do { ... } while (0)` is a macro's statement wrapper, not a loop.
  bool IsLoop = isRepeatingLoop(S);
  for (const Stmt *Child : S->children())
    if (const Stmt *Found = enclosingLoop(Child, Target, IsLoop ? S : Loop))
      return Found;
  return nullptr;
}

/// The local pointer \p E dereferences (`p->f`, `*p`), if any.
static const VarDecl *dereferencedPointer(const Stmt *E) {
  const Expr *Base = nullptr;
  if (const auto *ME = dyn_cast<MemberExpr>(E); ME && ME->isArrow())
    Base = ME->getBase();
  else if (const auto *UO = dyn_cast<UnaryOperator>(E);
           UO && UO->getOpcode() == UO_Deref)
    Base = UO->getSubExpr();
  const auto *DRE =
      Base ? dyn_cast<DeclRefExpr>(Base->IgnoreParenImpCasts()) : nullptr;
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  return VD && VD->hasLocalStorage() && VD->getType()->isPointerType() ? VD
                                                                       : nullptr;
}

using Deref = std::pair<const VarDecl *, SourceLocation>;

/// The dereferences that running \p S always makes: not those in the right
/// operand of `&&`/`||`, a conditional's arms, lambdas, or the arms and
/// bodies of nested branches and loops (their conditions count).
static void alwaysDereferenced(const Stmt *S, llvm::SmallVectorImpl<Deref> &Out) {
  if (!S || isa<LambdaExpr>(S))
    return;
  if (const VarDecl *VD = dereferencedPointer(S))
    Out.push_back({VD, S->getBeginLoc()});
  if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isLogicalOp())
    return alwaysDereferenced(BO->getLHS(), Out);
  if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S))
    return alwaysDereferenced(CO->getCond(), Out);
  if (const auto *If = dyn_cast<IfStmt>(S)) {
    alwaysDereferenced(If->getInit(), Out);
    alwaysDereferenced(If->getConditionVariableDeclStmt(), Out);
    return alwaysDereferenced(If->getCond(), Out);
  }
  if (const auto *For = dyn_cast<ForStmt>(S)) {
    alwaysDereferenced(For->getInit(), Out);
    return alwaysDereferenced(For->getCond(), Out);
  }
  if (const auto *While = dyn_cast<WhileStmt>(S))
    return alwaysDereferenced(While->getCond(), Out);
  if (const auto *Switch = dyn_cast<SwitchStmt>(S))
    return alwaysDereferenced(Switch->getCond(), Out);
  if (isa<DoStmt>(S) || isa<CXXForRangeStmt>(S) || isa<CXXTryStmt>(S) ||
      isa<LabelStmt>(S) || isa<ReturnStmt>(S) || isa<GotoStmt>(S))
    return;
  for (const Stmt *Child : S->children())
    alwaysDereferenced(Child, Out);
}

static bool containsStmt(const Stmt *S, const Stmt *Target) {
  if (!S)
    return false;
  if (S == Target)
    return true;
  return llvm::any_of(S->children(), [&](const Stmt *Child) {
    return containsStmt(Child, Target);
  });
}

/// The dereferences every way from the start of \p S to \p Target makes
/// before reaching it.
static void dereferencedOnTheWay(const Stmt *S, const Stmt *Target,
                                 llvm::SmallVectorImpl<Deref> &Out) {
  if (!S || S == Target)
    return;
  if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
    for (const Stmt *Child : CS->body()) {
      if (containsStmt(Child, Target))
        return dereferencedOnTheWay(Child, Target, Out);
      alwaysDereferenced(Child, Out);
    }
    return;
  }
  if (const auto *If = dyn_cast<IfStmt>(S)) {
    if (containsStmt(If->getCond(), Target))
      return;
    alwaysDereferenced(If->getInit(), Out);
    alwaysDereferenced(If->getCond(), Out);
    return dereferencedOnTheWay(
        containsStmt(If->getThen(), Target) ? If->getThen() : If->getElse(),
        Target, Out);
  }
  if (const auto *While = dyn_cast<WhileStmt>(S)) {
    alwaysDereferenced(While->getCond(), Out);
    return dereferencedOnTheWay(While->getBody(), Target, Out);
  }
  if (const auto *For = dyn_cast<ForStmt>(S)) {
    alwaysDereferenced(For->getInit(), Out);
    alwaysDereferenced(For->getCond(), Out);
    return dereferencedOnTheWay(For->getBody(), Target, Out);
  }
}

const RegionRoot *FlowEngine::rootFor(const Stmt *S, const FunctionDecl *Owner,
                                      const FunctionDecl *Callee,
                                      SourceLocation Loc) {
  if (const RegionRoot *Known = RootsByBegin.lookup(S))
    return Known;
  RegionRoot &R = Roots.emplace_back();
  R.Loc = Code.visibleLoc(Loc);
  R.Call = S;
  R.Owner = Owner;
  llvm::StringRef Name = Code.nameOf(Callee);
  if (Apis.eventOf(Callee, Name) == CaptureEvent::Begin) {
    R.K = RegionRoot::Kind::BeginApi;
    R.Modes = Apis.beginModes(dyn_cast<CallExpr>(S), Name, Ctx);
  } else {
    R.K = isa<CXXConstructorDecl>(Callee) ? RegionRoot::Kind::GuardObject
                                          : RegionRoot::Kind::Wrapper;
    R.Via = Callee;
    const FunctionDecl *Def = definitionOf(Callee);
    const IndexedFunction *F = Def ? nullptr : external(Callee);
    R.Modes = Def ? summary(Def).Modes : F ? F->Modes : AnyMode;
    // A wrapper taking the mode as a parameter: the mode this call passes.
    if (const auto *Call = dyn_cast<CallExpr>(S);
        Call && Def && (R.Modes & AnyMode) == AnyMode)
      if (const Expr *Arg = modeArgOf(Call))
        R.Modes = CaptureApis::modesOf(Arg, Ctx);
    if (!R.Modes)
      R.Modes = AnyMode;
  }
  llvm::SmallVector<WayCondition, 4> Way;
  enclosingConditions(Owner->getBody(), S, Way);
  for (const WayCondition &W : Way) {
    if (!W.Cond)
      continue; // an exit whose condition changed before the begin
    guardFacts(W.Cond, W.Value, Ctx, R.Guards, W.Loop);
    if (!W.Loop)
      R.Conditions.push_back({W.Cond, W.Value});
  }
  storedOnTheWay(Owner->getBody(), S, Ctx, R.Guards);
  // The begin's function is called only where a condition holds.
  callerFacts(Owner, R.Guards);
  // Pointers dereferenced on the way, unchanged between their dereference
  // and the begin.
  llvm::SmallVector<Deref, 4> Derefs;
  dereferencedOnTheWay(Owner->getBody(), S, Derefs);
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation Begin = SM.getExpansionLoc(S->getBeginLoc());
  for (auto [VD, At] : Derefs) {
    if (llvm::is_contained(R.NonNull, VD))
      continue;
    SourceLocation From = SM.getExpansionLoc(At);
    bool Changed = false;
    forEachStmt(Owner->getBody(), [&](const Stmt *St) {
      SourceLocation Here = SM.getExpansionLoc(St->getBeginLoc());
      Changed = Changed || (changesHere(St, VD) &&
                            SM.isBeforeInTranslationUnit(From, Here) &&
                            SM.isBeforeInTranslationUnit(Here, Begin));
    });
    if (!Changed)
      R.NonNull.push_back(VD);
  }
  RootsByBegin[S] = &R;
  return &R;
}

bool FlowEngine::contradictsGuards(const RegionRoot &Root,
                                   const FunctionDecl *FD, const Stmt *S,
                                   const ParamAliases *Aliases) {
  if (llvm::all_of(Root.Guards, [](const GuardFact &G) { return G.Loop; }))
    return false;
  llvm::SmallVector<GuardFact, 4> Here;
  if (!wayFacts(FD, S, Here, Aliases))
    return false;
  // The values of the object's members in a method the region calls are
  // ValueFacts' (it follows the setters called after the begin).
  for (const GuardFact &G : Root.Guards)
    for (const GuardFact &F : Here)
      if (!G.Loop && ((G.Atom == F.Atom && G.Value != F.Value) ||
                      (G.excludes(F) && !G.OnThis)))
        return true;
  return false;
}

bool FlowEngine::wayFacts(const FunctionDecl *FD, const Stmt *S,
                          llvm::SmallVectorImpl<GuardFact> &Out,
                          const ParamAliases *Aliases) {
  llvm::SmallVector<WayCondition, 4> Way;
  if (!S || !FD->getBody() || !enclosingConditions(FD->getBody(), S, Way))
    return false;
  for (const WayCondition &W : Way)
    if (W.Cond && !W.Loop)
      guardFacts(W.Cond, W.Value, Ctx, Out, nullptr, Aliases);
  return true;
}

llvm::ArrayRef<std::pair<const FunctionDecl *, const CallExpr *>>
FlowEngine::callersOf(const FunctionDecl *FD) {
  if (!CallersOf) {
    CallersOf.emplace();
    llvm::DenseSet<const Expr *> CalleeRefs;
    forEachUserFunction(
        Ctx, Code,
        [&](const FunctionDecl *Caller) {
          forEachStmt(Caller->getBody(), [&](const Stmt *S) {
            const auto *Call = dyn_cast<CallExpr>(S);
            if (const FunctionDecl *Callee =
                    Call ? calleeOf(Call) : nullptr) {
              (*CallersOf)[Callee->getCanonicalDecl()].push_back(
                  {Caller, Call});
              CalleeRefs.insert(Call->getCallee()->IgnoreParenImpCasts());
            }
            // A use other than the callee of a call (visited after the
            // call itself): the address escapes.
            if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
              if (const auto *F = dyn_cast<FunctionDecl>(DRE->getDecl()))
                if (!CalleeRefs.contains(DRE))
                  (*CallersOf)[F->getCanonicalDecl()].push_back(
                      {nullptr, nullptr});
          });
        },
        FunctionWalk::Instantiated);
  }
  auto It = CallersOf->find(FD->getCanonicalDecl());
  if (It == CallersOf->end())
    return {};
  return It->second;
}

void FlowEngine::callerFacts(const FunctionDecl *FD,
                             llvm::SmallVectorImpl<GuardFact> &Out,
                             unsigned Depth) {
  if (Depth > 2)
    return;
  if (const auto *M = dyn_cast<CXXMethodDecl>(FD); M && M->isVirtual())
    return;
  // Made once per function (a recursive way back in sees none).
  auto [Memo, New] = CallerFactsMemo.try_emplace(FD->getCanonicalDecl());
  if (!New) {
    Out.append(Memo->second.begin(), Memo->second.end());
    return;
  }
  auto Callers = callersOf(FD);
  if (Callers.empty())
    return;
  llvm::SmallVector<GuardFact, 4> Common;
  bool First = true;
  for (auto [Caller, Call] : Callers) {
    if (!Caller || !Caller->getBody())
      return;
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
        MC && !isa<CXXThisExpr>(
                  MC->getImplicitObjectArgument()->IgnoreParenImpCasts()))
      return;
    llvm::SmallVector<GuardFact, 4> Here;
    wayFacts(Caller, Call, Here);
    if (Caller->getCanonicalDecl() != FD->getCanonicalDecl())
      callerFacts(Caller, Here, Depth + 1);
    if (First) {
      Common = std::move(Here);
      First = false;
    } else {
      llvm::erase_if(Common, [&](const GuardFact &G) {
        return llvm::none_of(Here, [&](const GuardFact &H) {
          return H.Atom == G.Atom && H.Value == G.Value;
        });
      });
    }
    if (Common.empty())
      return;
  }
  CallerFactsMemo[FD->getCanonicalDecl()].assign(Common.begin(), Common.end());
  Out.append(Common.begin(), Common.end());
}

//===----------------------------------------------------------------------===//
// The flow of one function
//===----------------------------------------------------------------------===//

static std::unique_ptr<CFG> buildCFG(const FunctionDecl *FD, ASTContext &Ctx) {
  CFG::BuildOptions Options;
  Options.AddImplicitDtors = true;
  Options.AddTemporaryDtors = true;
  Options.AddInitializers = true;
  Options.setAllAlwaysAdd();
  return CFG::buildCFG(FD, FD->getBody(), &Ctx, Options);
}

/// What a two-way branch at the end of \p B really tests: for `if (a && b)`
/// the block of `b` branches on `b`, not on the whole condition.
const Expr *effectiveCondition(const CFGBlock &B) {
  const Stmt *T = B.getTerminatorStmt();
  if (!T || B.succ_size() != 2)
    return nullptr;
  const auto *Cond = dyn_cast_or_null<Expr>(B.getTerminatorCondition());
  // `a && b` as terminator: the block tests `a`, or, when `a` is itself
  // `x && y` (`x && y && z`), the `y` it evaluated last.
  if (!Cond)
    return Cond;
  while (const auto *BO = dyn_cast<BinaryOperator>(Cond->IgnoreParens())) {
    if (!BO->isLogicalOp())
      break;
    Cond = BO->getRHS();
  }
  return Cond;
}

/// The enumerator \p E names, when it is a constant of an enumeration.
static StringRef enumeratorNamed(const Expr *E) {
  const EnumConstantDecl *C = enumeratorOf(E);
  return C ? C->getName() : StringRef();
}

/// The local a member call of a Catch::AssertionHandler is made on, when
/// the call is \p Method's.
static const VarDecl *catchHandlerCall(const Stmt *S, StringRef Method,
                                       const CXXMemberCallExpr *&Call) {
  Call = dyn_cast<CXXMemberCallExpr>(S);
  const CXXMethodDecl *M = Call ? Call->getMethodDecl() : nullptr;
  if (!M || !M->getIdentifier() || M->getName() != Method ||
      M->getParent()->getQualifiedNameAsString() != "Catch::AssertionHandler")
    return nullptr;
  const auto *Ref = dyn_cast<DeclRefExpr>(
      Call->getImplicitObjectArgument()->IgnoreParenImpCasts());
  return Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
}

/// Whether \p Last, the last statement of \p B, completes a Catch2
/// assertion that always throws: FAIL(...) builds a handler for a fatal
/// assertion (ResultDisposition::Normal), tells it of an explicit failure
/// (handleMessage(ResultWas::ExplicitFailure, ...)) and completes it, which
/// throws the test-failure exception.
static bool failsCatchAssertion(const CFGBlock &B, const Stmt *Last) {
  const CXXMemberCallExpr *Complete;
  const VarDecl *Handler = catchHandlerCall(Last, "complete", Complete);
  const auto *Made =
      Handler && Handler->getInit()
          ? dyn_cast<CXXConstructExpr>(Handler->getInit()->IgnoreImplicit())
          : nullptr;
  if (!Made || !llvm::any_of(Made->arguments(), [](const Expr *A) {
        return enumeratorNamed(A) == "Normal";
      }))
    return false;
  for (const CFGElement &E : B)
    if (auto S = E.getAs<CFGStmt>()) {
      const CXXMemberCallExpr *Message;
      if (catchHandlerCall(S->getStmt(), "handleMessage", Message) ==
              Handler &&
          Message->getNumArgs() > 0 &&
          enumeratorNamed(Message->getArg(0)) == "ExplicitFailure")
        return true;
    }
  return false;
}

/// Paths that end the program or throw do not return to the caller with a
/// capture open: `exit(1)` in an error check after a begin call does not
/// make the function leave a capture open.
bool abandonsFunction(const CFGBlock &B) {
  if (B.hasNoReturnElement())
    return true;
  for (auto It = B.rbegin(), E = B.rend(); It != E; ++It)
    if (auto S = It->getAs<CFGStmt>())
      return isa<CXXThrowExpr>(S->getStmt()) ||
             failsCatchAssertion(B, S->getStmt());
  return false;
}

/// The parameter a call invokes: `fn()` for a function pointer or reference
/// parameter, `fn()` on a std::function parameter.
static const ParmVarDecl *invokedParam(const CallExpr *Call) {
  const Expr *Target = nullptr;
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call)) {
    if (Op->getOperator() == OO_Call && Op->getNumArgs() > 0)
      Target = Op->getArg(0);
  } else if (!calleeOf(Call)) {
    Target = Call->getCallee();
  }
  if (!Target)
    return nullptr;
  Target = Target->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(Target);
      UO && UO->getOpcode() == UO_Deref)
    Target = UO->getSubExpr()->IgnoreParenImpCasts();
  const auto *DRE = dyn_cast<DeclRefExpr>(Target);
  return DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
}

class FlowEngine::Builder {
public:
  Builder(FlowEngine &E, FunctionFlow &F, const CFG &Cfg,
          const BranchFacts *Decided)
      : E(E), F(F), Cfg(Cfg), Body(F.Function->getBody()), Decided(Decided),
        Branches(Cfg.getNumBlockIDs()) {
    for (const CFGBlock *B : Cfg) {
      BranchInfo &Info = Branches[B->getBlockID()];
      Info.Cond = effectiveCondition(*B);
      Info.Block = B;
      if (!Info.Cond)
        continue;
      Info.Test = E.Tests.classify(Info.Cond, Body);
      Info.Scope = E.Tests.lastScope();
      beginResultTest(Info);
      const Stmt *T = B->getTerminatorStmt();
      const Stmt *Loop =
          isa<ForStmt>(T) || isa<WhileStmt>(T) ? T : nullptr;
      Info.Terminator = T;
      guardFacts(Info.Cond, true, E.Ctx, Info.WhenTrue, Loop);
      guardFacts(Info.Cond, false, E.Ctx, Info.WhenFalse, Loop);
      llvm::SmallVector<ConditionLeaf, 4> Leaves;
      conditionLeaves(Info.Cond, true, Leaves);
      conditionLeaves(Info.Cond, false, Leaves);
      for (auto [Leaf, Value] : Leaves)
        if (const auto *DRE = dyn_cast<DeclRefExpr>(Leaf))
          if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
              VD && VD->hasLocalStorage() &&
              !VD->getType()->isReferenceType() &&
              (VD->getType()->isBooleanType() ||
               VD->getType()->isIntegerType() ||
               VD->getType()->isPointerType()))
            Flags.insert(VD);
    }
  }

  void run() {
    auto In = solveForward<CaptureState>(
        Cfg, F.Entry,
        [&](const CFGBlock &B, const CaptureState &S) {
          return transfer(B, S, /*Record=*/false);
        },
        [&](const CFGBlock &From, const CFGBlock &To, unsigned Succ,
            const CaptureState &Out) { return edge(From, To, Succ, Out); },
        [&](const CFGBlock &From, const CFGBlock &To) {
          return enteredBody(From, To);
        });
    for (const CFGBlock *B : Cfg)
      if (const std::optional<CaptureState> &S = In[B->getBlockID()])
        transfer(*B, *S, /*Record=*/true);
    if (const std::optional<CaptureState> &Exit =
            In[Cfg.getExit().getBlockID()])
      F.Exit = *Exit;
    keepOpenReturnsBeforeAnEnd();
    handlersLeavingCapturesOpen();
    throwsLeavingCapturesOpen();
  }

  /// `begin(s); if (!enqueue(s)) throw std::runtime_error(...); end(s);`:
  /// a throw written in this function, outside any try block of it, with a
  /// capture the function begins open and ended later on: the exception
  /// leaves the function with the stream capturing. Not a throw spelled in
  /// a macro (error-check macros that throw are taken as fatal, like
  /// exit()), a rethrow, or one that unwinds a local whose destructor ends
  /// the capture.
  void throwsLeavingCapturesOpen() {
    if (F.Function->isMain() || EndLocs.empty())
      return;
    bool GuardLocal = false;
    forEachStmt(Body, [&](const Stmt *S) {
      if (const auto *DS = dyn_cast<DeclStmt>(S))
        for (const Decl *D : DS->decls())
          if (const auto *VD = dyn_cast<VarDecl>(D))
            GuardLocal |= E.endsThroughHolder(VD) || destroysWithEnd(VD);
    });
    if (GuardLocal)
      return;
    const SourceManager &SM = E.Ctx.getSourceManager();
    forEachStmt(Body, [&](const Stmt *S) {
      const auto *Throw = dyn_cast<CXXThrowExpr>(S);
      if (!Throw || !Throw->getSubExpr() || Throw->getBeginLoc().isMacroID() ||
          insideTryBlock(Throw))
        return;
      const CaptureState *State = F.stateAt(Throw);
      if (!State || State->StreamGuarded)
        return;
      SourceLocation At = SM.getExpansionLoc(Throw->getBeginLoc());
      bool EndsLater = llvm::any_of(EndLocs, [&](SourceLocation End) {
        return SM.isBeforeInTranslationUnit(At, SM.getExpansionLoc(End));
      });
      if (!EndsLater)
        return;
      for (const RegionRoot *R : State->Roots) {
        bool Own = R->K == RegionRoot::Kind::BeginApi ||
                   R->K == RegionRoot::Kind::Wrapper;
        bool Seen = llvm::any_of(F.OpenReturns, [&](const auto &P) {
          return P.first == Throw && P.second == R;
        });
        if (Own && !Seen)
          F.OpenReturns.push_back({Throw, R});
      }
    });
  }

  bool destroysWithEnd(const VarDecl *VD) {
    const CXXRecordDecl *RD = VD->getType()->getAsCXXRecordDecl();
    const CXXDestructorDecl *Dtor =
        RD && RD->hasDefinition() ? RD->getDestructor() : nullptr;
    return Dtor && E.eventOf(Dtor) == CaptureEvent::End;
  }

  bool insideTryBlock(const Stmt *S) {
    if (!Parents)
      Parents = std::make_unique<ParentMap>(const_cast<Stmt *>(Body));
    for (const Stmt *Child = S, *P = Parents->getParent(S); P;
         Child = P, P = Parents->getParent(P))
      if (const auto *Try = dyn_cast<CXXTryStmt>(P);
          Try && Try->getTryBlock() == Child)
        return true;
    return false;
  }

  /// Whether \p Call may throw: not a kernel launch, not a C function (the
  /// CUDA runtime and driver APIs), not declared noexcept (TensorRT's API).
  static bool mayThrow(const CallExpr *Call) {
    if (isa<CUDAKernelCallExpr>(Call))
      return false;
    QualType T = Call->getCallee()->IgnoreParenImpCasts()->getType();
    if (const FunctionDecl *FD = calleeOf(Call)) {
      if (FD->isExternC() || FD->isInExternCContext())
        return false;
      T = FD->getType();
    }
    if (const auto *PT = T->getAs<PointerType>())
      T = PT->getPointeeType();
    const auto *FPT = T->getAs<FunctionProtoType>();
    return !(FPT && FPT->isNothrow());
  }

  /// `try { begin(s); work(s); end(s); } catch (...) { fallback(); }`: an
  /// exception from the captured work lands in a handler with the capture
  /// still open, and a handler that neither ends it nor leaves by a throw
  /// or a call that does not return goes on with the stream capturing. The
  /// handler is an open exit of each capture open inside its try block
  /// when that block also ends the capture and nothing after the try
  /// statement does (the normal path closes it, the handler's does not), or
  /// when the handler returns. (The CFG has no
  /// edges into handlers; their state is what the try block held.)
  void handlersLeavingCapturesOpen() {
    if (F.Function->isMain())
      return;
    forEachStmt(Body, [&](const Stmt *S) {
      const auto *Try = dyn_cast<CXXTryStmt>(S);
      if (!Try)
        return;
      // Open: the captures open at a call of the try block that may throw
      // (`try { begin(s); ctx->enqueueV3(s); end(s); } catch (...)` with a
      // noexcept enqueueV3 lands no exception in the handler mid-capture).
      llvm::SmallVector<const RegionRoot *, 2> Open, Ended;
      forEachStmt(Try->getTryBlock(), [&](const Stmt *In) {
        if (isa<CXXThrowExpr>(In)) {
          if (const CaptureState *State = F.stateAt(In))
            for (const RegionRoot *R : State->Roots)
              if (R->K != RegionRoot::Kind::Entry &&
                  !llvm::is_contained(Open, R))
                Open.push_back(R);
          return;
        }
        auto It = F.States.find(In);
        if (It == F.States.end() || !isa<CallExpr>(In))
          return;
        bool Throws = mayThrow(cast<CallExpr>(In));
        for (const RegionRoot *R : It->second.Roots) {
          if (R->K == RegionRoot::Kind::Entry)
            continue;
          if (Throws && !llvm::is_contained(Open, R))
            Open.push_back(R);
          const FunctionDecl *Callee = calleeOf(cast<CallExpr>(In));
          if (E.eventOf(Callee) == CaptureEvent::End &&
              !llvm::is_contained(Ended, R))
            Ended.push_back(R);
        }
      });
      if (Open.empty())
        return;
      // A handler that falls through reaches an end after the try
      // statement (`try { run(); } catch (...) { failed = true; }
      // cudaStreamEndCapture(...)`).
      const SourceManager &SM = E.Ctx.getSourceManager();
      SourceLocation After = SM.getExpansionLoc(Try->getEndLoc());
      bool EndsAfter = llvm::any_of(EndLocs, [&](SourceLocation End) {
        return SM.isBeforeInTranslationUnit(After, SM.getExpansionLoc(End));
      });
      for (unsigned I = 0; I < Try->getNumHandlers(); ++I) {
        const CXXCatchStmt *Handler = Try->getHandler(I);
        bool Ends = false, Returns = false, Leaves = false;
        forEachStmt(Handler->getHandlerBlock(), [&](const Stmt *H) {
          if (const auto *Call = dyn_cast<CallExpr>(H))
            Ends |= E.eventOf(calleeOf(Call)) == CaptureEvent::End;
          Returns |= isa<ReturnStmt>(H);
        });
        if (const auto *Block =
                dyn_cast_or_null<CompoundStmt>(Handler->getHandlerBlock()))
          for (const Stmt *Top : Block->body()) {
            if (const auto *X = dyn_cast<Expr>(Top))
              Top = X->IgnoreImplicit();
            const auto *Call = dyn_cast<CallExpr>(Top);
            const FunctionDecl *Callee = Call ? calleeOf(Call) : nullptr;
            Leaves |= isa<CXXThrowExpr>(Top) || (Callee && Callee->isNoReturn());
          }
        if (Ends || Leaves)
          continue;
        for (const RegionRoot *R : Open)
          if (Returns || (llvm::is_contained(Ended, R) && !EndsAfter))
            F.OpenReturns.push_back({Handler, R});
      }
    });
  }

private:
  struct BranchInfo {
    const Expr *Cond = nullptr;
    const CFGBlock *Block = nullptr;
    const Stmt *Terminator = nullptr;
    CaptureTest Test = CaptureTest::Unknown;
    TestScope Scope = TestScope::Stream;
    llvm::SmallVector<GuardFact, 2> WhenTrue, WhenFalse;
    /// The condition tests the result of this begin call; the edge where
    /// it failed (0: true, 1: false) has no capture of it open.
    const Stmt *BeginResult = nullptr;
    unsigned FailedEdge = 0;
    /// The condition tests the result of a call that always fails under
    /// capture; this edge is where it succeeded (2: none).
    unsigned SucceededEdge = 2;
  };

  /// `begin(...) != cudaSuccess`, `err != cudaSuccess` with `err` holding a
  /// begin's result, `check(begin(...)) != ok`, `if (!begin_wrapper())`:
  /// the begin call and which edge is its failure. A begin in a loop is not
  /// taken back: a later iteration's failure leaves the earlier ones open.
  void beginResultTest(BranchInfo &Info) {
    const Expr *Cond = Info.Cond->IgnoreParenImpCasts();
    bool Negated = false;
    while (const auto *UO = dyn_cast<UnaryOperator>(Cond)) {
      if (UO->getOpcode() != UO_LNot)
        return;
      Negated = !Negated;
      Cond = UO->getSubExpr()->IgnoreParenImpCasts();
    }
    std::optional<bool> FailedWhenTrue;
    if (std::optional<SuccessTest> T = successTest(Cond)) {
      Cond = T->Status;
      FailedWhenTrue = !T->TrueOnSuccess;
    } else if (equalityTest(Cond)) {
      return;
    }
    // A checking function that says how it reads the status it is given
    // (`print_if_error(begin(...), ...)` is true on failure); otherwise an
    // error code is true on failure, a boolean result on success.
    if (!FailedWhenTrue)
      if (std::optional<bool> OnSuccess = checkerPolarity(Cond))
        FailedWhenTrue = !*OnSuccess;
    if (!FailedWhenTrue)
      FailedWhenTrue = !Cond->getType()->isBooleanType();
    bool TrueFails = *FailedWhenTrue != Negated;
    SourceLocation At = Info.Cond->getBeginLoc();
    if (const CallExpr *Begin = resultOf(Cond, 0, At, &Builder::isBegin);
        Begin && !leavesEarlierIterationsOpen(Begin)) {
      Info.BeginResult = Begin;
      Info.FailedEdge = TrueFails ? 0 : 1;
    }
    // `if (cudaDeviceSynchronize() != cudaSuccess) throw ...;`: the call
    // always fails under capture, so the path where it succeeded runs with
    // no capture open.
    if (resultOf(Cond, 0, At, &Builder::alwaysFails) &&
        failureLeaves(Info.Block, TrueFails ? 0 : 1))
      Info.SucceededEdge = TrueFails ? 1 : 0;
  }

  /// Whether the failure edge of \p B leaves the function (throws, ends the
  /// program or returns) before joining the success path.
  bool failureLeaves(const CFGBlock *B, unsigned Edge) {
    const CFGBlock *Next = (B->succ_begin() + Edge)->getReachableBlock();
    for (unsigned Steps = 0; Next && Steps < 4; ++Steps) {
      if (Next == &Cfg.getExit() || abandonsFunction(*Next))
        return true;
      for (const CFGElement &Elem : *Next)
        if (auto CS = Elem.getAs<CFGStmt>();
            CS && isa<ReturnStmt>(CS->getStmt()))
          return true;
      if (Next->succ_size() != 1)
        return false;
      Next = Next->succ_begin()->getReachableBlock();
    }
    return false;
  }

  /// A begin in a loop whose body does not end the capture: when a later
  /// iteration's begin fails, the earlier iterations' captures stay open.
  bool leavesEarlierIterationsOpen(const CallExpr *Begin) {
    const Stmt *Loop = enclosingLoop(Body, Begin);
    if (!Loop)
      return false;
    bool Ends = false;
    forEachStmt(Loop, [&](const Stmt *S) {
      if (const auto *Call = dyn_cast<CallExpr>(S))
        Ends |= E.eventOf(calleeOf(Call)) == CaptureEvent::End;
    });
    return !Ends;
  }

  /// The begin call whose result \p X carries where \p At tests it: the
  /// call itself, a checking function applied to it, or a local assigned
  /// from one of those (the last such assignment before At).
  using CallPredicate = bool (Builder::*)(const FunctionDecl *);
  bool isBegin(const FunctionDecl *FD) {
    return E.eventOf(FD) == CaptureEvent::Begin;
  }
  bool alwaysFails(const FunctionDecl *FD) { return E.alwaysFails(FD); }

  const CallExpr *resultOf(const Expr *X, unsigned Depth, SourceLocation At,
                           CallPredicate Pred) {
    if (!X || Depth > 3)
      return nullptr;
    X = X->IgnoreParenImpCasts();
    if (const auto *Call = dyn_cast<CallExpr>(X)) {
      if ((this->*Pred)(calleeOf(Call)))
        return Call;
      if (Call->getNumArgs() == 1)
        return resultOf(Call->getArg(0), Depth + 1, At, Pred);
      // `check(status, #call, __FILE__, __LINE__)`: the argument the
      // checking function tests.
      if (std::optional<unsigned> Arg = testedArgument(Call))
        return resultOf(Call->getArg(*Arg), Depth + 1, At, Pred);
      // A checking function defined in another unit: the one argument
      // that is a call's status (`check_result(begin(...), __func__,
      // __FILE__, __LINE__)`).
      if (const FunctionDecl *Checker = calleeOf(Call);
          Checker && !Checker->hasBody()) {
        const Expr *Status = nullptr;
        for (const Expr *Arg : Call->arguments()) {
          const Expr *A = Arg->IgnoreParenImpCasts();
          if (!isa<CallExpr>(A) || A->getType()->isBooleanType() ||
              !A->getType()->isIntegralOrEnumerationType())
            continue;
          if (Status)
            return nullptr;
          Status = A;
        }
        return resultOf(Status, Depth + 1, At, Pred);
      }
      return nullptr;
    }
    const auto *DRE = dyn_cast<DeclRefExpr>(X);
    const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (!VD || !VD->hasLocalStorage())
      return nullptr;
    // The last assignment before the test: `status = check(begin(...));`.
    const SourceManager &SM = E.Ctx.getSourceManager();
    SourceLocation Test = SM.getExpansionLoc(At);
    const Expr *Last = VD->getInit();
    SourceLocation LastLoc = SM.getExpansionLoc(VD->getLocation());
    forEachStmt(Body, [&](const Stmt *S) {
      const auto *BO = dyn_cast<BinaryOperator>(S);
      if (!BO || BO->getOpcode() != BO_Assign)
        return;
      const auto *L = dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts());
      SourceLocation Loc = SM.getExpansionLoc(BO->getBeginLoc());
      if (L && L->getDecl() == VD && SM.isBeforeInTranslationUnit(Loc, Test) &&
          SM.isBeforeInTranslationUnit(LastLoc, Loc)) {
        Last = BO->getRHS();
        LastLoc = Loc;
      }
    });
    return resultOf(Last, Depth + 1, At, Pred);
  }

  /// For a call of a bool function that tests the status passed in one of
  /// its arguments: whether it is true when that status is success; none
  /// when the callee's body does not say (see statusPolarity).
  std::optional<bool> checkerPolarity(const Expr *Cond) {
    const auto *Call = dyn_cast<CallExpr>(Cond->IgnoreParenImpCasts());
    if (!Call || !Call->getType()->isBooleanType())
      return std::nullopt;
    std::optional<unsigned> Arg = testedArgument(Call);
    if (!Arg)
      return std::nullopt;
    return trueOnSuccess(calleeOf(Call), *Arg, 0);
  }

  /// The argument of \p Call that its callee tests as a status (the one
  /// trueOnSuccess knows), when there is exactly one.
  std::optional<unsigned> testedArgument(const CallExpr *Call) {
    const FunctionDecl *FD = calleeOf(Call);
    if (!FD || !FD->getReturnType()->isBooleanType())
      return std::nullopt;
    std::optional<unsigned> Found;
    for (unsigned I = 0; I < Call->getNumArgs() && I < FD->getNumParams(); ++I)
      if (trueOnSuccess(FD, I, 0)) {
        if (Found)
          return std::nullopt;
        Found = I;
      }
    return Found;
  }

  /// Whether \p FD, a bool function, returns true when its parameter
  /// \p Param holds a success status: `return err == cudaSuccess;`,
  /// `return !is_success(err);`, or a first statement `if (<test of err>)
  /// return <constant>;` (`if (is_success(err)) return false; ... return
  /// true;`). None when the body tests the parameter some other way.
  std::optional<bool> trueOnSuccess(const FunctionDecl *FD, unsigned Param,
                                    unsigned Depth) {
    if (!FD || Depth > 3 || Param >= FD->getNumParams() ||
        !FD->getReturnType()->isBooleanType())
      return std::nullopt;
    const FunctionDecl *Def = nullptr;
    if (!FD->hasBody(Def) || !Def)
      return std::nullopt;
    const auto *Body = dyn_cast_or_null<CompoundStmt>(Def->getBody());
    if (!Body || Body->body_empty())
      return std::nullopt;
    const ParmVarDecl *P = Def->getParamDecl(Param);
    // A status is an error code: an enumeration or an integer, not a
    // pointer, a flag or an object.
    QualType Status = P->getType().getNonReferenceType();
    if (Status->isBooleanType() || !Status->isIntegralOrEnumerationType())
      return std::nullopt;
    const Stmt *First = Body->body_front();
    if (const auto *Ret = dyn_cast<ReturnStmt>(First))
      return statusPolarity(Ret->getRetValue(), P, Depth);
    const auto *If = dyn_cast<IfStmt>(First);
    if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
      return std::nullopt;
    const Stmt *Then = If->getThen();
    if (const auto *CS = dyn_cast<CompoundStmt>(Then); CS && CS->size() == 1)
      Then = CS->body_front();
    const auto *Ret = dyn_cast<ReturnStmt>(Then);
    const auto *Literal =
        Ret && Ret->getRetValue()
            ? dyn_cast<CXXBoolLiteralExpr>(Ret->getRetValue()->IgnoreParenImpCasts())
            : nullptr;
    if (!Literal)
      return std::nullopt;
    std::optional<bool> CondOnSuccess = statusPolarity(If->getCond(), P, Depth);
    if (!CondOnSuccess)
      return std::nullopt;
    // The condition holds on success: the constant is what success returns.
    return *CondOnSuccess ? Literal->getValue() : !Literal->getValue();
  }

  /// Whether \p E, a test of the status in \p P, is true on success.
  std::optional<bool> statusPolarity(const Expr *E, const ParmVarDecl *P,
                                     unsigned Depth) {
    if (!E)
      return std::nullopt;
    E = E->IgnoreParenImpCasts();
    if (const auto *UO = dyn_cast<UnaryOperator>(E);
        UO && UO->getOpcode() == UO_LNot) {
      std::optional<bool> Inner = statusPolarity(UO->getSubExpr(), P, Depth);
      return Inner ? std::optional<bool>(!*Inner) : std::nullopt;
    }
    auto IsParam = [&](const Expr *X) {
      const auto *DRE = dyn_cast<DeclRefExpr>(X->IgnoreParenImpCasts());
      return DRE && DRE->getDecl() == P;
    };
    if (std::optional<SuccessTest> T = successTest(E))
      return IsParam(T->Status) ? std::optional<bool>(T->TrueOnSuccess)
                                : std::nullopt;
    if (equalityTest(E))
      return std::nullopt;
    if (IsParam(E))
      return std::optional<bool>(false); // a non-zero code is a failure
    if (const auto *Call = dyn_cast<CallExpr>(E))
      for (unsigned I = 0; I < Call->getNumArgs(); ++I)
        if (IsParam(Call->getArg(I)))
          return trueOnSuccess(calleeOf(Call), I, Depth + 1);
    return std::nullopt;
  }

  /// A `while` loop entered with its condition true runs its body at least
  /// once: `bool done = false; while (!done) { ... done = true; }`. The
  /// condition reads a local whose initializer decides it and that only the
  /// body writes, so the way in (not the back edge) goes straight to the
  /// body: the exit edge is taken only after an iteration.
  const CFGBlock *enteredBody(const CFGBlock &From, const CFGBlock &To) {
    const auto *While = dyn_cast_or_null<WhileStmt>(To.getTerminatorStmt());
    if (!While || From.getLoopTarget() == While || To.succ_size() != 2)
      return &To;
    const CFGBlock *Body = To.succ_begin()->getReachableBlock();
    if (!Body || !runsOnEntry(While))
      return &To;
    return Body;
  }

  bool runsOnEntry(const WhileStmt *While) {
    auto [It, Inserted] = EnteredLoops.try_emplace(While, false);
    if (!Inserted)
      return It->second;
    if (Decided && Decided->EnteredLoops.contains(While))
      return It->second = true;
    const Expr *Cond = While->getCond()->IgnoreParenImpCasts();
    bool Negated = false;
    if (const auto *UO = dyn_cast<UnaryOperator>(Cond);
        UO && UO->getOpcode() == UO_LNot) {
      Negated = true;
      Cond = UO->getSubExpr()->IgnoreParenImpCasts();
    }
    const auto *DRE = dyn_cast<DeclRefExpr>(Cond);
    const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    bool Value = false;
    if (!VD || !VD->hasLocalStorage() || isa<ParmVarDecl>(VD) ||
        !VD->getType()->isBooleanType() || !VD->getInit() ||
        !VD->getInit()->EvaluateAsBooleanCondition(Value, E.Ctx) ||
        Value == Negated)
      return false;
    // Only the loop body may write it (and nothing may take its address).
    bool WrittenOutside = false;
    forEachStmt(Body, [&](const Stmt *S) {
      if (WrittenOutside || S == While)
        return;
      const Expr *Target = nullptr;
      if (const auto *BO = dyn_cast<BinaryOperator>(S);
          BO && BO->isAssignmentOp())
        Target = BO->getLHS();
      else if (const auto *U = dyn_cast<UnaryOperator>(S);
               U && (U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf))
        Target = U->getSubExpr();
      const auto *W = Target ? dyn_cast<DeclRefExpr>(
                                   Target->IgnoreParenImpCasts())
                             : nullptr;
      if (W && W->getDecl() == VD &&
          !While->getBody()->getSourceRange().fullyContains(
              S->getSourceRange()))
        WrittenOutside = true;
    });
    return It->second = !WrittenOutside;
  }

  std::optional<CaptureState> edge(const CFGBlock &From, const CFGBlock &To,
                                   unsigned Succ, const CaptureState &Out) {
    if (&To == &Cfg.getExit() && abandonsFunction(From))
      return std::nullopt;
    if (Decided && From.getTerminatorStmt() && From.succ_size() == 2 &&
        Decided->DeadEdges.contains({From.getTerminatorStmt(), Succ}))
      return std::nullopt;
    const BranchInfo &Info = Branches[From.getBlockID()];
    if (!Info.Cond || !Out.capturing() || Succ > 1)
      return Out;
    const CFGBlock *Other = (From.succ_begin() + (1 - Succ))->getReachableBlock();
    if (Other == &To)
      return Out; // both edges lead here: nothing is learned
    bool Value = Succ == 0;
    CaptureState S = Out;
    if (Info.Test != CaptureTest::Unknown &&
        (Info.Test == CaptureTest::TrueWhenNotCapturing) == Value) {
      // A thread-wide test says no capture is open at all; a stream's
      // status covers that stream only.
      if (Info.Scope == TestScope::Thread)
        S.Roots.clear();
      S.StreamGuarded = true;
    }
    const auto &Facts = Value ? Info.WhenTrue : Info.WhenFalse;
    if (!Facts.empty())
      llvm::erase_if(S.Roots, [&](const RegionRoot *R) {
        return contradicts(*R, Facts, Info.Terminator);
      });
    if (Succ == Info.SucceededEdge)
      S.Roots.clear();
    if (Info.BeginResult && Succ == Info.FailedEdge)
      if (const RegionRoot *Failed = E.RootsByBegin.lookup(Info.BeginResult))
        llvm::erase(S.Roots, Failed);
    // A flag set after the begin: the way it does not take has no capture
    // of that begin open.
    if (!Facts.empty() && !S.Learned.empty())
      llvm::erase_if(S.Roots, [&](const RegionRoot *R) {
        return llvm::any_of(S.Learned, [&](const auto &P) {
          return P.first == R && llvm::any_of(Facts, [&](const GuardFact &F) {
                   return F.contradicts(P.second);
                 });
        });
      });
    llvm::erase_if(S.Learned, [&](const auto &P) {
      return !llvm::is_contained(S.Roots, P.first);
    });
    // The way taken tells each open capture what a local flag holds here,
    // until the flag is written again (`if (!ok || !end(s)) { if (ok)
    // reset(); }`: the capture left open on `!ok` never runs reset()).
    for (const GuardFact &Fact : Facts)
      if (isFlagAtom(Fact.Atom))
        for (const RegionRoot *R : S.Roots)
          if (llvm::none_of(S.Learned, [&](const auto &P) {
                return P.first == R && P.second.Atom == Fact.Atom;
              }))
            S.Learned.push_back({R, Fact});
    if (S.Roots.empty())
      S.StreamGuarded = false;
    return S;
  }

  /// Whether \p Atom is one of the function's local flags (their writes
  /// are all seen: learn() forgets what a write replaces).
  bool isFlagAtom(const llvm::FoldingSetNodeID &Atom) const {
    return llvm::any_of(Flags, [&](const VarDecl *VD) {
      llvm::FoldingSetNodeID Own;
      variableAtom(VD, Own);
      return Own == Atom;
    });
  }

  /// What statement \p St does to the flags of \p S: a constant stored in
  /// a flag while capturing becomes a fact of every open capture; any other
  /// write (another value, `++`, its address taken, passed by reference)
  /// forgets what was learned of it.
  void learn(const Stmt *St, CaptureState &S) const {
    if (Flags.empty())
      return;
    auto FlagOf = [&](const Expr *E) -> const VarDecl * {
      const auto *DRE = E ? dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts())
                          : nullptr;
      const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
      return VD && Flags.contains(VD) ? VD : nullptr;
    };
    auto Constant = [](const Expr *E) -> std::optional<bool> {
      if (!E)
        return std::nullopt;
      E = E->IgnoreParenImpCasts();
      if (const auto *B = dyn_cast<CXXBoolLiteralExpr>(E))
        return B->getValue();
      if (const auto *I = dyn_cast<IntegerLiteral>(E))
        return !I->getValue().isZero();
      return std::nullopt;
    };
    const VarDecl *Var = nullptr;
    std::optional<bool> Value;
    bool Plain = false;
    if (const Expr *Target = assignedBy(St, &Plain)) {
      Var = FlagOf(Target);
      if (Plain)
        if (const auto *BO = dyn_cast<BinaryOperator>(St))
          Value = Constant(BO->getRHS());
    } else if (const auto *U = dyn_cast<UnaryOperator>(St);
               U && U->getOpcode() == UO_AddrOf) {
      Var = FlagOf(U->getSubExpr());
    } else if (const auto *DS = dyn_cast<DeclStmt>(St); DS && DS->isSingleDecl()) {
      if (const auto *VD = dyn_cast<VarDecl>(DS->getSingleDecl());
          VD && Flags.contains(VD)) {
        Var = VD;
        Value = Constant(VD->getInit());
      }
    } else if (const auto *Call = dyn_cast<CallExpr>(St)) {
      for (const Expr *Arg : Call->arguments())
        if (const VarDecl *VD = FlagOf(Arg->IgnoreParens());
            VD && isa<DeclRefExpr>(Arg->IgnoreParens()))
          forget(VD, S); // an lvalue argument: bound to a reference
      return;
    }
    if (!Var)
      return;
    forget(Var, S);
    if (!Value || !S.capturing())
      return;
    GuardFact Fact;
    variableAtom(Var, Fact.Atom);
    Fact.Value = *Value;
    for (const RegionRoot *R : S.Roots)
      S.Learned.push_back({R, Fact});
  }

  static void forget(const VarDecl *Var, CaptureState &S) {
    if (S.Learned.empty())
      return;
    llvm::FoldingSetNodeID Atom;
    variableAtom(Var, Atom);
    llvm::erase_if(S.Learned,
                   [&](const auto &P) { return P.second.Atom == Atom; });
  }

  /// Whether the facts of an edge contradict those the begin ran under.
  /// The loop around the begin exits with its condition false after the
  /// begins ran: that exit contradicts nothing.
  static bool contradicts(const RegionRoot &R, llvm::ArrayRef<GuardFact> Facts,
                          const Stmt *Terminator) {
    for (const GuardFact &G : R.Guards)
      for (const GuardFact &F : Facts)
        if (G.contradicts(F) && !(G.Loop && G.Loop == Terminator))
          return true;
    return false;
  }

  CaptureState transfer(const CFGBlock &B, CaptureState S, bool Record) {
    const ReturnStmt *Return = nullptr;
    for (const CFGElement &Elem : B) {
      if (auto CS = Elem.getAs<CFGStmt>()) {
        const Stmt *St = CS->getStmt();
        if (Record)
          F.States.try_emplace(St, S);
        Return = dyn_cast<ReturnStmt>(St);
        if (const auto *Call = dyn_cast<CallExpr>(St))
          S = call(St, calleeOf(Call), Call->getExprLoc(), S, Record);
        else if (const auto *Ctor = dyn_cast<CXXConstructExpr>(St))
          S = call(St, Ctor->getConstructor(), Ctor->getBeginLoc(), S, Record);
        learn(St, S);
      } else if (auto D = Elem.getAs<CFGAutomaticObjDtor>()) {
        S = localDtor(D->getVarDecl(), D->getDestructorDecl(E.Ctx), S, Record);
      }
    }
    if (Record) {
      if (const Stmt *T = B.getTerminatorStmt())
        F.States.try_emplace(T, S);
      // Returning from main ends the program like exit() does: nothing
      // goes on using the stream.
      if (Return && S.capturing() && !F.Function->isMain())
        for (const RegionRoot *R : S.Roots)
          if (R->K != RegionRoot::Kind::Entry)
            OpenReturns.push_back({Return, R});
          else if (!S.StreamGuarded)
            EntryOpenReturns.push_back(Return);
    }
    return S;
  }

  CaptureState call(const Stmt *St, const FunctionDecl *Callee,
                    SourceLocation Loc, CaptureState S, bool Record) {
    CaptureEvent Event = E.eventOfCall(St, Callee);
    // A virtual hook: the override that begins or ends (its mode, its name
    // in notes).
    if (Event != CaptureEvent::None && !callsQualified(St))
      if (const FunctionDecl *Override = E.capturingOverride(Callee))
        Callee = Override;
    // Through a std::function or function pointer: the event of the
    // callables it holds, when they all agree.
    if (Event == CaptureEvent::None) {
      llvm::SmallVector<const FunctionDecl *, 2> Targets =
          invokedCallables(St, nullptr, &E.pointers());
      if (!Targets.empty() &&
          llvm::all_of(Targets, [&](const FunctionDecl *T) {
            return E.eventOf(T) == E.eventOf(Targets.front());
          })) {
        Event = E.eventOf(Targets.front());
        if (Event != CaptureEvent::None)
          Callee = Targets.front();
      }
    }
    if (Event == CaptureEvent::Begin) {
      F.HasBegin = true;
      CaptureState Open;
      const RegionRoot *Root = E.rootFor(St, F.Function, Callee, Loc);
      Open.Roots.push_back(Root);
      for (const VarDecl *VD : Root->NonNull)
        if (Flags.contains(VD)) {
          GuardFact Fact;
          variableAtom(VD, Fact.Atom);
          Open.Learned.push_back({Root, Fact});
        }
      // Captures open on other streams stay open beside this one.
      if (const Decl *Stream = namedStream(St))
        for (const RegionRoot *R : S.Roots)
          if (const Decl *Other = R->beginStream(); Other && Other != Stream)
            keepOpen(S, R, Open);
      return Open;
    }
    if (Record && S.capturing()) {
      std::vector<CallSite> Sites;
      appendCallSites(St, E.Code.visibleLoc(Loc), Sites, /*Stored=*/false,
                      &E.pointers());
      bool Once = onceInit(St);
      for (CallSite &Site : Sites) {
        if (Site.K == CallSite::Kind::Callable)
          Site.Loc = E.Code.visibleLoc(Site.Loc);
        Site.OnceInit |= Once;
        F.Sites.push_back({Site, S});
      }
      if (const auto *Call = dyn_cast<CallExpr>(St))
        if (const ParmVarDecl *P = invokedParam(Call))
          F.ParamCalls.push_back(
              {P->getFunctionScopeIndex(), E.Code.visibleLoc(Loc), S});
    }
    if (Event == CaptureEvent::End) {
      F.HasEnd = true;
      if (Record) {
        EndLocs.push_back(Loc);
        EndStreams.push_back(namedStream(St));
        noteWrongStreamEnd(St, Callee, S);
      }
      CaptureState After = F.EntryPersists ? F.Entry : CaptureState();
      // An end that names the stream of one of several captures open on
      // different streams ends that one only.
      const Decl *Stream = namedStream(St);
      if (Stream && llvm::any_of(S.Roots, [&](const RegionRoot *R) {
            return R->beginStream() == Stream;
          }))
        for (const RegionRoot *R : S.Roots)
          if (const Decl *Other = R->beginStream(); Other && Other != Stream)
            keepOpen(S, R, After);
      return After;
    }
    return S;
  }

  /// Adds \p R, open in \p From, and the facts learned under it to \p Into.
  static void keepOpen(const CaptureState &From, const RegionRoot *R,
                       CaptureState &Into) {
    if (llvm::is_contained(Into.Roots, R))
      return;
    Into.Roots.insert(llvm::upper_bound(Into.Roots, R), R);
    for (const auto &P : From.Learned)
      if (P.first == R)
        Into.Learned.push_back(P);
  }

  /// `cudaStreamEndCapture(0, &g)` while a capture begun on another stream
  /// is open: no capture can be open on the legacy stream, so the call
  /// fails and ends nothing. The flow goes on as if it had ended the
  /// capture (what the code means; the captured work after it would only
  /// repeat this finding), and the end is kept for capture-left-open.
  void noteWrongStreamEnd(const Stmt *St, const FunctionDecl *Callee,
                          const CaptureState &S) {
    const auto *Call = dyn_cast<CallExpr>(St);
    if (!Call || calleeOf(Call) != Callee ||
        !namesLegacyStream(Call, E.Ctx))
      return;
    for (const RegionRoot *R : S.Roots) {
      bool Own = R->K == RegionRoot::Kind::BeginApi ||
                 R->K == RegionRoot::Kind::Wrapper ||
                 R->K == RegionRoot::Kind::GuardObject;
      // A begin on the legacy stream failed as well: no capture either way.
      const auto *Begin = dyn_cast_or_null<CallExpr>(R->Call);
      bool LegacyBegin = R->K == RegionRoot::Kind::BeginApi && Begin &&
                         namesLegacyStream(Begin, E.Ctx);
      bool Seen = llvm::any_of(F.WrongStreamEnds, [&](const auto &P) {
        return P.first == Call && P.second == R;
      });
      if (Own && !LegacyBegin && !Seen)
        F.WrongStreamEnds.push_back({Call, R});
    }
  }

  CaptureState localDtor(const VarDecl *VD, const FunctionDecl *Dtor,
                         CaptureState S, bool Record) {
    CaptureEvent Event = E.eventOf(Dtor);
    if (E.endsThroughHolder(VD))
      Event = CaptureEvent::End;
    if (Record && S.capturing() && Dtor &&
        E.Code.isUserLocation(Dtor->getLocation())) {
      CallSite Site{CallSite::Kind::LocalDtor, nullptr, VD->getLocation(),
                    Dtor};
      Site.Var = VD;
      F.Sites.push_back({Site, S});
    }
    if (Event == CaptureEvent::End) {
      F.HasEnd = true;
      if (Record)
        EndLocs.push_back(VD->getLocation());
        EndStreams.push_back(nullptr);
      return F.EntryPersists ? F.Entry : CaptureState();
    }
    return S;
  }

  /// An open return is an error path when the function goes on to end the
  /// capture later on (`if (err) return; ...; end(s);`), or when the
  /// function is a begin wrapper that says how it went (it returns success
  /// with the capture open) and this return reports a failure: its caller
  /// takes the capture for never begun (`if (init() != OK) return;`).
  void keepOpenReturnsBeforeAnEnd() {
    const SourceManager &SM = E.Ctx.getSourceManager();
    bool Wrapper = EndLocs.empty() &&
                   llvm::any_of(OpenReturns, [&](const auto &P) {
                     return returnedStatus(P.first) == Status::Success;
                   });
    for (auto [Return, Root] : OpenReturns) {
      SourceLocation At = SM.getExpansionLoc(Return->getBeginLoc());
      bool EndsLater =
          llvm::any_of(EndLocs,
                       [&](SourceLocation End) {
                         return SM.isBeforeInTranslationUnit(
                             At, SM.getExpansionLoc(End));
                       }) ||
          endSkippedByCondition(Return);
      bool Seen = llvm::any_of(F.OpenReturns, [&](const auto &P) {
        return P.first == Return && P.second == Root;
      });
      bool FailedWrapper =
          Wrapper && returnedStatus(Return) == Status::Failure;
      // The function ends captures on other streams, never this one's.
      const Decl *Stream = Root->beginStream();
      bool NeverEnded = Stream && !EndStreams.empty() &&
                        llvm::all_of(EndStreams, [&](const Decl *D) {
                          return D && D != Stream;
                        });
      if ((EndsLater || FailedWrapper || NeverEnded) && !Seen)
        F.OpenReturns.push_back({Return, Root});
    }
    // An end wrapper (`if (join() != OK) return status; ...; end(s);`)
    // that reports a failure before its end: the caller takes the capture
    // for ended, or gives up on it, and leaves it open.
    if (F.HasBegin)
      return;
    for (const Stmt *Return : EntryOpenReturns) {
      SourceLocation At = SM.getExpansionLoc(Return->getBeginLoc());
      bool EndsLater = llvm::any_of(EndLocs, [&](SourceLocation End) {
        return SM.isBeforeInTranslationUnit(At, SM.getExpansionLoc(End));
      });
      bool Seen = llvm::any_of(F.OpenReturns, [&](const auto &P) {
        return P.first == Return;
      });
      if (EndsLater && !Seen && returnedStatus(Return) == Status::Failure &&
          failedOperation(cast<ReturnStmt>(Return)))
        F.OpenReturns.push_back({Return, E.entryRoot()});
    }
  }

  enum class Status { Unknown, Success, Failure };

  /// What a return of a status says: `return OK;`, `return true;` succeed;
  /// `return RC_OTHER_ERROR;`, `return -1;`, `return false;` fail, and so
  /// does `return status;` inside `if (status != OK)`.
  Status returnedStatus(const Stmt *S) {
    const auto *Return = dyn_cast<ReturnStmt>(S);
    const Expr *V = Return ? Return->getRetValue() : nullptr;
    if (!V)
      return Status::Unknown;
    V = V->IgnoreParenImpCasts();
    if (const auto *B = dyn_cast<CXXBoolLiteralExpr>(V))
      return B->getValue() ? Status::Success : Status::Failure;
    if (isSuccessConstant(V))
      return Status::Success;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(V)) {
      if (isa<EnumConstantDecl>(DRE->getDecl()))
        return Status::Failure;
      return testedAsFailure(Return, DRE->getDecl()) ? Status::Failure
                                                     : Status::Unknown;
    }
    if (isa<IntegerLiteral>(V))
      return Status::Failure; // not 0
    if (const auto *UO = dyn_cast<UnaryOperator>(V);
        UO && UO->getOpcode() == UO_Minus &&
        isa<IntegerLiteral>(UO->getSubExpr()->IgnoreParenImpCasts()))
      return Status::Failure;
    return Status::Unknown;
  }

  /// Whether \p Return reports an operation that failed: `return status;`
  /// after a test of that status, or a return in the arm of an `if` whose
  /// condition calls something (`if (!check(cudaEventRecord(...)))`), not
  /// a check of the wrapper's own bookkeeping (`if (!info) return false;`).
  bool failedOperation(const ReturnStmt *Return) {
    if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(
            Return->getRetValue() ? Return->getRetValue()->IgnoreParenImpCasts()
                                  : nullptr))
      if (!isa<EnumConstantDecl>(DRE->getDecl()))
        return testedAsFailure(Return, DRE->getDecl());
    if (!Parents)
      Parents = std::make_unique<ParentMap>(const_cast<Stmt *>(Body));
    const Stmt *Child = Return;
    for (int Depth = 0; Depth < 3; ++Depth) {
      const Stmt *Parent = Parents->getParent(Child);
      if (const auto *If = dyn_cast_or_null<IfStmt>(Parent)) {
        bool Calls = false;
        forEachStmt(If->getCond(),
                    [&](const Stmt *S) { Calls |= isa<CallExpr>(S); });
        return Calls;
      }
      if (!isa_and_nonnull<CompoundStmt>(Parent))
        return false;
      Child = Parent;
    }
    return false;
  }

  /// Whether call \p St runs on the function's first call only (in a static
  /// local's initializer, or a branch that sets a static local it tests
  /// unset), as the function's collected calls say.
  bool onceInit(const Stmt *St) {
    if (!OnceStmts) {
      OnceStmts.emplace();
      for (const CallSite &Site : E.callsIn(F.Function))
        if (Site.OnceInit && Site.S)
          OnceStmts->insert(Site.S);
    }
    return OnceStmts->contains(St);
  }

  /// Whether \p Return sits in an arm of an `if` whose condition holds an
  /// end call that a path to the return skips: `if (!ok || !end(s)) return
  /// false;` returns with the capture open when `ok` is false (the return
  /// is reached capturing, so some path did not run the end).
  bool endSkippedByCondition(const Stmt *Return) {
    if (!Parents)
      Parents = std::make_unique<ParentMap>(const_cast<Stmt *>(Body));
    const SourceManager &SM = E.Ctx.getSourceManager();
    const Stmt *Child = Return;
    for (int Depth = 0; Depth < 4; ++Depth) {
      const Stmt *Parent = Parents->getParent(Child);
      if (const auto *If = dyn_cast_or_null<IfStmt>(Parent)) {
        if (If->getCond() == Child)
          return false;
        SourceRange Cond(SM.getExpansionLoc(If->getCond()->getBeginLoc()),
                         SM.getExpansionLoc(If->getCond()->getEndLoc()));
        return llvm::any_of(EndLocs, [&](SourceLocation End) {
          End = SM.getExpansionLoc(End);
          return !SM.isBeforeInTranslationUnit(End, Cond.getBegin()) &&
                 !SM.isBeforeInTranslationUnit(Cond.getEnd(), End);
        });
      }
      if (!isa_and_nonnull<CompoundStmt>(Parent))
        return false;
      Child = Parent;
    }
    return false;
  }

  /// Whether \p Return sits in the arm of an `if` that tests \p D for
  /// failure: `if (D != OK) return D;`, `if (D) return D;`.
  bool testedAsFailure(const ReturnStmt *Return, const Decl *D) {
    if (!Parents)
      Parents = std::make_unique<ParentMap>(const_cast<Stmt *>(Body));
    const Stmt *Child = Return;
    for (int Depth = 0; Depth < 3; ++Depth) {
      const Stmt *Parent = Parents->getParent(Child);
      if (!Parent)
        return false;
      if (const auto *If = dyn_cast<IfStmt>(Parent)) {
        bool Then = If->getThen() == Child;
        if (!Then && If->getElse() != Child)
          return false;
        const Expr *Cond = If->getCond()->IgnoreParenImpCasts();
        bool TrueOnFailure;
        if (std::optional<SuccessTest> T = successTest(Cond)) {
          const auto *Ref = dyn_cast<DeclRefExpr>(T->Status);
          if (!Ref || Ref->getDecl() != D)
            return false;
          TrueOnFailure = !T->TrueOnSuccess;
        } else if (const auto *Ref = dyn_cast<DeclRefExpr>(Cond);
                   Ref && Ref->getDecl() == D &&
                   !Ref->getType()->isBooleanType()) {
          TrueOnFailure = true; // a non-zero status
        } else {
          return false;
        }
        return Then == TrueOnFailure;
      }
      if (!isa<CompoundStmt>(Parent))
        return false;
      Child = Parent;
    }
    return false;
  }

  FlowEngine &E;
  FunctionFlow &F;
  const CFG &Cfg;
  const Stmt *Body;
  std::unique_ptr<ParentMap> Parents; // of Body, made on first use
  const BranchFacts *Decided;
  llvm::DenseMap<const WhileStmt *, bool> EnteredLoops;
  std::vector<BranchInfo> Branches;
  /// Local flags that a branch tests alone (`if (capturing)`).
  llvm::SmallPtrSet<const VarDecl *, 4> Flags;
  std::vector<std::pair<const Stmt *, const RegionRoot *>> OpenReturns;
  /// Returns reached with the caller's capture open (entered capturing).
  std::vector<const Stmt *> EntryOpenReturns;
  std::vector<SourceLocation> EndLocs;
  std::optional<llvm::DenseSet<const Stmt *>> OnceStmts;
  /// The stream each end names (namedStream; null: not known).
  std::vector<const Decl *> EndStreams;
};

const FunctionFlow &FlowEngine::flow(const FunctionDecl *Def,
                                     bool EntryCapturing,
                                     const BranchFacts *Decided,
                                     llvm::StringRef DecidedKey,
                                     bool EntryPersists) {
  if (!Decided || Decided->empty())
    DecidedKey = "";
  EntryPersists &= EntryCapturing;
  auto Key = std::make_tuple(Def, unsigned(EntryCapturing) + EntryPersists,
                             DecidedKey.str());
  auto It = Flows.find(Key);
  if (It != Flows.end())
    return *It->second;
  auto F = std::make_unique<FunctionFlow>();
  FunctionFlow &Flow = *F;
  Flows[Key] = std::move(F);
  Flow.Function = Def;
  if (EntryCapturing)
    Flow.Entry.Roots.push_back(entryRoot());
  Flow.EntryPersists = EntryPersists;

  // Checked calls that always fail under capture cut paths too.
  bool NeedsCfg = hasEvents(Def) || hasCaptureTests(Def) ||
                  llvm::any_of(callsIn(Def), [&](const CallSite &Site) {
                    return Site.K == CallSite::Kind::Call &&
                           alwaysFails(Site.Callee);
                  });
  std::unique_ptr<CFG> Cfg = NeedsCfg ? buildCFG(Def, Ctx) : nullptr;
  if (Cfg) {
    Flow.Whole = false;
    Builder(*this, Flow, *Cfg, DecidedKey.empty() ? nullptr : Decided).run();
    // The CFG splits `int a = x, b = y;` into one DeclStmt a variable; the
    // statement of the source has the state of its first.
    for (auto [Synthetic, Source] : Cfg->synthetic_stmts())
      if (auto It = Flow.States.find(Synthetic); It != Flow.States.end()) {
        CaptureState State = It->second;
        Flow.States.try_emplace(Source, std::move(State));
      }
    return Flow;
  }
  // No events and no tests: every call runs in the entry state.
  Flow.Exit = Flow.Entry;
  if (!EntryCapturing)
    return Flow;
  for (const CallSite &Site : callsIn(Def)) {
    Flow.Sites.push_back({Site, Flow.Entry});
    if (const CallExpr *Call = Site.call();
        Call && Site.K == CallSite::Kind::Call)
      if (const ParmVarDecl *P = invokedParam(Call))
        Flow.ParamCalls.push_back(
            {P->getFunctionScopeIndex(), Site.Loc, Flow.Entry});
  }
  return Flow;
}

namespace {
/// The answers of capture-status tests the paths to a block carry.
struct ArmState {
  unsigned char Bits = 0;
  bool join(const ArmState &Other) {
    unsigned char Joined = Bits | Other.Bits;
    bool Changed = Joined != Bits;
    Bits = Joined;
    return Changed;
  }
};
} // namespace

const StatusArms *FlowEngine::statusArms(const FunctionDecl *Def) {
  if (auto It = ArmsCache.find(Def); It != ArmsCache.end())
    return It->second.get();
  std::unique_ptr<StatusArms> &Slot = ArmsCache[Def];
  if (!Def->hasBody() || !hasCaptureTests(Def))
    return nullptr;
  std::unique_ptr<CFG> Cfg = buildCFG(Def, Ctx);
  if (!Cfg)
    return nullptr;
  std::vector<CaptureTest> BlockTests(Cfg->getNumBlockIDs(),
                                      CaptureTest::Unknown);
  for (const CFGBlock *B : *Cfg)
    if (const Expr *Cond = effectiveCondition(*B))
      BlockTests[B->getBlockID()] = Tests.classify(Cond, Def->getBody());
  auto In = solveForward<ArmState>(
      *Cfg, ArmState{StatusArms::Untested},
      [](const CFGBlock &, const ArmState &S) { return S; },
      [&](const CFGBlock &From, const CFGBlock &To, unsigned Succ,
          const ArmState &Out) -> std::optional<ArmState> {
        CaptureTest T = BlockTests[From.getBlockID()];
        if (T == CaptureTest::Unknown || Succ > 1)
          return Out;
        const CFGBlock *Other =
            (From.succ_begin() + (1 - Succ))->getReachableBlock();
        if (Other == &To)
          return Out; // both edges lead here: nothing is learned
        bool Capturing = (T == CaptureTest::TrueWhenCapturing) == (Succ == 0);
        return ArmState{Capturing ? StatusArms::Capturing
                                  : StatusArms::NotCapturing};
      });
  Slot = std::make_unique<StatusArms>();
  for (const CFGBlock *B : *Cfg) {
    const std::optional<ArmState> &S = In[B->getBlockID()];
    if (!S)
      continue;
    for (const CFGElement &Elem : *B)
      if (auto CS = Elem.getAs<CFGStmt>())
        Slot->At.try_emplace(CS->getStmt(), S->Bits);
  }
  return Slot.get();
}

} // namespace clang::cudagraph
