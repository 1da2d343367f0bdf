//===--- FrozenHostStateCheck.cpp - cudagraph-tidy ------------------------===//

#include "FrozenHostStateCheck.h"
#include "ForwardAnalysis.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/CFG.h"
#include "clang/Lex/Lexer.h"

namespace clang::tidy::cudagraph {

using ValueKind = FrozenHostStateCheck::ValueKind;
using GraphRef = FrozenHostStateCheck::GraphRef;

FrozenHostStateCheck::FrozenHostStateCheck(StringRef Name,
                                           ClangTidyContext *Context)
    : CudaGraphCheck(Name, Context),
      Apis(Options.getLocalOrGlobal("CaptureBeginFunctions", ""),
           Options.getLocalOrGlobal("CaptureEndFunctions", ""),
           Options.getLocalOrGlobal("CaptureStatusFunctions", "")),
      Reassigned(findHazard("reassigned-static-input")),
      Scalar(findHazard("frozen-host-scalar")),
      Freed(findHazard("freed-before-replay")),
      PerCall(findHazard("per-call-input")) {
  assert(Reassigned && Scalar && Freed && PerCall &&
         "the catalog lacks the frozen-state hazards");
  for (const Hazard &H : hazardsForCheck(Name))
    if (H.Kind == HazardKind::Callee)
      CalleeHazards.push_back(H);
}

//===----------------------------------------------------------------------===//
// Types and storages
//===----------------------------------------------------------------------===//

/// A container of tensors a call reads as a whole: `std::vector<at::Tensor>`,
/// a TorchScript `std::vector<c10::IValue>` of inputs, `c10::List`, an
/// `IValue` itself.
static bool isTensorListType(QualType T) {
  T = T.getNonReferenceType().getUnqualifiedType();
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  if (!RD || !RD->getIdentifier())
    return false;
  auto IsValue = [](const CXXRecordDecl *RD) {
    const auto *NS = dyn_cast<NamespaceDecl>(RD->getDeclContext());
    return RD->getIdentifier() && RD->getName() == "IValue" && NS &&
           NS->getIdentifier() && NS->getName() == "c10";
  };
  if (IsValue(RD))
    return true;
  const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD);
  if (!Spec || Spec->getTemplateArgs().size() < 1 ||
      Spec->getTemplateArgs()[0].getKind() != TemplateArgument::Type ||
      !llvm::is_contained({"vector", "List", "array", "SmallVector", "deque"},
                          RD->getName()))
    return false;
  QualType Element = Spec->getTemplateArgs()[0].getAsType();
  if (isTensorType(Element))
    return true;
  const CXXRecordDecl *ElementRD = Element->getAsCXXRecordDecl();
  return ElementRD && IsValue(ElementRD);
}

/// A class of the project that owns a tensor: a field of type at::Tensor,
/// in the class or a base (a wrapper such as a lattice code's own Tensor).
static bool ownsTensor(QualType T) {
  const auto *RD = T.getNonReferenceType()->getAsCXXRecordDecl();
  if (!RD || !RD->hasDefinition() || isTensorType(T) || isTensorListType(T))
    return false;
  RD = RD->getDefinition();
  std::string Name = RD->getQualifiedNameAsString();
  llvm::StringRef N(Name);
  if (N.starts_with("std::") || N.starts_with("at::") ||
      N.starts_with("c10::") || N.starts_with("torch::"))
    return false;
  auto HasTensorField = [](const CXXRecordDecl *C) {
    return llvm::any_of(C->fields(), [](const FieldDecl *F) {
      return isTensorType(F->getType()) && !F->getType()->isReferenceType();
    });
  };
  if (HasTensorField(RD))
    return true;
  bool Found = false;
  RD->forallBases([&](const CXXRecordDecl *Base) {
    Found = Found || HasTensorField(Base);
    return true;
  });
  return Found;
}

/// Whether \p Init makes a new object of a tensor-owning class: a
/// construction (not a copy or move) from no tensor, which makes its own.
static bool isFreshOwner(const Expr *Init) {
  const Expr *E = Init ? Init->IgnoreImplicit() : nullptr;
  const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(E);
  if (!Construct || !ownsTensor(Construct->getType()) ||
      Construct->getConstructor()->isCopyOrMoveConstructor())
    return false;
  return llvm::none_of(Construct->arguments(), [](const Expr *Arg) {
    QualType T = Arg->getType();
    return isTensorType(T) || isTensorListType(T) || ownsTensor(T);
  });
}

/// A pointer to data (not an opaque handle such as cudaStream_t, whose
/// pointee is an incomplete struct, nor a function).
static bool isDataPointer(QualType T) {
  T = T.getNonReferenceType();
  if (!T->isPointerType())
    return false;
  QualType P = T->getPointeeType();
  if (P->isFunctionType())
    return false;
  if (P->isRecordType() && P->isIncompleteType())
    return false;
  return true;
}

static std::optional<ValueKind> kindOf(QualType T) {
  if (isTensorType(T))
    return ValueKind::Tensor;
  if (isTensorListType(T))
    return ValueKind::TensorList;
  T = T.getNonReferenceType();
  if (T.isConstQualified())
    return std::nullopt;
  if (isDataPointer(T))
    return ValueKind::Pointer;
  if (T->isArithmeticType())
    return ValueKind::Scalar;
  return std::nullopt;
}

/// \p E without implicit conversions, temporaries and copies.
static const Expr *stripCopies(const Expr *E) {
  for (unsigned Depth = 0; E && Depth < 8; ++Depth) {
    E = E->IgnoreImplicit()->IgnoreParens();
    const auto *Construct = dyn_cast<CXXConstructExpr>(E);
    if (!Construct || Construct->getNumArgs() != 1 ||
        !(Construct->getConstructor()->isCopyOrMoveConstructor()))
      return E;
    E = Construct->getArg(0);
  }
  return E;
}

/// The field a trivial accessor returns: `T &input() { return Input; }`.
/// With \p Through, also `return &Graph;` and `return *Graph;`.
static const FieldDecl *accessedField(const CXXMemberCallExpr *Call,
                                      bool Through) {
  const CXXMethodDecl *MD = Call->getMethodDecl();
  if (!MD || MD->getNumParams() != 0 || isa<CXXConversionDecl>(MD))
    return nullptr;
  const FunctionDecl *Def = nullptr;
  if (!MD->hasBody(Def) || !Def)
    return nullptr;
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Def->getBody());
  if (!Body || Body->size() != 1)
    return nullptr;
  const auto *Ret = dyn_cast<ReturnStmt>(Body->body_front());
  if (!Ret || !Ret->getRetValue())
    return nullptr;
  const Expr *E = stripCopies(Ret->getRetValue());
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      Through && UO &&
      (UO->getOpcode() == UO_AddrOf || UO->getOpcode() == UO_Deref))
    E = UO->getSubExpr()->IgnoreParenImpCasts();
  const auto *ME = dyn_cast<MemberExpr>(E);
  if (!ME || !isa<CXXThisExpr>(ME->getBase()->IgnoreParenImpCasts()))
    return nullptr;
  const auto *FD = dyn_cast<FieldDecl>(ME->getMemberDecl());
  return FD ? FD->getCanonicalDecl() : nullptr;
}

/// Whether \p E names an element (`p[i]`, `a[i]`, `v[i]`), not the
/// variable itself.
static bool isElement(const Expr *E) {
  E = E ? E->IgnoreParenImpCasts() : nullptr;
  if (isa_and_nonnull<ArraySubscriptExpr>(E))
    return true;
  const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(E);
  return Op && Op->getOperator() == OO_Subscript;
}

/// The variable or field \p E denotes, through a trivial accessor too.
static const Decl *storageOfValue(const Expr *E) {
  E = stripCopies(E);
  if (!E)
    return nullptr;
  if (const Decl *D = storageOf(E))
    return D;
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E))
    return accessedField(MC, /*Through=*/false);
  return nullptr;
}

/// The local or global variable a member chain starts from (`p` of
/// `p.alpha`, `cfg.dims.n`); null through a pointer, a reference or `this`.
static const VarDecl *objectOf(const Expr *E) {
  const Expr *Cur = E ? E->IgnoreParenImpCasts() : nullptr;
  if (!Cur || !isa<MemberExpr>(Cur))
    return nullptr;
  while (const auto *ME = dyn_cast<MemberExpr>(Cur)) {
    if (ME->isArrow())
      return nullptr;
    Cur = ME->getBase()->IgnoreParenImpCasts();
  }
  const auto *DRE = dyn_cast<DeclRefExpr>(Cur);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || VD->getType()->isReferenceType() || VD->getType()->isPointerType())
    return nullptr;
  return VD->getCanonicalDecl();
}

/// The variable or field that holds a graph object or handle: `g`, `*p`,
/// `p->`, a smart pointer's `->`, an accessor.
static const Decl *graphKeyOf(const Expr *E) {
  for (unsigned Depth = 0; E && Depth < 6; ++Depth) {
    E = stripCopies(E);
    if (const Decl *D = storageOf(E))
      return D;
    if (const auto *UO = dyn_cast<UnaryOperator>(E);
        UO && (UO->getOpcode() == UO_Deref || UO->getOpcode() == UO_AddrOf)) {
      E = UO->getSubExpr();
      continue;
    }
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
        Op && Op->getNumArgs() >= 1 &&
        (Op->getOperator() == OO_Arrow || Op->getOperator() == OO_Star)) {
      E = Op->getArg(0);
      continue;
    }
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E))
      return accessedField(MC, /*Through=*/true);
    return nullptr;
  }
  return nullptr;
}

static StringRef nameOfStorage(const Decl *D) {
  if (const auto *ND = dyn_cast<NamedDecl>(D))
    if (ND->getIdentifier())
      return ND->getName();
  return "";
}

//===----------------------------------------------------------------------===//
// Changes
//===----------------------------------------------------------------------===//

namespace {
struct Change {
  const Decl *Storage = nullptr;
  ValueKind Kind = ValueKind::Scalar;
  /// `v = value` on a tensor: the value (for the copy_ fix), else null.
  const Expr *Value = nullptr;
  const Expr *Target = nullptr;
  /// The struct variable the changed member belongs to, if named.
  const VarDecl *Object = nullptr;
};
} // namespace

/// What statement \p S changes: a plain, compound or increment assignment
/// of a scalar or pointer, the copy or move assignment of a tensor
/// variable (not an in-place operator), a local declared again.
static std::optional<Change> changeOf(const Stmt *S) {
  if (const auto *BO = dyn_cast<BinaryOperator>(S)) {
    if (!BO->isAssignmentOp())
      return std::nullopt;
    const Decl *D = storageOf(BO->getLHS());
    auto K = kindOf(BO->getLHS()->getType());
    if (!D || !K || *K == ValueKind::Tensor)
      return std::nullopt;
    return Change{D, *K, nullptr, BO->getLHS(), objectOf(BO->getLHS())};
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(S)) {
    if (!UO->isIncrementDecrementOp())
      return std::nullopt;
    const Decl *D = storageOf(UO->getSubExpr());
    auto K = kindOf(UO->getSubExpr()->getType());
    if (!D || !K || *K == ValueKind::Tensor)
      return std::nullopt;
    return Change{D, *K, nullptr, UO->getSubExpr(),
                  objectOf(UO->getSubExpr())};
  }
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S)) {
    if (Op->getOperator() != OO_Equal || Op->getNumArgs() != 2)
      return std::nullopt;
    const auto *MD = dyn_cast_or_null<CXXMethodDecl>(calleeOf(Op));
    if (!MD || MD->getRefQualifier() == RQ_RValue ||
        !(MD->isCopyAssignmentOperator() || MD->isMoveAssignmentOperator()) ||
        !isTensorType(Op->getArg(0)->getType()))
      return std::nullopt;
    const Expr *Target = Op->getArg(0)->IgnoreParenImpCasts();
    const Decl *D = nullptr;
    if (isa<DeclRefExpr>(Target) || isa<MemberExpr>(Target))
      D = storageOf(Target);
    else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Target);
             MC && MC->getMethodDecl() &&
             MC->getMethodDecl()->getReturnType()->isLValueReferenceType())
      D = accessedField(MC, /*Through=*/false);
    if (!D)
      return std::nullopt;
    return Change{D, ValueKind::Tensor, Op->getArg(1), Op->getArg(0),
                  objectOf(Op->getArg(0))};
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// What captured work reads
//===----------------------------------------------------------------------===//

