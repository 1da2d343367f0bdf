//===--- CallSites.cpp - cudagraph analysis -------------------------------===//

#include "CallSites.h"
#include "UserCode.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "llvm/ADT/DenseSet.h"
#include <functional>

namespace clang::cudagraph {

/// Looks through temporaries, conversions to std::function and casts.
static const Expr *unwrapCallable(const Expr *Arg) {
  while (Arg) {
    Arg = Arg->IgnoreImplicit()->IgnoreParens();
    if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(Arg))
      Arg = MT->getSubExpr();
    else if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(Arg))
      Arg = BT->getSubExpr();
    else if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(Arg))
      Arg = FC->getSubExpr();
    else if (const auto *CC = dyn_cast<CXXConstructExpr>(Arg);
             CC && CC->getNumArgs() == 1)
      Arg = CC->getArg(0);
    else if (const auto *UO = dyn_cast<UnaryOperator>(Arg);
             UO && (UO->getOpcode() == UO_AddrOf ||
                    UO->getOpcode() == UO_Deref))
      Arg = UO->getSubExpr();
    else
      return Arg;
  }
  return Arg;
}

static const FunctionDecl *callableOf(const Expr *E, unsigned Depth) {
  E = unwrapCallable(E);
  if (!E || Depth > 2)
    return nullptr;
  if (const auto *L = dyn_cast<LambdaExpr>(E))
    return L->getCallOperator();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *FD = dyn_cast<FunctionDecl>(DRE->getDecl()))
      return FD;
    // A local std::function or auto variable holding a lambda or function.
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      if (VD->hasLocalStorage() && !isa<ParmVarDecl>(VD) && VD->getInit())
        return callableOf(VD->getInit(), Depth + 1);
  }
  return nullptr;
}

const FunctionDecl *passedCallable(const Expr *Arg) {
  return callableOf(Arg, 0);
}

/// The call operator of a closure or function object \p E evaluates to
/// (`std::forward<C>(c)` in a template instantiated with a lambda type), or
/// the callable it names; null for generic lambdas and overloaded functors.
static const FunctionDecl *closureOf(const Expr *E) {
  if (const FunctionDecl *F = callableOf(E, 1))
    return F;
  E = unwrapCallable(E);
  // std::move / std::forward hand on their argument.
  while (const auto *Call = dyn_cast_or_null<CallExpr>(E)) {
    const FunctionDecl *Callee = calleeOf(Call);
    if (!Callee || Call->getNumArgs() != 1 || !Callee->isInStdNamespace() ||
        !Callee->getIdentifier() ||
        (Callee->getName() != "move" && Callee->getName() != "forward"))
      break;
    E = unwrapCallable(Call->getArg(0));
  }
  if (!E)
    return nullptr;
  const CXXRecordDecl *RD = E->getType()->getAsCXXRecordDecl();
  if (!RD || !RD->hasDefinition())
    return nullptr;
  if (RD->isLambda())
    return RD->isGenericLambda() ? nullptr : RD->getLambdaCallOperator();
  const CXXMethodDecl *Only = nullptr;
  for (const CXXMethodDecl *M : RD->methods())
    if (M->getOverloadedOperator() == OO_Call) {
      if (Only)
        return nullptr;
      Only = M;
    }
  return Only;
}

namespace {
/// Whether \p E names \p D: the variable itself, or the field through any
/// object (`task.work`, `work_`).
bool namesDecl(const Expr *E, const ValueDecl *D) {
  E = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    return DRE->getDecl() == D;
  if (const auto *ME = dyn_cast<MemberExpr>(E))
    return ME->getMemberDecl() == D;
  return false;
}

/// The callables a variable or field is assigned in \p S
/// (`f = [&] {...};`, `fp = &work;`, `work_ = std::forward<F>(f);`).
void collectAssigned(const Stmt *S, const ValueDecl *VD,
                     llvm::SmallVectorImpl<const FunctionDecl *> &Out) {
  if (!S || isa<LambdaExpr>(S))
    return;
  const Expr *LHS = nullptr, *RHS = nullptr;
  if (const auto *BO = dyn_cast<BinaryOperator>(S);
      BO && BO->getOpcode() == BO_Assign) {
    LHS = BO->getLHS();
    RHS = BO->getRHS();
  } else if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(S);
             OC && OC->getOperator() == OO_Equal && OC->getNumArgs() == 2) {
    LHS = OC->getArg(0);
    RHS = OC->getArg(1);
  }
  if (LHS && namesDecl(LHS, VD))
    if (const FunctionDecl *F =
            isa<FieldDecl>(VD) ? closureOf(RHS) : callableOf(RHS, 0))
      Out.push_back(F);
  for (const Stmt *Child : S->children())
    collectAssigned(Child, VD, Out);
}
} // namespace

