//===--- GraphUpdates.cpp - cudagraph analysis ----------------------------===//

#include "GraphUpdates.h"
#include "FunctionFlow.h"
#include "HazardCatalog.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/CFG.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include <memory>
#include <set>
#include <tuple>

namespace clang::cudagraph {

static llvm::StringRef calleeName(const CallExpr *Call) {
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD || !FD->getIdentifier())
    return "";
  return stripCudaApiSuffix(FD->getName());
}

bool GraphUpdateFacts::isUpdate(const CallExpr *Call) {
  llvm::StringRef Name = calleeName(Call);
  return Name == "cudaGraphExecUpdate" || Name == "cuGraphExecUpdate";
}


/// Whether the value of \p E (a call) is used: tested, stored, passed or
/// returned, rather than dropped as a statement or cast to void.
static bool valueUsed(const Expr *E, const ParentMap &PM) {
  const Stmt *Child = E;
  const Stmt *P = PM.getParent(E);
  while (P && (isa<ParenExpr>(P) || isa<ImplicitCastExpr>(P) ||
               isa<ExprWithCleanups>(P) || isa<CXXBindTemporaryExpr>(P) ||
               isa<MaterializeTemporaryExpr>(P))) {
    Child = P;
    P = PM.getParent(P);
  }
  if (!P)
    return false;
  if (const auto *Cast = dyn_cast<ExplicitCastExpr>(P))
    return !Cast->getType()->isVoidType();
  if (const auto *BO = dyn_cast<BinaryOperator>(P);
      BO && BO->getOpcode() == BO_Comma && BO->getLHS() == Child)
    return false;
  // `cudaError_t unused = cudaGetLastError();` with the variable never
  // read (libtorch's checks clear the error this way).
  if (const auto *DS = dyn_cast<DeclStmt>(P))
    return llvm::any_of(DS->decls(), [](const Decl *D) {
      const auto *VD = dyn_cast<VarDecl>(D);
      return VD && VD->isReferenced() && !VD->hasAttr<UnusedAttr>();
    });
  if (isa<Expr>(P) || isa<ReturnStmt>(P))
    return true;
  if (const auto *If = dyn_cast<IfStmt>(P))
    return If->getCond() == Child;
  if (const auto *W = dyn_cast<WhileStmt>(P))
    return W->getCond() == Child;
  if (const auto *D = dyn_cast<DoStmt>(P))
    return D->getCond() == Child;
  if (const auto *F = dyn_cast<ForStmt>(P))
    return F->getCond() == Child;
  if (const auto *Sw = dyn_cast<SwitchStmt>(P))
    return Sw->getCond() == Child;
  return false;
}

static bool isUpdateFailureConstant(const Expr *E) {
  const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  if (!DRE || !isa<EnumConstantDecl>(DRE->getDecl()))
    return false;
  llvm::StringRef Name = DRE->getDecl()->getName();
  return Name.contains("GraphExecUpdateFailure") ||
         Name.contains("GRAPH_EXEC_UPDATE_FAILURE");
}

/// Whether a `cudaGetLastError()` takes the error away rather than reporting
/// it: its value is dropped, or compared with the update failure
/// (`e != cudaSuccess && e != cudaErrorGraphExecUpdateFailure`: a check that
/// knows a failed update and lets it pass), directly or through the local
/// the value is stored in.
static bool clearsLastError(const CallExpr *Read, const ParentMap &PM) {
  if (!valueUsed(Read, PM))
    return true;
  const Stmt *Child = Read;
  const Stmt *P = PM.getParent(Read);
  while (P && (isa<ParenExpr>(P) || isa<ImplicitCastExpr>(P))) {
    Child = P;
    P = PM.getParent(P);
  }
  auto ComparedWith = [](const BinaryOperator *BO, auto IsValue) {
    return BO->isEqualityOp() &&
           ((IsValue(BO->getLHS()) && isUpdateFailureConstant(BO->getRHS())) ||
            (IsValue(BO->getRHS()) && isUpdateFailureConstant(BO->getLHS())));
  };
  if (const auto *BO = dyn_cast_or_null<BinaryOperator>(P))
    if (ComparedWith(BO, [&](const Expr *E) {
          return E->IgnoreParenImpCasts() == Read;
        }))
      return true;
  const VarDecl *Holder = nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(P))
    if (DS->isSingleDecl())
      Holder = dyn_cast<VarDecl>(DS->getSingleDecl());
  if (const auto *BO = dyn_cast_or_null<BinaryOperator>(P);
      BO && BO->getOpcode() == BO_Assign && BO->getRHS() == Child)
    if (const auto *L = dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
      Holder = dyn_cast<VarDecl>(L->getDecl());
  if (!Holder)
    return false;
  // The statements that follow, in the enclosing block.
  const Stmt *Scope = P;
  while (Scope && !isa<CompoundStmt>(Scope))
    Scope = PM.getParent(Scope);
  bool Tolerates = false;
  forEachStmt(Scope, [&](const Stmt *S) {
    if (const auto *BO = dyn_cast<BinaryOperator>(S))
      Tolerates |= ComparedWith(BO, [&](const Expr *E) {
        const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
        return DRE && DRE->getDecl() == Holder;
      });
  });
  return Tolerates;
}