/// Work the graph records with its arguments: a kernel launch, a CUDA
/// stream-ordered call (`*Async`, launches), a libtorch operator (a
/// function of at:: or torch:: returning a tensor; assignments aside).
static bool isCapturedWork(CaptureAnalysis &Analysis, const CallExpr *Call) {
  if (isa<CUDAKernelCallExpr>(Call))
    return true;
  const FunctionDecl *FD = calleeOf(Call);
  if (!FD)
    return false;
  StringRef Name = Analysis.nameOf(FD);
  static const NamePatterns CudaWork(
      "cuda*Async|cu*Async|cudaLaunch*|cuLaunch*");
  if (CudaWork.matches(Name))
    return true;
  if (!Name.starts_with("at::") && !Name.starts_with("torch::"))
    return false;
  if (const auto *MD = dyn_cast<CXXMethodDecl>(FD);
      MD && (MD->isCopyAssignmentOperator() || MD->isMoveAssignmentOperator()))
    return false;
  // A TorchScript module's forward returns an IValue.
  return isTensorType(FD->getReturnType()) ||
         isTensorListType(FD->getReturnType());
}

/// Calls \p Fn for every variable or field \p E reads as a value the graph
/// keeps: a tensor or pointer it names, a scalar it loads (not inside `&x`,
/// sizeof or lambdas).
static void forEachCapturedValue(
    const Expr *E,
    llvm::function_ref<void(const Decl *, ValueKind, const Expr *)> Fn) {
  if (!E)
    return;
  if (isa<LambdaExpr>(E) || isa<UnaryExprOrTypeTraitExpr>(E))
    return;
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->getOpcode() == UO_AddrOf)
    return;
  if (isTensorType(E->getType()) && !E->isPRValue()) {
    if (const Decl *D = storageOfValue(E);
        D && isTensorType(cast<ValueDecl>(D)->getType())) {
      Fn(D, ValueKind::Tensor, E);
      return;
    }
  }
  if (isTensorListType(E->getType()) && !E->isPRValue())
    if (const Decl *D = storageOf(E)) {
      Fn(D, ValueKind::TensorList, E);
      return;
    }
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E);
      MC && isTensorType(MC->getType()))
    if (const FieldDecl *F = accessedField(MC, /*Through=*/false);
        F && isTensorType(F->getType())) {
      Fn(F, ValueKind::Tensor, E);
      return;
    }
  if (const auto *Cast = dyn_cast<ImplicitCastExpr>(E);
      Cast && Cast->getCastKind() == CK_LValueToRValue) {
    const Expr *Sub = Cast->getSubExpr();
    auto K = kindOf(Sub->getType());
    if (K && *K != ValueKind::Tensor && *K != ValueKind::TensorList)
      if (const Decl *D = storageOf(Sub)) {
        Fn(D, *K, Sub);
        // An index still counts: `a[i]` reads i too.
      }
  }
  for (const Stmt *Child : E->children())
    if (const auto *CE = dyn_cast_or_null<Expr>(Child))
      forEachCapturedValue(CE, Fn);
}

/// The argument a call or construction passes for parameter \p P of its
/// callee; null for a default argument or an index out of range.
static const Expr *argumentFor(const Stmt *Site, const ParmVarDecl *P) {
  unsigned I = P->getFunctionScopeIndex();
  const Expr *Arg = nullptr;
  if (const auto *Call = dyn_cast_or_null<CallExpr>(Site)) {
    if (const auto *MD = dyn_cast<CXXMethodDecl>(P->getDeclContext());
        MD && !MD->isStatic() && isa<CXXOperatorCallExpr>(Call))
      ++I; // the object is the operator call's first argument
    Arg = I < Call->getNumArgs() ? Call->getArg(I) : nullptr;
  } else if (const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(Site)) {
    Arg = I < Construct->getNumArgs() ? Construct->getArg(I) : nullptr;
  }
  if (!Arg || isa<CXXDefaultArgExpr>(Arg->IgnoreImplicit()))
    return nullptr;
  return Arg;
}

/// Whether \p Call launches a kernel with a kernel-parameter array
/// (`void *args[]`), which the launch copies at the call.
static bool takesParameterArray(CaptureAnalysis &Analysis,
                                const CallExpr *Call) {
  const FunctionDecl *FD = calleeOf(Call);
  static const NamePatterns Launches(
      "cudaLaunchKernel*|cudaLaunchCooperativeKernel*|cuLaunchKernel*|"
      "cuLaunchCooperativeKernel*");
  return FD && Launches.matches(Analysis.nameOf(FD));
}

/// Calls \p Fn for the variable or field each kernel-parameter array
/// element of a launch call points at: `void *args[] = {&d_x, &n};
/// cuLaunchKernel(..., args, ...)` hands the launch the values of d_x and n,
/// which the graph keeps.
static void forEachLaunchParameter(
    CaptureAnalysis &Analysis, const CallExpr *Call,
    llvm::function_ref<void(const Decl *, ValueKind, const Expr *)> Fn) {
  if (!takesParameterArray(Analysis, Call))
    return;
  for (const Expr *Arg : Call->arguments()) {
    const auto *DRE = dyn_cast<DeclRefExpr>(Arg->IgnoreParenCasts());
    const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (!VD || !VD->getType()->isConstantArrayType() ||
        !VD->getType()->getArrayElementTypeNoTypeQual()->isPointerType())
      continue;
    const auto *Init = dyn_cast_or_null<InitListExpr>(
        VD->getInit() ? VD->getInit()->IgnoreImplicit() : nullptr);
    if (!Init)
      continue;
    for (const Expr *Element : Init->inits()) {
      const auto *UO = dyn_cast<UnaryOperator>(Element->IgnoreParenCasts());
      if (!UO || UO->getOpcode() != UO_AddrOf)
        continue;
      const Expr *Pointee = UO->getSubExpr()->IgnoreParens();
      auto K = kindOf(Pointee->getType());
      if (const Decl *D = storageOf(Pointee); D && K)
        Fn(D, *K, Pointee);
    }
  }
}

/// Whether objects of \p T hold their storage through a `std::shared_ptr`
/// (in a field or base, a few levels down): copies of such an object share
/// the storage, and one going away frees nothing while another lives.
static bool sharedOwnership(QualType T, unsigned Depth = 0) {
  const auto *RD = T.isNull() ? nullptr : T->getAsCXXRecordDecl();
  if (!RD || Depth > 3)
    return false;
  if (RD->isInStdNamespace())
    return RD->getName() == "shared_ptr";
  RD = RD->getDefinition();
  if (!RD)
    return false;
  for (const FieldDecl *F : RD->fields())
    if (sharedOwnership(F->getType(), Depth + 1))
      return true;
  for (const CXXBaseSpecifier &B : RD->bases())
    if (sharedOwnership(B.getType(), Depth + 1))
      return true;
  return false;
}

/// Whether local \p VD is a view of storage another object keeps alive: an
/// object of a shared-ownership class (sharedOwnership) that is not built
/// fresh by a constructor of its own or a factory, but copied from another
/// object or returned by a method of one (`auto rows = m.slice_rows(0, n);`).
/// Its scope end
/// frees nothing the other object still holds.
static bool sharedView(const VarDecl *VD) {
  if (!sharedOwnership(VD->getType()))
    return false;
  const Expr *Init = VD->getInit();
  if (!Init)
    return false;
  Init = Init->IgnoreImplicit();
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Init)) {
    const CXXConstructorDecl *Ctor = Construct->getConstructor();
    if (!Ctor || !Ctor->isCopyOrMoveConstructor() ||
        Construct->getNumArgs() < 1)
      return false; // made here: its own storage
    Init = Construct->getArg(0)->IgnoreImplicit();
  }
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Init))
    return MC->getImplicitObjectArgument() &&
           MC->getImplicitObjectArgument()->isGLValue();
  return isa<DeclRefExpr>(Init) || isa<MemberExpr>(Init);
}

/// The local variable whose storage \p E hands over by address: `&x`,
/// `&v[0]`, `v.data()`, an array decaying to a pointer. Automatic variables
/// only (their storage ends with their scope); null otherwise.
static const VarDecl *addressedLocal(const Expr *E) {
  if (!E)
    return nullptr;
  E = E->IgnoreParenCasts();
  const Expr *Object = nullptr;
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->getOpcode() == UO_AddrOf) {
    Object = UO->getSubExpr()->IgnoreParens();
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(Object))
      Object = AS->getBase()->IgnoreParenImpCasts();
    else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Object);
             Op && Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2)
      Object = Op->getArg(0)->IgnoreParenImpCasts();
  } else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E)) {
    const CXXMethodDecl *MD = MC->getMethodDecl();
    if (!MD || !MD->getIdentifier() ||
        (MD->getName() != "data" && MD->getName() != "c_str") ||
        !MC->getType()->isPointerType())
      return nullptr;
    Object = MC->getImplicitObjectArgument()->IgnoreParenImpCasts();
    if (!Object->getType()->isRecordType())
      return nullptr;
  } else if (const auto *Decay = dyn_cast<ImplicitCastExpr>(E->IgnoreParens());
             Decay && Decay->getCastKind() == CK_ArrayToPointerDecay) {
    Object = Decay->getSubExpr()->IgnoreParens();
  } else if (const auto *Plain = dyn_cast<DeclRefExpr>(E);
             Plain && Plain->getType()->isArrayType()) {
    Object = Plain;
  }
  const auto *DRE = dyn_cast_or_null<DeclRefExpr>(Object);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || !VD->hasLocalStorage() || VD->getType()->isReferenceType() ||
      VD->getType()->isPointerType() || sharedView(VD))
    return nullptr;
  return VD;
}

/// The variable or field a release frees: `free(p)`, `delete[] p`,
/// `cudaFree(p)`, `cudaFreeHost(p)`, `cuMemFree(p)`; null otherwise.
static const Decl *releasedBy(CaptureAnalysis &Analysis, const Stmt *S) {
  if (const auto *Delete = dyn_cast<CXXDeleteExpr>(S))
    return storageOf(Delete->getArgument());
  const auto *Call = dyn_cast<CallExpr>(S);
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD || Call->getNumArgs() < 1)
    return nullptr;
  static const NamePatterns Releases(
      "free|std::free|cudaFree|cudaFreeHost|cudaFreeAsync|cuMemFree|"
      "cuMemFree_v2|cuMemFreeHost|cuMemFreeAsync");
  if (!Releases.matches(Analysis.nameOf(FD)))
    return nullptr;
  const Expr *Arg = Call->getArg(0)->IgnoreParenCasts();
  return isa<DeclRefExpr>(Arg) || isa<MemberExpr>(Arg) ? storageOf(Arg)
                                                       : nullptr;
}

/// Calls \p Fn for every statement of \p S that is not inside a lambda.
static void forEachStmt(const Stmt *S,
                        llvm::function_ref<void(const Stmt *)> Fn) {
  if (!S || isa<LambdaExpr>(S))
    return;
  Fn(S);
  for (const Stmt *Child : S->children())
    forEachStmt(Child, Fn);
}

