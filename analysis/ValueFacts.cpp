//===--- ValueFacts.cpp - cudagraph analysis ------------------------------===//

#include "ValueFacts.h"
#include "ConditionLeaves.h"
#include "ForwardAnalysis.h"
#include "UserCode.h"
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
  auto Add = [&](const Known &K) {
    Key += K.NonZero ? std::string("nz") : std::to_string(K.Value);
    Key += ';';
  };
  for (const auto &[Index, Value] : Values) {
    Key += std::to_string(Index) + '=';
    Add(Value);
  }
  for (const auto &[Path, Value] : Members) {
    Key += 'm';
    for (const FieldDecl *FD : Path)
      Key += std::to_string(reinterpret_cast<uintptr_t>(FD)) + '.';
    Key += '=';
    Add(Value);
  }
  return Key;
}

const Known *Bindings::find(unsigned Index) const {
  for (const auto &P : Values)
    if (P.first == Index)
      return &P.second;
  return nullptr;
}

const Known *Bindings::findMember(llvm::ArrayRef<const FieldDecl *> Path) const {
  for (const auto &P : Members)
    if (llvm::ArrayRef(P.first) == Path)
      return &P.second;
  return nullptr;
}

void Bindings::bindMember(llvm::ArrayRef<const FieldDecl *> Path,
                          std::optional<Known> Value) {
  // Assigning `cfg_` changes `cfg_.kind` too.
  llvm::erase_if(Members, [&](const auto &P) {
    return llvm::ArrayRef(P.first).take_front(Path.size()) == Path;
  });
  if (Value)
    Members.push_back({MemberPath(Path.begin(), Path.end()), *Value});
}