/// Whether \p A and \p B are the same condition made only of variables,
/// fields, constants and operators (no calls, no assignments): two tests of
/// it on one path without a write in between go the same way.
static bool sameCondition(const Expr *A, const Expr *B) {
  A = A->IgnoreParenImpCasts();
  B = B->IgnoreParenImpCasts();
  if (A->getStmtClass() != B->getStmtClass())
    return false;
  if (const auto *DA = dyn_cast<DeclRefExpr>(A))
    return DA->getDecl() == cast<DeclRefExpr>(B)->getDecl();
  if (const auto *MA = dyn_cast<MemberExpr>(A)) {
    const auto *MB = cast<MemberExpr>(B);
    return MA->getMemberDecl() == MB->getMemberDecl() &&
           MA->isArrow() == MB->isArrow() &&
           sameCondition(MA->getBase(), MB->getBase());
  }
  if (isa<CXXThisExpr>(A))
    return true;
  if (const auto *IA = dyn_cast<IntegerLiteral>(A))
    return IA->getValue() == cast<IntegerLiteral>(B)->getValue();
  if (const auto *BA = dyn_cast<CXXBoolLiteralExpr>(A))
    return BA->getValue() == cast<CXXBoolLiteralExpr>(B)->getValue();
  if (const auto *UA = dyn_cast<UnaryOperator>(A)) {
    const auto *UB = cast<UnaryOperator>(B);
    return UA->getOpcode() == UB->getOpcode() && !UA->isIncrementDecrementOp() &&
           UA->getOpcode() != UO_Deref &&
           sameCondition(UA->getSubExpr(), UB->getSubExpr());
  }
  if (const auto *BA = dyn_cast<BinaryOperator>(A)) {
    const auto *BB = cast<BinaryOperator>(B);
    return BA->getOpcode() == BB->getOpcode() && !BA->isAssignmentOp() &&
           BA->getOpcode() != BO_Comma &&
           sameCondition(BA->getLHS(), BB->getLHS()) &&
           sameCondition(BA->getRHS(), BB->getRHS());
  }
  return false;
}

/// The variables and fields a condition reads.
static void conditionDecls(const Expr *E,
                           llvm::SmallPtrSetImpl<const ValueDecl *> &Out) {
  forEachStmt(E, [&](const Stmt *S) {
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      Out.insert(DRE->getDecl());
    else if (const auto *ME = dyn_cast<MemberExpr>(S))
      Out.insert(ME->getMemberDecl());
  });
}

/// The values that carry one update's outcome.
struct GraphUpdateFacts::Tracked {
  const CallExpr *Update = nullptr;
  llvm::SmallPtrSet<const VarDecl *, 4> Status; // locals holding its status
  llvm::SmallPtrSet<const VarDecl *, 4> Result; // its result out-parameters
  /// Boolean locals initialized from a test of the update
  /// (`bool ok = update(...) == cudaSuccess;`), with that test.
  llvm::DenseMap<const VarDecl *, const Expr *> Derived;
};