/// The parameter a scalar local is computed from alone, and never changed
/// after: `int seq_len = position + 1;` stands for `position`. Null
/// otherwise.
static const ParmVarDecl *derivedParameter(const VarDecl *VD,
                                           ASTContext &Ctx) {
  if (!VD || isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() ||
      VD->getType()->isReferenceType() || !VD->getInit())
    return nullptr;
  const Expr *E = VD->getInit();
  for (unsigned Depth = 0; E && Depth < 4; ++Depth) {
    E = E->IgnoreParenImpCasts();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl());
      const auto *FD = dyn_cast<FunctionDecl>(VD->getDeclContext());
      if (!P || !FD || !FD->getBody() || P->getDeclContext() != FD)
        return nullptr;
      // Assigned again (its address may be taken: a kernel-parameter
      // array only reads it).
      bool Assigned = false;
      forEachStmt(FD->getBody(), [&](const Stmt *S) {
        const Expr *Target = nullptr;
        if (const auto *A = dyn_cast<BinaryOperator>(S);
            A && A->isAssignmentOp())
          Target = A->getLHS();
        else if (const auto *U = dyn_cast<UnaryOperator>(S);
                 U && U->isIncrementDecrementOp())
          Target = U->getSubExpr();
        if (const auto *T = dyn_cast_or_null<DeclRefExpr>(
                Target ? Target->IgnoreParenImpCasts() : nullptr);
            T && T->getDecl() == VD)
          Assigned = true;
      });
      return Assigned ? nullptr : P;
    }
    const auto *BO = dyn_cast<BinaryOperator>(E);
    if (!BO || !BO->isAdditiveOp() && !BO->isMultiplicativeOp())
      return nullptr;
    bool L = BO->getLHS()->isIntegerConstantExpr(Ctx);
    bool R = BO->getRHS()->isIntegerConstantExpr(Ctx);
    if (L == R)
      return nullptr;
    E = L ? BO->getRHS() : BO->getLHS();
  }
  return nullptr;
}

void FrozenHostStateCheck::collectReads(CaptureAnalysis &Analysis) {
  Reads.clear();
  ParamReads.clear();
  AddressReads.clear();
  RootsByBegin.clear();
  RootOwners.clear();
  // What each capture writes itself: its intermediates, not inputs.
  std::set<std::pair<const RegionRoot *, const Decl *>> Written;
  llvm::DenseSet<const FunctionDecl *> Scanned;
  for (const CapturedSite &Site : Analysis.sites()) {
    const RegionRoot *Root = Site.Ctx.Root;
    if (!Root)
      continue;
    if (Root->Call)
      RootsByBegin.try_emplace(Root->Call, Root);
    if (Root->Owner)
      RootOwners.insert(Root->Owner->getCanonicalDecl());
    const FunctionDecl *FD = Site.Function;
    if (!FD || !FD->getBody() || !Scanned.insert(FD).second)
      continue;
    forEachStmt(FD->getBody(), [&](const Stmt *S) {
      const Decl *D = nullptr;
      if (auto C = changeOf(S))
        D = C->Storage;
      else if (const auto *DS = dyn_cast<DeclStmt>(S)) {
        for (const Decl *Var : DS->decls())
          if (std::optional<CaptureContext> Ctx = Analysis.contextOf(FD, S);
              Ctx && Ctx->Root)
            Written.insert({Ctx->Root, Var->getCanonicalDecl()});
        return;
      }
      if (!D)
        return;
      if (std::optional<CaptureContext> Ctx = Analysis.contextOf(FD, S);
          Ctx && Ctx->Root)
        Written.insert({Ctx->Root, D});
    });
  }
  llvm::DenseMap<const Decl *, const ParmVarDecl *> Derived;
  for (const CapturedSite &Site : Analysis.sites()) {
    const auto *Call = dyn_cast_or_null<CallExpr>(Site.Site.S);
    if (!Call || Site.Site.K != CallSite::Kind::Call || !Site.Ctx.Root ||
        Site.Ctx.StreamGuarded || !Analysis.isUserLocation(Site.Site.Loc) ||
        !isCapturedWork(Analysis, Call))
      continue;
    auto Record = [&](const Decl *D, ValueKind K, const Expr *Use) {
      // A local computed from a parameter alone reads that parameter.
      const Decl *Param = D;
      if (K == ValueKind::Scalar && !isa<ParmVarDecl>(D)) {
        auto [It, New] = Derived.try_emplace(D, nullptr);
        if (New)
          It->second =
              derivedParameter(dyn_cast<VarDecl>(D), Analysis.context());
        Param = It->second;
      }
      if (isa_and_nonnull<ParmVarDecl>(Param) && K == ValueKind::Scalar) {
        std::vector<CapturedRead> &Sites = ParamReads[Param];
        if (Sites.empty() || Sites.back().Site != &Site)
          Sites.push_back({Param, K, &Site, Use, objectOf(Use)});
      }
      if (Written.count({Site.Ctx.Root, D}))
        return;
      if (const auto *VD = dyn_cast<VarDecl>(D);
          VD && (VD->isConstexpr() || VD->getType().isConstQualified()))
        return;
      std::vector<CapturedRead> &List = Reads[D];
      for (const CapturedRead &R : List)
        if (R.Site->Ctx.Root == Site.Ctx.Root && R.Object == objectOf(Use) &&
            isElement(R.Use) == isElement(Use))
          return; // the first read per capture is enough
      List.push_back({D, K, &Site, Use, objectOf(Use)});
    };
    // A parameter of a reached function holds what its caller passed: the
    // graph keeps the value of the caller's variable (`fused(x, eps_)`
    // whose body launches with `eps`), up the chain while the argument is
    // itself a parameter.
    auto Visit = [&](const Decl *D, ValueKind K, const Expr *Use) {
      Record(D, K, Use);
      const Reach *Step = Site.Ctx.Chain;
      for (unsigned Depth = 0; Step && Depth < 8; ++Depth) {
        const auto *P = dyn_cast<ParmVarDecl>(D);
        const auto *Owner =
            P ? dyn_cast<FunctionDecl>(P->getDeclContext()) : nullptr;
        if (!Owner || !Step->Function ||
            Owner->getCanonicalDecl() != Step->Function->getCanonicalDecl() ||
            Step->Site.Indirect ||
            (Step->Site.K != CallSite::Kind::Call &&
             Step->Site.K != CallSite::Kind::Construct))
          return;
        const Expr *Arg = argumentFor(Step->Site.S, P);
        const Decl *Passed = Arg ? storageOfValue(Arg) : nullptr;
        auto PassedKind =
            Arg ? kindOf(Arg->IgnoreImplicit()->getType()) : std::nullopt;
        if (!Passed || !PassedKind || *PassedKind != K ||
            !Analysis.isUserLocation(Arg->getBeginLoc()))
          return;
        D = Passed;
        Use = stripCopies(Arg);
        Record(D, K, Use);
        Step = Step->Parent;
      }
    };
    // A tensor field read through `this` or a parameter of a method of a
    // tensor-owning class: the object the calls on the chain hand down
    // (`force = field.row(0)` reads `force` and `field`; a method returning
    // such an object, `field.row(0)`, is a view of its own object).
    auto VisitOwner = [&](const Decl *D, ValueKind K, const Expr *Use) {
      const auto *ME = dyn_cast_or_null<MemberExpr>(
          Use ? Use->IgnoreParenImpCasts() : nullptr);
      if (K != ValueKind::Tensor || !isa_and_nonnull<FieldDecl>(D) || !ME ||
          !ownsTensor(QualType(cast<FieldDecl>(D)->getParent()->getTypeForDecl(), 0)))
        return;
      const Expr *Obj = ME->getBase()->IgnoreParenImpCasts();
      const Reach *Step = Site.Ctx.Chain;
      for (unsigned Depth = 0; Obj && Depth < 12; ++Depth) {
        Obj = stripCopies(Obj)->IgnoreParenImpCasts();
        if (const auto *Op = dyn_cast<UnaryOperator>(Obj);
            Op && Op->getOpcode() == UO_Deref)
          Obj = Op->getSubExpr()->IgnoreParenImpCasts();
        const Expr *Up = nullptr;
        if (isa<CXXThisExpr>(Obj)) {
          if (!Step || !Step->Site.S || Step->Site.Indirect)
            return;
          if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Step->Site.S))
            Up = MC->getImplicitObjectArgument();
          else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Step->Site.S);
                   Op && Op->getNumArgs() > 0 &&
                   isa_and_nonnull<CXXMethodDecl>(calleeOf(Op)))
            Up = Op->getArg(0);
          else
            return;
          Step = Step->Parent;
          Obj = Up;
          continue;
        }
        if (const auto *DRE = dyn_cast<DeclRefExpr>(Obj)) {
          const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
          if (!VD || !ownsTensor(VD->getType()))
            return;
          if (const auto *P = dyn_cast<ParmVarDecl>(VD)) {
            if (!Step || !Step->Function || Step->Site.Indirect ||
                P->getDeclContext() != Step->Function)
              return;
            Up = argumentFor(Step->Site.S, P);
            Step = Step->Parent;
            Obj = Up;
            continue;
          }
          if (VD->hasLocalStorage() && !VD->getType()->isReferenceType())
            Record(VD->getCanonicalDecl(), ValueKind::TensorOwner, DRE);
          return;
        }
        // `field.row(0)`: a method of the class returning another object
        // of it, a view of its own object.
        if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Obj);
            MC && ownsTensor(MC->getType()) &&
            ownsTensor(MC->getImplicitObjectArgument()->getType())) {
          Obj = MC->getImplicitObjectArgument();
          continue;
        }
        if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Obj);
            Op && Op->getOperator() == OO_Call && Op->getNumArgs() > 0 &&
            ownsTensor(Op->getType()) && ownsTensor(Op->getArg(0)->getType())) {
          Obj = Op->getArg(0);
          continue;
        }
        return;
      }
    };
    auto VisitAll = [&](const Decl *D, ValueKind K, const Expr *Use) {
      Visit(D, K, Use);
      VisitOwner(D, K, Use);
    };
    forEachLaunchParameter(Analysis, Call, VisitAll);
    // A launch copies its kernel-parameter array at the call; other work
    // keeps the addresses it is given.
    if (!takesParameterArray(Analysis, Call))
      for (const Expr *Arg : Call->arguments())
        if (const VarDecl *Local = addressedLocal(Arg);
            Local && !Local->isStaticLocal()) {
          std::vector<CapturedRead> &List =
              AddressReads[Local->getCanonicalDecl()];
          if (llvm::none_of(List, [&](const CapturedRead &R) {
                return R.Site->Ctx.Root == Site.Ctx.Root;
              }))
            List.push_back({Local->getCanonicalDecl(), ValueKind::Pointer,
                            &Site, Arg, nullptr});
        }
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call))
      forEachCapturedValue(MC->getImplicitObjectArgument(), VisitAll);
    if (const auto *Launch = dyn_cast<CUDAKernelCallExpr>(Call))
      forEachCapturedValue(Launch->getConfig(), VisitAll);
    for (const Expr *Arg : Call->arguments())
      forEachCapturedValue(Arg, VisitAll);
  }
}

//===----------------------------------------------------------------------===//
// Graphs: what a capture records into, what a replay launches
//===----------------------------------------------------------------------===//

bool FrozenHostStateCheck::isBegin(CaptureAnalysis &Analysis,
                                   const CallExpr *Call) const {
  const FunctionDecl *FD = calleeOf(Call);
  return FD && Apis.eventOf(FD, Analysis.nameOf(FD)) == CaptureEvent::Begin;
}

bool FrozenHostStateCheck::isKill(CaptureAnalysis &Analysis,
                                  const CallExpr *Call) const {
  const FunctionDecl *FD = calleeOf(Call);
  if (!FD)
    return false;
  // A reset or destroyed graph is not replayed; an updated executable
  // takes the new values.
  static const NamePatterns Kills(
      "at::cuda::CUDAGraph::reset|cudaGraphExecDestroy|cuGraphExecDestroy|"
      "cudaGraphDestroy|cuGraphDestroy|cudaGraphExecUpdate|cuGraphExecUpdate|"
      "cudaGraphExec*SetParams*|cuGraphExec*SetParams*");
  return Kills.matches(Analysis.nameOf(FD));
}