static void bind(Bindings &B, unsigned Index, std::optional<Known> Value) {
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

/// Whether a value of type \p T can be bound: an integer, an enumerator,
/// a pointer (known null or known set).
static bool bindableType(QualType T) {
  return !T.isNull() && !T.isVolatileQualified() &&
         (T->isIntegralOrEnumerationType() || T->isPointerType());
}

MemberPath memberPathOf(const Expr *E) {
  MemberPath Path;
  if (!E)
    return Path;
  const auto *ME = dyn_cast<MemberExpr>(E->IgnoreParenImpCasts());
  const auto *FD = ME ? dyn_cast<FieldDecl>(ME->getMemberDecl()) : nullptr;
  if (!FD || FD->getType()->isReferenceType() ||
      FD->getType().isVolatileQualified())
    return Path;
  const Expr *Base = ME->getBase()->IgnoreParenImpCasts();
  if (!isa<CXXThisExpr>(Base)) {
    if (ME->isArrow())
      return Path; // another object's member
    Path = memberPathOf(Base);
    if (Path.empty())
      return Path;
  }
  Path.push_back(FD->getCanonicalDecl());
  return Path;
}

/// The value of a constant expression: an integer, an enumerator, a null
/// pointer.
static std::optional<int64_t> constantOf(const Expr *E, const ASTContext &Ctx) {
  if (!E || E->isValueDependent() || E->isTypeDependent())
    return std::nullopt;
  if ((E->getType()->isPointerType() || E->getType()->isNullPtrType()) &&
      E->isNullPointerConstant(const_cast<ASTContext &>(Ctx),
                               Expr::NPC_ValueDependentIsNotNull))
    return 0;
  if (!E->getType()->isIntegralOrEnumerationType())
    return std::nullopt;
  Expr::EvalResult R;
  if (!E->EvaluateAsInt(R, Ctx) || R.Val.getInt().getSignificantBits() > 64)
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

void memberFacts(const Expr *Cond, bool Value, const ASTContext &Ctx,
                 Bindings &Out) {
  auto Add = [&](const Expr *Member, Known K) {
    MemberPath Path = memberPathOf(Member);
    if (!Path.empty() && bindableType(Member->getType()) &&
        !Out.findMember(Path))
      Out.bindMember(Path, K);
  };
  llvm::SmallVector<ConditionLeaf, 4> Leaves;
  conditionLeaves(Cond, Value, Leaves);
  for (auto [Leaf, LeafValue] : Leaves) {
    if (const auto *BO = dyn_cast<BinaryOperator>(Leaf)) {
      if (BO->getOpcode() != BO_EQ && BO->getOpcode() != BO_NE)
        continue;
      const Expr *Member = BO->getLHS();
      std::optional<int64_t> C = constantOf(BO->getRHS(), Ctx);
      if (!C) {
        Member = BO->getRHS();
        C = constantOf(BO->getLHS(), Ctx);
      }
      if (!C)
        continue;
      bool Equal = (BO->getOpcode() == BO_EQ) == LeafValue;
      if (Equal)
        Add(Member, Known{*C});
      else if (*C == 0)
        Add(Member, Known::nonZero());
      continue;
    }
    if (Leaf->getType()->isBooleanType())
      Add(Leaf, Known{LeafValue});
    else
      Add(Leaf, LeafValue ? Known::nonZero() : Known{0});
  }
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
/// The state of the flow: bound parameters and members of Owner. Joining
/// keeps the bindings both sides agree on.
struct ValueState {
  Bindings B;
  bool join(const ValueState &Other) {
    Bindings Kept;
    for (const auto &[Index, Value] : B.Values)
      if (const Known *V = Other.B.find(Index); V && *V == Value)
        Kept.Values.push_back({Index, Value});
    for (const auto &[Path, Value] : B.Members)
      if (const Known *V = Other.B.findMember(Path); V && *V == Value)
        Kept.Members.push_back({Path, Value});
    bool Changed = Kept.Values.size() != B.Values.size() ||
                   Kept.Members.size() != B.Members.size();
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

  std::optional<Known> eval(const Expr *E) const {
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
          return Known{Method == "empty" ? int64_t(*Length == 0) : *Length};
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
      case CK_PointerToBoolean:
        if (auto V = eval(C->getSubExpr()))
          return Known{int64_t(V->truth())};
        return std::nullopt;
      case CK_NullToPointer:
        return Known{0};
      default:
        return constant(E);
      }
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      if (const auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl());
          P && P->getDeclContext() == Owner)
        if (const Known *V = B.find(P->getFunctionScopeIndex()))
          return *V;
      // `bool done = false;` that the body only reads keeps its value.
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
          VD && !isa<ParmVarDecl>(VD) && VD->getInit() &&
          privateLocal(DRE, Owner, Allowed, /*NeverAssigned=*/true))
        return constant(VD->getInit());
      return constant(E);
    }
    if (isa<MemberExpr>(E) && !B.Members.empty())
      if (MemberPath Path = memberPathOf(E); !Path.empty())
        if (const Known *V = B.findMember(Path))
          return *V;
    if (const auto *U = dyn_cast<UnaryOperator>(E)) {
      auto V = eval(U->getSubExpr());
      if (!V)
        return std::nullopt;
      if (V->NonZero)
        return U->getOpcode() == UO_LNot ? std::optional<Known>(Known{0})
                                         : std::nullopt;
      switch (U->getOpcode()) {
      case UO_LNot:
        return Known{int64_t(V->Value == 0)};
      case UO_Minus:
        return Known{-V->Value};
      case UO_Not:
        return Known{~V->Value};
      case UO_Plus:
        return *V;
      default:
        return std::nullopt;
      }
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      auto L = eval(BO->getLHS());
      if (BO->getOpcode() == BO_LAnd && L && !L->truth())
        return Known{0};
      if (BO->getOpcode() == BO_LOr && L && L->truth())
        return Known{1};
      auto R = eval(BO->getRHS());
      if (BO->getOpcode() == BO_LAnd && R && !R->truth())
        return Known{0};
      if (BO->getOpcode() == BO_LOr && R && R->truth())
        return Known{1};
      if (!L || !R)
        return std::nullopt;
      if (BO->getOpcode() == BO_LAnd)
        return Known{int64_t(L->truth() && R->truth())};
      if (BO->getOpcode() == BO_LOr)
        return Known{int64_t(L->truth() || R->truth())};
      if (L->NonZero || R->NonZero) {
        // Only a comparison with zero is decided: `stream == 0`.
        const Known &Other = L->NonZero ? *R : *L;
        if (Other.NonZero || Other.Value != 0)
          return std::nullopt;
        if (BO->getOpcode() == BO_EQ)
          return Known{0};
        if (BO->getOpcode() == BO_NE)
          return Known{1};
        return std::nullopt;
      }
      // Pointers compare only for (in)equality; their arithmetic is not
      // followed.
      if ((BO->getLHS()->getType()->isPointerType() ||
           BO->getRHS()->getType()->isPointerType()) &&
          !BO->isEqualityOp())
        return std::nullopt;
      int64_t LV = L->Value, RV = R->Value;
      switch (BO->getOpcode()) {
      case BO_EQ:
        return Known{int64_t(LV == RV)};
      case BO_NE:
        return Known{int64_t(LV != RV)};
      case BO_LT:
        return Known{int64_t(LV < RV)};
      case BO_LE:
        return Known{int64_t(LV <= RV)};
      case BO_GT:
        return Known{int64_t(LV > RV)};
      case BO_GE:
        return Known{int64_t(LV >= RV)};
      case BO_And:
        return Known{LV & RV};
      case BO_Or:
        return Known{LV | RV};
      case BO_Xor:
        return Known{LV ^ RV};
      case BO_Add:
        return Known{int64_t(uint64_t(LV) + uint64_t(RV))};
      case BO_Sub:
        return Known{int64_t(uint64_t(LV) - uint64_t(RV))};
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
        if (const Known *V = B.find(P->getFunctionScopeIndex());
            V && !V->NonZero)
          return V->Value;
    return std::nullopt;
  }

private:
  std::optional<Known> constant(const Expr *E) const {
    if (auto V = constantOf(E, Ctx))
      return Known{*V};
    return std::nullopt;
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
    if (Cond) {
      collectParamRefs(Cond, Owner, Decides);
      collectMembers(Cond);
    }
    auto Passed = [&](const Expr *Arg) {
      if (const ParmVarDecl *P = paramRef(Arg, Owner))
        Decides.push_back(P->getFunctionScopeIndex());
      if (MemberPath Path = memberPathOf(Arg); !Path.empty())
        Fields.push_back(Path.back());
    };
    if (const auto *Call = dyn_cast<CallExpr>(S))
      for (const Expr *Arg : Call->arguments())
        Passed(Arg);
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(S))
      for (const Expr *Arg : Construct->arguments())
        Passed(Arg);
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S);
        MC && !InLambda && MC->getImplicitObjectArgument() &&
        isa<CXXThisExpr>(MC->getImplicitObjectArgument()->IgnoreParenImpCasts()))
      CallsOnThis = true;
    // A member changed other than by a plain assignment in this body.
    const Expr *Written = nullptr;
    if (const auto *UO = dyn_cast<UnaryOperator>(S);
        UO && (UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf))
      Written = UO->getSubExpr();
    else if (const auto *CA = dyn_cast<CompoundAssignOperator>(S))
      Written = CA->getLHS();
    else if (const auto *BO = dyn_cast<BinaryOperator>(S);
             BO && BO->getOpcode() == BO_Assign && InLambda)
      Written = BO->getLHS();
    if (MemberPath Path = memberPathOf(Written); !Path.empty())
      ChangedFields.append(Path.begin(), Path.end());
    // Any write at all, plain assignments included: what a call of this
    // method changes for its caller.
    const Expr *Any = Written;
    if (const auto *BO = dyn_cast<BinaryOperator>(S);
        BO && BO->getOpcode() == BO_Assign)
      Any = BO->getLHS();
    else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S);
             Op && Op->isAssignmentOp() && Op->getNumArgs() >= 1)
      Any = Op->getArg(0);
    else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S);
             MC && MC->getMethodDecl() && !MC->getMethodDecl()->isConst())
      Any = MC->getImplicitObjectArgument();
    if (MemberPath Path = memberPathOf(Any); !Path.empty())
      WrittenFields.append(Path.begin(), Path.end());
    bool Lambda = InLambda || isa<LambdaExpr>(S);
    if (const auto *L = dyn_cast<LambdaExpr>(S)) {
      walk(L->getBody(), S, true);
      return;
    }
    for (const Stmt *Child : S->children())
      walk(Child, S, Lambda);
  }

  llvm::SmallVector<unsigned, 4> Decides, Changed;
  llvm::SmallVector<const FieldDecl *, 4> Fields, ChangedFields, WrittenFields;
  bool CallsOnThis = false;

