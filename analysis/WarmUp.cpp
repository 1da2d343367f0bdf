//===--- WarmUp.cpp - cudagraph analysis ----------------------------------===//

#include "WarmUp.h"
#include "CaptureApis.h"
#include "FunctionFlow.h"
#include "HazardCatalog.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseSet.h"
#include <functional>

namespace clang::cudagraph {

/// How many method calls deep a condition's reads and an arm's resource
/// calls are followed.
static constexpr unsigned MaxMethodDepth = 3;

//===----------------------------------------------------------------------===//
// First-use branches
//===----------------------------------------------------------------------===//

/// State that outlives a call: fields, globals and static locals; not a
/// mutex (locking one is not a first use of anything).
static bool isPersistent(const Decl *D) {
  const auto *VD = dyn_cast_or_null<ValueDecl>(D);
  if (!VD || !(isa<FieldDecl>(VD) ||
               (isa<VarDecl>(VD) && cast<VarDecl>(VD)->hasGlobalStorage())))
    return false;
  const CXXRecordDecl *RD = VD->getType()->getAsCXXRecordDecl();
  return !RD || !RD->getIdentifier() || !RD->getName().contains("mutex");
}

/// A free function (or static method) of the project whose body is
/// followed for the state it reads and writes: `lookup_cache(key)`,
/// `store_cache(key, value)`, `registry()`.
static const FunctionDecl *followedFunction(const CallExpr *Call,
                                            bool SameObject = false) {
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD || isa<CXXOperatorCallExpr>(Call))
    return nullptr;
  // With \p SameObject, a method of the same object (`this->sync()`,
  // `sync()`): the fields it writes are the caller's.
  if (const auto *M = dyn_cast<CXXMethodDecl>(FD); M && !M->isStatic()) {
    const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
    const Expr *Obj = MC ? MC->getImplicitObjectArgument() : nullptr;
    if (!SameObject || !Obj || !isa<CXXThisExpr>(Obj->IgnoreParenImpCasts()))
      return nullptr;
  }
  const FunctionDecl *Def = definitionOf(FD);
  if (!Def || !Def->getBody() ||
      Def->getASTContext().getSourceManager().isInSystemHeader(
          Def->getLocation()))
    return nullptr;
  return Def;
}

/// The persistent state \p E denotes: a field, global or static local, a
/// local reference bound to one (`auto &cache = registry();`), or the call
/// of a function returning a reference to one (`registry()`).
static const Decl *persistentOf(const Expr *E, unsigned Depth) {
  if (!E)
    return nullptr;
  E = E->IgnoreParenImpCasts();
  if (const Decl *D = storageOf(E)) {
    if (isPersistent(D))
      return D;
    const auto *VD = dyn_cast<VarDecl>(D);
    if (VD && VD->getType()->isReferenceType() && VD->getInit() && Depth > 0)
      return persistentOf(VD->getInit(), Depth - 1);
    return nullptr;
  }
  const FunctionDecl *Def = followedFunction(dyn_cast<CallExpr>(E));
  if (!Def || Depth == 0 || !Def->getReturnType()->isReferenceType())
    return nullptr;
  const Decl *Found = nullptr;
  bool Agree = true;
  std::function<void(const Stmt *)> Returns = [&](const Stmt *S) {
    if (!S || isa<LambdaExpr>(S))
      return;
    if (const auto *R = dyn_cast<ReturnStmt>(S)) {
      const Decl *D = persistentOf(R->getRetValue(), Depth - 1);
      Agree &= D && (!Found || Found == D);
      Found = D;
    }
    for (const Stmt *Child : S->children())
      Returns(Child);
  };
  Returns(Def->getBody());
  return Agree ? Found : nullptr;
}

/// The variables and fields \p S reads, and the persistent state the free
/// functions it calls read (depth-limited).
static void collectReads(const Stmt *S, llvm::DenseSet<const Decl *> &Out,
                         unsigned Depth = MaxMethodDepth) {
  if (!S || isa<LambdaExpr>(S))
    return;
  if (isa<DeclRefExpr>(S) || isa<MemberExpr>(S))
    if (const Decl *D = storageOf(cast<Expr>(S)))
      Out.insert(D);
  if (const FunctionDecl *Def = followedFunction(dyn_cast<CallExpr>(S));
      Def && Depth > 0) {
    llvm::DenseSet<const Decl *> Inner;
    collectReads(Def->getBody(), Inner, Depth - 1);
    for (const Decl *D : Inner)
      if (isPersistent(D))
        Out.insert(D);
  }
  for (const Stmt *Child : S->children())
    collectReads(Child, Out, Depth);
}