std::optional<GraphRef>
FrozenHostStateCheck::replayOf(CaptureAnalysis &Analysis,
                               const CallExpr *Call) const {
  const FunctionDecl *FD = calleeOf(Call);
  if (!FD)
    return std::nullopt;
  StringRef Name = Analysis.nameOf(FD);
  if (Name == "at::cuda::CUDAGraph::replay") {
    const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
    const Expr *Object = MC ? MC->getImplicitObjectArgument() : nullptr;
    return GraphRef{GraphRef::Flavour::Torch, graphKeyOf(Object), Object};
  }
  if ((Name == "cudaGraphLaunch" || Name == "cuGraphLaunch") &&
      Call->getNumArgs() >= 1)
    return GraphRef{GraphRef::Flavour::Raw, graphKeyOf(Call->getArg(0)),
                    Call->getArg(0)};
  return std::nullopt;
}

void FrozenHostStateCheck::collectGraphs(CaptureAnalysis &Analysis) {
  RootGraphs.clear();
  ExecGraphs.clear();
  ReplaySites.clear();
  static const NamePatterns Instantiate(
      "cudaGraphInstantiate*|cuGraphInstantiate*");
  static const NamePatterns End("cudaStreamEndCapture|cuStreamEndCapture");
  forEachUserFunction(
      Analysis.context(), Analysis.code(),
      [&](const FunctionDecl *FD) {
        forEachStmt(FD->getBody(), [&](const Stmt *S) {
          const auto *Call = dyn_cast<CallExpr>(S);
          const FunctionDecl *Callee = Call ? calleeOf(Call) : nullptr;
          if (!Callee)
            return;
          if (auto G = replayOf(Analysis, Call)) {
            ReplaySites.push_back({Call, *G, FD});
            return;
          }
          if (Call->getNumArgs() < 2 ||
              !Instantiate.matches(Analysis.nameOf(Callee)))
            return;
          if (const Decl *Exec = graphKeyOf(Call->getArg(0)))
            ExecGraphs[Exec].push_back(graphKeyOf(Call->getArg(1)));
        });
      },
      FunctionWalk::Instantiated);
  std::vector<const RegionRoot *> Roots;
  for (const auto *Map : {&Reads, &AddressReads})
    for (const auto &[Storage, List] : *Map)
      for (const CapturedRead &R : List)
        Roots.push_back(R.Site->Ctx.Root);
  for (const RegionRoot *Root : Roots) {
    if (RootGraphs.count(Root))
      continue;
    GraphRef G;
    const auto *Call = dyn_cast_or_null<CallExpr>(Root->Call);
    const FunctionDecl *Callee = Call ? calleeOf(Call) : nullptr;
    StringRef Name = Callee ? Analysis.nameOf(Callee) : "";
    if (Root->K == RegionRoot::Kind::BeginApi &&
        Name == "at::cuda::CUDAGraph::capture_begin") {
      const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
      const Expr *Object = MC ? MC->getImplicitObjectArgument() : nullptr;
      G = {GraphRef::Flavour::Torch, graphKeyOf(Object), Object};
    } else if (Root->K == RegionRoot::Kind::BeginApi &&
               Name.contains("BeginCaptureToGraph") &&
               Call->getNumArgs() >= 2) {
      G = {GraphRef::Flavour::Raw, graphKeyOf(Call->getArg(1)),
           Call->getArg(1)};
    } else if (Root->K == RegionRoot::Kind::BeginApi &&
               Name.contains("BeginCapture") && Call->getNumArgs() >= 1 &&
               Root->Owner && Root->Owner->getBody()) {
      // The graph comes out of the first end call on the same stream
      // after the begin.
      const SourceManager &SM = Analysis.context().getSourceManager();
      const Decl *Stream = graphKeyOf(Call->getArg(0));
      const CallExpr *First = nullptr;
      forEachStmt(Root->Owner->getBody(), [&](const Stmt *S) {
        const auto *EndCall = dyn_cast<CallExpr>(S);
        const FunctionDecl *EndFD =
            EndCall ? calleeOf(EndCall) : nullptr;
        if (!EndFD || EndCall->getNumArgs() < 2 ||
            !End.matches(Analysis.nameOf(EndFD)) ||
            !SM.isBeforeInTranslationUnit(Call->getBeginLoc(),
                                          EndCall->getBeginLoc()))
          return;
        const Decl *EndStream = graphKeyOf(EndCall->getArg(0));
        if (Stream && EndStream && EndStream != Stream)
          return;
        if (!First || SM.isBeforeInTranslationUnit(EndCall->getBeginLoc(),
                                                   First->getBeginLoc()))
          First = EndCall;
      });
      G.F = GraphRef::Flavour::Raw;
      if (First) {
        G.Key = graphKeyOf(First->getArg(1));
        G.Via = First->getArg(1);
      }
    }
    RootGraphs[Root] = G;
  }
}

bool FrozenHostStateCheck::mayReplay(const RegionRoot *Root,
                                     const GraphRef &Replay) const {
  auto It = RootGraphs.find(Root);
  if (It == RootGraphs.end() || It->second.F == GraphRef::Flavour::Unknown)
    return true;
  const GraphRef &Captured = It->second;
  if (Captured.F != Replay.F)
    return false;
  if (!Captured.Key || !Replay.Key)
    return true;
  if (Captured.F == GraphRef::Flavour::Torch)
    return Captured.Key == Replay.Key;
  // A raw launch names an executable: the graphs instantiated into it.
  auto Exec = ExecGraphs.find(Replay.Key);
  if (Exec == ExecGraphs.end())
    return true; // made where this translation unit cannot see
  for (const Decl *Graph : Exec->second)
    if (!Graph || Graph == Captured.Key)
      return true;
  return false;
}

bool FrozenHostStateCheck::replaysCaptured(const RegionRoot *Root,
                                           const GraphRef &Replay) const {
  auto It = RootGraphs.find(Root);
  if (It == RootGraphs.end() || !It->second.Key || !Replay.Key ||
      It->second.F != Replay.F)
    return false;
  if (Replay.F == GraphRef::Flavour::Torch)
    return It->second.Key == Replay.Key;
  auto Exec = ExecGraphs.find(Replay.Key);
  return Exec != ExecGraphs.end() &&
         llvm::is_contained(Exec->second, It->second.Key);
}

const FrozenHostStateCheck::ReplaySite *
FrozenHostStateCheck::replayElsewhere(const RegionRoot *Root,
                                      const FunctionDecl *Except) const {
  for (const ReplaySite &R : ReplaySites)
    if (R.Function->getCanonicalDecl() != Except->getCanonicalDecl() &&
        replaysCaptured(Root, R.Graph))
      return &R;
  return nullptr;
}

bool FrozenHostStateCheck::readsPointer(const Decl *Storage) const {
  auto It = Reads.find(Storage);
  return It != Reads.end() &&
         llvm::any_of(It->second, [](const CapturedRead &R) {
           return R.Kind == ValueKind::Pointer;
         });
}

const FrozenHostStateCheck::Summary &
FrozenHostStateCheck::summaryOf(CaptureAnalysis &Analysis,
                                const FunctionDecl *FD, unsigned Depth) {
  FD = FD->getCanonicalDecl();
  auto [It, Inserted] = Summaries.try_emplace(FD);
  if (!Inserted)
    return It->second; // known, or in progress
  Summary Result;
  Result.Captures = RootOwners.count(FD) > 0;
  const FunctionDecl *Def = definitionOf(FD);
  if (Def && Depth < 4 && Analysis.isUserLocation(Def->getLocation()))
    forEachStmt(Def->getBody(), [&](const Stmt *S) {
      if (auto C = changeOf(S))
        Result.Writes.push_back(C->Storage);
      // A member or global (not a local of the helper) that a capture
      // elsewhere reads.
      if (const Decl *D = releasedBy(Analysis, S);
          D && readsPointer(D) && !Analysis.contextOf(Def, S) &&
          !(isa<VarDecl>(D) && !cast<VarDecl>(D)->hasGlobalStorage()))
        Result.Releases.push_back({S, D});
      const auto *Call = dyn_cast<CallExpr>(S);
      if (!Call)
        return;
      if (isBegin(Analysis, Call)) {
        Result.Captures = true;
      } else if (isKill(Analysis, Call)) {
        Result.Kills = true;
      } else if (auto G = replayOf(Analysis, Call)) {
        Result.Replays.push_back(*G);
      } else if (const FunctionDecl *Callee = calleeOf(Call);
                 Callee && Callee->getCanonicalDecl() != FD) {
        Summary Inner = summaryOf(Analysis, Callee, Depth + 1);
        Result.Captures |= Inner.Captures;
        Result.Kills |= Inner.Kills;
        Result.Replays.insert(Result.Replays.end(), Inner.Replays.begin(),
                              Inner.Replays.end());
        Result.Releases.insert(Result.Releases.end(), Inner.Releases.begin(),
                               Inner.Releases.end());
        Result.Writes.append(Inner.Writes.begin(), Inner.Writes.end());
      }
    });
  Summaries[FD] = Result;
  return Summaries[FD];
}

//===----------------------------------------------------------------------===//
// The dataflow: changes waiting for a replay
//===----------------------------------------------------------------------===//

/// Whether \p E names \p Storage (`graphs[bs]` names bs and graphs).
static bool mentions(const Stmt *E, const Decl *Storage) {
  if (!E || !Storage)
    return false;
  bool Found = false;
  forEachStmt(E, [&](const Stmt *S) {
    if (Found)
      return;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      Found = DRE->getDecl()->getCanonicalDecl() == Storage;
    else if (const auto *ME = dyn_cast<MemberExpr>(S))
      Found = ME->getMemberDecl()->getCanonicalDecl() == Storage;
    else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S))
      Found = accessedField(MC, /*Through=*/true) == Storage;
  });
  return Found;
}

/// Whether every local and parameter \p E is computed from (through the
/// initializers of locals) is named by \p Cond; members and globals count
/// as fixed. False when \p E has none.
static bool coveredBy(const Stmt *Cond, const Expr *E, unsigned Depth = 0) {
  bool Any = false, All = true;
  forEachStmt(E, [&](const Stmt *S) {
    const auto *DRE = dyn_cast<DeclRefExpr>(S);
    const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (!VD || !VD->hasLocalStorage() || !All)
      return;
    Any = true;
    if (mentions(Cond, VD->getCanonicalDecl()))
      return;
    All = !isa<ParmVarDecl>(VD) && VD->getInit() && Depth < 4 &&
          coveredBy(Cond, VD->getInit(), Depth + 1);
  });
  return Any && All;
}

bool FrozenHostStateCheck::decidesAfter(CaptureAnalysis &Analysis,
                                        const FunctionDecl *FD,
                                        const Stmt *Cond,
                                        const CallExpr *Call) {
  bool Found = false;
  forEachStmt(Cond, [&](const Stmt *S) { Found |= S == Call; });
  if (Found)
    return true;
  // A storage the helper assigns (`resized_ = true;`, the sizes it keeps).
  if (const FunctionDecl *Callee = calleeOf(Call))
    for (const Decl *W : summaryOf(Analysis, Callee).Writes)
      if (mentions(Cond, W))
        return true;
  // A variable given the call's result (`bool grew = ensure(n);`).
  auto Contains = [&](const Stmt *E) {
    bool In = false;
    forEachStmt(E, [&](const Stmt *S) { In |= S == Call; });
    return In;
  };
  forEachStmt(FD->getBody(), [&](const Stmt *S) {
    if (Found)
      return;
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D);
            VD && VD->getInit() && Contains(VD->getInit()))
          Found |= mentions(Cond, VD->getCanonicalDecl());
    } else if (const auto *BO = dyn_cast<BinaryOperator>(S);
               BO && BO->isAssignmentOp() && Contains(BO->getRHS())) {
      if (const Decl *D = storageOf(BO->getLHS()))
        Found |= mentions(Cond, D);
    }
  });
  if (Found)
    return true;
  // The sizes the helper is given (`ensure(n); if (n != captured_n) ...`).
  bool Any = false, All = true;
  for (const Expr *Arg : Call->arguments()) {
    bool HasLocal = false;
    forEachStmt(Arg, [&](const Stmt *S) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
        if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
          HasLocal |= VD->hasLocalStorage();
    });
    if (!HasLocal)
      continue;
    Any = true;
    All = All && coveredBy(Cond, Arg);
  }
  return Any && All;
}