namespace {

enum class Truth { False, True, Unknown };

using Tracked = GraphUpdateFacts::Tracked;

/// One walk over a function's CFG along the paths where an update failed.
class FailureWalk {
public:
  enum class Mode {
    Update, // after the update: reads, clears, tests
    Checker // a checking function given a failed status: does it return?
  };
  FailureWalk(const CFG &Cfg, const ParentMap &PM,
              const Tracked &T, Mode M,
              llvm::function_ref<bool(const CallExpr *)> Leaves,
              llvm::function_ref<std::pair<bool, const CallExpr *>(
                  const CallExpr *)>
                  CalleeUse)
      : Cfg(Cfg), PM(PM), T(T), M(M), Leaves(Leaves), CalleeUse(CalleeUse) {
    // Conditions tested more than once (`if (cfg.graphs) {...} ...
    // if (cfg.graphs) {...}`), one bit each in a path's state.
    llvm::SmallVector<const Expr *, 8> Seen;
    llvm::SmallVector<llvm::SmallVector<const CFGBlock *, 2>, 8> Pending;
    for (const CFGBlock *B : Cfg) {
      const Expr *Cond = B ? effectiveCondition(*B) : nullptr;
      if (!Cond || !sameCondition(Cond, Cond))
        continue;
      auto It = llvm::find_if(
          Seen, [&](const Expr *E) { return sameCondition(E, Cond); });
      if (It == Seen.end()) {
        Seen.push_back(Cond);
        Pending.push_back({B});
        continue;
      }
      Pending[It - Seen.begin()].push_back(B);
    }
    // Whole conditions of two `if` statements joined by `||` or `&&`
    // (`if ((a && b) || c)` twice): known to hold, the second `if` goes to
    // its then-branch whichever operand decides it.
    llvm::SmallVector<const IfStmt *, 8> Ifs;
    llvm::DenseMap<const IfStmt *, const CFGBlock *> TermOf;
    for (const CFGBlock *B : Cfg)
      if (const auto *If = dyn_cast_or_null<IfStmt>(B ? B->getTerminatorStmt()
                                                       : nullptr);
          If && B->succ_size() == 2 && !If->getConditionVariable()) {
        const auto *Logic = dyn_cast<BinaryOperator>(
            If->getCond()->IgnoreParenImpCasts());
        if (Logic && Logic->isLogicalOp() &&
            sameCondition(If->getCond(), If->getCond())) {
          Ifs.push_back(If);
          TermOf[If] = B;
        }
      }
    for (unsigned I = 0; I < Ifs.size(); ++I) {
      if (Repeated.size() == 64)
        break;
      llvm::SmallVector<const IfStmt *, 2> Group;
      for (unsigned J = 0; J < Ifs.size(); ++J)
        if (sameCondition(Ifs[I]->getCond(), Ifs[J]->getCond()))
          Group.push_back(Ifs[J]);
      if (Group.size() < 2 || Group.front() != Ifs[I])
        continue;
      unsigned C = Repeated.size();
      for (const IfStmt *If : Group)
        for (const CFGBlock *B : Cfg)
          if (B && (B == TermOf[If] ||
                    (B->getTerminatorStmt() &&
                     insideCondition(B->getTerminatorStmt(), If))))
            WholeOf[B] = {C, TermOf[If]};
      Reps.push_back(Ifs[I]->getCond());
      Whole.push_back(true);
      Repeated.emplace_back();
      conditionDecls(Ifs[I]->getCond(), Repeated.back());
    }
    for (unsigned I = 0; I < Seen.size(); ++I) {
      if (Pending[I].size() < 2 || Repeated.size() == 64)
        continue;
      for (const CFGBlock *B : Pending[I])
        ClassOf[B] = Repeated.size();
      Reps.push_back(Seen[I]);
      Whole.push_back(false);
      Repeated.emplace_back();
      conditionDecls(Seen[I], Repeated.back());
    }
  }

  /// What the walk found.
  /// Blocks whose branch the walk reached (all their statements passed).
  llvm::DenseSet<const CFGBlock *> Through;
  llvm::SmallVector<std::pair<const CallExpr *, const CallExpr *>, 2> Reads;
  bool ReachedExitTested = false; // returned with the error set, handled
  bool ReachedExit = false;
  bool Cleared = false; // some path cleared the error

  void run(const CFGBlock *Start, unsigned FirstElem) {
    Item First{Start, FirstElem, true, false, 0, 0};
    if (T.Update)
      enclosingTests(First);
    Work.push_back(First);
    while (!Work.empty()) {
      Item I = Work.pop_back_val();
      // Paths told apart by what they know of repeated conditions: past a
      // budget, new paths forget it (the walk without correlation).
      if (Seen.size() > 20000)
        I.KnownMask = I.KnownValue = 0;
      if (I.First == 0 && !Seen.insert({I.Block->getBlockID(), I.Tracking,
                                        I.Tested, I.KnownMask, I.KnownValue})
                               .second)
        continue;
      step(I);
    }
  }

  /// What \p Cond says when the update failed.
  Truth evaluate(const Expr *Cond, bool Tracking, unsigned Depth = 0) const {
    Cond = Cond->IgnoreParenImpCasts();
    bool Negated = false;
    while (const auto *UO = dyn_cast<UnaryOperator>(Cond)) {
      if (UO->getOpcode() != UO_LNot)
        return Truth::Unknown;
      Negated = !Negated;
      Cond = UO->getSubExpr()->IgnoreParenImpCasts();
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Cond); DRE && Depth < 2)
      if (auto It = T.Derived.find(dyn_cast<VarDecl>(DRE->getDecl()));
          It != T.Derived.end()) {
        Truth Inner = evaluate(It->second, Tracking, Depth + 1);
        if (Inner == Truth::Unknown || !Negated)
          return Inner;
        return Inner == Truth::True ? Truth::False : Truth::True;
      }
    std::optional<bool> Value;
    const Expr *L = nullptr, *R = nullptr;
    bool Equal = false;
    if (std::optional<EqualityTest> Test = equalityTest(Cond)) {
      L = Test->L;
      R = Test->R;
      Equal = Test->Equal;
    }
    if (L && R) {
      if (carries(R, Tracking))
        std::swap(L, R);
      if (!carries(L, Tracking))
        return Truth::Unknown;
      if (isSuccessConstant(R))
        Value = !Equal; // failed: not success
      else if (isUpdateFailureConstant(R) && !carriesResult(L))
        Value = Equal; // failed: exactly the update failure
      else
        return Truth::Unknown;
    } else if (carries(Cond, Tracking)) {
      Value = true; // a failed status (or result) is not zero
    } else {
      return Truth::Unknown;
    }
    return *Value != Negated ? Truth::True : Truth::False;
  }