private:
  void collectMembers(const Stmt *S) {
    if (!S)
      return;
    if (const auto *E = dyn_cast<Expr>(S))
      if (MemberPath Path = memberPathOf(E); !Path.empty())
        Fields.push_back(Path.back());
    for (const Stmt *Child : S->children())
      collectMembers(Child);
  }

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
  if (Def->hasBody()) {
    ParamScan Scan(Def);
    Scan.walk(Def->getBody(), nullptr, false);
    // Members matter in a method that runs on the object a caller's facts
    // are about.
    if (const auto *M = dyn_cast<CXXMethodDecl>(Def);
        M && M->isInstance() && !isa<CXXConstructorDecl>(M) &&
        !isa<CXXDestructorDecl>(M)) {
      Info.CallsOnThis = Scan.CallsOnThis;
      Info.ChangedFields.assign(Scan.ChangedFields.begin(),
                                Scan.ChangedFields.end());
      Info.WrittenFields.assign(Scan.WrittenFields.begin(),
                                Scan.WrittenFields.end());
      for (const FieldDecl *FD : Scan.Fields)
        if (!llvm::is_contained(Scan.ChangedFields, FD) &&
            !llvm::is_contained(Info.Fields, FD))
          Info.Fields.push_back(FD);
    }
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
      // A pointer by reference could be reset behind the body's back.
      if (!bindableType(T) ||
          (T->isPointerType() &&
           Def->getParamDecl(I)->getType()->isReferenceType()))
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
    if (const Known *V = In.find(I))
      Entry.Values.push_back({I, *V});
  relevantMembers(Def, In, Entry);
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
      // `cfg_ = other;` forgets what was known of cfg_'s members.
      if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(St);
          Op && Op->isAssignmentOp() && Op->getNumArgs() >= 1 &&
          !Out.B.Members.empty())
        if (MemberPath Path = memberPathOf(Op->getArg(0)); !Path.empty())
          Out.B.bindMember(Path, std::nullopt);
      const auto *BO = dyn_cast<BinaryOperator>(St);
      if (!BO || BO->getOpcode() != BO_Assign)
        continue;
      if (const ParmVarDecl *P = paramRef(BO->getLHS(), Def))
        bind(Out.B, P->getFunctionScopeIndex(),
             Evaluator(Ctx, Def, Out.B).eval(BO->getRHS()));
      else if (!Out.B.Members.empty())
        if (MemberPath Path = memberPathOf(BO->getLHS()); !Path.empty())
          Out.B.bindMember(Path, Evaluator(Ctx, Def, Out.B).eval(BO->getRHS()));
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
      (V && V->truth() ? EnteredTrue : EnteredOtherwise).insert(While);
    }
    if (Out.B.empty()) {
      TakenEdges.insert({From.getBlockID(), Succ});
      return Out;
    }
    const Stmt *T = From.getTerminatorStmt();
    if (const auto *Sw = dyn_cast_or_null<SwitchStmt>(T)) {
      auto V = Evaluator(Ctx, Def, Out.B).eval(Sw->getCond());
      if (!V || V->NonZero)
        return Out;
      if (const auto *Label = dyn_cast_or_null<CaseStmt>(To.getLabel())) {
        std::optional<bool> M = caseMatches(Label, V->Value, Ctx);
        return !M || *M ? std::optional<ValueState>(Out) : std::nullopt;
      }
      for (const SwitchCase *SC = Sw->getSwitchCaseList(); SC;
           SC = SC->getNextSwitchCase()) {
        std::optional<bool> M = caseMatches(SC, V->Value, Ctx);
        if (!M || *M)
          return M ? std::nullopt : std::optional<ValueState>(Out);
      }
      return Out; // the default, or past the switch
    }
    if (From.succ_size() != 2 || !T)
      return Out;
    const auto *Cond = dyn_cast_or_null<Expr>(From.getTerminatorCondition());
    auto V = Evaluator(Ctx, Def, Out.B).eval(Cond);
    bool Taken = !V || (Succ == 0 ? V->truth() : !V->truth());
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