namespace {
struct Pending {
  /// Captures that happened on the way here (for the function's locals).
  std::set<const RegionRoot *> Captured;
  /// Changes of captured state: the change, the capture that read it and
  /// the variable changed.
  std::set<std::tuple<const Stmt *, const RegionRoot *, const Decl *>>
      Changes;

  bool join(const Pending &Other) {
    size_t Before = Captured.size() + Changes.size();
    Captured.insert(Other.Captured.begin(), Other.Captured.end());
    Changes.insert(Other.Changes.begin(), Other.Changes.end());
    return Captured.size() + Changes.size() != Before;
  }
};
} // namespace

void FrozenHostStateCheck::checkFunction(CaptureAnalysis &Analysis,
                                         const FunctionDecl *FD) {
  // Only functions that change captured state and may replay, or that
  // release what a graph reads by address.
  bool Changes = false, Replays = false, Releases = false;
  auto IsLocalHere = [&](const Decl *D) {
    const auto *VD = dyn_cast<VarDecl>(D);
    return VD && VD->hasLocalStorage() && VD->getParentFunctionOrMethod() == FD;
  };
  for (const auto &[Storage, List] : AddressReads)
    Releases |= IsLocalHere(Storage);
  forEachStmt(FD->getBody(), [&](const Stmt *S) {
    if (const Decl *D = releasedBy(Analysis, S); D && readsPointer(D))
      Releases = true;
    if (auto C = changeOf(S); C && Reads.count(C->Storage))
      Changes = true;
    else if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        Changes |= Reads.count(D->getCanonicalDecl()) > 0;
    else if (const auto *Call = dyn_cast<CallExpr>(S)) {
      if (replayOf(Analysis, Call))
        Replays = true;
      else if (const FunctionDecl *Callee = calleeOf(Call);
               Callee && !isBegin(Analysis, Call)) {
        const Summary &Sum = summaryOf(Analysis, Callee);
        Replays |= !Sum.Replays.empty();
        Changes |= !Sum.Releases.empty();
      }
    }
  });
  if (!(Changes && Replays) && !Releases)
    return;

  CFG::BuildOptions Options;
  Options.setAllAlwaysAdd();
  Options.AddLifetime = Releases;
  std::unique_ptr<CFG> Cfg =
      CFG::buildCFG(FD, FD->getBody(), &Analysis.context(), Options);
  if (!Cfg)
    return;
  llvm::DenseMap<const DeclStmt *, const DeclStmt *> SourceOf(
      Cfg->synthetic_stmts().begin(), Cfg->synthetic_stmts().end());

  std::vector<Finding> Found;
  std::set<std::pair<const Stmt *, const Decl *>> Reported;
  // Frees inside a helper this function calls (`ensure_buffers(n)`), and
  // the call that runs them.
  llvm::DenseMap<const Stmt *, const CallExpr *> FreedBy;
  // Releases among the pending changes: a free of a pointer the graph
  // reads, the end of a local's scope whose address it was given.
  std::set<std::pair<const Stmt *, const Decl *>> Released;
  bool NextCall = false; // the second pass, from a previous call's exit
  auto ReplayHere = [&](Pending &P, const GraphRef &G, const Stmt *At) {
    for (const auto &[Change, Root, Storage] : P.Changes) {
      if (Released.count({Change, Storage})) {
        if (mayReplay(Root, G) && Reported.insert({Change, Storage}).second)
          Found.push_back({Change, Root, At, Storage});
        continue;
      }
      // A graph chosen by the changed value (`graphs[bs]`) is the one
      // captured with it.
      auto Captured = RootGraphs.find(Root);
      if (mentions(G.Via, Storage) ||
          (Captured != RootGraphs.end() &&
           mentions(Captured->second.Via, Storage)))
        continue;
      if (mayReplay(Root, G) && Reported.insert({Change, nullptr}).second) {
        Found.push_back({Change, Root, At});
        Found.back().NextCall = NextCall;
      }
    }
  };
  // The graph keeps reading a released buffer; a capture of this function
  // counts once it happened on the path (the owner's locals), one begun
  // by a caller always (a helper called under capture).
  auto ReleaseHere = [&](Pending &P, const Stmt *S, const Decl *Storage,
                         const std::vector<CapturedRead> &List,
                         bool PointersOnly) {
    bool Local = IsLocalHere(Storage);
    for (const CapturedRead &R : List) {
      const RegionRoot *Root = R.Site->Ctx.Root;
      if (PointersOnly && R.Kind != ValueKind::Pointer)
        continue;
      if (Local && Root->Owner == FD && !P.Captured.count(Root))
        continue;
      if (Local && Root->Owner != FD && R.Site->Function != FD)
        continue;
      P.Changes.insert({S, Root, Storage});
      Released.insert({S, Storage});
    }
  };
  // An element written (`h[i] = v`) changes what captured work read by
  // value from that element, not a pointer or array the graph reads
  // through its address at replay.
  auto ChangeHere = [&](Pending &P, const Stmt *S, const Decl *Storage,
                        const VarDecl *Object, bool Element = false) {
    auto It = Reads.find(Storage);
    if (It == Reads.end() || Analysis.contextOf(FD, S))
      return;
    // A local of this function counts after the capture that read it.
    const auto *VD = Object ? Object : dyn_cast<VarDecl>(Storage);
    bool Local = VD && !VD->hasGlobalStorage() &&
                 VD->getParentFunctionOrMethod() == FD;
    for (const CapturedRead &R : It->second) {
      const RegionRoot *Root = R.Site->Ctx.Root;
      if (R.Object && Object && R.Object != Object)
        continue; // another object's member
      if (Element && !isElement(R.Use))
        continue;
      if (Local && Root->Owner == FD && !P.Captured.count(Root))
        continue;
      P.Changes.insert({S, Root, Storage});
    }
  };
  auto Transfer = [&](const CFGBlock &B, const Pending &In) {
    Pending P = In;
    for (const CFGElement &E : B) {
      if (auto End = E.getAs<CFGLifetimeEnds>()) {
        const VarDecl *VD = End->getVarDecl();
        auto It =
            VD ? AddressReads.find(VD->getCanonicalDecl()) : AddressReads.end();
        if (It != AddressReads.end() && End->getTriggerStmt())
          ReleaseHere(P, End->getTriggerStmt(), It->first, It->second,
                      /*PointersOnly=*/false);
        continue;
      }
      auto CS = E.getAs<CFGStmt>();
      if (!CS)
        continue;
      const Stmt *S = CS->getStmt();
      if (const Decl *D = releasedBy(Analysis, S);
          D && readsPointer(D) && !Analysis.contextOf(FD, S)) {
        ReleaseHere(P, S, D, Reads[D], /*PointersOnly=*/true);
        continue;
      }
      if (auto It = RootsByBegin.find(S); It != RootsByBegin.end()) {
        P.Changes.clear();
        P.Captured.insert(It->second);
        continue;
      }
      if (auto C = changeOf(S)) {
        ChangeHere(P, S, C->Storage, C->Object, isElement(C->Target));
        continue;
      }
      if (const auto *DS = dyn_cast<DeclStmt>(S)) {
        // The CFG's own DeclStmt for one variable of `int a = x, b = y;`
        // stands for the statement of the source.
        const Stmt *Source = SourceOf.lookup(DS);
        for (const Decl *D : DS->decls())
          if (const auto *VD = dyn_cast<VarDecl>(D); VD && VD->hasInit())
            ChangeHere(P, Source ? Source : S, VD->getCanonicalDecl(),
                       nullptr);
        continue;
      }
      const auto *Call = dyn_cast<CallExpr>(S);
      if (!Call)
        continue;
      if (isBegin(Analysis, Call) || isKill(Analysis, Call)) {
        P.Changes.clear();
      } else if (auto G = replayOf(Analysis, Call)) {
        ReplayHere(P, *G, Call);
      } else if (const FunctionDecl *Callee = calleeOf(Call)) {
        const Summary &Sum = summaryOf(Analysis, Callee);
        if (Sum.Captures || Sum.Kills) {
          P.Changes.clear();
          continue;
        }
        // A helper that frees and replays is checked on its own.
        if (Sum.Replays.empty() && !Analysis.contextOf(FD, S))
          for (const auto &[Free, Storage] : Sum.Releases) {
            ReleaseHere(P, Free, Storage, Reads[Storage],
                        /*PointersOnly=*/true);
            FreedBy.try_emplace(Free, Call);
          }
        for (const GraphRef &G : Sum.Replays)
          ReplayHere(P, G, Call);
      }
    }
    // A branch on the changed value (`if (n != captured_n) recapture();`)
    // decides whether the graph still fits it (a loop's own test does not).
    const Stmt *Term = B.getTerminatorStmt();
    if (const Stmt *Cond = B.getTerminatorCondition();
        Cond && Term &&
        (isa<IfStmt>(Term) || isa<SwitchStmt>(Term) ||
         isa<AbstractConditionalOperator>(Term) || isa<BinaryOperator>(Term)))
      for (auto It = P.Changes.begin(); It != P.Changes.end();) {
        auto Via = FreedBy.find(std::get<0>(*It));
        bool Decides =
            mentions(Cond, std::get<2>(*It)) ||
            (Via != FreedBy.end() &&
             decidesAfter(Analysis, FD, Cond, Via->second));
        It = Decides ? P.Changes.erase(It) : std::next(It);
      }
    return P;
  };
  auto Edge = [](const CFGBlock &, const CFGBlock &, unsigned,
                 const Pending &P) { return std::optional<Pending>(P); };
  std::vector<std::optional<Pending>> In =
      solveForward<Pending>(*Cfg, Pending(), Transfer, Edge);
  // A function that replays and then changes what the graph keeps (a
  // ping-pong index flipped after the launch) replays the stale value on
  // its next call: the changes of members and globals pending at its exit
  // flow once more from its entry.
  if (Changes && Replays)
    if (const std::optional<Pending> &AtExit =
            In[Cfg->getExit().getBlockID()]) {
      Pending Carried;
      for (const auto &Pend : AtExit->Changes) {
        const auto &[Change, Root, Storage] = Pend;
        if (!IsLocalHere(Storage) && !Released.count({Change, Storage}))
          Carried.Changes.insert(Pend);
      }
      if (!Carried.Changes.empty()) {
        NextCall = true;
        solveForward<Pending>(*Cfg, std::move(Carried), Transfer, Edge);
        NextCall = false;
      }
    }
  // A local released when this function returns, read by a graph that
  // outlives the call: a replay elsewhere reads freed memory.
  if (const std::optional<Pending> &AtExit = In[Cfg->getExit().getBlockID()])
    for (const auto &[Change, Root, Storage] : AtExit->Changes)
      if (Released.count({Change, Storage}) && IsLocalHere(Storage))
        if (const ReplaySite *Later = replayElsewhere(Root, FD);
            Later && Reported.insert({Change, Storage}).second)
          Found.push_back({Change, Root, Later->Call, Storage});
  for (Finding &F : Found) {
    F.Via = FreedBy.lookup(F.Change);
    if (F.Released)
      reportRelease(Analysis, FD, F);
    else
      report(Analysis, FD, F);
  }
}

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