static bool denotesAny(const Expr *E,
                       const llvm::DenseSet<const Decl *> &Decls) {
  // What a pointer designates stands for the pointer here: `*cap = n`
  // writes the state `cap` points at.
  if (const auto *UO = dyn_cast<UnaryOperator>(E->IgnoreParenImpCasts());
      UO && UO->getOpcode() == UO_Deref)
    E = UO->getSubExpr();
  const Decl *D = persistentOf(E, MaxMethodDepth);
  if (!D)
    D = storageOf(E);
  return D && Decls.contains(D);
}

/// Whether \p S writes one of \p Decls: assigns or increments it, or calls
/// a non-const method on it directly (insert, emplace, reset, ...; not a
/// method of an object it points to), here, in a free function it calls
/// (`store_cache(key, value)`) or in a method of the same object
/// (`upload()` clearing `host_is_ahead_`), depth-limited.
static bool writesAny(const Stmt *S, const llvm::DenseSet<const Decl *> &Decls,
                      unsigned Depth = MaxMethodDepth) {
  if (!S || isa<LambdaExpr>(S))
    return false;
  if (const FunctionDecl *Def =
          followedFunction(dyn_cast<CallExpr>(S), /*SameObject=*/true);
      Def && Depth > 0 && writesAny(Def->getBody(), Decls, Depth - 1))
    return true;
  if (const auto *BO = dyn_cast<BinaryOperator>(S);
      BO && BO->isAssignmentOp() && denotesAny(BO->getLHS(), Decls))
    return true;
  if (const auto *UO = dyn_cast<UnaryOperator>(S);
      UO && UO->isIncrementDecrementOp() && denotesAny(UO->getSubExpr(), Decls))
    return true;
  // An out-parameter: `create(&handle)`, or `init(handle)` by non-const
  // reference.
  if (const auto *UO = dyn_cast<UnaryOperator>(S);
      UO && UO->getOpcode() == UO_AddrOf &&
      !UO->getSubExpr()->getType().isConstQualified() &&
      denotesAny(UO->getSubExpr(), Decls))
    return true;
  if (const auto *Call = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *FD = calleeOf(Call);
        FD && !isa<CXXOperatorCallExpr>(Call))
      for (unsigned I = 0, N = std::min(FD->getNumParams(), Call->getNumArgs());
           I < N; ++I) {
        QualType T = FD->getParamDecl(I)->getType();
        if (T->isLValueReferenceType() &&
            !T.getNonReferenceType().isConstQualified() &&
            denotesAny(Call->getArg(I), Decls))
          return true;
      }
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S);
      Op && Op->isAssignmentOp() && Op->getNumArgs() > 0 &&
      denotesAny(Op->getArg(0), Decls))
    return true;
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S))
    if (const CXXMethodDecl *M = MC->getMethodDecl();
        M && !M->isConst() && MC->getImplicitObjectArgument() &&
        !MC->getImplicitObjectArgument()->getType()->isPointerType() &&
        denotesAny(MC->getImplicitObjectArgument(), Decls))
      return true;
  for (const Stmt *Child : S->children())
    if (writesAny(Child, Decls, Depth))
      return true;
  return false;
}

bool isOutlivingParam(const Decl *D, const FunctionDecl *FD,
                      uint64_t Outliving) {
  const auto *P = dyn_cast_or_null<ParmVarDecl>(D);
  if (!P || !Outliving || P->getDeclContext() != FD)
    return false;
  unsigned I = P->getFunctionScopeIndex();
  return I < 64 && (Outliving >> I & 1);
}