/// The functions named in the return statements of a function that \p Init
/// calls: `auto k = pick_kernel(m);` where pick_kernel returns one of
/// several kernels (template dispatch code does this).
static void pickedCallables(const Expr *Init,
                            llvm::SmallVectorImpl<const FunctionDecl *> &Out) {
  const auto *Call = dyn_cast<CallExpr>(Init->IgnoreParenImpCasts());
  const FunctionDecl *Picker = Call ? calleeOf(Call) : nullptr;
  if (Picker)
    Picker = Picker->getDefinition();
  if (!Picker || !Picker->hasBody() ||
      !Picker->getReturnType()->isFunctionPointerType())
    return;
  llvm::SmallVector<const Stmt *, 16> Work{Picker->getBody()};
  while (!Work.empty() && Out.size() < 256) {
    const Stmt *S = Work.pop_back_val();
    if (!S || isa<LambdaExpr>(S))
      continue;
    if (const auto *Ret = dyn_cast<ReturnStmt>(S)) {
      if (Ret->getRetValue())
        if (const FunctionDecl *F = callableOf(Ret->getRetValue(), 1))
          Out.push_back(F);
      continue;
    }
    for (const Stmt *Child : S->children())
      Work.push_back(Child);
  }
}

/// The callables a class keeps in its field \p FD (a std::function or a
/// function pointer): its default initializer, the member initializers of
/// its constructors (templates instantiated with a lambda type included)
/// and assignments in its methods.
static void fieldCallables(const FieldDecl *FD,
                           llvm::SmallVectorImpl<const FunctionDecl *> &Out) {
  const CXXRecordDecl *RD = dyn_cast<CXXRecordDecl>(FD->getParent());
  if (!RD || !RD->hasDefinition())
    return;
  if (const Expr *Init = FD->getInClassInitializer())
    if (const FunctionDecl *F = closureOf(Init))
      Out.push_back(F);
  auto Visit = [&](const FunctionDecl *M) {
    const FunctionDecl *Def = M->getDefinition();
    if (!Def || !Def->hasBody() || Def->isDependentContext())
      return;
    if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(Def))
      for (const CXXCtorInitializer *Init : Ctor->inits())
        if (Init->getMember() == FD && Init->getInit())
          if (const FunctionDecl *F = closureOf(Init->getInit()))
            Out.push_back(F);
    collectAssigned(Def->getBody(), FD, Out);
  };
  for (const Decl *D : RD->decls()) {
    if (const auto *M = dyn_cast<CXXMethodDecl>(D))
      Visit(M);
    else if (const auto *T = dyn_cast<FunctionTemplateDecl>(D))
      for (const FunctionDecl *Spec : T->specializations())
        Visit(Spec);
  }
}

/// \p Targets without repeats, in the order first seen.
static llvm::SmallVector<const FunctionDecl *, 2>
dedupe(llvm::SmallVector<const FunctionDecl *, 2> &Targets) {
  llvm::SmallVector<const FunctionDecl *, 2> Unique;
  for (const FunctionDecl *F : Targets)
    if (!llvm::is_contained(Unique, F))
      Unique.push_back(F);
  return Unique;
}