/// Whether \p E is a whole statement of \p Body (`x = y;`), whose value
/// nothing uses.
static bool isWholeStatement(const Stmt *Body, const Stmt *E) {
  bool Found = false;
  auto Is = [&](const Stmt *S) {
    if (const auto *Cleanups = dyn_cast_or_null<ExprWithCleanups>(S))
      S = Cleanups->getSubExpr();
    return S == E;
  };
  forEachStmt(Body, [&](const Stmt *S) {
    if (Found)
      return;
    if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
      for (const Stmt *Child : CS->body())
        Found |= Is(Child);
    } else if (const auto *If = dyn_cast<IfStmt>(S)) {
      Found = Is(If->getThen()) || Is(If->getElse());
    } else if (const auto *For = dyn_cast<ForStmt>(S)) {
      Found = Is(For->getBody());
    } else if (const auto *While = dyn_cast<WhileStmt>(S)) {
      Found = Is(While->getBody());
    } else if (const auto *Do = dyn_cast<DoStmt>(S)) {
      Found = Is(Do->getBody());
    } else if (const auto *Range = dyn_cast<CXXForRangeStmt>(S)) {
      Found = Is(Range->getBody());
    } else if (const auto *Case = dyn_cast<SwitchCase>(S)) {
      Found = Is(Case->getSubStmt());
    }
  });
  return Found;
}

void FrozenHostStateCheck::replayNote(CaptureAnalysis &Analysis,
                                      const FunctionDecl *FD,
                                      const Finding &F) {
  if (F.NextCall)
    diag(Analysis.visibleLoc(F.Replay->getBeginLoc()),
         "the graph is replayed here on the next call of '%0'",
         DiagnosticIDs::Note)
        << FD->getNameAsString();
  else
    diag(Analysis.visibleLoc(F.Replay->getBeginLoc()),
         "the graph is replayed here", DiagnosticIDs::Note);
}

void FrozenHostStateCheck::report(CaptureAnalysis &Analysis,
                                  const FunctionDecl *FD, const Finding &F) {
  const Decl *Storage = nullptr;
  const Expr *Target = nullptr, *Value = nullptr;
  const VarDecl *Object = nullptr;
  SourceLocation Loc;
  if (auto C = changeOf(F.Change)) {
    Storage = C->Storage;
    Object = C->Object;
    Target = C->Target;
    Value = C->Value;
    Loc = cast<Expr>(F.Change)->getBeginLoc();
  } else if (const auto *DS = dyn_cast<DeclStmt>(F.Change)) {
    for (const Decl *D : DS->decls())
      if (Reads.count(D->getCanonicalDecl())) {
        Storage = D->getCanonicalDecl();
        Loc = D->getLocation();
        break;
      }
  }
  if (!Storage)
    return;
  const CapturedRead *Read = nullptr;
  for (const CapturedRead &R : Reads[Storage])
    if (R.Site->Ctx.Root == F.Root &&
        !(R.Object && Object && R.Object != Object)) {
      Read = &R;
      break;
    }
  if (!Read)
    return;
  Loc = Analysis.visibleLoc(Loc);
  std::string Name = nameOfStorage(Storage).str();
  const SourceManager &SM0 = Analysis.context().getSourceManager();
  const Expr *Written = Target ? stripCopies(Target) : nullptr;
  if (Written && !(isa<CXXMemberCallExpr>(Written) || Object))
    Written = nullptr;
  if (Written && Written->getBeginLoc().isFileID() &&
      Written->getEndLoc().isFileID())
    if (StringRef Text = Lexer::getSourceText(
            CharSourceRange::getTokenRange(Written->getSourceRange()), SM0,
            Analysis.context().getLangOpts());
        !Text.empty() && Text.size() <= 40 && !Text.contains('\n'))
      Name = Text.str();
  Hazard H = Read->Kind == ValueKind::Scalar ? *Scalar : *Reassigned;
  if (Read->Kind == ValueKind::Pointer)
    H.TorchInstead = ""; // copy_ is for tensors

  // Tensor `v = value;` becomes `v.copy_(value);`.
  llvm::SmallVector<FixItHint, 2> Fixes;
  const SourceManager &SM = Analysis.context().getSourceManager();
  const LangOptions &LO = Analysis.context().getLangOpts();
  if (Read->Kind == ValueKind::Tensor && Value && Target &&
      F.Change->getBeginLoc().isFileID() && F.Change->getEndLoc().isFileID() &&
      isWholeStatement(FD->getBody(), F.Change)) {
    CharSourceRange TargetRange =
        CharSourceRange::getTokenRange(Target->getSourceRange());
    StringRef TargetText = Lexer::getSourceText(TargetRange, SM, LO);
    SourceLocation ValueBegin = Value->getBeginLoc();
    SourceLocation ValueEnd =
        Lexer::getLocForEndOfToken(Value->getEndLoc(), 0, SM, LO);
    if (!TargetText.empty() && ValueBegin.isFileID() && ValueEnd.isValid()) {
      Fixes.push_back(FixItHint::CreateReplacement(
          CharSourceRange::getCharRange(Target->getBeginLoc(), ValueBegin),
          (TargetText + ".copy_(").str()));
      Fixes.push_back(FixItHint::CreateInsertion(ValueEnd, ")"));
    }
  }
  if (!reportHazard(Analysis, H, Loc, F.Change->getSourceRange(),
                    "'" + Name + "'", FD, Read->Site->Ctx.Chain,
                    Read->Site->Ctx.Root, Fixes))
    return;
  SourceLocation UseLoc = Analysis.visibleLoc(Read->Use->getBeginLoc());
  if (Read->Kind == ValueKind::Scalar)
    diag(UseLoc, "the graph keeps the value '%0' has here during capture",
         DiagnosticIDs::Note)
        << Name;
  else
    diag(UseLoc, "the graph reads '%0' here during capture",
         DiagnosticIDs::Note)
        << Name;
  addChainNotes(Analysis, Read->Site->Ctx.Chain, Read->Site->Ctx.Root);
  replayNote(Analysis, FD, F);
}

void FrozenHostStateCheck::reportRelease(CaptureAnalysis &Analysis,
                                         const FunctionDecl *FD,
                                         const Finding &F) {
  const CapturedRead *Read = nullptr;
  bool ScopeEnd = AddressReads.count(F.Released) > 0;
  for (const CapturedRead &R :
       ScopeEnd ? AddressReads[F.Released] : Reads[F.Released])
    if (R.Site->Ctx.Root == F.Root) {
      Read = &R;
      break;
    }
  if (!Read)
    return;
  Hazard H = *Freed;
  std::string Name = nameOfStorage(F.Released).str();
  SourceLocation Loc = F.Change->getBeginLoc();
  std::string Effect;
  if (ScopeEnd) {
    // A scope's closing brace, or the return that leaves it.
    if (isa<CompoundStmt>(F.Change))
      Loc = F.Change->getEndLoc();
    Effect = "goes out of scope";
    if (isa<ReturnStmt>(F.Change) || F.Change == FD->getBody())
      Effect += " when '" + FD->getNameAsString() + "' returns,";
    Effect += " while a graph that reads it by address can still be replayed";
    H.Effect = Effect;
  }
  Loc = Analysis.visibleLoc(Loc);
  if (!reportHazard(Analysis, H, Loc, SourceRange(Loc), "'" + Name + "'", FD,
                    Read->Site->Ctx.Chain, Read->Site->Ctx.Root))
    return;
  diag(Analysis.visibleLoc(Read->Use->getBeginLoc()),
       ScopeEnd ? "the graph is given the address of '%0' here during capture"
                : "the graph reads '%0' here during capture",
       DiagnosticIDs::Note)
      << Name;
  addChainNotes(Analysis, Read->Site->Ctx.Chain, Read->Site->Ctx.Root);
  if (F.Via)
    if (const FunctionDecl *Helper = calleeOf(F.Via))
      diag(Analysis.visibleLoc(F.Via->getBeginLoc()),
           "'%0' frees it when called here, and the graph is not captured "
           "again on every path from here to the replay",
           DiagnosticIDs::Note)
          << displayName(Helper);
  replayNote(Analysis, FD, F);
}

//===----------------------------------------------------------------------===//
// Inputs made anew on every call of a function that captures once
//===----------------------------------------------------------------------===//

/// \p E without implicit conversions, temporaries and one-argument
/// constructions (`IValue(t)`, a copy).
static const Expr *peelValue(const Expr *E) {
  for (unsigned Depth = 0; E && Depth < 8; ++Depth) {
    E = E->IgnoreImplicit()->IgnoreParens();
    if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E)) {
      E = Cast->getSubExpr();
      continue;
    }
    const auto *Construct = dyn_cast<CXXConstructExpr>(E);
    if (!Construct || Construct->getNumArgs() != 1 ||
        isa<CXXStdInitializerListExpr>(
            Construct->getArg(0)->IgnoreImplicit()))
      return E;
    E = Construct->getArg(0);
  }
  return E;
}

/// Whether \p E makes a new tensor: a libtorch factory (`at::full`,
/// `torch::tensor`, `at::empty_like`, ...), a clone, tensor arithmetic.
static bool isFreshTensor(CaptureAnalysis &Analysis, const Expr *E) {
  E = peelValue(E);
  const auto *Call = dyn_cast_or_null<CallExpr>(E);
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD || !isTensorType(Call->getType()))
    return false;
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call)) {
    const CXXMethodDecl *MD = MC->getMethodDecl();
    return MD && MD->getIdentifier() && MD->getName() == "clone";
  }
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call))
    return Op->getNumArgs() == 2 &&
           llvm::is_contained({OO_Plus, OO_Minus, OO_Star, OO_Slash},
                              Op->getOperator());
  static const NamePatterns Factories(
      "at::tensor|torch::tensor|at::scalar_tensor|torch::scalar_tensor|"
      "at::empty*|torch::empty*|at::zeros*|torch::zeros*|at::ones*|"
      "torch::ones*|at::full*|torch::full*|at::rand*|torch::rand*|"
      "at::arange|torch::arange|at::linspace|torch::linspace|at::eye|"
      "torch::eye");
  return Factories.matches(Analysis.nameOf(FD));
}

namespace {
/// Where a per-call value is made, and the statement of the capturing
/// function that makes or fills it.
struct FreshOrigin {
  SourceLocation Loc;
  SourceRange Range;
  std::string Name;
  /// Made in a helper the capturing function calls (`prepare(inputs)`).
  const Stmt *Fill = nullptr;
  bool Tensor = true;
};
} // namespace

/// The leaves of \p E, a value or a braced list of values.
static void forEachElement(const Expr *E,
                           llvm::function_ref<void(const Expr *)> Fn) {
  if (!E)
    return;
  E = E->IgnoreImplicit()->IgnoreParens();
  if (const auto *List = dyn_cast<CXXStdInitializerListExpr>(E))
    return forEachElement(List->getSubExpr(), Fn);
  if (const auto *Init = dyn_cast<InitListExpr>(E)) {
    for (const Expr *Element : Init->inits())
      forEachElement(Element, Fn);
    return;
  }
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E);
      Construct && Construct->getNumArgs() == 1 &&
      isa<CXXStdInitializerListExpr>(Construct->getArg(0)->IgnoreImplicit()))
    return forEachElement(Construct->getArg(0), Fn);
  Fn(E);
}

