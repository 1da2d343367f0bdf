//===--- ValueFacts.cpp - cudagraph analysis ------------------------------===//

#include "ValueFacts.h"
#include "ForwardAnalysis.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/CFG.h"
#include <optional>

namespace clang::cudagraph {

//===----------------------------------------------------------------------===//
// Bindings
//===----------------------------------------------------------------------===//

std::string Bindings::key() const {
  std::string Key;
  for (auto [Index, Value] : Values)
    Key += std::to_string(Index) + '=' + std::to_string(Value) + ';';
  return Key;
}

const int64_t *Bindings::find(unsigned Index) const {
  for (const auto &P : Values)
    if (P.first == Index)
      return &P.second;
  return nullptr;
}

static void bind(Bindings &B, unsigned Index, std::optional<int64_t> Value) {
  auto *It = llvm::find_if(B.Values, [&](const auto &P) {
    return P.first == Index;
  });
  if (It != B.Values.end())
    B.Values.erase(It);
  if (!Value)
    return;
  auto *At = llvm::find_if(B.Values, [&](const auto &P) {
    return P.first > Index;
  });
  B.Values.insert(At, {Index, *Value});
}

/// Whether \p T is a std::string or std::string_view, const-qualified (by
/// value or by reference): its binding is the length of the string passed.
static bool isConstStringType(QualType T) {
  T = T.getNonReferenceType();
  const auto *RD = T->getAsCXXRecordDecl();
  return RD && T.isConstQualified() && RD->isInStdNamespace() &&
         (RD->getName() == "basic_string" ||
          RD->getName() == "basic_string_view");
}

/// The expression a string argument is made from: a literal, a default
/// argument, a copy of another string (through temporaries and converting
/// constructors); null for an empty construction (`std::string()`).
static const Expr *stringSource(const Expr *E, bool &Empty) {
  Empty = false;
  while (E) {
    E = E->IgnoreParenImpCasts();
    if (const auto *DA = dyn_cast<CXXDefaultArgExpr>(E))
      E = DA->getExpr();
    else if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(E))
      E = MT->getSubExpr();
    else if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(E))
      E = BT->getSubExpr();
    else if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
      E = FC->getSubExpr();
    else if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
      unsigned Given = 0;
      for (const Expr *Arg : CE->arguments())
        Given += !isa<CXXDefaultArgExpr>(Arg);
      if (Given == 0) {
        Empty = true;
        return nullptr;
      }
      if (Given != 1)
        return E;
      E = CE->getArg(0);
    } else
      return E;
  }
  return E;
}

bool ValueResult::isDead(const CallSite &Site) const {
  if (Site.S)
    return Dead.contains(Site.S);
  return Site.Var && DeadVars.contains(Site.Var);
}

//===----------------------------------------------------------------------===//
// Locals whose value the body shows
//===----------------------------------------------------------------------===//

namespace {
/// What one reference to a variable does with it, seen from its parent.
enum class Use {
  Read,        // its value is loaded
  PlainAssign, // `v = e` in the body itself, not in a lambda
  Deferred,    // parenthesized: judged at the parenthesized expression
  Other        // address taken, bound to a reference, ++, +=, in a lambda
};

Use useOf(const Expr *Ref, const Stmt *Parent, bool InLambda) {
  if (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(Parent);
      Cast && Cast->getCastKind() == CK_LValueToRValue)
    return Use::Read;
  if (const auto *BO = dyn_cast_or_null<BinaryOperator>(Parent);
      BO && BO->getOpcode() == BO_Assign && !InLambda &&
      BO->getLHS()->IgnoreParens() == Ref->IgnoreParens())
    return Use::PlainAssign;
  if (isa_and_nonnull<ParenExpr>(Parent))
    return Use::Deferred;
  return Use::Other;
}

/// How the body of a function uses one of its local variables.
class LocalUses {
public:
  LocalUses(const VarDecl *VD, const Expr *Allowed)
      : VD(VD), Allowed(Allowed ? Allowed->IgnoreParenImpCasts() : nullptr) {}

