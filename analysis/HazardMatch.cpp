//===--- HazardMatch.cpp - cudagraph analysis -----------------------------===//

#include "HazardMatch.h"
#include "FunctionFlow.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace clang::cudagraph {

static bool isConstantTrue(const Expr *E, const ASTContext &Ctx) {
  E = unwrap(E);
  if (!E || E->isValueDependent() || isa<CXXDefaultArgExpr>(E))
    return false;
  bool Value = false;
  return E->getType()->isScalarType() &&
         E->EvaluateAsBooleanCondition(Value, Ctx) && Value;
}

/// Whether an expression names the CPU device: kCPU, DeviceType::CPU,
/// Device("cpu"), TensorOptions().device(kCPU), ...
static bool mentionsCpuDevice(const Stmt *S) {
  if (!S)
    return false;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    StringRef Name = DRE->getDecl()->getName();
    if (Name == "kCPU" || Name == "CPU")
      return true;
  }
  if (const auto *SL = dyn_cast<StringLiteral>(S))
    if (SL->getCharByteWidth() == 1 &&
        (SL->getString() == "cpu" || SL->getString().starts_with("cpu:")))
      return true;
  for (const Stmt *Child : S->children())
    if (mentionsCpuDevice(Child))
      return true;
  return false;
}

/// Whether an expression may name a device other than the CPU, or carries
/// options whose device is not visible here.
static bool mentionsOtherDevice(const Stmt *S) {
  if (!S)
    return false;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    StringRef Name = DRE->getDecl()->getName();
    if (Name == "kCUDA" || Name == "CUDA")
      return true;
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      if (const CXXRecordDecl *RD =
              VD->getType().getNonReferenceType()->getAsCXXRecordDecl())
        if (RD->getName() == "TensorOptions" || RD->getName() == "Device" ||
            RD->getName() == "Tensor")
          return true;
  }
  if (const auto *SL = dyn_cast<StringLiteral>(S))
    if (SL->getCharByteWidth() == 1 && SL->getString().starts_with("cuda"))
      return true;
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S))
    if (const CXXMethodDecl *M = MC->getMethodDecl())
      if (M->getName() == "options" || M->getName() == "device")
        return true;
  for (const Stmt *Child : S->children())
    if (mentionsOtherDevice(Child))
      return true;
  return false;
}


static const char *const TensorFactories[] = {
    "empty",   "zeros",  "ones",          "full",   "rand",     "randn",
    "randint", "arange", "empty_strided", "tensor", "from_blob"};

/// The initializer of the local (non-reference) variable \p E names.
static const Expr *localValueInit(const Expr *E) {
  const auto *DRE = dyn_cast<DeclRefExpr>(E);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  return VD && VD->hasLocalStorage() && !VD->getType()->isReferenceType()
             ? VD->getInit()
             : nullptr;
}

/// Calls \p Fn with every value stored into the field \p E names
/// (`this->f` or `f` in a method): its in-class initializer, constructor
/// initializers and `f = value` assignments in the class's methods. False
/// when \p E names no field of a class, or nothing is stored.
static bool forEachFieldValue(const Expr *E,
                              llvm::function_ref<void(const Expr *)> Fn) {
  const auto *ME = dyn_cast<MemberExpr>(E);
  const auto *Field = ME ? dyn_cast<FieldDecl>(ME->getMemberDecl()) : nullptr;
  const auto *RD = Field ? dyn_cast<CXXRecordDecl>(Field->getParent()) : nullptr;
  if (!RD || !RD->hasDefinition() || Field->getType()->isReferenceType())
    return false;
  bool Any = false;
  auto Store = [&](const Expr *Value) {
    if (const auto *Default = dyn_cast_or_null<CXXDefaultInitExpr>(Value))
      Value = Default->getExpr();
    if (!Value)
      return;
    Any = true;
    Fn(Value);
  };
  if (Field->hasInClassInitializer())
    Store(Field->getInClassInitializer());
  auto Walk = [&](const Stmt *S, auto &&Self) -> void {
    if (!S)
      return;
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S);
        Op && Op->getOperator() == OO_Equal && Op->getNumArgs() == 2)
      if (const auto *LHS = dyn_cast<MemberExpr>(Op->getArg(0)->IgnoreImplicit());
          LHS && LHS->getMemberDecl() == Field)
        Store(Op->getArg(1));
    for (const Stmt *Child : S->children())
      Self(Child, Self);
  };
  for (const CXXMethodDecl *M : RD->methods()) {
    const FunctionDecl *Def = nullptr;
    if (!M->getBody(Def))
      continue;
    if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(Def))
      for (const CXXCtorInitializer *Init : Ctor->inits())
        if (Init->getMember() == Field && Init->isWritten())
          Store(Init->getInit());
    Walk(Def->getBody(), Walk);
  }
  return Any;
}

/// Whether every value stored into the field \p E names satisfies \p Pred.
static bool allFieldValues(const Expr *E,
                           llvm::function_ref<bool(const Expr *)> Pred) {
  bool All = true;
  return forEachFieldValue(E, [&](const Expr *V) { All = All && Pred(V); }) &&
         All;
}

/// Whether \p S mentions the variable \p VD.
static bool refersTo(const Stmt *S, const VarDecl *VD) {
  if (!S)
    return false;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S);
      DRE && DRE->getDecl()->getCanonicalDecl() == VD->getCanonicalDecl())
    return true;
  return llvm::any_of(S->children(),
                      [&](const Stmt *C) { return refersTo(C, VD); });
}

/// Whether \p Cond, negated, is a test that \p VD is on the CPU:
/// `!(t.device() == kCPU)`, `!(t.is_cpu())`, `!(t.device().is_cpu())`.
static bool assertsOnCpu(const Expr *Test, const VarDecl *VD);
static bool failsUnlessOnCpu(const Stmt *Cond, const VarDecl *VD) {
  if (!Cond)
    return false;
  if (const auto *Not = dyn_cast<UnaryOperator>(Cond);
      Not && Not->getOpcode() == UO_LNot &&
      assertsOnCpu(Not->getSubExpr()->IgnoreParenImpCasts(), VD))
    return true;
  return llvm::any_of(Cond->children(), [&](const Stmt *C) {
    return failsUnlessOnCpu(C, VD);
  });
}