  /// Whether \p E is the update, a status local or a result.
  bool carries(const Expr *E, bool Tracking) const {
    E = E->IgnoreParenImpCasts();
    if (E == T.Update)
      return true;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
        return (Tracking && T.Status.count(VD)) || T.Result.count(VD);
    return carriesResult(E);
  }
  /// `info.result` of a result out-parameter.
  bool carriesResult(const Expr *E) const {
    E = E->IgnoreParenImpCasts();
    if (const auto *ME = dyn_cast<MemberExpr>(E))
      E = ME->getBase()->IgnoreParenImpCasts();
    const auto *DRE = dyn_cast<DeclRefExpr>(E);
    const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    return VD && T.Result.count(VD);
  }
  /// Whether \p S mentions the update's outcome.
  bool mentions(const Stmt *S, bool Tracking) const {
    bool Found = false;
    forEachStmt(S, [&](const Stmt *Sub) {
      if (const auto *E = dyn_cast<Expr>(Sub))
        Found |= carries(E, Tracking);
    });
    return Found;
  }

private:
  struct Item {
    const CFGBlock *Block;
    unsigned First;
    bool Tracking; // the status locals still hold the update's status
    bool Tested;   // the path took a way a test of the update decided
    // The repeated conditions the path has tested, and their values.
    uint64_t KnownMask;
    uint64_t KnownValue;
  };

  /// The repeated conditions the `if` statements around the update decide:
  /// each operand of `a && b` holds inside the then-branch, each of
  /// `a || b` fails inside the else-branch.
  void enclosingTests(Item &I) const {
    const Stmt *Child = T.Update;
    for (const Stmt *P = PM.getParent(Child); P;
         Child = P, P = PM.getParent(P)) {
      const auto *If = dyn_cast<IfStmt>(P);
      if (!If || Child == If->getCond() || If->getInit() == Child)
        continue;
      bool Then = Child == If->getThen();
      for (unsigned C = 0; C < Reps.size(); ++C)
        if (Whole[C] && Then && sameCondition(Reps[C], If->getCond())) {
          I.KnownMask |= uint64_t(1) << C;
          I.KnownValue |= uint64_t(1) << C;
        }
      llvm::SmallVector<const Expr *, 4> Leaves{If->getCond()};
      while (!Leaves.empty()) {
        const Expr *E = Leaves.pop_back_val()->IgnoreParenImpCasts();
        if (const auto *BO = dyn_cast<BinaryOperator>(E);
            BO && BO->getOpcode() == (Then ? BO_LAnd : BO_LOr)) {
          Leaves.push_back(BO->getLHS());
          Leaves.push_back(BO->getRHS());
          continue;
        }
        for (unsigned C = 0; C < Reps.size(); ++C)
          if (!Whole[C] && sameCondition(Reps[C], E)) {
            I.KnownMask |= uint64_t(1) << C;
            I.KnownValue = Then ? (I.KnownValue | uint64_t(1) << C)
                                : (I.KnownValue & ~(uint64_t(1) << C));
          }
      }
    }
  }

  /// Whether \p S is part of the condition of \p If.
  bool insideCondition(const Stmt *S, const IfStmt *If) const {
    for (const Stmt *P = S; P; P = PM.getParent(P))
      if (P == If->getCond())
        return true;
    return false;
  }

  /// A write to what a repeated condition reads forgets its value.
  void forgetWritten(const Stmt *S, Item &I) const {
    const Expr *Target = assignedBy(S);
    if (!Target || !I.KnownMask)
      return;
    llvm::SmallPtrSet<const ValueDecl *, 4> Written;
    conditionDecls(Target, Written);
    for (unsigned C = 0; C < Repeated.size(); ++C)
      if (llvm::any_of(Written, [&](const ValueDecl *D) {
            return Repeated[C].count(D);
          }))
        I.KnownMask &= ~(uint64_t(1) << C);
  }