  void walk(const Stmt *S, const Stmt *Parent, bool InLambda) {
    if (!S || Escapes)
      return;
    if (isa<ParenExpr>(S)) {
      for (const Stmt *Child : S->children())
        walk(Child, Parent, InLambda);
      return;
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S);
        DRE && DRE->getDecl() == VD)
      classify(DRE, Parent, InLambda);
    bool Lambda = InLambda || isa<LambdaExpr>(S);
    for (const Stmt *Child : S->children())
      walk(Child, S, Lambda);
  }

  /// Some use is neither a read, nor a plain assignment outside lambdas,
  /// nor the allowed argument.
  bool Escapes = false;
  /// Some use is a plain assignment.
  bool Assigned = false;

private:
  void classify(const DeclRefExpr *Ref, const Stmt *Parent, bool InLambda) {
    if (Ref == Allowed)
      return;
    switch (useOf(Ref, Parent, InLambda)) {
    case Use::Read:
    case Use::Deferred:
      return;
    case Use::PlainAssign:
      Assigned = true;
      return;
    case Use::Other:
      Escapes = true;
      return;
    }
  }

  const VarDecl *VD;
  const Expr *Allowed;
};
} // namespace

/// The local variable (or by-value parameter) of \p Owner that \p E names,
/// when nothing but \p Owner's own reads and plain assignments touches it
/// (and \p Allowed, an argument bound to a reference): no alias can change
/// it behind the body's back. \p NeverAssigned also rules out assignments.
static const VarDecl *privateLocal(const Expr *E, const FunctionDecl *Owner,
                                   const Expr *Allowed, bool NeverAssigned) {
  const auto *DRE = E ? dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts())
                      : nullptr;
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || !Owner || !Owner->getBody() || !VD->hasLocalStorage() ||
      VD->getDeclContext() != Owner || VD->getType()->isReferenceType() ||
      VD->getType().isVolatileQualified() ||
      !VD->getType()->isIntegralOrEnumerationType())
    return nullptr;
  LocalUses Uses(VD, Allowed);
  Uses.walk(Owner->getBody(), nullptr, false);
  if (Uses.Escapes || (NeverAssigned && Uses.Assigned))
    return nullptr;
  return VD;
}

//===----------------------------------------------------------------------===//
// Evaluation under bindings
//===----------------------------------------------------------------------===//

namespace {
/// The state of the flow: bound parameters of Owner. Joining keeps the
/// bindings both sides agree on.
struct ValueState {
  Bindings B;
  bool join(const ValueState &Other) {
    Bindings Kept;
    for (auto [Index, Value] : B.Values)
      if (const int64_t *V = Other.B.find(Index); V && *V == Value)
        Kept.Values.push_back({Index, Value});
    bool Changed = Kept.Values.size() != B.Values.size();
    B = std::move(Kept);
    return Changed;
  }
};

class Evaluator {
public:
  /// \p Allowed: an argument bound to a reference parameter at the call
  /// being judged; naming a local there does not count as a write.
  Evaluator(ASTContext &Ctx, const FunctionDecl *Owner, const Bindings &B,
            const Expr *Allowed = nullptr)
      : Ctx(Ctx), Owner(Owner), B(B), Allowed(Allowed) {}