/// Whether \p Test holding means \p VD is on the CPU (one conjunct of an
/// `&&` is enough).
static bool assertsOnCpu(const Expr *Test, const VarDecl *VD) {
  Test = Test->IgnoreParenImpCasts();
  if (const auto *And = dyn_cast<BinaryOperator>(Test);
      And && And->getOpcode() == BO_LAnd)
    return assertsOnCpu(And->getLHS(), VD) || assertsOnCpu(And->getRHS(), VD);
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Test))
    if (const CXXMethodDecl *M = MC->getMethodDecl();
        M && M->getIdentifier() && M->getName() == "is_cpu" &&
        refersTo(MC->getImplicitObjectArgument(), VD))
      return true;
  const Expr *L = nullptr, *R = nullptr;
  if (const auto *BO = dyn_cast<BinaryOperator>(Test);
      BO && BO->getOpcode() == BO_EQ) {
    L = BO->getLHS();
    R = BO->getRHS();
  } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Test);
             Op && Op->getOperator() == OO_EqualEqual && Op->getNumArgs() == 2) {
    L = Op->getArg(0);
    R = Op->getArg(1);
  }
  return L && R &&
         ((refersTo(L, VD) && mentionsCpuDevice(R)) ||
          (refersTo(R, VD) && mentionsCpuDevice(L)));
}

/// Whether \p S cannot complete: it throws or calls a noreturn function.
static bool neverCompletes(const Stmt *S) {
  if (!S || isa<LambdaExpr>(S))
    return false;
  if (isa<CXXThrowExpr>(S))
    return true;
  if (const auto *Call = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *FD = calleeOf(Call); FD && FD->isNoReturn())
      return true;
  return llvm::any_of(S->children(), neverCompletes);
}

/// Whether a check at the top of \p VD's function, before \p Use, stops
/// unless \p VD is on the CPU (`TORCH_CHECK(t.device() == kCPU, ...)`).
static bool checkedOnCpu(const VarDecl *VD, const Expr *Use) {
  const auto *FD = dyn_cast<FunctionDecl>(VD->getDeclContext());
  const auto *Body = FD ? dyn_cast_or_null<CompoundStmt>(FD->getBody()) : nullptr;
  if (!Body)
    return false;
  const SourceManager &SM = FD->getASTContext().getSourceManager();
  SourceLocation At = SM.getExpansionLoc(Use->getBeginLoc());
  for (const Stmt *S : Body->body()) {
    if (!SM.isBeforeInTranslationUnit(SM.getExpansionLoc(S->getEndLoc()), At))
      break;
    if (const auto *If = dyn_cast<IfStmt>(S);
        If && !If->getElse() && failsUnlessOnCpu(If->getCond(), VD) &&
        neverCompletes(If->getThen()))
      return true;
  }
  return false;
}

bool isTensorType(QualType T) {
  const CXXRecordDecl *RD = T.getNonReferenceType()->getAsCXXRecordDecl();
  if (!RD || !RD->getIdentifier() ||
      (RD->getName() != "Tensor" && RD->getName() != "TensorBase"))
    return false;
  const auto *NS = dyn_cast<NamespaceDecl>(RD->getDeclContext());
  return NS && NS->getIdentifier() && NS->getName() == "at";
}

bool isTensorMetadataQuery(const CXXMethodDecl *M) {
  if (!M || !M->getIdentifier() || M->isStatic() ||
      !isTensorType(M->getFunctionObjectParameterType()))
    return false;
  return llvm::StringSwitch<bool>(M->getName())
      .Cases("dim", "ndimension", "size", "sizes", "sym_size", "sym_sizes",
             true)
      .Cases("numel", "stride", "strides", "storage_offset", "defined", true)
      .Cases("scalar_type", "dtype", "element_size", "itemsize", "layout",
             true)
      .Cases("is_contiguous", "is_floating_point", "is_complex",
             "requires_grad", "get_device", true)
      .Default(false);
}

static bool mentionsCudaDevice(const Stmt *S);

/// The expression \p E is a part of, past implicit nodes and parentheses;
/// \p E becomes the part itself.
static const Stmt *enclosingExpr(const Expr *&E, const ParentMap &PM) {
  const Stmt *P = PM.getParent(E);
  while (P && (isa<ImplicitCastExpr, ParenExpr, MaterializeTemporaryExpr,
                   CXXBindTemporaryExpr, ExprWithCleanups>(P))) {
    E = cast<Expr>(P);
    P = PM.getParent(P);
  }
  return P;
}

namespace {
/// What the unit does with a tensor parameter, for readsAsHostBlock.
struct BlockUses {
  bool HostRead = false; // a host read of its elements, or a check that
                         // it is on the CPU
  bool Other = false;    // anything else: device work, or not known
  /// The uses being judged are in library code that hands the tensor on
  /// (a forwarding template's body): only what reaches the unit's own
  /// functions counts; its bookkeeping (recording inputs) does not.
  bool InLibrary = false;
  llvm::SmallPtrSet<const ParmVarDecl *, 8> Seen;
  void other() { Other |= !InLibrary; }
};
} // namespace

static void scanParameterUses(const ParmVarDecl *P, unsigned Depth,
                              BlockUses &U);

/// The argument of `std::forward<T>(x)` or `std::move(x)`, which hand \p E
/// on as it is; null for anything else.
static const Expr *handedOnArgument(const Expr *E) {
  const auto *Call = dyn_cast_or_null<CallExpr>(E);
  if (!Call || Call->getNumArgs() != 1)
    return nullptr;
  const FunctionDecl *FD = calleeOf(Call);
  if (!FD || !FD->isInStdNamespace() || !FD->getIdentifier() ||
      (FD->getName() != "forward" && FD->getName() != "move"))
    return nullptr;
  return Call->getArg(0);
}

/// Whether \p FD is library code the scan of a tensor's uses does not
/// enter: the standard library, system headers, ATen, c10 and torch.
static bool isLibraryFunction(const FunctionDecl *FD) {
  if (FD->isInStdNamespace() ||
      FD->getASTContext().getSourceManager().isInSystemHeader(
          FD->getLocation()))
    return true;
  std::string Qualified = FD->getQualifiedNameAsString();
  StringRef Q(Qualified);
  return Q.starts_with("at::") || Q.starts_with("c10::") ||
         Q.starts_with("torch::");
}

/// Whether parameter \p Index of \p Def (an instantiation) comes from a
/// forwarding reference of its template (`Args&&... args`): a function
/// that hands its arguments on, as autograd's Function::apply hands them to
/// T::forward. Its body shows where they go.
static bool isForwardingParam(const FunctionDecl *Def, unsigned Index) {
  const FunctionDecl *Pattern = Def->getTemplateInstantiationPattern();
  if (!Pattern || Def->isInStdNamespace())
    return false;
  const ParmVarDecl *Param = nullptr;
  for (unsigned I = 0; I < Pattern->getNumParams(); ++I) {
    const ParmVarDecl *PP = Pattern->getParamDecl(I);
    if (I == Index || PP->isParameterPack()) {
      if (I <= Index)
        Param = PP;
      break;
    }
  }
  if (!Param)
    return false;
  QualType T = Param->getType();
  if (const auto *Pack = T->getAs<PackExpansionType>())
    T = Pack->getPattern();
  const auto *Ref = T->getAs<RValueReferenceType>();
  return Ref && !Ref->getPointeeType().hasQualifiers() &&
         Ref->getPointeeType()->getAs<TemplateTypeParmType>();
}