  void step(Item I) {
    const CFGBlock *B = I.Block;
    unsigned Index = 0;
    for (const CFGElement &Elem : *B) {
      if (Index++ < I.First)
        continue;
      auto CS = Elem.getAs<CFGStmt>();
      if (!CS)
        continue;
      const Stmt *S = CS->getStmt();
      forgetWritten(S, I);
      if (const auto *Ret = dyn_cast<ReturnStmt>(S);
          Ret && Ret->getRetValue() && mentions(Ret->getRetValue(), I.Tracking))
        return; // the status goes back to the caller, who handles it
      if (const auto *BO = dyn_cast<BinaryOperator>(S);
          BO && BO->getOpcode() == BO_Assign)
        if (const auto *L =
                dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
          if (const auto *VD = dyn_cast<VarDecl>(L->getDecl());
              VD && T.Status.count(VD) &&
              BO->getRHS()->IgnoreParenImpCasts() != T.Update)
            I.Tracking = false;
      const auto *Call = dyn_cast<CallExpr>(S);
      if (!Call || Call == T.Update)
        continue;
      if (passesOutcome(Call, I.Tracking) && Leaves(Call))
        return; // a checking function that ends the program on failure
      if (M == Mode::Checker)
        continue;
      llvm::StringRef Name = calleeName(Call);
      if (Name == "cudaGetLastError") {
        if (clearsLastError(Call, PM))
          Cleared = true;
        else
          Reads.push_back({Call, nullptr});
        return;
      }
      if (Name == "cudaPeekAtLastError" && valueUsed(Call, PM)) {
        Reads.push_back({Call, nullptr});
        return;
      }
      auto [Clears, Read] = CalleeUse(Call);
      if (Read) {
        Reads.push_back({Read, Call});
        return;
      }
      if (Clears) {
        Cleared = true;
        return;
      }
    }
    if (abandonsFunction(*B))
      return;
    Through.insert(B);
    if (B == &Cfg.getExit()) {
      ReachedExit = true;
      ReachedExitTested |= I.Tested;
      return;
    }
    // The second test of a whole condition known to hold: straight to its
    // then-branch.
    if (auto W = WholeOf.find(B); W != WholeOf.end() &&
                                  (I.KnownMask & (uint64_t(1) << W->second.first)) &&
                                  (I.KnownValue & (uint64_t(1) << W->second.first))) {
      if (const CFGBlock *Then = W->second.second->succ_begin()->getReachableBlock())
        Work.push_back({Then, 0, I.Tracking, I.Tested, I.KnownMask,
                        I.KnownValue});
      return;
    }
    Truth Decided = Truth::Unknown;
    if (const Expr *Cond = effectiveCondition(*B))
      Decided = evaluate(Cond, I.Tracking);
    bool ByUpdate = Decided != Truth::Unknown;
    auto Class = ClassOf.find(B);
    uint64_t Bit = Class == ClassOf.end() ? 0 : uint64_t(1) << Class->second;
    if (!ByUpdate && (I.KnownMask & Bit))
      Decided = (I.KnownValue & Bit) ? Truth::True : Truth::False;
    unsigned Edge = 0;
    for (const CFGBlock::AdjacentBlock &Succ : B->succs()) {
      unsigned This = Edge++;
      const CFGBlock *Next = Succ.getReachableBlock();
      if (!Next)
        continue;
      if ((Decided == Truth::True && This != 0) ||
          (Decided == Truth::False && This != 1))
        continue;
      Item N{Next, 0, I.Tracking, I.Tested || ByUpdate, I.KnownMask,
             I.KnownValue};
      if (Bit && This < 2) {
        N.KnownMask |= Bit;
        N.KnownValue = This == 0 ? (N.KnownValue | Bit) : (N.KnownValue & ~Bit);
      }
      Work.push_back(N);
    }
  }

  /// Whether \p Call is given the update's status as an argument.
  bool passesOutcome(const CallExpr *Call, bool Tracking) const {
    for (const Expr *Arg : Call->arguments()) {
      const Expr *A = Arg->IgnoreParenImpCasts();
      if (A == T.Update)
        return true;
      if (const auto *DRE = dyn_cast<DeclRefExpr>(A))
        if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
            VD && Tracking && T.Status.count(VD))
          return true;
    }
    return false;
  }

  const CFG &Cfg;
  const ParentMap &PM;
  const Tracked &T;
  Mode M;
  llvm::function_ref<bool(const CallExpr *)> Leaves;
  llvm::function_ref<std::pair<bool, const CallExpr *>(const CallExpr *)>
      CalleeUse;
  llvm::SmallVector<Item, 16> Work;
  std::set<std::tuple<unsigned, bool, bool, uint64_t, uint64_t>> Seen;
  /// Blocks testing a repeated condition, by class; what each class reads.
  llvm::DenseMap<const CFGBlock *, unsigned> ClassOf;
  llvm::SmallVector<llvm::SmallPtrSet<const ValueDecl *, 4>, 4> Repeated;
  llvm::SmallVector<const Expr *, 4> Reps;
  /// Per class: a whole `if` condition rather than one operand.
  llvm::SmallVector<bool, 4> Whole;
  /// Blocks testing part of a whole condition of a class: the class and the
  /// block ending that `if` (its first successor is the then-branch).
  llvm::DenseMap<const CFGBlock *, std::pair<unsigned, const CFGBlock *>>
      WholeOf;
};

} // namespace