  std::optional<int64_t> eval(const Expr *E) const {
    if (!E || E->isValueDependent() || E->isTypeDependent())
      return std::nullopt;
    E = E->IgnoreParens();
    // `name.empty()`, `name.size()` on a string parameter bound to a
    // literal.
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E);
        MC && MC->getNumArgs() == 0 && MC->getMethodDecl() &&
        MC->getMethodDecl()->getIdentifier()) {
      StringRef Method = MC->getMethodDecl()->getName();
      const Expr *Obj = MC->getImplicitObjectArgument();
      if ((Method == "empty" || Method == "size" || Method == "length") &&
          Obj && isConstStringType(Obj->getType()))
        if (auto Length = stringLength(Obj))
          return Method == "empty" ? int64_t(*Length == 0) : *Length;
    }
    if (const auto *DA = dyn_cast<CXXDefaultArgExpr>(E))
      return constant(DA->getExpr());
    if (const auto *C = dyn_cast<CastExpr>(E)) {
      switch (C->getCastKind()) {
      case CK_LValueToRValue:
      case CK_NoOp:
      case CK_IntegralCast:
      case CK_BooleanToSignedIntegral:
        return eval(C->getSubExpr());
      case CK_IntegralToBoolean:
        if (auto V = eval(C->getSubExpr()))
          return int64_t(*V != 0);
        return std::nullopt;
      default:
        return constant(E);
      }
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      if (const auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl());
          P && P->getDeclContext() == Owner)
        if (const int64_t *V = B.find(P->getFunctionScopeIndex()))
          return *V;
      // `bool done = false;` that the body only reads keeps its value.
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
          VD && !isa<ParmVarDecl>(VD) && VD->getInit() &&
          privateLocal(DRE, Owner, Allowed, /*NeverAssigned=*/true))
        return constant(VD->getInit());
      return constant(E);
    }
    if (const auto *U = dyn_cast<UnaryOperator>(E)) {
      auto V = eval(U->getSubExpr());
      if (!V)
        return std::nullopt;
      switch (U->getOpcode()) {
      case UO_LNot:
        return int64_t(*V == 0);
      case UO_Minus:
        return -*V;
      case UO_Not:
        return ~*V;
      case UO_Plus:
        return *V;
      default:
        return std::nullopt;
      }
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      auto L = eval(BO->getLHS());
      if (BO->getOpcode() == BO_LAnd && L && !*L)
        return 0;
      if (BO->getOpcode() == BO_LOr && L && *L)
        return 1;
      auto R = eval(BO->getRHS());
      if (BO->getOpcode() == BO_LAnd && R && !*R)
        return 0;
      if (BO->getOpcode() == BO_LOr && R && *R)
        return 1;
      if (!L || !R)
        return std::nullopt;
      switch (BO->getOpcode()) {
      case BO_EQ:
        return int64_t(*L == *R);
      case BO_NE:
        return int64_t(*L != *R);
      case BO_LT:
        return int64_t(*L < *R);
      case BO_LE:
        return int64_t(*L <= *R);
      case BO_GT:
        return int64_t(*L > *R);
      case BO_GE:
        return int64_t(*L >= *R);
      case BO_LAnd:
        return int64_t(*L && *R);
      case BO_LOr:
        return int64_t(*L || *R);
      case BO_And:
        return *L & *R;
      case BO_Or:
        return *L | *R;
      case BO_Xor:
        return *L ^ *R;
      case BO_Add:
        return int64_t(uint64_t(*L) + uint64_t(*R));
      case BO_Sub:
        return int64_t(uint64_t(*L) - uint64_t(*R));
      default:
        return std::nullopt;
      }
    }
    return constant(E);
  }

  /// The length of the string \p E holds, when a literal or a bound string
  /// parameter gives it.
  std::optional<int64_t> stringLength(const Expr *E) const {
    bool Empty = false;
    const Expr *Source = stringSource(E, Empty);
    if (Empty)
      return 0;
    if (!Source)
      return std::nullopt;
    if (const auto *SL = dyn_cast<StringLiteral>(Source))
      return int64_t(SL->getLength());
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Source))
      if (const auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl());
          P && P->getDeclContext() == Owner && isConstStringType(P->getType()))
        if (const int64_t *V = B.find(P->getFunctionScopeIndex()))
          return *V;
    return std::nullopt;
  }

private:
  std::optional<int64_t> constant(const Expr *E) const {
    if (!E || E->isValueDependent() || E->isTypeDependent() ||
        !E->getType()->isIntegralOrEnumerationType())
      return std::nullopt;
    Expr::EvalResult R;
    if (!E->EvaluateAsInt(R, Ctx) || R.Val.getInt().getSignificantBits() > 64)
      return std::nullopt;
    return R.Val.getInt().getExtValue();
  }

  ASTContext &Ctx;
  const FunctionDecl *Owner;
  const Bindings &B;
  const Expr *Allowed;
};
} // namespace

//===----------------------------------------------------------------------===//
// Which parameters matter
//===----------------------------------------------------------------------===//

static const ParmVarDecl *paramRef(const Expr *E, const FunctionDecl *Owner) {
  if (!E)
    return nullptr;
  const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  const auto *P = DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
  return P && P->getDeclContext() == Owner ? P : nullptr;
}