/// Judges one use of the tensor \p E: the parameter itself, or (\p Element)
/// a part of it taken with `[i]`, select or index.
static void judgeTensorUse(const Expr *E, bool Element, const ParentMap &PM,
                           unsigned Depth, BlockUses &U) {
  const Stmt *P = enclosingExpr(E, PM);
  if (!P || isa<LambdaExpr>(P))
    return; // a lambda's capture of it is no use by itself
  // `std::forward<T>(t)`: the use is what receives it.
  if (const Expr *Arg = handedOnArgument(dyn_cast<Expr>(P));
      Arg && Arg->IgnoreImplicit() == E->IgnoreImplicit())
    return judgeTensorUse(cast<Expr>(P), Element, PM, Depth, U);
  if (const auto *Sub = dyn_cast<CXXOperatorCallExpr>(P);
      Sub && Sub->getOperator() == OO_Subscript && Sub->getNumArgs() == 2 &&
      Sub->getArg(0)->IgnoreImplicit() == E->IgnoreImplicit())
    return judgeTensorUse(Sub, /*Element=*/true, PM, Depth, U);
  if (const auto *ME = dyn_cast<MemberExpr>(P)) {
    const auto *M = dyn_cast<CXXMethodDecl>(ME->getMemberDecl());
    const Expr *Callee = ME;
    const auto *Call =
        dyn_cast_or_null<CXXMemberCallExpr>(enclosingExpr(Callee, PM));
    if (!M || !M->getIdentifier() || !Call) {
      U.other();
      return;
    }
    StringRef Name = M->getName();
    if (isTensorMetadataQuery(M))
      return;
    if (Name == "item") {
      U.HostRead |= Element;
      return;
    }
    if (Name == "select" || Name == "index")
      return judgeTensorUse(Call, /*Element=*/true, PM, Depth, U);
    if (Name == "accessor") { // a host accessor: host memory only
      U.HostRead = true;
      return;
    }
    if (Name == "device") {
      // Compared with the CPU, or just looked at; compared with a CUDA
      // device or asked is_cuda(), it is device evidence.
      const Expr *Dev = Call;
      const Stmt *Use = enclosingExpr(Dev, PM);
      if (Use && mentionsCudaDevice(Use))
        U.other();
      if (const auto *Next = dyn_cast_or_null<MemberExpr>(Use))
        if (Next->getMemberDecl()->getName() == "is_cuda")
          U.other();
      return;
    }
    U.other();
    return;
  }
  // Passed to a function of the unit: what that function does with it.
  const FunctionDecl *Callee = nullptr;
  unsigned Index = 0;
  bool Found = false;
  auto FindArg = [&](llvm::ArrayRef<const Expr *> Args, unsigned Offset) {
    for (unsigned I = 0; I < Args.size(); ++I)
      if (Args[I]->IgnoreImplicit() == E->IgnoreImplicit() && I >= Offset) {
        Index = I - Offset;
        Found = true;
      }
  };
  if (const auto *Call = dyn_cast<CallExpr>(P)) {
    Callee = calleeOf(Call);
    FindArg({Call->getArgs(), Call->getNumArgs()},
            isa<CXXOperatorCallExpr>(Call) && isa_and_nonnull<CXXMethodDecl>(Callee));
  } else if (const auto *Construct = dyn_cast<CXXConstructExpr>(P)) {
    Callee = Construct->getConstructor();
    FindArg({Construct->getArgs(), Construct->getNumArgs()}, 0);
  }
  const FunctionDecl *Def = Callee ? Callee->getDefinition() : nullptr;
  if (Element || !Found || !Def || Index >= Def->getNumParams() ||
      Depth >= 6) {
    U.other();
    return;
  }
  // Library code is not followed, except a template that hands its
  // arguments on (`Function<T>::apply(args...)` calling T::forward).
  if (!isForwardingParam(Def, Index) && isLibraryFunction(Def)) {
    U.other();
    return;
  }
  scanParameterUses(Def->getParamDecl(Index), Depth + 1, U);
}

/// Judges every use of the tensor parameter \p P in its function, and in
/// the functions of the unit it is passed on to.
static void scanParameterUses(const ParmVarDecl *P, unsigned Depth,
                              BlockUses &U) {
  if (U.Other || !U.Seen.insert(P).second)
    return;
  const auto *FD = dyn_cast<FunctionDecl>(P->getDeclContext());
  const Stmt *Body = FD ? FD->getBody() : nullptr;
  if (!Body) {
    U.other();
    return;
  }
  if (const auto *Block = dyn_cast<CompoundStmt>(Body))
    for (const Stmt *S : Block->body())
      if (const auto *If = dyn_cast<IfStmt>(S);
          If && !If->getElse() && failsUnlessOnCpu(If->getCond(), P) &&
          neverCompletes(If->getThen())) {
        U.HostRead = true; // the function stops unless it is on the CPU
        return;
      }
  ParentMap PM(const_cast<Stmt *>(Body));
  bool WasInLibrary = U.InLibrary;
  U.InLibrary = isLibraryFunction(FD);
  auto Walk = [&](const Stmt *S, auto &&Self) -> void {
    if (!S || U.Other)
      return;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S);
        DRE && DRE->getDecl()->getCanonicalDecl() == P->getCanonicalDecl())
      judgeTensorUse(DRE, /*Element=*/false, PM, Depth, U);
    for (const Stmt *Child : S->children())
      Self(Child, Self);
  };
  Walk(Body, Walk);
  U.InLibrary = WasInLibrary;
}

/// Whether the tensor parameter \p P, whose callers are not known, is a
/// block of host values by the way the unit uses it: its elements are read
/// one by one on the host (`box[0][0].item()`), or a function it is passed
/// to checks it is on the CPU, and it is given to no device work, tensor
/// operation or library call (kernels, data_ptr, accessors for kernels,
/// arithmetic, `.cuda()`, `.cpu()`, an is_cuda() check).
static bool readsAsHostBlock(const ParmVarDecl *P) {
  if (!isTensorType(P->getType()))
    return false;
  BlockUses U;
  scanParameterUses(P, 0, U);
  return U.HostRead && !U.Other;
}

namespace {
/// Where a tensor expression is judged: the arguments the calls leading to
/// the match pass for parameters, seen from chain level Level. HostBlocks:
/// a parameter whose callers are not known counts as a host tensor when
/// the unit uses it as a block of host values (readsAsHostBlock).
struct HostScope {
  const ArgumentsFn *Arguments = nullptr;
  unsigned Level = NoLevel;
  bool HostBlocks = false;
};
} // namespace