/// The origin of \p E when it is a new tensor made in \p G: the
/// expression itself, or a local of G initialized with one.
static std::optional<FreshOrigin> freshValue(CaptureAnalysis &Analysis,
                                             const Expr *E,
                                             const FunctionDecl *G) {
  if (isFreshTensor(Analysis, E))
    return FreshOrigin{E->getBeginLoc(), E->getSourceRange(), "", nullptr};
  const auto *DRE = dyn_cast<DeclRefExpr>(peelValue(E));
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() ||
      VD->getType()->isReferenceType() ||
      VD->getParentFunctionOrMethod() != G || !isTensorType(VD->getType()) ||
      !VD->getInit() || !isFreshTensor(Analysis, VD->getInit()))
    return std::nullopt;
  return FreshOrigin{VD->getLocation(), VD->getSourceRange(),
                     VD->getName().str(), nullptr};
}

/// Calls \p Fn for each new tensor that \p G puts into the container
/// \p Container (a local or a reference parameter of G): `c.push_back(t)`,
/// `c = {a, t}`, its initializer, and through helpers that take it by
/// reference, a few calls deep.
static void forEachFreshFill(
    CaptureAnalysis &Analysis, const FunctionDecl *G, const Decl *Container,
    unsigned Depth,
    llvm::function_ref<void(const FreshOrigin &, const Stmt *)> Fn) {
  auto Names = [&](const Expr *E) {
    const auto *DRE = dyn_cast_or_null<DeclRefExpr>(
        E ? E->IgnoreParenImpCasts() : nullptr);
    return DRE && DRE->getDecl()->getCanonicalDecl() == Container;
  };
  auto Put = [&](const Expr *Value, const Stmt *At) {
    forEachElement(Value, [&](const Expr *Element) {
      if (auto O = freshValue(Analysis, Element, G))
        Fn(*O, At);
    });
  };
  if (const auto *VD = dyn_cast<VarDecl>(Container);
      VD && !isa<ParmVarDecl>(VD) && VD->getInit())
    Put(VD->getInit(), nullptr);
  forEachStmt(G->getBody(), [&](const Stmt *S) {
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S)) {
      const CXXMethodDecl *MD = MC->getMethodDecl();
      if (MD && MD->getIdentifier() &&
          llvm::is_contained(
              {"push_back", "emplace_back", "insert", "emplace", "assign"},
              MD->getName()) &&
          Names(MC->getImplicitObjectArgument())) {
        for (const Expr *Arg : MC->arguments())
          Put(Arg, S);
        return;
      }
    }
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S);
        Op && Op->getOperator() == OO_Equal && Op->getNumArgs() == 2 &&
        Names(Op->getArg(0))) {
      Put(Op->getArg(1), S);
      return;
    }
    const auto *Call = dyn_cast<CallExpr>(S);
    const FunctionDecl *Callee = Call ? calleeOf(Call) : nullptr;
    const FunctionDecl *Def = Callee ? definitionOf(Callee) : nullptr;
    if (!Def || Depth >= 2 || Def->getCanonicalDecl() == G->getCanonicalDecl() ||
        !Analysis.isUserLocation(Def->getLocation()))
      return;
    unsigned Shift = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(Def)
                         ? 1
                         : 0;
    for (unsigned I = 0; I < Call->getNumArgs(); ++I) {
      if (I < Shift || I - Shift >= Def->getNumParams() ||
          !Names(Call->getArg(I)))
        continue;
      const ParmVarDecl *P = Def->getParamDecl(I - Shift);
      QualType T = P->getType();
      if (!T->isLValueReferenceType() ||
          T.getNonReferenceType().isConstQualified())
        continue;
      forEachFreshFill(Analysis, Def, P->getCanonicalDecl(), Depth + 1,
                       [&](const FreshOrigin &O, const Stmt *) { Fn(O, S); });
    }
  });
}

/// The new tensors \p G puts into its local container \p Container, each
/// with the statement of G that fills it (null: the initializer), named
/// after the container where the tensor has no name of its own.
static std::vector<FreshOrigin> freshFillsOf(CaptureAnalysis &Analysis,
                                             const FunctionDecl *G,
                                             const VarDecl *Container) {
  std::vector<FreshOrigin> Result;
  forEachFreshFill(Analysis, G, Container->getCanonicalDecl(), 0,
                   [&](const FreshOrigin &O, const Stmt *At) {
                     FreshOrigin Copy = O;
                     if (Copy.Name.empty())
                       Copy.Name = Container->getName().str();
                     Copy.Fill = At;
                     Result.push_back(Copy);
                   });
  return Result;
}

void FrozenHostStateCheck::checkPerCallInputs(CaptureAnalysis &Analysis) {
  const SourceManager &SM = Analysis.context().getSourceManager();
  // The locals each capture reads, with the read, by capture.
  // Parameters of the capturing function, read by the capture: what its
  // callers pass.
  std::map<const RegionRoot *, std::vector<const CapturedRead *>> ByRoot,
      ParamsByRoot;
  for (const auto *Map : {&Reads, &AddressReads})
    for (const auto &[Storage, List] : *Map)
      for (const CapturedRead &R : List) {
        const RegionRoot *Root = R.Site->Ctx.Root;
        const auto *VD = dyn_cast<VarDecl>(Storage);
        if (!Root->Owner || !Root->Call || !VD || !VD->hasLocalStorage() ||
            (Map == &Reads && R.Kind != ValueKind::Tensor &&
             R.Kind != ValueKind::TensorList &&
             R.Kind != ValueKind::TensorOwner))
          continue;
        if (const auto *P = dyn_cast<ParmVarDecl>(VD)) {
          if (Map == &Reads && P->getDeclContext() == Root->Owner &&
              R.Kind != ValueKind::TensorOwner)
            ParamsByRoot[Root].push_back(&R);
          continue;
        }
        if (VD->getType()->isReferenceType() ||
            VD->getParentFunctionOrMethod() != Root->Owner)
          continue;
        ByRoot[Root].push_back(&R);
      }
  for (const auto &[Root, Params] : ParamsByRoot)
    ByRoot.try_emplace(Root);
  // Calls of each capturing function whose parameters a capture reads.
  llvm::DenseMap<const FunctionDecl *,
                 std::vector<std::pair<const CallExpr *, const FunctionDecl *>>>
      CallsOf;
  if (!ParamsByRoot.empty()) {
    llvm::DenseSet<const FunctionDecl *> Wanted;
    for (const auto &[Root, Params] : ParamsByRoot)
      Wanted.insert(Root->Owner->getCanonicalDecl());
    forEachUserFunction(
        Analysis.context(), Analysis.code(),
        [&](const FunctionDecl *Caller) {
          forEachStmt(Caller->getBody(), [&](const Stmt *S) {
            const auto *Call = dyn_cast<CallExpr>(S);
            const FunctionDecl *Callee =
                Call ? calleeOf(Call) : nullptr;
            if (Callee && Wanted.contains(Callee->getCanonicalDecl()))
              CallsOf[Callee->getCanonicalDecl()].push_back({Call, Caller});
          });
        },
        FunctionWalk::Instantiated);
  }
  for (const auto &[Root, List] : ByRoot) {
    // A graph kept beyond the call: a member, a global, a graph the caller
    // passed by reference.
    auto Graph = RootGraphs.find(Root);
    if (Graph == RootGraphs.end() || !Graph->second.Key)
      continue;
    auto IsLocal = [](const Decl *D) {
      const auto *VD = dyn_cast_or_null<VarDecl>(D);
      return VD && VD->hasLocalStorage() && !isa<ParmVarDecl>(VD);
    };
    // A local cudaGraph_t counts when an executable made from it is kept
    // (`cudaGraphInstantiate(&exec_, graph, ...)` into a member).
    if (IsLocal(Graph->second.Key) &&
        llvm::none_of(ExecGraphs, [&](const auto &Exec) {
          return !IsLocal(Exec.first) &&
                 llvm::is_contained(Exec.second, Graph->second.Key);
        }))
      continue;
    const FunctionDecl *F = Root->Owner;
    CFG::BuildOptions Options;
    Options.setAllAlwaysAdd();
    std::unique_ptr<CFG> Cfg =
        CFG::buildCFG(F, F->getBody(), &Analysis.context(), Options);
    if (!Cfg)
      continue;
    // The innermost loop of \p G around \p At: a value made before it
    // lives through every pass, the first of which may capture.
    auto Within = [&](const Stmt *Outer, const Stmt *S) {
      return !SM.isBeforeInTranslationUnit(S->getBeginLoc(),
                                           Outer->getBeginLoc()) &&
             !SM.isBeforeInTranslationUnit(Outer->getEndLoc(),
                                           S->getBeginLoc());
    };
    auto LoopAround = [&](const FunctionDecl *G, const Stmt *At) {
      const Stmt *Loop = nullptr;
      forEachStmt(G->getBody(), [&](const Stmt *S) {
        if (isRepeatingLoop(S) && Within(S, At))
          Loop = S; // children come after their parents
      });
      return Loop;
    };
    const Stmt *Loop = LoopAround(F, Root->Call);
    auto InsideLoop = [&](const Stmt *S) { return !Loop || Within(Loop, S); };
    // What a statement does on the way from the origin: begins a capture
    // again (or kills the graph), replays what this capture recorded.
    enum class Effect { None, Recaptures, Replays };
    auto EffectOf = [&](const Stmt *S) {
      if (S == Root->Call)
        return Effect::Recaptures;
      const auto *Call = dyn_cast<CallExpr>(S);
      if (!Call)
        return Effect::None;
      if (isBegin(Analysis, Call) || isKill(Analysis, Call))
        return Effect::Recaptures;
      if (!replayOf(Analysis, Call))
        if (const FunctionDecl *Callee = calleeOf(Call)) {
          const Summary &Sum = summaryOf(Analysis, Callee);
          if (Sum.Captures || Sum.Kills)
            return Effect::Recaptures;
        }
      return replaysRoot(Analysis, Root, Call) ? Effect::Replays
                                               : Effect::None;
    };
    // A replay reached from \p From without passing a begin: a later call
    // that skips the capture replays what an earlier call captured.
    auto ReplayAfter = [&](const Stmt *From) -> const Stmt * {
      std::vector<const CFGBlock *> Work;
      llvm::DenseSet<const CFGBlock *> Seen;
      if (!From) // from the entry
        Work.push_back(&Cfg->getEntry());
      for (const CFGBlock *B : *Cfg) {
        if (!From)
          break;
        bool Started = false;
        for (const CFGElement &E : *B) {
          auto CS = E.getAs<CFGStmt>();
          if (!CS)
            continue;
          if (!Started) {
            Started = CS->getStmt() == From;
            continue;
          }
          Effect X = EffectOf(CS->getStmt());
          if (X == Effect::Replays)
            return CS->getStmt();
          if (X == Effect::Recaptures)
            return nullptr;
        }
        if (Started) {
          for (const CFGBlock *Succ : B->succs())
            if (Succ && Seen.insert(Succ).second)
              Work.push_back(Succ);
          break;
        }
      }
      while (!Work.empty()) {
        const CFGBlock *B = Work.back();
        Work.pop_back();
        bool Stopped = false;
        for (const CFGElement &E : *B) {
          auto CS = E.getAs<CFGStmt>();
          if (!CS)
            continue;
          Effect X = EffectOf(CS->getStmt());
          if (X == Effect::Replays)
            return CS->getStmt();
          if (X == Effect::Recaptures) {
            Stopped = true;
            break;
          }
        }
        if (!Stopped)
          for (const CFGBlock *Succ : B->succs())
            if (Succ && Seen.insert(Succ).second)
              Work.push_back(Succ);
      }
      return nullptr;
    };
    // The statement of F that declares \p VD (the CFG's DeclStmt).
    auto DeclOf = [&](const VarDecl *VD) -> const Stmt * {
      const Stmt *Found = nullptr;
      forEachStmt(F->getBody(), [&](const Stmt *S) {
        if (const auto *DS = dyn_cast<DeclStmt>(S); DS && !Found)
          for (const Decl *D : DS->decls())
            if (D->getCanonicalDecl() == VD->getCanonicalDecl())
              Found = S;
      });
      return Found;
    };
    // Reports \p Origin, made anew on each call of \p Maker (the capturing
    // function, or a caller passing it at \p PassedAt), read as \p Read.
    auto Report = [&](const FreshOrigin &Origin, const FunctionDecl *Maker,
                      const CapturedRead &Read, StringRef ReadName,
                      const CallExpr *PassedAt, const Stmt *Replay) {
      Hazard H = *PerCall;
      std::string Effect = "is made anew on every call of '" +
                           Maker->getNameAsString() + "', but the graph ";
      if (PassedAt)
        Effect += "'" + F->getNameAsString() + "' captured ";
      else
        Effect += "captured ";
      Effect += "on an earlier call keeps reading that call's ";
      Effect += Origin.Tensor ? "tensor" : "buffer";
      H.Effect = Effect;
      SourceLocation Loc = Analysis.visibleLoc(Origin.Loc);
      if (!reportHazard(Analysis, H, Loc, Origin.Range,
                        "'" + Origin.Name + "'", Maker, Read.Site->Ctx.Chain,
                        Root))
        return;
      StringRef Holder = ReadName;
      if (PassedAt && Origin.Fill)
        if (const Expr *Arg =
                argumentFor(PassedAt, cast<ParmVarDecl>(Read.Storage)))
          if (const auto *DRE =
                  dyn_cast<DeclRefExpr>(Arg->IgnoreParenImpCasts()))
            Holder = DRE->getDecl()->getName();
      if (Origin.Fill && Origin.Fill->getBeginLoc() != Origin.Loc &&
          Origin.Name != Holder)
        diag(Analysis.visibleLoc(Origin.Fill->getBeginLoc()),
             "'%0' is filled here", DiagnosticIDs::Note)
            << Holder;
      if (PassedAt)
        diag(Analysis.visibleLoc(PassedAt->getBeginLoc()),
             "passed to '%0' here", DiagnosticIDs::Note)
            << F->getNameAsString();
      diag(Analysis.visibleLoc(Read.Use->getBeginLoc()),
           AddressReads.count(Read.Storage)
               ? "the graph is given the address of '%0' here during capture"
               : "the graph reads '%0' here during capture",
           DiagnosticIDs::Note)
          << ReadName;
      addChainNotes(Analysis, Read.Site->Ctx.Chain, Root);
      diag(Analysis.visibleLoc(Replay->getBeginLoc()),
           "the graph is replayed here, on a call that skips the capture",
           DiagnosticIDs::Note);
    };
    for (const CapturedRead *R : List) {
      const auto *VD = cast<VarDecl>(R->Storage);
      std::vector<std::pair<FreshOrigin, const Stmt *>> Origins;
      const Stmt *Declared = DeclOf(VD);
      if (!Declared)
        continue;
      if (AddressReads.count(VD->getCanonicalDecl())) {
        Origins.push_back({FreshOrigin{VD->getLocation(), VD->getSourceRange(),
                                       VD->getName().str(), nullptr, false},
                           Declared});
      } else if (R->Kind == ValueKind::Tensor ||
                 R->Kind == ValueKind::TensorOwner) {
        if (VD->getInit() &&
            (R->Kind == ValueKind::Tensor
                 ? isFreshTensor(Analysis, VD->getInit())
                 : isFreshOwner(VD->getInit())))
          Origins.push_back({FreshOrigin{VD->getLocation(),
                                         VD->getSourceRange(),
                                         VD->getName().str(), nullptr},
                             Declared});
      } else {
        for (const FreshOrigin &O : freshFillsOf(Analysis, F, VD))
          Origins.push_back({O, O.Fill ? O.Fill : Declared});
      }
      for (const auto &[Origin, At] : Origins) {
        // Made under the capture: each capture reads its own call's value.
        if (!InsideLoop(At) || Analysis.contextOf(F, At))
          continue;
        if (const Stmt *Replay = ReplayAfter(At))
          Report(Origin, F, *R, VD->getName(), nullptr, Replay);
      }
    }
    // A caller's new tensor, passed for a parameter the capture reads: the
    // graph keeps the one of the call that captured.
    auto Params = ParamsByRoot.find(Root);
    if (Params == ParamsByRoot.end())
      continue;
    const Stmt *FromEntry = ReplayAfter(nullptr);
    if (!FromEntry)
      continue;
    for (const CapturedRead *R : Params->second) {
      const auto *P = cast<ParmVarDecl>(R->Storage);
      for (const auto &[Call, Caller] : CallsOf[F->getCanonicalDecl()]) {
        if (Caller->getCanonicalDecl() == F->getCanonicalDecl())
          continue;
        // A capturing object local to the caller dies with the values.
        if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call))
          if (const auto *Obj = dyn_cast<DeclRefExpr>(
                  MC->getImplicitObjectArgument()->IgnoreParenImpCasts()))
            if (const auto *OV = dyn_cast<VarDecl>(Obj->getDecl());
                OV && OV->hasLocalStorage() &&
                !OV->getType()->isReferenceType() &&
                !OV->getType()->isPointerType())
              continue;
        const Expr *Arg = argumentFor(Call, P);
        if (!Arg)
          continue;
        std::vector<FreshOrigin> Origins;
        if (R->Kind == ValueKind::Tensor) {
          if (auto O = freshValue(Analysis, Arg, Caller)) {
            if (O->Name.empty())
              O->Name = P->getName().str();
            Origins.push_back(*O);
          }
        } else if (const auto *DRE =
                       dyn_cast<DeclRefExpr>(Arg->IgnoreParenImpCasts())) {
          const auto *Container = dyn_cast<VarDecl>(DRE->getDecl());
          if (Container && !isa<ParmVarDecl>(Container) &&
              Container->hasLocalStorage() &&
              !Container->getType()->isReferenceType())
            Origins = freshFillsOf(Analysis, Caller, Container);
        }
        const Stmt *CallerLoop = LoopAround(Caller, Call);
        for (const FreshOrigin &Origin : Origins) {
          SourceLocation MadeAt =
              Origin.Fill ? Origin.Fill->getBeginLoc() : Origin.Loc;
          if (CallerLoop && SM.isBeforeInTranslationUnit(
                                MadeAt, CallerLoop->getBeginLoc()))
            continue; // made before a loop of calls: alive through it
          Report(Origin, Caller, *R, P->getName(), Call, FromEntry);
        }
      }
    }
  }
}