static void collectParamRefs(const Stmt *S, const FunctionDecl *Owner,
                             llvm::SmallVectorImpl<unsigned> &Out) {
  if (!S)
    return;
  if (const auto *E = dyn_cast<Expr>(S))
    if (const ParmVarDecl *P = paramRef(E, Owner))
      Out.push_back(P->getFunctionScopeIndex());
  for (const Stmt *Child : S->children())
    collectParamRefs(Child, Owner, Out);
}

namespace {
/// Finds which parameters decide branches or flow into calls, and which
/// change other than by a plain assignment in the body itself.
class ParamScan {
public:
  ParamScan(const FunctionDecl *Owner) : Owner(Owner) {}

  void walk(const Stmt *S, const Stmt *Parent, bool InLambda) {
    if (!S)
      return;
    if (const auto *E = dyn_cast<Expr>(S))
      if (const ParmVarDecl *P = paramRef(E, Owner);
          P && isa<DeclRefExpr>(E->IgnoreParens()))
        classifyUse(P->getFunctionScopeIndex(), E, Parent, InLambda);
    const Expr *Cond = nullptr;
    if (const auto *If = dyn_cast<IfStmt>(S))
      Cond = If->getCond();
    else if (const auto *Sw = dyn_cast<SwitchStmt>(S))
      Cond = Sw->getCond();
    else if (const auto *W = dyn_cast<WhileStmt>(S))
      Cond = W->getCond();
    else if (const auto *F = dyn_cast<ForStmt>(S))
      Cond = F->getCond();
    else if (const auto *D = dyn_cast<DoStmt>(S))
      Cond = D->getCond();
    else if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S))
      Cond = CO->getCond();
    else if (const auto *BO = dyn_cast<BinaryOperator>(S);
             BO && BO->isLogicalOp())
      Cond = BO->getLHS();
    if (Cond)
      collectParamRefs(Cond, Owner, Decides);
    if (const auto *Call = dyn_cast<CallExpr>(S))
      for (const Expr *Arg : Call->arguments())
        if (const ParmVarDecl *P = paramRef(Arg, Owner))
          Decides.push_back(P->getFunctionScopeIndex());
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(S))
      for (const Expr *Arg : Construct->arguments())
        if (const ParmVarDecl *P = paramRef(Arg, Owner))
          Decides.push_back(P->getFunctionScopeIndex());
    bool Lambda = InLambda || isa<LambdaExpr>(S);
    if (const auto *L = dyn_cast<LambdaExpr>(S)) {
      walk(L->getBody(), S, true);
      return;
    }
    for (const Stmt *Child : S->children())
      walk(Child, S, Lambda);
  }

  llvm::SmallVector<unsigned, 4> Decides, Changed;

private:
  /// A use that is neither a read nor a plain assignment in this body
  /// (address taken, bound to a reference, ++, +=, written in a lambda)
  /// makes the parameter's value unknown.
  void classifyUse(unsigned Index, const Expr *Ref, const Stmt *Parent,
                   bool InLambda) {
    if (useOf(Ref, Parent, InLambda) == Use::Other)
      Changed.push_back(Index);
  }

  const FunctionDecl *Owner;
};
} // namespace

const ValueFacts::ParamInfo &ValueFacts::paramInfo(const FunctionDecl *Def) {
  auto It = Params.find(Def);
  if (It != Params.end())
    return It->second;
  ParamInfo Info;
  if (Def->hasBody() && Def->getNumParams()) {
    ParamScan Scan(Def);
    Scan.walk(Def->getBody(), nullptr, false);
    for (unsigned I = 0; I < Def->getNumParams(); ++I) {
      // `bool &done` too: the binding holds for the referenced local, which
      // only this body changes while it runs (see passed()).
      QualType T = Def->getParamDecl(I)->getType().getNonReferenceType();
      // A const string cannot change in the body: its length holds.
      if (isConstStringType(T)) {
        if (llvm::is_contained(Scan.Decides, I))
          Info.Relevant.push_back(I);
        continue;
      }
      if (!T->isIntegralOrEnumerationType() || T.isVolatileQualified())
        continue;
      if (llvm::is_contained(Scan.Decides, I) &&
          !llvm::is_contained(Scan.Changed, I))
        Info.Relevant.push_back(I);
    }
  }
  return Params[Def] = std::move(Info);
}