/// The callables a call holds in the variable or field it calls through.
static llvm::SmallVector<const FunctionDecl *, 2>
heldCallables(const Stmt *S, bool *Held) {
  llvm::SmallVector<const FunctionDecl *, 2> Targets;
  const auto *Call = dyn_cast_or_null<CallExpr>(S);
  if (!Call)
    return Targets;
  const Expr *Object = nullptr;
  if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(Call)) {
    // f(args) on a std::function.
    const auto *M = dyn_cast_or_null<CXXMethodDecl>(calleeOf(OC));
    const CXXRecordDecl *RD = M ? M->getParent() : nullptr;
    if (OC->getOperator() != OO_Call || !RD || !RD->isInStdNamespace() ||
        !RD->getIdentifier() ||
        !llvm::is_contained({StringRef("function"),
                             StringRef("move_only_function"),
                             StringRef("copyable_function")},
                            RD->getName()))
      return Targets;
    Object = OC->getArg(0);
  } else if (!calleeOf(Call)) {
    // fp(args) or (*fp)(args) through a function pointer.
    Object = Call->getCallee();
  } else {
    return Targets;
  }
  const Expr *Holder = unwrapCallable(Object);
  if (const auto *ME = dyn_cast_or_null<MemberExpr>(Holder))
    if (const auto *Field = dyn_cast<FieldDecl>(ME->getMemberDecl())) {
      if (Held)
        *Held = true;
      fieldCallables(Field, Targets);
      return dedupe(Targets);
    }
  const auto *DRE = dyn_cast_or_null<DeclRefExpr>(Holder);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || isa<ParmVarDecl>(VD))
    return Targets;
  if (VD->getInit()) {
    if (const FunctionDecl *F = callableOf(VD->getInit(), 1))
      Targets.push_back(F);
    else
      pickedCallables(VD->getInit(), Targets);
  }
  if (VD->hasLocalStorage())
    if (const auto *Owner =
            dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod()))
      collectAssigned(Owner->getBody(), VD, Targets);
  return dedupe(Targets);
}

llvm::SmallVector<const FunctionDecl *, 2>
invokedCallables(const Stmt *S, bool *Held, PointerTargets *Pointers,
                 bool *ByType) {
  llvm::SmallVector<const FunctionDecl *, 2> Targets = heldCallables(S, Held);
  if (!Targets.empty() || !Pointers)
    return Targets;
  if (const FunctionType *Fn = Pointers->callType(S)) {
    for (const FunctionDecl *F : Pointers->ofType(Fn))
      Targets.push_back(F);
    if (ByType)
      *ByType = !Targets.empty();
  }
  return Targets;
}

//===----------------------------------------------------------------------===//
// PointerTargets
//===----------------------------------------------------------------------===//

namespace {
/// The functions user code names other than as a call's callee, with the
/// type each is named as.
class AddressWalker : public RecursiveASTVisitor<AddressWalker> {
public:
  AddressWalker(const CodeClassifier &Code,
                llvm::function_ref<void(const FunctionDecl *)> Fn)
      : Code(Code), Fn(Fn) {}
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool shouldVisitLambdaBody() const { return true; }

  bool TraverseDecl(Decl *D) {
    if (!D || outsideHostUserCode(Code, D))
      return true;
    return RecursiveASTVisitor::TraverseDecl(D);
  }
  bool VisitCallExpr(CallExpr *CE) {
    if (const Expr *Callee = CE->getCallee())
      Callees.insert(Callee->IgnoreParenImpCasts());
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *DRE) {
    const auto *FD = dyn_cast<FunctionDecl>(DRE->getDecl());
    if (!FD || Callees.contains(DRE))
      return true;
    if (const auto *M = dyn_cast<CXXMethodDecl>(FD); M && !M->isStatic())
      return true;
    Fn(FD);
    return true;
  }

private:
  const CodeClassifier &Code;
  llvm::function_ref<void(const FunctionDecl *)> Fn;
  llvm::DenseSet<const Expr *> Callees;
};

/// Whether \p T is, or points or refers to, a class \p Code calls the
/// user's.
bool isProgramClass(QualType T, const CodeClassifier &Code) {
  for (unsigned Depth = 0; Depth < 4 && !T.isNull(); ++Depth) {
    if (T->isPointerType() || T->isReferenceType()) {
      T = T->getPointeeType();
      continue;
    }
    const RecordDecl *RD = T->getAsRecordDecl();
    return RD && !RD->isLambda() && Code.isUserLocation(RD->getLocation());
  }
  return false;
}
} // namespace