/// The fields, globals and static locals among the reads of \p If's
/// condition (with its init and condition variable), and the parameters of
/// \p FD that \p Outliving says designate such state.
static llvm::DenseSet<const Decl *>
persistentReads(const IfStmt *If, const FunctionDecl *FD, uint64_t Outliving) {
  llvm::DenseSet<const Decl *> Reads;
  collectReads(If->getCond(), Reads);
  if (const auto *DS = If->getConditionVariableDeclStmt())
    collectReads(DS, Reads);
  if (const Stmt *Init = If->getInit())
    collectReads(Init, Reads);
  // Only state that outlives the call makes a first use: globals, static
  // locals and fields. A parameter or local is fresh on every call.
  llvm::DenseSet<const Decl *> Persistent;
  for (const Decl *D : Reads)
    if (isPersistent(D) || isOutlivingParam(D, FD, Outliving))
      Persistent.insert(D);
  return Persistent;
}

/// Whether \p S itself empties one of \p Decls: `c.clear()`, `p.reset()`,
/// `p = nullptr`, `c = {}`.
static bool isReset(const Stmt *S, const llvm::DenseSet<const Decl *> &Decls) {
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S))
    if (const CXXMethodDecl *M = MC->getMethodDecl();
        M && M->getIdentifier() &&
        llvm::all_of(MC->arguments(),
                     [](const Expr *A) { return isa<CXXDefaultArgExpr>(A); }) &&
        (M->getName() == "clear" || M->getName() == "reset") &&
        MC->getImplicitObjectArgument() &&
        !MC->getImplicitObjectArgument()->getType()->isPointerType() &&
        denotesAny(MC->getImplicitObjectArgument(), Decls))
      return true;
  auto Empty = [](const Expr *E) {
    E = E->IgnoreParenImpCasts();
    if (const auto *Ctor = dyn_cast<CXXConstructExpr>(E);
        Ctor && Ctor->getNumArgs() == 1)
      E = Ctor->getArg(0)->IgnoreParenImpCasts();
    if (const auto *IL = dyn_cast<InitListExpr>(E))
      return IL->getNumInits() == 0;
    return isa<CXXNullPtrLiteralExpr>(E) || isa<GNUNullExpr>(E);
  };
  if (const auto *BO = dyn_cast<BinaryOperator>(S);
      BO && BO->getOpcode() == BO_Assign && Empty(BO->getRHS()) &&
      denotesAny(BO->getLHS(), Decls))
    return true;
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S);
      Op && Op->getOperator() == OO_Equal && Op->getNumArgs() == 2 &&
      Empty(Op->getArg(1)) && denotesAny(Op->getArg(0), Decls))
    return true;
  return false;
}

/// The statements from \p S down to \p Target (both included), or false
/// when \p Target is not inside \p S (lambdas are not entered).
static bool pathTo(const Stmt *S, const Stmt *Target,
                   llvm::SmallVectorImpl<const Stmt *> &Path) {
  if (!S || isa<LambdaExpr>(S))
    return false;
  Path.push_back(S);
  if (S == Target)
    return true;
  for (const Stmt *Child : S->children())
    if (pathTo(Child, Target, Path))
      return true;
  Path.pop_back();
  return false;
}