//===----------------------------------------------------------------------===//
// The flow
//===----------------------------------------------------------------------===//

ValueFacts::ValueFacts(ASTContext &Ctx) : Ctx(Ctx) {}
ValueFacts::~ValueFacts() = default;

static std::optional<bool> caseMatches(const SwitchCase *SC, int64_t V,
                                       ASTContext &Ctx) {
  const auto *Case = dyn_cast<CaseStmt>(SC);
  if (!Case)
    return false;
  Expr::EvalResult Lo, Hi;
  if (!Case->getLHS() || Case->getLHS()->isValueDependent() ||
      !Case->getLHS()->EvaluateAsInt(Lo, Ctx))
    return std::nullopt;
  int64_t L = Lo.Val.getInt().getExtValue(), H = L;
  if (const Expr *RHS = Case->getRHS()) {
    if (RHS->isValueDependent() || !RHS->EvaluateAsInt(Hi, Ctx))
      return std::nullopt;
    H = Hi.Val.getInt().getExtValue();
  }
  return L <= V && V <= H;
}

const ValueResult *ValueFacts::under(const FunctionDecl *Def,
                                     const Bindings &In) {
  if (In.empty() || !Def->hasBody())
    return nullptr;
  Bindings Entry;
  for (unsigned I : paramInfo(Def).Relevant)
    if (const int64_t *V = In.find(I))
      Entry.Values.push_back({I, *V});
  if (Entry.empty())
    return nullptr;
  auto Key = std::make_pair(Def, Entry.key());
  auto It = Results.find(Key);
  if (It != Results.end())
    return It->second.get();
  auto Owned = std::make_unique<ValueResult>();
  ValueResult &R = *Owned;
  R.Function = Def;
  Results[Key] = std::move(Owned);

  CFG::BuildOptions Options;
  Options.AddImplicitDtors = true;
  Options.AddInitializers = true;
  Options.setAllAlwaysAdd();
  std::unique_ptr<CFG> Cfg = CFG::buildCFG(Def, Def->getBody(), &Ctx, Options);
  if (!Cfg)
    return &R;

  auto Transfer = [&](const CFGBlock &B, const ValueState &S) {
    ValueState Out = S;
    for (const CFGElement &E : B) {
      auto CS = E.getAs<CFGStmt>();
      if (!CS)
        continue;
      const Stmt *St = CS->getStmt();
      if (isa<CallExpr>(St) || isa<CXXConstructExpr>(St)) {
        if (!Out.B.empty())
          R.AtCall[St] = Out.B;
        else
          R.AtCall.erase(St);
      }
      const auto *BO = dyn_cast<BinaryOperator>(St);
      if (!BO || BO->getOpcode() != BO_Assign)
        continue;
      if (const ParmVarDecl *P = paramRef(BO->getLHS(), Def))
        bind(Out.B, P->getFunctionScopeIndex(),
             Evaluator(Ctx, Def, Out.B).eval(BO->getRHS()));
    }
    return Out;
  };
  llvm::DenseSet<std::pair<unsigned, unsigned>> TakenEdges;
  // `while (!done)` reached from outside the loop with `done` bound false.
  llvm::DenseSet<const Stmt *> EnteredTrue, EnteredOtherwise;
  auto Edge = [&](const CFGBlock &From, const CFGBlock &To, unsigned Succ,
                  const ValueState &Out) -> std::optional<ValueState> {
    if (const auto *While = dyn_cast_or_null<WhileStmt>(To.getTerminatorStmt());
        While && From.getLoopTarget() != While) {
      auto V = Out.B.empty() ? std::nullopt
                             : Evaluator(Ctx, Def, Out.B).eval(While->getCond());
      (V && *V ? EnteredTrue : EnteredOtherwise).insert(While);
    }
    if (Out.B.empty()) {
      TakenEdges.insert({From.getBlockID(), Succ});
      return Out;
    }
    const Stmt *T = From.getTerminatorStmt();
    if (const auto *Sw = dyn_cast_or_null<SwitchStmt>(T)) {
      auto V = Evaluator(Ctx, Def, Out.B).eval(Sw->getCond());
      if (!V)
        return Out;
      if (const auto *Label = dyn_cast_or_null<CaseStmt>(To.getLabel())) {
        std::optional<bool> M = caseMatches(Label, *V, Ctx);
        return !M || *M ? std::optional<ValueState>(Out) : std::nullopt;
      }
      for (const SwitchCase *SC = Sw->getSwitchCaseList(); SC;
           SC = SC->getNextSwitchCase()) {
        std::optional<bool> M = caseMatches(SC, *V, Ctx);
        if (!M || *M)
          return M ? std::nullopt : std::optional<ValueState>(Out);
      }
      return Out; // the default, or past the switch
    }
    if (From.succ_size() != 2 || !T)
      return Out;
    const auto *Cond = dyn_cast_or_null<Expr>(From.getTerminatorCondition());
    auto V = Evaluator(Ctx, Def, Out.B).eval(Cond);
    bool Taken = !V || (Succ == 0 ? *V != 0 : *V == 0);
    if (!Taken)
      return std::nullopt;
    TakenEdges.insert({From.getBlockID(), Succ});
    return Out;
  };
  std::vector<std::optional<ValueState>> States =
      solveForward<ValueState>(*Cfg, ValueState{Entry}, Transfer, Edge);

  for (const Stmt *While : EnteredTrue)
    if (!EnteredOtherwise.contains(While))
      R.Branches.EnteredLoops.insert(While);

  // Two-way branches reached with one edge never taken.
  for (const CFGBlock *B : *Cfg) {
    const Stmt *T = B->getTerminatorStmt();
    if (!T || isa<SwitchStmt>(T) || B->succ_size() != 2 ||
        !States[B->getBlockID()].has_value())
      continue;
    for (unsigned Succ = 0; Succ < 2; ++Succ)
      if (B->succ_begin()[Succ].getReachableBlock() &&
          !TakenEdges.contains({B->getBlockID(), Succ}))
        R.Branches.DeadEdges.insert({T, Succ});
  }

  llvm::DenseSet<const Stmt *> Live;
  for (const CFGBlock *B : *Cfg) {
    bool Reached = States[B->getBlockID()].has_value();
    for (const CFGElement &E : *B)
      if (auto CS = E.getAs<CFGStmt>()) {
        const Stmt *St = CS->getStmt();
        if (Reached) {
          Live.insert(St);
          continue;
        }
        R.Dead.insert(St);
        R.AtCall.erase(St);
        if (const auto *DS = dyn_cast<DeclStmt>(St))
          for (const Decl *D : DS->decls())
            if (const auto *VD = dyn_cast<VarDecl>(D))
              R.DeadVars.insert(VD);
      }
  }
  for (const Stmt *St : Live)
    R.Dead.erase(St);
  return &R;
}