/// Whether \p E names a stream no capture of the unit includes: a variable or
/// field MatchContext::IsolatedStream accepts, or a parameter every call on
/// the chain passes one for.
static bool isolatedStream(const Expr *E, const MatchContext &Where,
                           unsigned Level = 0, unsigned Depth = 0) {
  if (!E || !Where.IsolatedStream || Depth > 8)
    return false;
  const Expr *Bare = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Bare))
    if (const auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl())) {
      llvm::SmallVector<PassedArgument, 2> Passed;
      if (!Where.Arguments || Level == NoLevel ||
          !Where.Arguments(P, Level, Passed) || Passed.empty())
        return false;
      return llvm::all_of(Passed, [&](const PassedArgument &A) {
        return isolatedStream(A.Arg, Where, A.Level, Depth + 1);
      });
    }
  if (!isa<DeclRefExpr>(Bare) && !isa<MemberExpr>(Bare))
    return false; // an element of an array may be any of them
  const Decl *D = storageOf(Bare);
  return D && Where.IsolatedStream(D);
}

/// Whether \p E is known to be a tensor in host memory: the result of cpu()
/// or to(kCPU), a factory call whose arguments name the CPU or no device at
/// all (the default device is the CPU), a local variable initialized so, a
/// variable a check before the use requires to be on the CPU, or a
/// parameter every call on the chain leading here passes such a tensor.
static bool isHostTensor(const Expr *E, unsigned Depth = 0,
                         const HostScope &Scope = HostScope()) {
  E = unwrap(E);
  if (!E || Depth > 8)
    return false;
  if (const Expr *Arg = handedOnArgument(E))
    return isHostTensor(Arg, Depth + 1, Scope);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (VD && checkedOnCpu(VD, DRE))
      return true;
    if (const auto *P = dyn_cast_or_null<ParmVarDecl>(VD)) {
      llvm::SmallVector<PassedArgument, 2> Passed;
      if (Scope.Arguments && *Scope.Arguments && Scope.Level != NoLevel &&
          (*Scope.Arguments)(P, Scope.Level, Passed) && !Passed.empty())
        return llvm::all_of(Passed, [&](const PassedArgument &A) {
          return isHostTensor(
              A.Arg, Depth + 1,
              HostScope{Scope.Arguments, A.Level, Scope.HostBlocks});
        });
      // Callers not known: judge by what the unit does with it.
      return Scope.HostBlocks && readsAsHostBlock(P);
    }
    const Expr *Init = localValueInit(E);
    return Init && isHostTensor(Init, Depth + 1, Scope);
  }
  if (isa<MemberExpr>(E))
    return allFieldValues(
        E, [&](const Expr *V) { return isHostTensor(V, Depth + 1); });
  // `t[i][j]` of a host tensor is a view of host memory.
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
      Op && Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2 &&
      isTensorType(Op->getType()))
    return isHostTensor(Op->getArg(0), Depth + 1, Scope);
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD || !FD->getIdentifier())
    return false;
  StringRef Name = FD->getName();
  if (isa<CXXMethodDecl>(FD)) {
    if (Name == "cpu" || (Name == "to" && isBlockingHostCopy(Call)))
      return true;
    // Other tensor methods of a host tensor (sum, view, pin_memory, ...)
    // give host tensors; to, cuda and copies may move to the device.
    if (Name == "to" || Name == "cuda" || Name.starts_with("copy") ||
        !isa<CXXMemberCallExpr>(Call) || !isTensorType(FD->getReturnType()))
      return false;
    return isHostTensor(
        cast<CXXMemberCallExpr>(Call)->getImplicitObjectArgument(), Depth + 1,
        Scope);
  }
  std::string Qualified = FD->getQualifiedNameAsString();
  if (!StringRef(Qualified).starts_with("at::") &&
      !StringRef(Qualified).starts_with("torch::"))
    return false;
  if (llvm::none_of(TensorFactories, [&](const char *F) { return Name == F; }))
    return false;
  // Arguments that may carry a device we cannot see (an options variable,
  // x.options()) make the device unknown.
  bool Cpu = false, Unknown = false;
  for (const Expr *Arg : Call->arguments()) {
    if (isa<CXXDefaultArgExpr>(Arg))
      continue;
    Cpu |= mentionsCpuDevice(Arg);
    Unknown |= mentionsOtherDevice(Arg);
  }
  return Cpu || !Unknown;
}

bool isBlockingHostCopy(const CallExpr *Call) {
  const FunctionDecl *FD = calleeOf(Call);
  if (!FD)
    return false;
  // dst.copy_(src) into a host tensor, without non_blocking=true.
  if (FD->getIdentifier() && FD->getName() == "copy_") {
    const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
    if (!Member || !isHostTensor(Member->getImplicitObjectArgument()))
      return false;
    for (unsigned I = 0, N = FD->getNumParams();
         I < N && I < Call->getNumArgs(); ++I)
      if (FD->getParamDecl(I)->getName() == "non_blocking" &&
          !isa<CXXDefaultArgExpr>(Call->getArg(I))) {
        bool Value = true;
        const Expr *E = unwrap(Call->getArg(I));
        if (!E || !E->EvaluateAsBooleanCondition(Value, FD->getASTContext()) ||
            Value)
          return false;
      }
    return true;
  }
  // Member calls carry the object as an implicit first argument in
  // CXXOperatorCallExpr only; CXXMemberCallExpr arguments match parameters.
  unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD);
  bool ToCpu = false;
  for (unsigned I = 0, N = FD->getNumParams(); I < N; ++I) {
    unsigned ArgIndex = I + Offset;
    if (ArgIndex >= Call->getNumArgs())
      break;
    const Expr *Arg = Call->getArg(ArgIndex);
    StringRef Param = FD->getParamDecl(I)->getName();
    if (Param == "non_blocking") {
      if (!isa<CXXDefaultArgExpr>(Arg)) {
        bool Value = true;
        const Expr *E = unwrap(Arg);
        // A non_blocking flag that is not a constant false may be true.
        if (!E || !E->EvaluateAsBooleanCondition(Value, FD->getASTContext()) ||
            Value)
          return false;
      }
      continue;
    }
    if (Param == "copy" || isa<CXXDefaultArgExpr>(Arg))
      continue;
    // dev.to(other): to other's device and type; a host `other` downloads.
    if (isTensorType(FD->getParamDecl(I)->getType())) {
      const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
      ToCpu = ToCpu || (isHostTensor(Arg) && Member &&
                        !isHostTensor(Member->getImplicitObjectArgument()));
      continue;
    }
    ToCpu = ToCpu || mentionsCpuDevice(Arg);
  }
  return ToCpu;
}