bool PointerTargets::namesProgramClass(const FunctionType *Fn) const {
  if (isProgramClass(Fn->getReturnType(), Code))
    return true;
  if (const auto *Proto = dyn_cast<FunctionProtoType>(Fn))
    for (QualType P : Proto->param_types())
      if (isProgramClass(P, Code))
        return true;
  return false;
}

const FunctionType *PointerTargets::callType(const Stmt *S) const {
  const auto *Call = dyn_cast_or_null<CallExpr>(S);
  if (!Call || calleeOf(Call) || isa<CXXOperatorCallExpr>(Call) ||
      isa<CXXMemberCallExpr>(Call) || isa<CUDAKernelCallExpr>(Call))
    return nullptr;
  const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(Callee);
      UO && UO->getOpcode() == UO_Deref)
    Callee = UO->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Callee);
      DRE && isa<ParmVarDecl>(DRE->getDecl()))
    return nullptr;
  QualType T = Callee->getType();
  if (T->isPointerType() || T->isReferenceType())
    T = T->getPointeeType();
  const auto *Fn =
      dyn_cast<FunctionType>(Ctx.getCanonicalType(T).getTypePtr());
  if (!Fn || T->isDependentType() || !namesProgramClass(Fn))
    return nullptr;
  return Fn;
}

void PointerTargets::build() {
  Built = true;
  llvm::DenseSet<const FunctionDecl *> Seen;
  AddressWalker(Code, [&](const FunctionDecl *FD) {
    FD = FD->getCanonicalDecl();
    if (!Seen.insert(FD).second || FD->getType()->isDependentType() ||
        !Code.isUserLocation(FD->getLocation()) || runsOnDeviceOnly(FD))
      return;
    const auto *Fn = dyn_cast<FunctionType>(
        Ctx.getCanonicalType(FD->getType()).getTypePtr());
    if (!Fn || !namesProgramClass(Fn))
      return;
    const FunctionDecl *Def = FD->getDefinition();
    ByType[Fn].push_back(Def ? Def : FD);
    Taken[Def ? Def : FD] = Fn;
  }).TraverseDecl(Ctx.getTranslationUnitDecl());
}

llvm::ArrayRef<const FunctionDecl *>
PointerTargets::ofType(const FunctionType *Fn) {
  if (!Built)
    build();
  auto It = ByType.find(Fn);
  if (It == ByType.end())
    return {};
  return It->second;
}

const FunctionType *PointerTargets::takenAs(const FunctionDecl *FD) {
  if (!Built)
    build();
  const FunctionDecl *Def = FD->getDefinition();
  return Taken.lookup(Def ? Def : FD);
}

std::string PointerTargets::key(const FunctionType *Fn) const {
  PrintingPolicy Policy(Ctx.getLangOpts());
  Policy.FullyQualifiedName = true;
  Policy.SuppressScope = false;
  Policy.PrintCanonicalTypes = true;
  return QualType(Fn, 0).getAsString(Policy);
}

const FunctionDecl *destructorOf(QualType T) {
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  if (!RD || !RD->hasDefinition() || RD->hasTrivialDestructor())
    return nullptr;
  return RD->getDestructor();
}

bool emplacesThread(const FunctionDecl *FD) {
  const auto *M = dyn_cast_or_null<CXXMethodDecl>(FD);
  if (!M || !M->getIdentifier() ||
      !(M->getName() == "emplace_back" || M->getName() == "emplace" ||
        M->getName() == "emplace_front"))
    return false;
  const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(M->getParent());
  if (!Spec || !Spec->isInStdNamespace() ||
      Spec->getTemplateArgs().size() == 0 ||
      Spec->getTemplateArgs()[0].getKind() != TemplateArgument::Type)
    return false;
  const CXXRecordDecl *Elem =
      Spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
  return Elem && Elem->isInStdNamespace() && Elem->getIdentifier() &&
         (Elem->getName() == "thread" || Elem->getName() == "jthread");
}