bool FrozenHostStateCheck::replaysRoot(CaptureAnalysis &Analysis,
                                       const RegionRoot *Root,
                                       const CallExpr *Call) {
  if (auto G = replayOf(Analysis, Call))
    return replaysCaptured(Root, *G);
  const FunctionDecl *Callee = calleeOf(Call);
  return Callee && llvm::any_of(summaryOf(Analysis, Callee).Replays,
                                [&](const GraphRef &G) {
                                  return replaysCaptured(Root, G);
                                });
}

void FrozenHostStateCheck::checkPinnedParameters(CaptureAnalysis &Analysis) {
  // The replays of each capture in the function that begins it.
  std::map<const RegionRoot *, std::vector<const CallExpr *>> Replays;
  for (const auto &[Storage, List] : ParamReads) {
    const auto *P = dyn_cast<ParmVarDecl>(Storage);
    if (!P)
      continue;
    llvm::FoldingSetNodeID Key;
    variableAtom(P, Key);
    for (const CapturedRead &R : List) {
      const RegionRoot *Root = R.Site->Ctx.Root;
      if (R.Kind != ValueKind::Scalar || !Root->Owner || !Root->Call ||
          P->getDeclContext() != Root->Owner || !Root->Owner->getBody())
        continue;
      // The values the capture ran with.
      llvm::SmallVector<const GuardFact *, 2> Pinned;
      for (const GuardFact &G : Root->Guards)
        if (!G.Loop && G.constrainsSubject() && G.Subject == Key)
          Pinned.push_back(&G);
      if (Pinned.empty())
        continue;
      auto [It, New] = Replays.try_emplace(Root);
      if (New)
        forEachStmt(Root->Owner->getBody(), [&](const Stmt *S) {
          if (const auto *Call = dyn_cast<CallExpr>(S);
              Call && replaysRoot(Analysis, Root, Call))
            It->second.push_back(Call);
        });
      // A replay under a test that no captured value passes.
      const CallExpr *Replay = nullptr;
      for (const CallExpr *Call : It->second) {
        llvm::SmallVector<GuardFact, 4> Here;
        if (!Analysis.flows().wayFacts(Root->Owner, Call, Here))
          continue;
        if (llvm::any_of(Pinned, [&](const GuardFact *G) {
              return llvm::any_of(Here, [&](const GuardFact &F) {
                return G->excludes(F);
              });
            })) {
          Replay = Call;
          break;
        }
      }
      if (!Replay)
        continue;
      const Stmt *Work = R.Site->Site.S;
      Hazard H = *Scalar;
      H.Effect = "takes other values on the calls that replay the graph, "
                 "which captured it by value only for the value it had then";
      SourceLocation Loc = Analysis.visibleLoc(Work->getBeginLoc());
      std::string Name = "'" + P->getNameAsString() + "'";
      if (!reportHazard(Analysis, H, Loc, Work->getSourceRange(), Name,
                        R.Site->Function, R.Site->Ctx.Chain, Root))
        continue;
      const Decl *Used = storageOfValue(R.Use);
      diag(Analysis.visibleLoc(R.Use->getBeginLoc()),
           "the graph keeps the value '%0' has here during capture",
           DiagnosticIDs::Note)
          << (Used ? nameOfStorage(Used) : P->getName());
      addChainNotes(Analysis, R.Site->Ctx.Chain, Root);
      diag(Analysis.visibleLoc(Replay->getBeginLoc()),
           "the graph is replayed here, where '%0' cannot have a value the "
           "capture ran with",
           DiagnosticIDs::Note)
          << P->getName();
    }
  }
}

void FrozenHostStateCheck::checkHostComputedCalls(CaptureAnalysis &Analysis) {
  if (CalleeHazards.empty())
    return;
  for (const CapturedSite &Site : Analysis.sites()) {
    const Hazard *H = matchHazard(Analysis.code(), CalleeHazards, Site.Site,
                                  matchContextOf(Site));
    if (!H)
      continue;
    const Reach *Via = nullptr;
    SourceLocation Loc = anchorOf(Analysis, Site, Via);
    if (Loc.isInvalid())
      continue;
    const Stmt *Anchor = Via ? Via->Site.S : Site.Site.S;
    std::string Lead = "'" + displayName(Site.Site.Callee) + "'";
    if (Via)
      Lead = "call to '" + displayName(Via->Function) + "' reaches " + Lead +
             " in library code, which";
    if (!reportHazard(Analysis, *H, Loc,
                      Anchor ? Anchor->getSourceRange() : SourceRange(), Lead,
                      Site.Function, Via ? Via->Parent : Site.Ctx.Chain,
                      Site.Ctx.Root))
      continue;
    addChainNotes(Analysis, Via ? Via->Parent : Site.Ctx.Chain, Site.Ctx.Root);
  }
}

void FrozenHostStateCheck::checkCapture(CaptureAnalysis &Analysis) {
  checkHostComputedCalls(Analysis);
  Summaries.clear();
  collectReads(Analysis);
  if (Reads.empty() && AddressReads.empty() && ParamReads.empty())
    return;
  collectGraphs(Analysis);
  std::vector<const FunctionDecl *> Functions;
  forEachUserFunction(
      Analysis.context(), Analysis.code(),
      [&](const FunctionDecl *FD) { Functions.push_back(FD); },
      FunctionWalk::Instantiated);
  for (const FunctionDecl *FD : Functions)
    if (FD->getBody())
      checkFunction(Analysis, FD);
  checkPerCallInputs(Analysis);
  checkPinnedParameters(Analysis);
}

} // namespace clang::tidy::cudagraph