void ValueFacts::relevantMembers(const FunctionDecl *Def, const Bindings &In,
                                 Bindings &Out) {
  if (In.Members.empty())
    return;
  const ParamInfo &Info = paramInfo(Def);
  for (const auto &[Path, Value] : In.Members) {
    if (llvm::any_of(Path, [&](const FieldDecl *FD) {
          return llvm::is_contained(Info.ChangedFields, FD);
        }))
      continue;
    if (Info.CallsOnThis || llvm::is_contained(Info.Fields, Path.back()))
      Out.Members.push_back({Path, Value});
  }
}

bool ValueFacts::mayChangeMember(const FunctionDecl *Method,
                                 const MemberPath &Path) {
  const auto *M = dyn_cast_or_null<CXXMethodDecl>(Method);
  if (!M || !M->isInstance() || M->isConst())
    return false;
  const FunctionDecl *Def = M->getDefinition();
  if (!Def || !Def->hasBody())
    return true; // unseen: it may set anything
  const ParamInfo &Info = paramInfo(Def);
  // A method that calls others on the object may change it through them.
  return Info.CallsOnThis ||
         llvm::any_of(Path, [&](const FieldDecl *FD) {
           return llvm::is_contained(Info.WrittenFields, FD);
         });
}

/// Whether \p S calls a method of the object the calling method runs on
/// (`run()`, `this->run()`), so that facts about its members hold there.
static bool callsOnSameObject(const Stmt *S, const FunctionDecl *CallerFn,
                              const FunctionDecl *Def) {
  const auto *Caller = dyn_cast_or_null<CXXMethodDecl>(CallerFn);
  const auto *Callee = dyn_cast_or_null<CXXMethodDecl>(Def);
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(S);
  if (!Caller || !Callee || !MC || !Caller->isInstance() ||
      !Callee->isInstance() || isa<CXXConstructorDecl>(Callee) ||
      isa<CXXDestructorDecl>(Callee))
    return false;
  const Expr *Obj = MC->getImplicitObjectArgument();
  return Obj && isa<CXXThisExpr>(Obj->IgnoreParenImpCasts());
}