/// `host.to(kCUDA)`, `host.cuda()`, `device.copy_(host)`: a blocking copy of
/// a host tensor to the device.
/// Whether \p S names a CUDA device for sure: `kCUDA`, `"cuda:0"`, or a
/// local (options, device) initialized with one.
/// Whether \p Is holds for \p S or a statement in it, looking through
/// locals (not parameters) to their initializers.
static bool anyFollowingLocals(const Stmt *S,
                               llvm::function_ref<bool(const Stmt *)> Is,
                               unsigned Depth = 0) {
  if (!S || Depth > 4)
    return false;
  if (Is(S))
    return true;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    return VD && VD->hasLocalStorage() && !isa<ParmVarDecl>(VD) &&
           VD->getInit() && anyFollowingLocals(VD->getInit(), Is, Depth + 1);
  }
  for (const Stmt *Child : S->children())
    if (anyFollowingLocals(Child, Is, Depth))
      return true;
  return false;
}

static bool mentionsCudaDevice(const Stmt *S) {
  return anyFollowingLocals(S, [](const Stmt *E) {
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return DRE->getDecl()->getName() == "kCUDA" ||
             DRE->getDecl()->getName() == "CUDA";
    const auto *SL = dyn_cast<StringLiteral>(E);
    return SL && SL->getCharByteWidth() == 1 &&
           SL->getString().starts_with("cuda");
  });
}

/// Whether \p S calls `pinned_memory(true)` (on options), directly or
/// through a local initialized with it.
static bool passesPinnedTrue(const Stmt *S) {
  return anyFollowingLocals(S, [](const Stmt *E) {
    const auto *MC = dyn_cast<CXXMemberCallExpr>(E);
    const CXXMethodDecl *M = MC ? MC->getMethodDecl() : nullptr;
    const Expr *Arg = MC && MC->getNumArgs() == 1 ? unwrap(MC->getArg(0)) : nullptr;
    bool Value = false;
    return M && M->getIdentifier() && M->getName() == "pinned_memory" && Arg &&
           Arg->EvaluateAsBooleanCondition(Value, M->getASTContext()) && Value;
  });
}

/// Whether \p E is a host tensor in pinned memory: `pin_memory()`, or a
/// factory given `pinned_memory(true)`, or a local initialized so.
static bool isPinnedHostTensor(const Expr *E, unsigned Depth);
bool isPinnedHostTensor(const Expr *E) { return isPinnedHostTensor(E, 0); }
static bool isPinnedHostTensor(const Expr *E, unsigned Depth) {
  E = unwrap(E);
  if (!E || Depth > 4)
    return false;
  if (isa<DeclRefExpr>(E)) {
    const Expr *Init = localValueInit(E);
    return Init && isPinnedHostTensor(Init, Depth + 1);
  }
  if (isa<MemberExpr>(E))
    return allFieldValues(
        E, [&](const Expr *V) { return isPinnedHostTensor(V, Depth + 1); });
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD || !FD->getIdentifier())
    return false;
  if (FD->getName() == "pin_memory")
    return true;
  return llvm::any_of(Call->arguments(), [](const Expr *Arg) {
    return passesPinnedTrue(Arg);
  });
}

/// Whether \p S mentions the boolean dtype (`kBool`, `at::ScalarType::Bool`).
static bool mentionsBoolDtype(const Stmt *S) {
  return anyFollowingLocals(S, [](const Stmt *E) {
    const auto *DRE = dyn_cast<DeclRefExpr>(E);
    const ValueDecl *D = DRE ? DRE->getDecl() : nullptr;
    return D && (isa<EnumConstantDecl>(D) || isa<VarDecl>(D)) &&
           (D->getName() == "kBool" ||
            (isa<EnumConstantDecl>(D) && D->getName() == "Bool"));
  });
}

/// Whether \p E is known to be a boolean tensor: a comparison, a logical
/// operation or a predicate (isnan, ...), a conversion or factory naming
/// kBool, a view of such a tensor, or a local initialized so.
static bool isBoolTensor(const Expr *E, unsigned Depth = 0) {
  E = unwrap(E);
  if (!E || Depth > 6 || !isTensorType(E->getType()))
    return false;
  if (isa<DeclRefExpr>(E)) {
    const Expr *Init = localValueInit(E);
    return Init && isBoolTensor(Init, Depth + 1);
  }
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD)
    return false;
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call)) {
    switch (Op->getOperator()) {
    case OO_Less: case OO_Greater: case OO_LessEqual: case OO_GreaterEqual:
    case OO_EqualEqual: case OO_ExclaimEqual:
      return true;
    case OO_Amp: case OO_Pipe: case OO_Caret:
      return Op->getNumArgs() == 2 && isBoolTensor(Op->getArg(0), Depth + 1) &&
             isBoolTensor(Op->getArg(1), Depth + 1);
    case OO_Tilde: case OO_Exclaim:
      return Op->getNumArgs() == 1 && isBoolTensor(Op->getArg(0), Depth + 1);
    default:
      return false;
    }
  }
  if (!FD->getIdentifier())
    return false;
  static const char *const Predicates[] = {
      "gt", "lt", "ge", "le", "eq", "ne", "greater", "less", "greater_equal",
      "less_equal", "not_equal", "logical_and", "logical_or", "logical_not",
      "logical_xor", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
      "signbit", "isclose", "isin", "any", "all"};
  static const char *const Views[] = {
      "view", "reshape", "flatten", "squeeze", "unsqueeze", "expand",
      "expand_as", "contiguous", "clone", "slice", "select", "narrow", "t",
      "transpose", "permute", "detach", "view_as", "reshape_as"};
  StringRef Name = FD->getName();
  auto Named = [&](auto &List) {
    return llvm::any_of(List, [&](const char *N) { return Name == N; });
  };
  if (Named(Predicates))
    return true;
  const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
  if (Member && Named(Views))
    return isBoolTensor(Member->getImplicitObjectArgument(), Depth + 1);
  // x.to(kBool), at::zeros({n}, at::kBool), torch::ones(..., opts.dtype(kBool))
  bool Factory = llvm::any_of(TensorFactories,
                              [&](const char *F) { return Name == F; }) ||
                 Name.ends_with("_like");
  if (Name == "to" || Factory)
    return llvm::any_of(Call->arguments(), [](const Expr *Arg) {
      return !isa<CXXDefaultArgExpr>(Arg) && mentionsBoolDtype(Arg);
    });
  return false;
}

/// Whether \p S holds a boolean tensor (an index list's element).
static bool holdsBoolTensor(const Stmt *S, unsigned Depth = 0) {
  if (!S || Depth > 8 || isa<LambdaExpr>(S))
    return false;
  if (const auto *E = dyn_cast<Expr>(S); E && isBoolTensor(E))
    return true;
  for (const Stmt *Child : S->children())
    if (holdsBoolTensor(Child, Depth + 1))
      return true;
  return false;
}

