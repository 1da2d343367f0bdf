//===--- OpRoots.cpp - cudagraph analysis ---------------------------------===//

#include "OpRoots.h"
#include "CaptureApis.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

namespace clang::cudagraph {

bool dispatchKeyRunsOnCuda(llvm::StringRef Key) {
  // Backend keys name their device; the alias and composite keys run for
  // every backend, CUDA included.
  return Key.contains("CUDA") || Key.starts_with("Composite") ||
         Key == "Autograd" || Key == "CatchAll" || Key == "Undefined" ||
         Key == "AutogradOther" || Key == "Autocast";
}

llvm::StringRef registrationKindName(OpRegistration::Kind K) {
  switch (K) {
  case OpRegistration::Kind::TorchLibrary:
    return "custom op";
  case OpRegistration::Kind::Pybind:
    return "Python binding";
  case OpRegistration::Kind::AutogradFunction:
    return "autograd function";
  case OpRegistration::Kind::XlaFfiHandler:
    return "XLA FFI handler";
  }
  llvm_unreachable("unknown registration kind");
}

llvm::StringRef registrationCapturedWhen(OpRegistration::Kind K) {
  return K == OpRegistration::Kind::XlaFfiHandler
             ? "when XLA records it into a command buffer (it is bound with "
               "the command-buffer trait)"
             : "when a captured model calls it";
}

bool registrationWarmedUp(OpRegistration::Kind K) {
  return K != OpRegistration::Kind::XlaFfiHandler;
}

namespace {

std::string qualifiedRecordName(QualType T) {
  const CXXRecordDecl *RD = T.getNonReferenceType()->getAsCXXRecordDecl();
  return RD ? RD->getQualifiedNameAsString() : std::string();
}

bool isKeyEnum(QualType T) {
  const auto *ET = T->getAs<EnumType>();
  if (!ET)
    return false;
  std::string Name = ET->getDecl()->getQualifiedNameAsString();
  return Name == "c10::DispatchKey" || Name == "c10::DeviceType";
}

/// What an argument of a registration names: functions (by reference,
/// address, TORCH_FN or a lambda) and dispatch keys.
struct ArgScan {
  llvm::SmallVector<const FunctionDecl *, 2> Functions;
  llvm::SmallVector<std::string, 1> Keys;
  llvm::SmallVector<std::string, 2> Strings;
};

void scanTemplateArgs(const CXXRecordDecl *RD, ArgScan &Out);

void scan(const Stmt *S, ASTContext &Ctx, ArgScan &Out) {
  if (!S)
    return;
  if (const auto *L = dyn_cast<LambdaExpr>(S)) {
    if (const CXXMethodDecl *Op = L->getCallOperator();
        Op && !L->isGenericLambda())
      Out.Functions.push_back(Op);
    for (const Expr *Init : L->capture_inits())
      scan(Init, Ctx, Out);
    return;
  }
  if (const auto *E = dyn_cast<Expr>(S)) {
    if (!E->isValueDependent() && isKeyEnum(E->getType())) {
      Expr::EvalResult R;
      if (E->EvaluateAsInt(R, Ctx)) {
        const EnumDecl *ED = E->getType()->getAs<EnumType>()->getDecl();
        for (const EnumConstantDecl *C : ED->enumerators())
          if (C->getInitVal() == R.Val.getInt()) {
            Out.Keys.push_back(C->getName().str());
            break;
          }
        return;
      }
    }
    if (const auto *SL = dyn_cast<StringLiteral>(E)) {
      if (SL->getCharByteWidth() == 1)
        Out.Strings.push_back(SL->getString().str());
      return;
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      if (const auto *FD = dyn_cast<FunctionDecl>(DRE->getDecl())) {
        Out.Functions.push_back(FD);
        return;
      }
    if (!E->isTypeDependent())
      if (const CXXRecordDecl *RD = E->getType()->getAsCXXRecordDecl())
        scanTemplateArgs(RD, Out);
  }
  for (const Stmt *Child : S->children())
    scan(Child, Ctx, Out);
}

/// TORCH_FN(fn) is a CompileTimeFunctionPointer<T, fn>: the function is a
/// template argument of the type, not an expression.
void scanTemplateArgs(const CXXRecordDecl *RD, ArgScan &Out) {
  const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD);
  if (!Spec || Spec->getName() != "CompileTimeFunctionPointer")
    return;
  for (const TemplateArgument &A : Spec->getTemplateArgs().asArray())
    if (A.getKind() == TemplateArgument::Declaration)
      if (const auto *FD = dyn_cast<FunctionDecl>(A.getAsDecl()))
        Out.Functions.push_back(FD);
}

/// Functions taking a torch::Library& named in \p S, lambda bodies
/// included.
void libraryInits(const Stmt *S,
                  llvm::SmallVectorImpl<const FunctionDecl *> &Out) {
  if (!S)
    return;
  if (const auto *L = dyn_cast<LambdaExpr>(S)) {
    libraryInits(L->getBody(), Out);
    return;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    if (const auto *FD = dyn_cast<FunctionDecl>(DRE->getDecl());
        FD && FD->getNumParams() == 1 &&
        qualifiedRecordName(FD->getParamDecl(0)->getType()) ==
            "torch::Library")
      Out.push_back(FD);
  for (const Stmt *Child : S->children())
    libraryInits(Child, Out);
}

/// The op name in a registration's first argument: "rms_norm" from
/// "rms_norm(Tensor! out, Tensor x) -> ()".
std::string opNameOf(llvm::StringRef Written) {
  llvm::StringRef Name = Written.take_until([](char C) { return C == '('; });
  return Name.trim().str();
}

/// Whether \p T is or holds an at::Tensor (by value, reference, pointer,
/// optional, vector, list).
bool mentionsTensor(QualType T) {
  std::string Canonical = T.getCanonicalType().getAsString();
  return StringRef(Canonical).contains("at::Tensor") ||
         StringRef(Canonical).contains("at::TensorBase");
}

/// A model's forward pass hands its ops tensors: a binding that neither
/// takes nor returns one (handle creation, communicator setup, a numpy
/// tool) runs when the program sets up, not inside a captured model.
bool handlesTensors(const FunctionDecl *FD) {
  if (mentionsTensor(FD->getReturnType()))
    return true;
  for (const ParmVarDecl *P : FD->parameters())
    if (mentionsTensor(P->getType()))
      return true;
  return false;
}

/// The enumerator an integral template argument names ("kExecute").
StringRef enumeratorName(const TemplateArgument &A) {
  if (A.getKind() != TemplateArgument::Integral)
    return {};
  const auto *ET = A.getIntegralType()->getAs<EnumType>();
  if (!ET)
    return {};
  for (const EnumConstantDecl *C : ET->getDecl()->enumerators())
    if (llvm::APSInt::isSameValue(C->getInitVal(), A.getAsIntegral()))
      return C->getName();
  return {};
}

/// Whether \p S names XLA's command-buffer trait, as the C++ enumerator
/// (xla::ffi::Traits::kCmdBufferCompatible) or the C API's constant.
bool namesCommandBufferTrait(const Stmt *S) {
  if (!S)
    return false;
  if (const EnumConstantDecl *C = enumeratorOf(dyn_cast<Expr>(S)))
    return C->getName() == "kCmdBufferCompatible" ||
           C->getName() == "XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE";
  return llvm::any_of(S->children(), [](const Stmt *Child) {
    return namesCommandBufferTrait(Child);
  });
}

/// When \p Call binds an XLA FFI handler for the execution stage
/// (Binding<kExecute, ...>::To(impl, ...), Ffi::BindTo<Fn, kExecute>(impl,
/// ...)), appends the implementations it binds to \p Impls and returns
/// true.
bool bindingImpls(const CallExpr *Call,
                  llvm::SmallVectorImpl<const FunctionDecl *> &Impls) {
  const auto *Callee = dyn_cast_or_null<FunctionDecl>(Call->getCalleeDecl());
  if (!Callee || !Callee->getIdentifier() || Call->getNumArgs() < 1)
    return false;
  const auto *Parent = dyn_cast<CXXRecordDecl>(Callee->getDeclContext());
  if (!Parent)
    return false;
  const TemplateArgument *Stage = nullptr;
  if (Callee->getName() == "To" &&
      Parent->getQualifiedNameAsString() == "xla::ffi::Binding") {
    if (const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(Parent);
        Spec && Spec->getTemplateArgs().size() > 0)
      Stage = &Spec->getTemplateArgs()[0];
  } else if (Callee->getName() == "BindTo" &&
             Parent->getQualifiedNameAsString() == "xla::ffi::Ffi") {
    if (const TemplateArgumentList *Args =
            Callee->getTemplateSpecializationArgs();
        Args && Args->size() > 1)
      Stage = &Args->get(1);
  }
  if (!Stage || enumeratorName(*Stage) != "kExecute")
    return false;
  ArgScan Impl;
  scan(Call->getArg(0), Callee->getASTContext(), Impl);
  Impls.append(Impl.Functions.begin(), Impl.Functions.end());
  return true;
}

/// The execution-stage implementations bound anywhere in \p S.
void bindingImplsIn(const Stmt *S,
                    llvm::SmallVectorImpl<const FunctionDecl *> &Impls) {
  if (!S)
    return;
  if (const auto *Call = dyn_cast<CallExpr>(S);
      Call && bindingImpls(Call, Impls))
    return;
  if (const auto *L = dyn_cast<LambdaExpr>(S)) {
    bindingImplsIn(L->getBody(), Impls);
    return;
  }
  for (const Stmt *Child : S->children())
    bindingImplsIn(Child, Impls);
}

/// The variables and functions \p S names: the handlers a registration
/// is given.
void handlersNamedIn(const Stmt *S,
                     llvm::SmallVectorImpl<const NamedDecl *> &Out) {
  if (!S)
    return;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    if (isa<VarDecl>(DRE->getDecl()) || isa<FunctionDecl>(DRE->getDecl()))
      Out.push_back(DRE->getDecl());
  for (const Stmt *Child : S->children())
    handlersNamedIn(Child, Out);
}

class RegistrationFinder : public RecursiveASTVisitor<RegistrationFinder> {
public:
  RegistrationFinder(ASTContext &Ctx, const CodeClassifier &Code,
                     bool WithDeclared)
      : Ctx(Ctx), Code(Code), WithDeclared(WithDeclared) {}
  bool shouldVisitLambdaBody() const { return true; }

  bool TraverseDecl(Decl *D) {
    if (!D || outsideUserCode(Code, D))
      return true;
    if (auto *FD = dyn_cast<FunctionDecl>(D)) {
      Enclosing.push_back(FD);
      bool Result = RecursiveASTVisitor::TraverseDecl(D);
      Enclosing.pop_back();
      return Result;
    }
    if (auto *VD = dyn_cast<VarDecl>(D)) {
      Initializing.push_back(VD);
      bool Result = RecursiveASTVisitor::TraverseDecl(D);
      Initializing.pop_back();
      return Result;
    }
    return RecursiveASTVisitor::TraverseDecl(D);
  }

  /// TORCH_LIBRARY*'s static TorchLibraryInit: which function is the
  /// library body, for which namespace and dispatch key.
  bool VisitVarDecl(VarDecl *VD) {
    if (qualifiedRecordName(VD->getType()) !=
        "torch::detail::TorchLibraryInit")
      return true;
    const auto *CE =
        dyn_cast_or_null<CXXConstructExpr>(VD->getInit() ? VD->getInit()
                                                             ->IgnoreImplicit()
                                                       : nullptr);
    if (!CE || CE->getNumArgs() < 4)
      return true;
    ArgScan Ns, Key;
    scan(CE->getArg(2), Ctx, Ns);
    scan(CE->getArg(3), Ctx, Key);
    // The init function, named directly or (torch 1.x) returned by a
    // lambda chosen by the dispatch-key allowlist.
    llvm::SmallVector<const FunctionDecl *, 1> Inits;
    libraryInits(CE->getArg(1), Inits);
    for (const FunctionDecl *F : Inits) {
      LibraryInfo &Info = Libraries[F->getCanonicalDecl()];
      if (!Ns.Strings.empty())
        Info.Namespace = Ns.Strings.front();
      if (!Key.Keys.empty())
        Info.Key = Key.Keys.front();
    }
    return true;
  }

  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *Call) {
    const CXXMethodDecl *M = Call->getMethodDecl();
    if (!M || !M->getIdentifier() || !Code.isUserLocation(Call->getBeginLoc()))
      return true;
    std::string Class = M->getParent()->getQualifiedNameAsString();
    StringRef Method = M->getName();
    OpRegistration::Kind K;
    if (Class == "torch::Library" && (Method == "def" || Method == "impl"))
      K = OpRegistration::Kind::TorchLibrary;
    else if ((Class == "pybind11::module_" || Class == "pybind11::module" ||
              Class == "pybind11::class_") &&
             (Method == "def" || Method == "def_static"))
      K = OpRegistration::Kind::Pybind;
    else
      return true;
    if (Call->getNumArgs() < 2)
      return true; // a schema alone registers no function
    ArgScan Name, Rest;
    scan(Call->getArg(0), Ctx, Name);
    for (unsigned I = 1; I < Call->getNumArgs(); ++I)
      scan(Call->getArg(I), Ctx, Rest);
    std::string Op = Name.Strings.empty() ? std::string()
                                          : opNameOf(Name.Strings.front());
    llvm::SmallVector<std::string, 2> Keys(Rest.Keys.begin(), Rest.Keys.end());
    if (K == OpRegistration::Kind::TorchLibrary && !Enclosing.empty()) {
      auto It = Libraries.find(Enclosing.back()->getCanonicalDecl());
      if (It != Libraries.end()) {
        if (!It->second.Key.empty())
          Keys.push_back(It->second.Key);
        if (!It->second.Namespace.empty() && !StringRef(Op).contains("::"))
          Op = It->second.Namespace + "::" + Op;
      }
    }
    if (!llvm::all_of(Keys, [](const std::string &Key) {
          return dispatchKeyRunsOnCuda(Key);
        }))
      return true;
    for (const FunctionDecl *F : Rest.Functions)
      add(K, F, Op, Call->getExprLoc());
    return true;
  }

  /// XLA FFI handlers with the command-buffer trait: a binding given the
  /// trait (Binding<stage, ...>::To(impl, traits), Ffi::BindTo(impl,
  /// traits), which every XLA_FFI_DEFINE_HANDLER* form expands to), or a
  /// handler registered with it (XLA_FFI_REGISTER_HANDLER(api, name,
  /// platform, handler, traits): Ffi::RegisterStaticHandler).
  bool VisitCallExpr(CallExpr *Call) {
    const auto *Callee = dyn_cast_or_null<FunctionDecl>(Call->getCalleeDecl());
    if (!Callee || !Callee->getIdentifier() || Call->getNumArgs() < 2 ||
        (Callee->getName() != "To" && Callee->getName() != "BindTo" &&
         Callee->getName() != "RegisterStaticHandler") ||
        !Code.isUserLocation(Call->getBeginLoc()))
      return true;
    bool Traits = false;
    for (unsigned I = 1; I < Call->getNumArgs(); ++I)
      Traits |= namesCommandBufferTrait(Call->getArg(I));
    if (!Traits)
      return true;
    // The binding and registration are spelled inside XLA's macros: point
    // at their use.
    SourceLocation Loc =
        Ctx.getSourceManager().getExpansionLoc(Call->getExprLoc());
    if (Callee->getName() == "RegisterStaticHandler") {
      const auto *Parent = dyn_cast<CXXRecordDecl>(Callee->getDeclContext());
      if (!Parent || Parent->getQualifiedNameAsString() != "xla::ffi::Ffi" ||
          Call->getNumArgs() < 4)
        return true;
      // The handler: a variable XLA_FFI_DEFINE_HANDLER initialized, or a
      // function XLA_FFI_DEFINE_HANDLER_SYMBOL defined (a bundle names one
      // per stage; bindImpls keeps the execution stage's).
      llvm::SmallVector<const NamedDecl *, 4> Handlers;
      handlersNamedIn(Call->getArg(3), Handlers);
      for (const NamedDecl *H : Handlers) {
        const Stmt *Body = nullptr;
        if (const auto *VD = dyn_cast<VarDecl>(H))
          Body = VD->getInit();
        else if (const auto *FD = dyn_cast<FunctionDecl>(H))
          Body = FD->hasBody() ? FD->getBody() : nullptr;
        llvm::SmallVector<const FunctionDecl *, 1> Impls;
        bindingImplsIn(Body, Impls);
        for (const FunctionDecl *F : Impls)
          add(OpRegistration::Kind::XlaFfiHandler, F, H->getNameAsString(),
              Loc);
      }
      return true;
    }
    llvm::SmallVector<const FunctionDecl *, 1> Impls;
    if (!bindingImpls(Call, Impls))
      return true;
    // The handler's name: the exported symbol
    // (XLA_FFI_DEFINE_HANDLER_SYMBOL), else the variable the binding
    // initializes (XLA_FFI_DEFINE_HANDLER's function pointer).
    std::string Symbol;
    if (!Enclosing.empty())
      if (const auto *Error = Enclosing.back()
                                  ->getReturnType()
                                  ->getPointeeOrArrayElementType()
                                  ->getAsTagDecl();
          Error && Error->getName() == "XLA_FFI_Error")
        Symbol = Enclosing.back()->getNameAsString();
    if (Symbol.empty() && !Initializing.empty())
      Symbol = Initializing.front()->getNameAsString();
    for (const FunctionDecl *F : Impls)
      add(OpRegistration::Kind::XlaFfiHandler, F, Symbol, Loc);
    return true;
  }

  /// torch::autograd::Function<T>: forward and backward run inside the
  /// model's forward and backward passes.
  bool VisitCXXRecordDecl(CXXRecordDecl *RD) {
    if (!RD->hasDefinition() || RD->isDependentContext() ||
        !Code.isUserLocation(RD->getLocation()))
      return true;
    bool IsFunction = llvm::any_of(RD->bases(), [](const CXXBaseSpecifier &B) {
      return qualifiedRecordName(B.getType()) == "torch::autograd::Function";
    });
    if (!IsFunction)
      return true;
    for (const CXXMethodDecl *M : RD->methods())
      if (M->isStatic() && M->getIdentifier() &&
          (M->getName() == "forward" || M->getName() == "backward"))
        add(OpRegistration::Kind::AutogradFunction, M,
            RD->getNameAsString() + "." + M->getName().str(), M->getLocation());
    return true;
  }

  std::vector<OpRegistration> take() {
    std::stable_sort(Found.begin(), Found.end(),
                     [&](const OpRegistration &A, const OpRegistration &B) {
                       return Ctx.getSourceManager().isBeforeInTranslationUnit(
                           A.Loc, B.Loc);
                     });
    return std::move(Found);
  }

private:
  void add(OpRegistration::Kind K, const FunctionDecl *F, std::string Name,
           SourceLocation Loc) {
    const FunctionDecl *Def = definitionOf(F);
    // Defined in another unit of the project: the index roots it there.
    if (!Def && WithDeclared && F && !F->hasBody())
      Def = F->getCanonicalDecl();
    // An XLA handler's trait says it is captured; a PyTorch op is captured
    // with the model only when it handles tensors.
    if (!Def || !Code.isUserLocation(Def->getLocation()) ||
        (K != OpRegistration::Kind::XlaFfiHandler && !handlesTensors(Def)) ||
        !Seen.insert(Def).second)
      return;
    if (Name.empty())
      Name = Def->getNameAsString();
    Found.push_back({K, Def, std::move(Name), Loc});
  }

  struct LibraryInfo {
    std::string Namespace, Key;
  };
  ASTContext &Ctx;
  const CodeClassifier &Code;
  const bool WithDeclared;
  llvm::SmallVector<const FunctionDecl *, 4> Enclosing;
  llvm::SmallVector<const VarDecl *, 2> Initializing; // outermost first
  llvm::DenseMap<const FunctionDecl *, LibraryInfo> Libraries;
  llvm::DenseSet<const FunctionDecl *> Seen;
  std::vector<OpRegistration> Found;
};

} // namespace

std::vector<OpRegistration> findOpRegistrations(ASTContext &Ctx,
                                                const CodeClassifier &Code,
                                                bool WithDeclared) {
  RegistrationFinder Finder(Ctx, Code, WithDeclared);
  Finder.TraverseDecl(Ctx.getTranslationUnitDecl());
  return Finder.take();
}

} // namespace clang::cudagraph