/// Whether every way from the start of \p Body to \p Later passes \p Earlier
/// first, as far as the structure shows: whatever branch or loop holds
/// \p Earlier also holds \p Later, or is an `if` on the same
/// side-effect-free condition taken the same way (`if (k == 0) { clear(); }
/// ... if (k == 0) { refill(); }`).
static bool passesFirst(const Stmt *Body, const Stmt *Earlier,
                        const Stmt *Later, const ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  if (!SM.isBeforeInTranslationUnit(Earlier->getEndLoc(), Later->getBeginLoc()))
    return false;
  llvm::SmallVector<const Stmt *, 16> To, From;
  if (!pathTo(Body, Earlier, From) || !pathTo(Body, Later, To))
    return false;
  auto Facts = [&](const IfStmt *If, bool Then) {
    llvm::SmallVector<GuardFact, 4> Out;
    if (!If->getInit() && !If->getConditionVariable())
      guardFacts(If->getCond(), Then, Ctx, Out, nullptr);
    return Out;
  };
  auto SameFacts = [](llvm::ArrayRef<GuardFact> A, llvm::ArrayRef<GuardFact> B) {
    if (A.empty() || A.size() != B.size())
      return false;
    for (size_t I = 0; I < A.size(); ++I)
      if (A[I].Atom != B[I].Atom || A[I].Value != B[I].Value)
        return false;
    return true;
  };
  for (size_t I = 0; I + 1 < From.size(); ++I) {
    const Stmt *Node = From[I], *Child = From[I + 1];
    const auto *It = llvm::find(To, Node);
    bool Shared = It != To.end();
    if (Shared && It + 1 != To.end() && *(It + 1) == Child)
      continue; // the same arm, the same loop body
    // Whether Child runs every time Node does.
    bool Always = true;
    const auto *If = dyn_cast<IfStmt>(Node);
    if (If)
      Always = Child != If->getThen() && Child != If->getElse();
    else if (const auto *For = dyn_cast<ForStmt>(Node))
      Always = Child == For->getInit() || Child == For->getCond();
    else if (isa<WhileStmt>(Node) || isa<CXXForRangeStmt>(Node) ||
             isa<SwitchStmt>(Node) || isa<CXXCatchStmt>(Node))
      Always = false;
    else if (const auto *Try = dyn_cast<CXXTryStmt>(Node))
      Always = Child == Try->getTryBlock();
    else if (const auto *CO = dyn_cast<ConditionalOperator>(Node))
      Always = Child == CO->getCond();
    else if (const auto *BO = dyn_cast<BinaryOperator>(Node);
             BO && BO->isLogicalOp())
      Always = Child == BO->getLHS();
    if (Always)
      continue;
    // An arm not shared with Later: Later must sit in an arm of an `if` on
    // the same condition, taken the same way.
    if (!If || Shared)
      return false;
    auto Mine = Facts(If, Child == If->getThen());
    bool Matched = false;
    for (size_t J = 0; J + 1 < To.size() && !Matched; ++J)
      if (const auto *Other = dyn_cast<IfStmt>(To[J]);
          Other && Other != If &&
          (To[J + 1] == Other->getThen() || To[J + 1] == Other->getElse()))
        Matched = SameFacts(Mine, Facts(Other, To[J + 1] == Other->getThen()));
    if (!Matched)
      return false;
  }
  return true;
}

/// Whether, in \p FD, a statement that every way to \p If passes first
/// empties what \p If's condition reads: the warm-up's first use is undone
/// on every call (`cache_.clear(); ... if (!cache_[i]) cache_[i] = make();`).
static bool emptiedBefore(const FunctionDecl *FD, const IfStmt *If,
                          const llvm::DenseSet<const Decl *> &Reads) {
  // A reset inside the test itself comes after its start: passesFirst
  // leaves it out.
  bool Found = false;
  forEachStmt(FD->getBody(), [&](const Stmt *S) {
    Found = Found || (isReset(S, Reads) &&
                      passesFirst(FD->getBody(), S, If, FD->getASTContext()));
  });
  return Found;
}

//===----------------------------------------------------------------------===//
// Cache misses
//===----------------------------------------------------------------------===//

namespace {
/// The object state a condition depends on: its own fields (through
/// `this`) and globals, read directly, through locals of the function
/// (their initializers and assignments, range-for bindings included) and
/// through methods of the same object.
class StateReads {
public:
  explicit StateReads(llvm::DenseSet<const Decl *> &Out) : Out(Out) {}

  void collect(const Stmt *S, const FunctionDecl *FD, unsigned Depth) {
    if (!S || isa<LambdaExpr>(S))
      return;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      const ValueDecl *D = DRE->getDecl();
      if (const auto *B = dyn_cast<BindingDecl>(D))
        D = B->getDecomposedDecl();
      if (const auto *VD = dyn_cast_or_null<VarDecl>(D)) {
        if (VD->hasGlobalStorage())
          Out.insert(VD->getCanonicalDecl());
        else if (!isa<ParmVarDecl>(VD))
          local(VD, FD, Depth);
      }
    }
    if (const auto *ME = dyn_cast<MemberExpr>(S);
        ME && isa<FieldDecl>(ME->getMemberDecl()) &&
        isa<CXXThisExpr>(ME->getBase()->IgnoreParenImpCasts()))
      Out.insert(ME->getMemberDecl()->getCanonicalDecl());
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S); MC && Depth > 0) {
      const Expr *Obj = MC->getImplicitObjectArgument();
      if (Obj && isa<CXXThisExpr>(Obj->IgnoreParenImpCasts()))
        if (const FunctionDecl *Def = definitionOf(MC->getMethodDecl());
            Def && Visited.insert(Def).second)
          collect(Def->getBody(), Def, Depth - 1);
    }
    for (const Stmt *Child : S->children())
      collect(Child, FD, Depth);
  }