static std::unique_ptr<CFG> updateCFG(const FunctionDecl *FD, ASTContext &Ctx) {
  CFG::BuildOptions Options;
  Options.AddImplicitDtors = true;
  Options.AddTemporaryDtors = true;
  Options.setAllAlwaysAdd();
  return CFG::buildCFG(FD, FD->getBody(), &Ctx, Options);
}

/// The local a call's status goes to: `cudaError_t s = call;`, `s = call;`.
static const VarDecl *statusLocal(const CallExpr *Call, const ParentMap &PM) {
  const Stmt *Child = Call;
  const Stmt *P = PM.getParent(Call);
  while (P && (isa<ParenExpr>(P) || isa<ImplicitCastExpr>(P) ||
               isa<ExprWithCleanups>(P) || isa<CStyleCastExpr>(P))) {
    Child = P;
    P = PM.getParent(P);
  }
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(P))
    for (const Decl *D : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(D);
          VD && VD->getInit() && VD->getInit()->IgnoreParenImpCasts() ==
                                     Call->IgnoreParenImpCasts())
        return VD;
  if (const auto *BO = dyn_cast_or_null<BinaryOperator>(P);
      BO && BO->getOpcode() == BO_Assign && BO->getRHS() == Child)
    if (const auto *L = dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
      if (const auto *VD = dyn_cast<VarDecl>(L->getDecl());
          VD && VD->hasLocalStorage())
        return VD;
  return nullptr;
}

/// The result out-parameters an update writes: `&info` (CUDA 12's result
/// info) or `&result` (the older enum), not the error node.
static void resultLocals(const CallExpr *Call, Tracked &T) {
  for (unsigned I = 2; I < Call->getNumArgs(); ++I) {
    const auto *UO =
        dyn_cast<UnaryOperator>(Call->getArg(I)->IgnoreParenImpCasts());
    if (!UO || UO->getOpcode() != UO_AddrOf)
      continue;
    const Expr *Target = UO->getSubExpr()->IgnoreParenImpCasts();
    const ValueDecl *D = nullptr;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Target))
      D = DRE->getDecl();
    const auto *VD = dyn_cast_or_null<VarDecl>(D);
    if (!VD)
      continue;
    std::string Type = VD->getType().getUnqualifiedType().getAsString();
    if (llvm::StringRef(Type).contains_insensitive("GraphExecUpdateResult"))
      T.Result.insert(VD);
  }
}

/// Result fields written through `&member_`: tested as `member_ != ...`.
static bool testsResultMember(const Expr *Cond, const CallExpr *Update) {
  llvm::SmallPtrSet<const ValueDecl *, 2> Members;
  for (unsigned I = 2; I < Update->getNumArgs(); ++I)
    if (const auto *UO =
            dyn_cast<UnaryOperator>(Update->getArg(I)->IgnoreParenImpCasts());
        UO && UO->getOpcode() == UO_AddrOf)
      if (const auto *ME =
              dyn_cast<MemberExpr>(UO->getSubExpr()->IgnoreParenImpCasts()))
        if (llvm::StringRef(ME->getType().getAsString())
                .contains_insensitive("GraphExecUpdateResult"))
          Members.insert(ME->getMemberDecl());
  bool Found = false;
  if (!Members.empty())
    forEachStmt(Cond, [&](const Stmt *S) {
      if (const auto *ME = dyn_cast<MemberExpr>(S))
        Found |= Members.count(ME->getMemberDecl()) != 0;
    });
  return Found;
}

std::optional<GraphUpdateFacts::FirstUse>
GraphUpdateFacts::firstUseIn(const FunctionDecl *FD, unsigned Depth) {
  const FunctionDecl *Def = definitionOf(FD);
  if (!Def || !Code.isUserLocation(Def->getLocation()))
    return std::nullopt;
  if (auto It = FirstUses.find(Def); It != FirstUses.end())
    return It->second;
  FirstUses[Def] = std::nullopt; // recursion
  ParentMap PM(Def->getBody());
  std::optional<FirstUse> Found;
  forEachStmt(Def->getBody(), [&](const Stmt *S) {
    const auto *Call = dyn_cast<CallExpr>(S);
    if (Found || !Call)
      return;
    llvm::StringRef Name = calleeName(Call);
    if (Name == "cudaGetLastError")
      Found = clearsLastError(Call, PM) ? FirstUse{true, nullptr}
                                        : FirstUse{false, Call};
    else if (Name == "cudaPeekAtLastError" && valueUsed(Call, PM))
      Found = FirstUse{false, Call};
    else if (Depth > 0 && calleeOf(Call))
      Found = firstUseIn(calleeOf(Call), Depth - 1);
  });
  FirstUses[Def] = Found;
  return Found;
}