Bindings ValueFacts::passed(const CallSite &Site, const FunctionDecl *Def,
                            const FunctionDecl *CallerFn,
                            const ValueResult *Caller, KnownArgFn KnownArg) {
  Bindings Out;
  if (!Def || (Site.K != CallSite::Kind::Call &&
               Site.K != CallSite::Kind::Construct))
    return Out;
  const ParamInfo &Info = paramInfo(Def);
  if (Info.Relevant.empty())
    return Out;
  llvm::ArrayRef<const Expr *> Args;
  unsigned Offset = 0;
  if (const auto *Call = dyn_cast_or_null<CallExpr>(Site.S)) {
    Args = llvm::ArrayRef(Call->getArgs(), Call->getNumArgs());
    Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(Def) &&
             !cast<CXXMethodDecl>(Def)->isStatic();
  } else if (const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(
                 Site.S)) {
    Args = llvm::ArrayRef(Construct->getArgs(), Construct->getNumArgs());
  } else {
    return Out;
  }
  static const Bindings None;
  const Bindings *Known = &None;
  if (Caller && Caller->Function == CallerFn) {
    auto It = Caller->AtCall.find(Site.S);
    if (It != Caller->AtCall.end())
      Known = &It->second;
  }
  for (unsigned I : Info.Relevant) {
    if (I + Offset >= Args.size())
      continue;
    const Expr *Arg = Args[I + Offset];
    if (isConstStringType(Def->getParamDecl(I)->getType())) {
      if (auto Length = Evaluator(Ctx, CallerFn, *Known).stringLength(Arg))
        Out.Values.push_back({I, *Length});
      continue;
    }
    // A reference binds only a local of the caller that nothing else can
    // reach: then only the callee's own assignments change it.
    bool ByRef = Def->getParamDecl(I)->getType()->isReferenceType();
    if (ByRef && !privateLocal(Arg, CallerFn, Arg, /*NeverAssigned=*/false))
      continue;
    std::optional<int64_t> V =
        Evaluator(Ctx, CallerFn, *Known, ByRef ? Arg : nullptr).eval(Arg);
    if (!V && KnownArg)
      V = KnownArg(Arg);
    if (V)
      Out.Values.push_back({I, *V});
  }
  return Out;
}