/// `x.index({mask})`, `at::index(x, {mask})`, `at::where(cond)`: a selection
/// whose result size is the mask's true count, known only on the device.
static bool selectsByMask(const FunctionDecl *FD, const CallExpr *Call) {
  if (!Call || !FD->getIdentifier())
    return false;
  if (FD->getName() == "where")
    return FD->getNumParams() == 1;
  unsigned First = isa<CXXMemberCallExpr>(Call) ? 0 : 1;
  for (unsigned I = First; I < Call->getNumArgs(); ++I)
    if (holdsBoolTensor(Call->getArg(I)))
      return true;
  return false;
}

/// Whether \p S takes the options of a tensor not known to be on the host
/// (`x.options()`, `x.options().dtype(kLong)`): in captured code, a device
/// tensor's.
static bool optionsOfDeviceTensor(const Stmt *S, unsigned Depth = 0) {
  if (!S || Depth > 6 || isa<LambdaExpr>(S))
    return false;
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S))
    if (const CXXMethodDecl *M = MC->getMethodDecl();
        M && M->getIdentifier() && M->getName() == "options" &&
        isTensorType(MC->getImplicitObjectArgument()->getType()))
      return !isHostTensor(MC->getImplicitObjectArgument());
  for (const Stmt *Child : S->children())
    if (optionsOfDeviceTensor(Child, Depth + 1))
      return true;
  return false;
}

static bool isBlockingUpload(const CallExpr *Call) {
  // torch::tensor({...}, cuda_options): host values copied from pageable
  // memory to the device.
  if (!isa<CXXMemberCallExpr>(Call)) {
    const FunctionDecl *FD = calleeOf(Call);
    return FD && FD->getIdentifier() && FD->getName() == "tensor" &&
           llvm::any_of(Call->arguments(), [](const Expr *Arg) {
             return !isa<CXXDefaultArgExpr>(Arg) &&
                    (mentionsCudaDevice(Arg) || optionsOfDeviceTensor(Arg));
           });
  }
  const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
  const CXXMethodDecl *M = Member ? Member->getMethodDecl() : nullptr;
  if (!M || !M->getIdentifier())
    return false;
  StringRef Name = M->getName();
  const Expr *Source = Name == "copy_" && Call->getNumArgs() > 0
                           ? Call->getArg(0)
                           : Member->getImplicitObjectArgument();
  if (!isHostTensor(Source))
    return false;
  bool ToDevice = Name == "cuda";
  for (unsigned I = 0, N = M->getNumParams(); I < N && I < Call->getNumArgs();
       ++I) {
    const Expr *Arg = Call->getArg(I);
    if (isa<CXXDefaultArgExpr>(Arg))
      continue;
    if (M->getParamDecl(I)->getName() == "non_blocking") {
      // non_blocking=true helps only a pinned source: libtorch refuses a
      // pageable one during capture either way (measured).
      bool Value = true;
      const Expr *E = unwrap(Arg);
      if (!E || !E->EvaluateAsBooleanCondition(Value, M->getASTContext()))
        return false;
      if (Value && isPinnedHostTensor(Source))
        return false;
      continue;
    }
    ToDevice = ToDevice || mentionsOtherDevice(Arg);
  }
  // dst.copy_(host) uploads when dst is not a host tensor itself.
  if (Name == "copy_")
    ToDevice = !isHostTensor(Member->getImplicitObjectArgument());
  return ToDevice;
}


/// Whether a Thrust call's execution policy neither allocates with
/// cudaMalloc nor synchronizes: `thrust::cuda::par_nosync(alloc).on(s)`,
/// whose type is an `execute_with_allocator` instantiation over the
/// `execute_on_stream_nosync_base` policy. (`par(alloc)` still ends with
/// cudaStreamSynchronize; `par_nosync.on(s)` allocates with cudaMalloc.)
static bool passesCaptureSafePolicy(const CallExpr *Call) {
  for (const Expr *Arg : Call->arguments()) {
    // The policy's own type, before conversion to the base the algorithm
    // takes.
    QualType T = Arg->IgnoreImplicit()
                     ->getType()
                     .getNonReferenceType()
                     .getUnqualifiedType();
    if (!T->getAsCXXRecordDecl())
      continue;
    std::string Spelled = T.getCanonicalType().getAsString();
    llvm::StringRef Name(Spelled);
    if (Name.contains("with_allocator") && Name.contains("nosync"))
      return true;
  }
  return false;
}

static bool isTensorPrint(const FunctionDecl *FD, const CallExpr *Call) {
  if (FD->getOverloadedOperator() != OO_LessLess || FD->getNumParams() != 2 ||
      !isTensorType(FD->getParamDecl(1)->getType()) || Call->getNumArgs() != 2)
    return false;
  // `os << t.cpu()` prints a host tensor; the copy itself is the hazard and
  // is reported on its own.
  if (const auto *Copy = dyn_cast<CXXMemberCallExpr>(unwrap(Call->getArg(1))))
    if (const CXXMethodDecl *M = Copy->getMethodDecl())
      if (M->getName() == "cpu" ||
          (M->getName() == "to" && isBlockingHostCopy(Copy)))
        return false;
  return true;
}

static bool passesTrueToParam(const CallExpr *Call, const NamePatterns &Names,
                              const ASTContext &Ctx) {
  const FunctionDecl *FD = calleeOf(Call);
  unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD);
  for (unsigned I = 0, N = FD->getNumParams(); I < N; ++I) {
    if (I + Offset >= Call->getNumArgs())
      break;
    if (Names.matches(FD->getParamDecl(I)->getName()) &&
        isConstantTrue(Call->getArg(I + Offset), Ctx))
      return true;
  }
  return false;
}

/// `host.item()`, `at::nonzero(host)`: the hazard's device read happens on
/// a tensor known to be in host memory, which is plain host work.
static bool readsHostTensor(const CallExpr *Call, const MatchContext &Where) {
  HostScope Scope{&Where.Arguments, 0, /*HostBlocks=*/true};
  if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call))
    return isHostTensor(Member->getImplicitObjectArgument(), 0, Scope);
  const FunctionDecl *FD = calleeOf(Call);
  return FD && !isa<CXXMethodDecl>(FD) && Call->getNumArgs() > 0 &&
         isHostTensor(Call->getArg(0), 0, Scope);
}