/// Whether \p S keeps the callables it is given for later instead of
/// running them: a std::function (or packaged_task, ...) made or assigned,
/// or a standard container's insertion. What it stores runs where it is
/// called, not here.
static bool storesCallables(const Stmt *S) {
  const auto *M = dyn_cast_or_null<CXXMethodDecl>(directCallee(S));
  const CXXRecordDecl *RD = M ? M->getParent() : nullptr;
  if (!RD || !RD->isInStdNamespace() || !RD->getIdentifier() ||
      emplacesThread(M))
    return false;
  StringRef Class = RD->getName();
  if ((Class == "function" || Class == "move_only_function" ||
       Class == "copyable_function" || Class == "packaged_task") &&
      (isa<CXXConstructorDecl>(M) || M->isCopyAssignmentOperator() ||
       M->isMoveAssignmentOperator() ||
       M->getOverloadedOperator() == OO_Equal))
    return true;
  static const char *const Insertions[] = {
      "push_back", "emplace_back", "push_front", "emplace_front", "push",
      "emplace",   "insert",       "try_emplace", "insert_or_assign",
      "assign"};
  return M->getIdentifier() &&
         llvm::any_of(Insertions,
                      [&](const char *N) { return M->getName() == N; });
}

/// The class whose objects a standard smart pointer or container holds
/// (`T` of `std::unique_ptr<T>`, `std::vector<T>`,
/// `std::vector<std::unique_ptr<T>>`), when it is not a class of the
/// standard library or of libtorch; null otherwise.
static const CXXRecordDecl *ownedClass(QualType T, unsigned Depth = 0) {
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(
      T->getAsCXXRecordDecl());
  if (!Spec || Depth > 1)
    return nullptr;
  if (!Spec->isInStdNamespace() || !Spec->getIdentifier() ||
      Spec->getTemplateArgs().size() == 0 ||
      Spec->getTemplateArgs()[0].getKind() != TemplateArgument::Type)
    return nullptr;
  StringRef Name = Spec->getName();
  if (Name != "unique_ptr" && Name != "vector" && Name != "deque" &&
      Name != "list" && Name != "optional")
    return nullptr;
  QualType Elem = Spec->getTemplateArgs()[0].getAsType();
  if (const CXXRecordDecl *Inner = ownedClass(Elem, Depth + 1))
    return Inner;
  const CXXRecordDecl *RD = Elem->getAsCXXRecordDecl();
  if (!RD || RD->isInStdNamespace())
    return nullptr;
  for (const DeclContext *DC = RD->getDeclContext(); DC; DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC);
        NS && NS->getIdentifier() &&
        llvm::is_contained({"c10", "at", "torch"}, NS->getName()))
      return nullptr;
  return RD;
}

/// The first constructor of \p RD that \p S calls.
static const CXXConstructorDecl *constructorOfIn(const Stmt *S,
                                                 const CXXRecordDecl *RD) {
  if (!S)
    return nullptr;
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(S);
      Construct && Construct->getConstructor()->getParent() == RD)
    return Construct->getConstructor();
  for (const Stmt *Child : S->children())
    if (const CXXConstructorDecl *Ctor = constructorOfIn(Child, RD))
      return Ctor;
  return nullptr;
}