private:
  /// Follows a local to what is stored in it within \p FD.
  void local(const VarDecl *VD, const FunctionDecl *FD, unsigned Depth) {
    if (!Visited.insert(VD).second || !FD || !FD->getBody())
      return;
    if (VD->getInit())
      collect(VD->getInit(), FD, Depth);
    forEachStore(FD->getBody(), VD, [&](const Expr *Value) {
      collect(Value, FD, Depth);
    });
  }

  template <typename Fn>
  static void forEachStore(const Stmt *S, const VarDecl *VD, Fn &&Each) {
    if (!S || isa<LambdaExpr>(S))
      return;
    if (const auto *BO = dyn_cast<BinaryOperator>(S);
        BO && BO->isAssignmentOp())
      if (const auto *DRE =
              dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts());
          DRE && DRE->getDecl() == VD)
        Each(BO->getRHS());
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S);
        Op && Op->isAssignmentOp() && Op->getNumArgs() == 2)
      if (const auto *DRE =
              dyn_cast<DeclRefExpr>(Op->getArg(0)->IgnoreParenImpCasts());
          DRE && DRE->getDecl() == VD)
        Each(Op->getArg(1));
    for (const Stmt *Child : S->children())
      forEachStore(Child, VD, Each);
  }

  llvm::DenseSet<const Decl *> &Out;
  llvm::DenseSet<const Decl *> Visited;
};
} // namespace

/// Whether \p D holds a container of the object's state: a class with
/// begin, end and size (a map, vector, list, set), not a string.
static bool isContainerState(const Decl *D) {
  const auto *VD = dyn_cast<ValueDecl>(D);
  if (!VD)
    return false;
  QualType T = VD->getType().getNonReferenceType();
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  if (!RD || !RD->hasDefinition())
    return false;
  RD = RD->getDefinition();
  StringRef Name = RD->getName();
  if (Name == "basic_string" || Name == "basic_string_view")
    return false;
  ASTContext &Ctx = D->getASTContext();
  auto Has = [&](StringRef Member) {
    return !RD->lookup(DeclarationName(&Ctx.Idents.get(Member))).empty();
  };
  return Has("begin") && Has("end") && Has("size");
}

static bool dependsOnContainerState(const IfStmt *If, const FunctionDecl *FD) {
  llvm::DenseSet<const Decl *> State;
  StateReads Reads(State);
  Reads.collect(If->getCond(), FD, MaxMethodDepth);
  Reads.collect(If->getConditionVariableDeclStmt(), FD, MaxMethodDepth);
  Reads.collect(If->getInit(), FD, MaxMethodDepth);
  return llvm::any_of(State, isContainerState);
}

static const Hazard *cachedResourceOf(StringRef Name) {
  for (const Hazard &H : allHazards())
    if (H.CachedResource && H.Names.matches(Name))
      return &H;
  return nullptr;
}

bool WarmUpModel::functionAcquires(const FunctionDecl *FD, unsigned Depth) {
  auto It = AcquiresCache.find(FD);
  if (It != AcquiresCache.end())
    return It->second;
  AcquiresCache[FD] = false; // recursion
  const auto *M = dyn_cast<CXXMethodDecl>(FD);
  bool Result = acquiresResource(FD->getBody(), M ? M->getParent() : nullptr,
                                 Depth);
  return AcquiresCache[FD] = Result;
}

bool WarmUpModel::acquiresResource(const Stmt *S, const CXXRecordDecl *Class,
                                   unsigned Depth, bool Shallow) {
  if (!S || isa<LambdaExpr>(S))
    return false;
  if (const auto *Call = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *Callee = calleeOf(Call)) {
      if (cachedResourceOf(Code.nameOf(Callee)))
        return true;
      // A helper of the same object: `allocate_new_block(n)`, `trim()`.
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
          MC && Class && Depth > 0 &&
          MC->getMethodDecl()->getParent()->getCanonicalDecl() ==
              Class->getCanonicalDecl())
        if (const FunctionDecl *Def = definitionOf(Callee);
            Def && functionAcquires(Def, Depth - 1))
          return true;
    }
  if (Shallow)
    return false;
  for (const Stmt *Child : S->children())
    if (acquiresResource(Child, Class, Depth))
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// The walk
//===----------------------------------------------------------------------===//