bool asksTemporaryStorageSize(const CallExpr *Call, ASTContext &Ctx) {
  if (Call->getNumArgs() < 1)
    return false;
  const Expr *Storage = Call->getArg(0)->IgnoreParenImpCasts();
  if (Storage->isNullPointerConstant(Ctx, Expr::NPC_ValueDependentIsNotNull))
    return true;
  // `void *temp = nullptr; f(temp, bytes, ...); cudaMalloc(&temp, bytes);`:
  // a local still holding its null initializer.
  const auto *DRE = dyn_cast<DeclRefExpr>(Storage);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || !VD->isLocalVarDecl() || !VD->getInit() ||
      !VD->getInit()->IgnoreParenImpCasts()->isNullPointerConstant(
          Ctx, Expr::NPC_ValueDependentIsNotNull))
    return false;
  const auto *Owner = dyn_cast_or_null<FunctionDecl>(
      VD->getParentFunctionOrMethod());
  if (!Owner || !Owner->getBody())
    return false;
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation At = SM.getExpansionLoc(Call->getBeginLoc());
  bool Changed = false;
  forEachStmt(Owner->getBody(), [&](const Stmt *S) {
    if (!Changed && S != Call && changesHere(S, VD) &&
        SM.isBeforeInTranslationUnit(SM.getExpansionLoc(S->getBeginLoc()),
                                     At))
      Changed = true;
  });
  return !Changed;
}

/// Work sent to the legacy default stream: a launch or stream-taking API
/// call given stream 0 (or none), or a libtorch guard or setter making the
/// default stream current.
const Expr *legacyStreamOrigin(const Expr *E, const ASTContext &Ctx,
                               const MatchContext &Where, unsigned Level,
                               unsigned Depth) {
  StreamValue V = streamValue(E, Ctx);
  if (V != StreamValue::Unknown || !E)
    return isLegacyStream(V, Where.PerThreadDefaultStream) ? E : nullptr;
  const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  const auto *P = DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
  const auto *Owner =
      P ? dyn_cast<FunctionDecl>(P->getDeclContext()) : nullptr;
  if (!Owner || !Owner->getBody() || Depth > 8 || !Where.Arguments ||
      Level == NoLevel || P->getType()->isReferenceType() ||
      mayChange(Owner->getBody(), P))
    return nullptr;
  llvm::SmallVector<PassedArgument, 2> Passed;
  if (!Where.Arguments(P, Level, Passed))
    return nullptr;
  for (const PassedArgument &A : Passed)
    if (const Expr *Origin =
            legacyStreamOrigin(A.Arg, Ctx, Where, A.Level, Depth + 1))
      return Origin;
  return nullptr;
}

static bool usesLegacyStream(const Hazard &H, CodeClassifier &Code,
                             const FunctionDecl *FD, const Stmt *S,
                             const MatchContext &Where) {
  bool PerThread = Where.PerThreadDefaultStream;
  ASTContext &Ctx = FD->getASTContext();
  if (const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(S)) {
    const CXXRecordDecl *RD = Construct->getConstructor()->getParent();
    return RD && RD->getIdentifier() &&
           (RD->getName() == "CUDAStreamGuard" ||
            RD->getName() == "OptionalCUDAStreamGuard") &&
           Construct->getNumArgs() >= 1 &&
           isTorchDefaultStream(Construct->getArg(0)) && !PerThread;
  }
  const auto *Call = dyn_cast_or_null<CallExpr>(S);
  if (!Call)
    return false;
  if (!isa<CUDAKernelCallExpr>(Call)) {
    StringRef Name = stripCudaApiSuffix(Code.nameOf(FD));
    if (Name.ends_with("setCurrentCUDAStream"))
      return Call->getNumArgs() >= 1 && isTorchDefaultStream(Call->getArg(0)) &&
             !PerThread;
    if (!H.Names.matches(Name))
      return false;
    // A CUB algorithm given no temporary storage only computes its size.
    if (Name.starts_with("cub::") && asksTemporaryStorageSize(Call, Ctx))
      return false;
  }
  return legacyStreamOrigin(streamArgument(Call), Ctx, Where) != nullptr;
}

/// Whether \p Call, a call of \p FD, has libtorch allocate a new CUDA
/// tensor: a Python callable given a tensor, or a function or tensor method
/// of at:: or torch:: (an operator included) that returns tensors by value, other than views and aliases,
/// in-place (`add_`) and `_out` forms, host copies, and factories that name
/// no device (they allocate host memory).
static bool allocatesDeviceTensor(const FunctionDecl *FD, const CallExpr *Call,
                                  const MatchContext &Where) {
  std::string Qualified = FD->getQualifiedNameAsString();
  StringRef Q(Qualified);
  // A Python callable given tensors (`fn(x)`, a module's forward): the
  // Python side runs libtorch operators, which allocate their results.
  if (Q.starts_with("pybind11::") &&
      FD->getOverloadedOperator() == OO_Call)
    return llvm::any_of(Call->arguments(), [](const Expr *Arg) {
      return isTensorType(Arg->getType());
    });
  if (!(Q.starts_with("at::") || Q.starts_with("torch::")) ||
      Q.starts_with("at::cuda::") || Q.starts_with("torch::autograd::") ||
      Q.starts_with("torch::jit::"))
    return false;
  QualType Ret = FD->getReturnType();
  bool Tensors = isTensorType(Ret) && !Ret->isReferenceType();
  if (const auto *RD = Ret->getAsCXXRecordDecl();
      !Tensors && RD && RD->isInStdNamespace() && RD->getIdentifier() &&
      (RD->getName() == "tuple" || RD->getName() == "vector"))
    if (const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD))
      Tensors = llvm::any_of(Spec->getTemplateArgs().asArray(),
                             [](const TemplateArgument &A) {
                               return A.getKind() == TemplateArgument::Type &&
                                      isTensorType(A.getAsType());
                             });
  if (!Tensors)
    return false;
  StringRef Name = FD->getIdentifier() ? FD->getName() : StringRef();
  if (FD->getIdentifier() &&
      (Name.ends_with("_") || Name.ends_with("_out") || Name.ends_with("_outf")))
    return false;
  static const char *const Aliases[] = {
      "view",      "view_as",   "reshape",    "reshape_as", "narrow",
      "select",    "slice",     "t",          "transpose",  "permute",
      "expand",    "expand_as", "squeeze",    "unsqueeze",  "flatten",
      "unflatten", "as_strided", "alias",     "detach",     "unbind",
      "split",     "chunk",     "diagonal",   "real",       "imag",
      "unfold",    "movedim",   "swapaxes",   "contiguous", "to",
      "type_as",   "cuda",      "cpu",        "data",       "grad",
      "variable_data", "tensor_data", "mutable_grad", "toType", "from_blob",
      "pin_memory", "operator[]", "index",    "operator="};
  if (FD->getIdentifier() &&
      llvm::any_of(Aliases, [&](const char *A) { return Name == A; }))
    return false;
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call);
      Op && (Op->getOperator() == OO_Subscript || Op->getOperator() == OO_Equal))
    return false;
  bool Factory = FD->getIdentifier() &&
                 (llvm::any_of(TensorFactories,
                               [&](const char *F) { return Name == F; }) ||
                  Name.ends_with("_like"));
  if (Factory) {
    if (Name.ends_with("_like"))
      return Call->getNumArgs() > 0 && !isHostTensor(Call->getArg(0));
    return llvm::any_of(Call->arguments(), [](const Expr *Arg) {
      return !isa<CXXDefaultArgExpr>(Arg) &&
             (mentionsCudaDevice(Arg) || optionsOfDeviceTensor(Arg));
    });
  }
  return !readsHostTensor(Call, Where);
}