/// What a standard-library call runs of a class the program defines:
/// `std::make_unique<T>(args)` / `std::make_shared<T>(args)` construct a
/// T; `reset()`, `clear()`, `resize()`, `pop_back()`,
/// `erase()` of a `std::unique_ptr<T>` or a container of T (or of
/// `std::unique_ptr<T>`) destroy one. Appends those constructors and
/// destructors as calls at \p S.
static void appendOwnedObjectCalls(const CallExpr *CE, SourceLocation Loc,
                                   std::vector<CallSite> &Out) {
  const FunctionDecl *FD = calleeOf(CE);
  if (!FD)
    return;
  if (const auto *M = dyn_cast<CXXMethodDecl>(FD)) {
    if (!M->getParent()->isInStdNamespace())
      return;
    StringRef Name = M->getIdentifier() ? M->getName() : "";
    // Not an assignment: `if (!p) p = std::make_unique<T>();`, the common
    // lazy form, replaces nothing.
    bool Destroys = llvm::is_contained(
        {"reset", "clear", "resize", "pop_back", "erase", "pop_front"}, Name);
    if (!Destroys)
      return;
    const CXXRecordDecl *RD = ownedClass(
        M->getASTContext().getRecordType(M->getParent()));
    if (const FunctionDecl *Dtor =
            RD ? destructorOf(M->getASTContext().getRecordType(RD)) : nullptr)
      Out.push_back({CallSite::Kind::Call, CE, Loc, Dtor});
    return;
  }
  if (!FD->isInStdNamespace() || !FD->getIdentifier() ||
      !llvm::is_contained({"make_unique", "make_shared"}, FD->getName()))
    return;
  const TemplateArgumentList *Args = FD->getTemplateSpecializationArgs();
  if (!Args || Args->size() == 0 ||
      (*Args)[0].getKind() != TemplateArgument::Type)
    return;
  const CXXRecordDecl *RD = (*Args)[0].getAsType()->getAsCXXRecordDecl();
  if (!RD || RD->isInStdNamespace())
    return;
  // The constructor the instantiated body calls.
  const FunctionDecl *Def = FD->getDefinition();
  const CXXConstructorDecl *Ctor =
      Def ? constructorOfIn(Def->getBody(), RD) : nullptr;
  if (Ctor && !Ctor->isTrivial())
    Out.push_back({CallSite::Kind::Call, CE, Loc, Ctor});
}

void appendCallSites(const Stmt *S, SourceLocation Loc,
                     std::vector<CallSite> &Out, bool Stored,
                     PointerTargets *Pointers) {
  llvm::ArrayRef<const Expr *> Args;
  if (const auto *CE = dyn_cast<CallExpr>(S)) {
    Out.push_back({CallSite::Kind::Call, S, Loc, calleeOf(CE)});
    appendOwnedObjectCalls(CE, Loc, Out);
    // A std::function or function pointer whose targets are visible calls
    // each of them here.
    bool Held = false, ByType = false;
    for (const FunctionDecl *Target :
         invokedCallables(S, &Held, Pointers, &ByType))
      if (Target->hasBody()) {
        CallSite Site{CallSite::Kind::Call, S, Loc, Target};
        Site.Indirect = true;
        Site.Held = Held;
        Site.ByType = ByType;
        Out.push_back(Site);
      }
    Args = llvm::ArrayRef(CE->getArgs(), CE->getNumArgs());
  } else if (const auto *CC = dyn_cast<CXXConstructExpr>(S)) {
    Out.push_back({CallSite::Kind::Construct, S, Loc, CC->getConstructor()});
    Args = llvm::ArrayRef(CC->getArgs(), CC->getNumArgs());
  } else {
    return;
  }
  if (!Stored && storesCallables(S))
    return;
  for (unsigned I = 0; I < Args.size(); ++I) {
    // Only lambdas and functions named in the argument itself: a callable
    // passed on from a parameter runs where that parameter's caller says.
    const FunctionDecl *F = passedCallable(Args[I]);
    if (!F || !F->hasBody())
      continue;
    CallSite Site{CallSite::Kind::Callable, S, Args[I]->getBeginLoc(), F};
    Site.ArgIndex = I;
    Out.push_back(Site);
  }
}

/// The static local \p Cond tests for being unset: `!h`, `h == nullptr`,
/// `h == 0`, `nullptr == h`; null otherwise.
static const VarDecl *testedUnset(const Expr *Cond) {
  Cond = Cond->IgnoreParenImpCasts();
  const Expr *Var = nullptr;
  if (const auto *U = dyn_cast<UnaryOperator>(Cond); U && U->getOpcode() == UO_LNot)
    Var = U->getSubExpr();
  else if (const auto *B = dyn_cast<BinaryOperator>(Cond);
           B && B->getOpcode() == BO_EQ) {
    auto IsNull = [](const Expr *E) {
      E = E->IgnoreParenImpCasts();
      if (isa<CXXNullPtrLiteralExpr, GNUNullExpr>(E))
        return true;
      const auto *I = dyn_cast<IntegerLiteral>(E);
      return I && I->getValue().isZero();
    };
    if (IsNull(B->getRHS()))
      Var = B->getLHS();
    else if (IsNull(B->getLHS()))
      Var = B->getRHS();
  }
  const auto *DRE =
      Var ? dyn_cast<DeclRefExpr>(Var->IgnoreParenImpCasts()) : nullptr;
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  return VD && VD->isStaticLocal() ? VD : nullptr;
}