//===----------------------------------------------------------------------===//
// Per-value dispatch between a hazard and its capture-safe form
//===----------------------------------------------------------------------===//

ParentMap &ValueFacts::parents(const FunctionDecl *FD) {
  std::unique_ptr<ParentMap> &PM = Parents[FD];
  if (!PM)
    PM = std::make_unique<ParentMap>(FD->getBody());
  return *PM;
}

static bool callsSafeForm(const Stmt *S, const NamePatterns &SafeForms,
                          const ValueResult *Values) {
  if (!S || isa<LambdaExpr>(S))
    return false;
  if (const auto *Call = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *Callee = Call->getDirectCallee())
      if (!(Values && Values->Dead.contains(Call)) &&
          SafeForms.matches(
              stripCudaApiSuffix(Callee->getQualifiedNameAsString())))
        return true;
  for (const Stmt *Child : S->children())
    if (callsSafeForm(Child, SafeForms, Values))
      return true;
  return false;
}

bool ValueFacts::hasSafeSibling(const FunctionDecl *FD, const Stmt *S,
                                const NamePatterns &SafeForms,
                                const ValueResult *Values) {
  if (!FD || !S || SafeForms.empty() || !FD->getBody())
    return false;
  ParentMap &PM = parents(FD);
  if (!PM.hasParent(S))
    return false;
  const Stmt *Child = S;
  const Stmt *Arm = nullptr; // the statement of a switch body holding S
  for (const Stmt *P = PM.getParent(S); P; Child = P, P = PM.getParent(P)) {
    if (isa<LambdaExpr>(P))
      return false;
    if (const auto *If = dyn_cast<IfStmt>(P)) {
      const Stmt *Other = Child == If->getThen()   ? If->getElse()
                          : Child == If->getElse() ? If->getThen()
                                                   : nullptr;
      if (Other && callsSafeForm(Other, SafeForms, Values))
        return true;
    }
    if (const auto *Sw = dyn_cast<SwitchStmt>(P);
        Sw && Child == Sw->getBody() && Arm) {
      // Arms: the body's statements from one case label to the next.
      const auto *Body = dyn_cast<CompoundStmt>(Sw->getBody());
      if (!Body)
        continue;
      llvm::SmallVector<llvm::SmallVector<const Stmt *, 4>, 4> Arms;
      unsigned Mine = ~0u;
      for (const Stmt *St : Body->body()) {
        if (isa<SwitchCase>(St) || Arms.empty())
          Arms.emplace_back();
        Arms.back().push_back(St);
        if (St == Arm)
          Mine = Arms.size() - 1;
      }
      for (unsigned I = 0; I < Arms.size(); ++I)
        if (I != Mine)
          for (const Stmt *St : Arms[I])
            if (callsSafeForm(St, SafeForms, Values))
              return true;
    }
    Arm = isa<CompoundStmt>(P) && isa_and_nonnull<SwitchStmt>(PM.getParent(P))
              ? Child
              : Arm;
  }
  return false;
}

} // namespace clang::cudagraph