bool GraphUpdateFacts::neverReturnsOnFailure(const FunctionDecl *FD,
                                              unsigned Index) {
  const FunctionDecl *Def = definitionOf(FD);
  if (!Def || Index >= Def->getNumParams())
    return false;
  auto Key = std::make_pair(Def, Index);
  if (auto It = Checkers.find(Key); It != Checkers.end())
    return It->second;
  Checkers[Key] = false; // recursion
  std::unique_ptr<CFG> Cfg = updateCFG(Def, Ctx);
  if (!Cfg)
    return false;
  ParentMap PM(Def->getBody());
  Tracked T;
  T.Status.insert(Def->getParamDecl(Index));
  auto Leaves = [&](const CallExpr *Call) { return leavesOnFailure(Call, T); };
  auto NoUse = [](const CallExpr *) {
    return std::pair<bool, const CallExpr *>(false, nullptr);
  };
  FailureWalk Walk(*Cfg, PM, T, FailureWalk::Mode::Checker, Leaves,
                   NoUse);
  Walk.run(&Cfg->getEntry(), 0);
  bool Result = !Walk.ReachedExit;
  Checkers[Key] = Result;
  return Result;
}

bool GraphUpdateFacts::leavesOnFailure(const CallExpr *Call, const Tracked &T) {
  const FunctionDecl *Callee = calleeOf(Call);
  if (!Callee)
    return false;
  for (unsigned I = 0; I < Call->getNumArgs(); ++I) {
    const Expr *A = Call->getArg(I)->IgnoreParenImpCasts();
    bool Passes = A == T.Update;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(A))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
        Passes |= T.Status.count(VD) != 0;
    if (!Passes)
      continue;
    unsigned Param = I;
    if (isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(Callee) &&
        !cast<CXXMethodDecl>(Callee)->isStatic()) {
      if (I == 0)
        continue;
      Param = I - 1;
    }
    if (neverReturnsOnFailure(Callee, Param))
      return true;
  }
  return false;
}

const CallExpr *GraphUpdateFacts::firstCheckedRead(
    llvm::ArrayRef<const FunctionDecl *> Functions) {
  if (CheckedReadDone)
    return CheckedRead;
  CheckedReadDone = true;
  const SourceManager &SM = Ctx.getSourceManager();
  for (const FunctionDecl *FD : Functions) {
    if (!FD->getBody())
      continue;
    std::unique_ptr<ParentMap> PM;
    forEachStmt(FD->getBody(), [&](const Stmt *S) {
      const auto *Call = dyn_cast<CallExpr>(S);
      llvm::StringRef Name = calleeName(Call);
      if (Name != "cudaGetLastError" && Name != "cudaPeekAtLastError")
        return;
      if (!PM)
        PM = std::make_unique<ParentMap>(FD->getBody());
      if (!valueUsed(Call, *PM))
        return;
      if (!CheckedRead ||
          SM.isBeforeInTranslationUnit(SM.getExpansionLoc(Call->getBeginLoc()),
                                       SM.getExpansionLoc(
                                           CheckedRead->getBeginLoc())))
        CheckedRead = Call;
    });
  }
  return CheckedRead;
}