/// Whether \p S can leave the enclosing block early: a return or throw on
/// some path (not inside a lambda).
static bool mayExit(const Stmt *S) {
  if (!S || isa<LambdaExpr>(S))
    return false;
  if (isa<ReturnStmt>(S) || isa<CXXThrowExpr>(S))
    return true;
  return llvm::any_of(S->children(), mayExit);
}

void WarmUpModel::coldArms(const FunctionDecl *FD,
                           llvm::SmallVectorImpl<const Stmt *> &Arms,
                           uint64_t OutlivingParams) {
  const auto *M = dyn_cast<CXXMethodDecl>(FD);
  const CXXRecordDecl *Class = M ? M->getParent() : nullptr;
  // Arms found cold so far: a way that acquires only in a nested miss does
  // not acquire on the hit.
  llvm::DenseSet<const Stmt *> Cold;
  std::function<bool(const Stmt *)> Acquires = [&](const Stmt *S) {
    if (!S || Cold.contains(S) || isa<LambdaExpr>(S))
      return false;
    if (isa<CallExpr>(S) && acquiresResource(S, Class, MaxMethodDepth,
                                             /*Shallow=*/true))
      return true;
    return llvm::any_of(S->children(), Acquires);
  };
  auto AnyAcquires = [&](llvm::ArrayRef<const Stmt *> Way) {
    return llvm::any_of(Way, Acquires);
  };
  auto MarkCold = [&](llvm::ArrayRef<const Stmt *> Way) {
    for (const Stmt *S : Way) {
      Arms.push_back(S);
      Cold.insert(S);
    }
  };
  // One way of a branch on cached state acquires, the other does not: the
  // acquiring way is the miss.
  auto Miss = [&](const IfStmt *If, llvm::ArrayRef<const Stmt *> Then,
                  llvm::ArrayRef<const Stmt *> Other) {
    bool ThenAcquires = AnyAcquires(Then), OtherAcquires = AnyAcquires(Other);
    if (ThenAcquires == OtherAcquires || !dependsOnContainerState(If, FD))
      return;
    MarkCold(ThenAcquires ? Then : Other);
  };

  // Inner branches first, so an outer one sees which of its ways still
  // acquire.
  std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
    if (!S || isa<LambdaExpr>(S))
      return;
    for (const Stmt *Child : S->children())
      Walk(Child);
    if (const auto *If = dyn_cast<IfStmt>(S)) {
      llvm::DenseSet<const Decl *> Reads = persistentReads(If, FD, OutlivingParams);
      bool FirstUse = false;
      // What the condition reads is emptied on the way to it on every
      // call: the warm-up's fill does not last, and its arms run again.
      bool Emptied = !Reads.empty() && emptiedBefore(FD, If, Reads);
      for (const Stmt *Arm : {If->getThen(), If->getElse()})
        if (Arm && !Emptied && !Reads.empty() && writesAny(Arm, Reads)) {
          MarkCold({Arm});
          FirstUse = true;
        }
      if (!FirstUse && !Emptied) {
        llvm::SmallVector<const Stmt *, 1> Else;
        if (If->getElse())
          Else.push_back(If->getElse());
        Miss(If, {If->getThen()}, Else);
      }
    }
    // `if (found) { ...; return hit; }` then the miss path: the statements
    // after a lookup whose hit returns.
    if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
      llvm::ArrayRef<Stmt *> Body(CS->body_begin(), CS->body_end());
      for (size_t I = 0; I + 1 < Body.size(); ++I)
        if (const auto *If = dyn_cast<IfStmt>(Body[I]);
            If && !If->getElse() && mayExit(If->getThen())) {
          llvm::SmallVector<const Stmt *, 4> Rest(Body.begin() + I + 1,
                                                  Body.end());
          // A memo: `if (auto hit = lookup(key)) return *hit; ...;
          // store(key, value);` fills on the way after what the hit reads.
          llvm::DenseSet<const Decl *> Reads = persistentReads(If, FD, OutlivingParams);
          if (!Reads.empty() && llvm::any_of(Rest, [&](const Stmt *R) {
                return writesAny(R, Reads);
              })) {
            MarkCold(Rest);
            continue;
          }
          Miss(If, {If->getThen()}, Rest);
        }
    }
  };
  Walk(FD->getBody());
}

} // namespace clang::cudagraph