Bindings ValueFacts::passed(const CallSite &Site, const FunctionDecl *Def,
                            const FunctionDecl *CallerFn,
                            const ValueResult *Caller, KnownArgFn KnownArg,
                            const Bindings *Held) {
  Bindings Out;
  if (!Def || (Site.K != CallSite::Kind::Call &&
               Site.K != CallSite::Kind::Construct))
    return Out;
  const ParamInfo &Info = paramInfo(Def);
  bool SameObject = callsOnSameObject(Site.S, CallerFn, Def);
  if (Info.Relevant.empty() && !(SameObject && (Info.CallsOnThis ||
                                                !Info.Fields.empty())))
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
  // What holds at the call: the caller's own bindings there, and the
  // facts held besides where the caller knows nothing of a value.
  Bindings At;
  if (Caller && Caller->Function == CallerFn) {
    auto It = Caller->AtCall.find(Site.S);
    if (It != Caller->AtCall.end())
      At = It->second;
  }
  if (Held) {
    for (const auto &[Index, Value] : Held->Values)
      if (!At.find(Index))
        bind(At, Index, Value);
    for (const auto &[Path, Value] : Held->Members)
      if (!At.findMember(Path))
        At.Members.push_back({Path, Value});
  }
  for (unsigned I : Info.Relevant) {
    if (I + Offset >= Args.size())
      continue;
    const Expr *Arg = Args[I + Offset];
    if (isConstStringType(Def->getParamDecl(I)->getType())) {
      if (auto Length = Evaluator(Ctx, CallerFn, At).stringLength(Arg))
        Out.Values.push_back({I, Known{*Length}});
      continue;
    }
    // A reference binds only a local of the caller that nothing else can
    // reach: then only the callee's own assignments change it.
    bool ByRef = Def->getParamDecl(I)->getType()->isReferenceType();
    if (ByRef && !privateLocal(Arg, CallerFn, Arg, /*NeverAssigned=*/false))
      continue;
    std::optional<Known> V =
        Evaluator(Ctx, CallerFn, At, ByRef ? Arg : nullptr).eval(Arg);
    if (!V && KnownArg)
      V = KnownArg(Arg);
    if (V)
      Out.Values.push_back({I, *V});
  }
  if (SameObject)
    relevantMembers(Def, At, Out);
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
    if (const FunctionDecl *Callee = calleeOf(Call))
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