std::vector<GraphUpdateIssue>
GraphUpdateFacts::issuesIn(const FunctionDecl *FD) {
  std::vector<GraphUpdateIssue> Issues;
  const Stmt *Body = FD->getBody();
  if (!Body)
    return Issues;
  llvm::SmallVector<const CallExpr *, 2> Updates;
  forEachStmt(Body, [&](const Stmt *S) {
    if (const auto *Call = dyn_cast<CallExpr>(S); Call && isUpdate(Call))
      Updates.push_back(Call);
  });
  if (Updates.empty())
    return Issues;
  std::unique_ptr<CFG> Cfg = updateCFG(FD, Ctx);
  if (!Cfg)
    return Issues;
  ParentMap PM(const_cast<Stmt *>(Body));
  const SourceManager &SM = Ctx.getSourceManager();
  for (const CallExpr *Update : Updates) {
    // Where the update is in the CFG.
    const CFGBlock *At = nullptr;
    unsigned After = 0;
    for (const CFGBlock *B : *Cfg) {
      unsigned Index = 0;
      for (const CFGElement &Elem : *B) {
        ++Index;
        if (auto CS = Elem.getAs<CFGStmt>(); CS && CS->getStmt() == Update) {
          At = B;
          After = Index;
        }
      }
      if (At)
        break;
    }
    if (!At)
      continue;
    Tracked T;
    T.Update = Update;
    if (const VarDecl *Status = statusLocal(Update, PM))
      T.Status.insert(Status);
    resultLocals(Update, T);
    // Booleans made from a test of the update: `bool ok = s == cudaSuccess;`.
    forEachStmt(Body, [&](const Stmt *S) {
      const auto *DS = dyn_cast<DeclStmt>(S);
      if (!DS)
        return;
      for (const Decl *D : DS->decls()) {
        const auto *VD = dyn_cast<VarDecl>(D);
        const Expr *Init = VD ? VD->getInit() : nullptr;
        if (!Init || !VD->getType()->isBooleanType() || T.Status.count(VD))
          continue;
        bool Mentions = false;
        forEachStmt(Init, [&](const Stmt *Sub) {
          const auto *E = dyn_cast<Expr>(Sub);
          if (!E)
            return;
          E = E->IgnoreParenImpCasts();
          if (E == Update)
            Mentions = true;
          if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
            if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
              Mentions |= T.Status.count(V) || T.Result.count(V);
        });
        if (Mentions)
          T.Derived[VD] = Init;
      }
    });
    auto Leaves = [&](const CallExpr *Call) {
      return leavesOnFailure(Call, T);
    };
    auto CalleeUse = [&](const CallExpr *Call) {
      std::optional<FirstUse> Use =
          calleeOf(Call) ? firstUseIn(calleeOf(Call), 1)
                                  : std::nullopt;
      return Use ? std::pair<bool, const CallExpr *>(Use->Clears, Use->Read)
                 : std::pair<bool, const CallExpr *>(false, nullptr);
    };
    FailureWalk Walk(*Cfg, PM, T, FailureWalk::Mode::Update, Leaves,
                     CalleeUse);
    Walk.run(At, After);

    // A fallback: a later test of the update's result (or status) that
    // lets the function go on. Reached by no failed update: fatal check.
    llvm::DenseSet<const CFGBlock *> Later{At};
    llvm::SmallVector<const CFGBlock *, 16> Todo{At};
    while (!Todo.empty()) {
      const CFGBlock *B = Todo.pop_back_val();
      for (const CFGBlock::AdjacentBlock &Succ : B->succs())
        if (const CFGBlock *Next = Succ.getReachableBlock();
            Next && Later.insert(Next).second)
          Todo.push_back(Next);
    }
    const Expr *Fallback = nullptr;
    bool FallbackReached = false;
    for (const CFGBlock *B : Later) {
      const Expr *Cond = effectiveCondition(*B);
      if (!Cond)
        continue;
      bool TestsResult = testsResultMember(Cond, Update);
      forEachStmt(Cond, [&](const Stmt *S) {
        if (const auto *E = dyn_cast<Expr>(S))
          TestsResult |= Walk.carriesResult(E);
      });
      if (!TestsResult)
        continue;
      // A test with an arm that ends the program (`assert(info.result ==
      // cudaGraphExecUpdateSuccess)`) is another check, not a fallback.
      if (llvm::any_of(B->succs(), [](const CFGBlock::AdjacentBlock &Succ) {
            const CFGBlock *Next = Succ.getReachableBlock();
            return Next && abandonsFunction(*Next);
          }))
        continue;
      if (Walk.Through.count(B))
        FallbackReached = true;
      else if (!Fallback ||
               SM.isBeforeInTranslationUnit(
                   SM.getExpansionLoc(Cond->getBeginLoc()),
                   SM.getExpansionLoc(Fallback->getBeginLoc())))
        Fallback = Cond;
    }
    // Every failed update stops there: the program ends or throws (a path
    // that returns hands the failure to the caller, which may fall back).
    bool Stops = !Walk.ReachedExit && !Walk.Cleared && Walk.Reads.empty();
    if (Fallback && !FallbackReached && Stops) {
      GraphUpdateIssue I;
      I.K = GraphUpdateIssue::Kind::FatalCheck;
      I.Function = FD;
      I.Update = Update;
      I.Fallback = Fallback;
      Issues.push_back(I);
      continue;
    }
    // Only the runtime's update sets the runtime's last error.
    if (calleeName(Update) != "cudaGraphExecUpdate")
      continue;
    if (!Walk.Reads.empty()) {
      auto First = Walk.Reads.front();
      for (auto &R : Walk.Reads)
        if (SM.isBeforeInTranslationUnit(
                SM.getExpansionLoc(R.first->getBeginLoc()),
                SM.getExpansionLoc(First.first->getBeginLoc())))
          First = R;
      GraphUpdateIssue I;
      I.Function = FD;
      I.Update = Update;
      I.Read = First.first;
      I.Via = First.second;
      Issues.push_back(I);
      continue;
    }
    if (Walk.ReachedExitTested) {
      GraphUpdateIssue I;
      I.Function = FD;
      I.Update = Update;
      Issues.push_back(I);
    }
  }
  return Issues;
}

} // namespace clang::cudagraph