static bool usesHazard(const Hazard &H, CodeClassifier &Code,
                       const FunctionDecl *FD, const Stmt *S,
                       const MatchContext &Where) {
  // A member the compiler writes (a C struct's constructor, such as
  // cudaMemcpyAttributes's) calls no API, whatever its class is named.
  if (FD->isImplicit())
    return false;
  const auto *Call = dyn_cast_or_null<CallExpr>(S);
  switch (H.Kind) {
  case HazardKind::Callee:
    if (!H.Names.matches(Code.nameOf(FD)))
      return false;
    return !(H.ReadsDevice && Call && readsHostTensor(Call, Where));
  case HazardKind::HostCopy:
    return Call && H.Names.matches(Code.nameOf(FD)) &&
           isBlockingHostCopy(Call);
  case HazardKind::HostUpload:
    return Call && H.Names.matches(Code.nameOf(FD)) && isBlockingUpload(Call);
  case HazardKind::TensorPrint:
    return Call && isTensorPrint(FD, Call);
  case HazardKind::MaskSelect:
    return H.Names.matches(Code.nameOf(FD)) && selectsByMask(FD, Call) &&
           !readsHostTensor(Call, Where);
  case HazardKind::PinnedFlag:
    return Call && passesTrueToParam(Call, H.Names, FD->getASTContext());
  case HazardKind::LegacyStream:
    return usesLegacyStream(H, Code, FD, S, Where);
  case HazardKind::UncapturedStream:
    // Another thread records nothing whatever stream it names; on the
    // capturing thread the legacy stream is the one stream known not to be
    // in the capture (others may join it through events).
    // A stream the unit creates and never joins to a capture is outside it
    // too.
    return Call && H.Names.matches(stripCudaApiSuffix(Code.nameOf(FD))) &&
           (Where.OtherThread ||
            isLegacyStream(streamValue(streamArgument(Call), FD->getASTContext()),
                           Where.PerThreadDefaultStream) ||
            isolatedStream(streamArgument(Call), Where));
  case HazardKind::ThrustPolicy:
    return H.Names.matches(Code.nameOf(FD)) &&
           !(Call && passesCaptureSafePolicy(Call));
  case HazardKind::TempStorageRun:
    return Call && H.Names.matches(Code.nameOf(FD)) &&
           !asksTemporaryStorageSize(Call, FD->getASTContext());
  case HazardKind::PoollessAlloc:
    return Where.PoollessCapture && Call && allocatesDeviceTensor(FD, Call, Where);
  case HazardKind::DefaultStreamBegin: // judged at the begin, not as work
  case HazardKind::UnregisteredGenerator: // judged by the check (origins)
  case HazardKind::Branch:
  case HazardKind::LeftOpen:
  case HazardKind::StreamFork:     // judged by the check (stream dataflow)
  case HazardKind::UncapturedWait:
  case HazardKind::CapturedEvent:
  case HazardKind::EagerEventRecord:
  case HazardKind::FrozenState: // judged by the check (a dataflow)
  case HazardKind::UpdateFailure: // judged by the check (GraphUpdates)
  case HazardKind::RuntimeOnly:
    break;
  }
  return false;
}

const Hazard *matchHazard(CodeClassifier &Code, llvm::ArrayRef<Hazard> Hazards,
                          const CallSite &Site, const MatchContext &Where) {
  const FunctionDecl *FD = Site.Callee;
  // An indirect site's callee is a function of the program run through a
  // std::function or pointer: what it does is found in its own body. A
  // kernel launched through a pointer (`auto k = kernel<T>; k<<<g, b>>>()`)
  // is still a launch, whose stream is the launch's own.
  if (!FD || FD->isInvalidDecl() || Site.K == CallSite::Kind::Callable ||
      (Site.Indirect && !isa_and_nonnull<CUDAKernelCallExpr>(Site.S)))
    return nullptr;
  for (const Hazard &H : Hazards) {
    if (Where.StreamGuarded && !H.DeviceWide)
      continue;
    // Through a kernel pointer only the launch itself is known: which stream
    // it goes to. The matchers of API calls read the direct callee's
    // parameters, which a pointer call does not have.
    if (Site.Indirect && H.Kind != HazardKind::LegacyStream)
      continue;
    if (!usesHazard(H, Code, FD, Site.S, Where))
      continue;
    if (H.allowedInAll(Where.Modes, Code.nameOf(FD)))
      continue;
    return &H;
  }
  return nullptr;
}

bool makesStreamCurrent(const Stmt *S, const Expr *&Stream) {
  Stream = nullptr;
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *D : DS->decls()) {
      const auto *VD = dyn_cast<VarDecl>(D);
      const CXXRecordDecl *RD =
          VD ? VD->getType()->getAsCXXRecordDecl() : nullptr;
      if (!RD || !RD->getIdentifier() ||
          !RD->getName().ends_with("CUDAStreamGuard") || !VD->getInit())
        continue;
      const auto *Construct =
          dyn_cast<CXXConstructExpr>(VD->getInit()->IgnoreImplicit());
      if (Construct && Construct->getNumArgs() >= 1)
        Stream = Construct->getArg(0);
      return true;
    }
    return false;
  }
  const auto *E = dyn_cast<Expr>(S);
  const auto *Call = E ? dyn_cast<CallExpr>(E->IgnoreImplicit()) : nullptr;
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD || !FD->getIdentifier() || FD->getName() != "setCurrentCUDAStream" ||
      Call->getNumArgs() < 1)
    return false;
  Stream = Call->getArg(0);
  return true;
}

bool currentStreamBefore(const Stmt *S, const ParentMap &PM,
                         const Expr *&Stream) {
  const Stmt *Child = S;
  for (const Stmt *P = PM.getParent(S); P; Child = P, P = PM.getParent(P)) {
    const auto *Block = dyn_cast<CompoundStmt>(P);
    if (!Block)
      continue;
    auto Body = Block->body();
    auto It = llvm::find(Body, Child);
    while (It != Body.begin())
      if (makesStreamCurrent(*--It, Stream))
        return true;
  }
  Stream = nullptr;
  return false;
}

} // namespace clang::cudagraph