/// Whether \p If sets a static local it tests for being unset, in its then
/// branch and with no else (`if (!h) create(&h);`, `if (!p) p = make();`):
/// only the first call that finds it unset runs the branch.
static bool lazilyInitializes(const IfStmt *If) {
  const VarDecl *VD =
      If->getCond() && !If->getElse() ? testedUnset(If->getCond()) : nullptr;
  if (!VD)
    return false;
  bool Sets = false;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
    if (!S || Sets || isa<LambdaExpr>(S))
      return;
    if (const auto *B = dyn_cast<BinaryOperator>(S);
        B && B->isAssignmentOp() && namesDecl(B->getLHS(), VD))
      Sets = true;
    if (const auto *U = dyn_cast<UnaryOperator>(S);
        U && U->getOpcode() == UO_AddrOf && namesDecl(U->getSubExpr(), VD))
      Sets = true;
    for (const Stmt *Child : S->children())
      Walk(Child);
  };
  Walk(If->getThen());
  return Sets;
}

namespace {
class Collector {
public:
  Collector(std::vector<CallSite> &Out, PointerTargets *Pointers)
      : Out(Out), Pointers(Pointers) {}

  void collect(const Stmt *S) {
    if (!S)
      return;
    if (const auto *L = dyn_cast<LambdaExpr>(S)) {
      // The body is a function of its own; only the captures run here.
      for (const Expr *Init : L->capture_inits())
        collect(Init);
      return;
    }
    // `static T *h; if (!h) create(&h);`: the branch runs on the first
    // call only, like a static local's initializer.
    if (const auto *If = dyn_cast<IfStmt>(S); If && lazilyInitializes(If)) {
      collect(If->getInit());
      collect(If->getCond());
      ++Once;
      collect(If->getThen());
      --Once;
      collect(If->getElse());
      return;
    }
    size_t First = Out.size();
    if (isa<CallExpr>(S))
      appendCallSites(S, cast<CallExpr>(S)->getExprLoc(), Out,
                      /*Stored=*/false, Pointers);
    else if (isa<CXXConstructExpr>(S))
      appendCallSites(S, S->getBeginLoc(), Out, /*Stored=*/false, Pointers);
    else if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D)) {
          if (VD->hasLocalStorage() && !VD->getType()->isReferenceType())
            if (const FunctionDecl *Dtor = destructorOf(VD->getType())) {
              CallSite Site{CallSite::Kind::LocalDtor, nullptr,
                            VD->getLocation(), Dtor};
              Site.Var = VD;
              Out.push_back(Site);
            }
          // A static local is initialized on the function's first call.
          if (VD->isStaticLocal() && VD->getInit()) {
            ++Once;
            collect(VD->getInit());
            --Once;
          } else {
            collect(VD->getInit());
          }
        }
      return;
    }
    for (size_t I = First; I < Out.size(); ++I)
      Out[I].OnceInit |= Once > 0;
    for (const Stmt *Child : S->children())
      collect(Child);
  }

private:
  std::vector<CallSite> &Out;
  PointerTargets *Pointers;
  unsigned Once = 0;
};
} // namespace

std::vector<CallSite> collectCalls(const FunctionDecl *FD,
                                   PointerTargets *Pointers) {
  std::vector<CallSite> Calls;
  Collector C(Calls, Pointers);
  if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(FD))
    for (const CXXCtorInitializer *Init : Ctor->inits())
      if (Init->isWritten())
        C.collect(Init->getInit());
  C.collect(FD->getBody());
  return Calls;
}

const FunctionDecl *directCallee(const Stmt *S) {
  if (const auto *Call = dyn_cast_or_null<CallExpr>(S))
    return calleeOf(Call);
  if (const auto *Ctor = dyn_cast_or_null<CXXConstructExpr>(S))
    return Ctor->getConstructor();
  return nullptr;
}

} // namespace clang::cudagraph
