//===--- UserCode.cpp - cudagraph analysis --------------------------------===//

#include "UserCode.h"
#include "HazardCatalog.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/CharInfo.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

namespace clang::cudagraph {

const char DefaultLibraryHeaderRegex[] =
    "(^|/)(ATen|c10|caffe2|torch/csrc|thrust|cub|cuda/std|cccl|pybind11)/|"
    // The toolkit's headers (/usr/local/cuda/include,
    // /opt/cuda-13.0/targets/x86_64-linux/include, a conda environment's
    // targets/x86_64-linux/include), not a project's own cuda/include.
    "^/(usr|opt)/(.+/)?cuda(-[0-9.]+)?/(targets/[^/]+/)?include/|"
    "(^|/)targets/[^/]+-linux[^/]*/include/";

CodeClassifier::CodeClassifier(const SourceManager &SM,
                               llvm::StringRef LibraryRegex)
    : SM(SM), LibraryRegex(LibraryRegex.empty() ? DefaultLibraryHeaderRegex
                                                : LibraryRegex) {}

bool CodeClassifier::isUserFile(FileID FID) const {
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

bool CodeClassifier::isUserLocation(SourceLocation Loc) const {
  if (Loc.isInvalid())
    return false;
  return isUserFile(SM.getFileID(SM.getExpansionLoc(Loc)));
}

SourceLocation CodeClassifier::visibleLoc(SourceLocation Loc) const {
  // A call spelled inside a library macro (cuMemAllocHost expands to
  // cuMemAllocHost_v2) is shown where the macro is used.
  if (Loc.isMacroID() && !isUserFile(SM.getFileID(SM.getSpellingLoc(Loc))))
    return SM.getExpansionLoc(Loc);
  return Loc;
}

std::string CodeClassifier::matchName(const FunctionDecl *FD) {
  std::string Name = FD->getQualifiedNameAsString();
  llvm::StringRef Stripped = stripCudaApiSuffix(Name);
  return Stripped.size() == Name.size() ? Name : Stripped.str();
}

llvm::StringRef CodeClassifier::nameOf(const FunctionDecl *FD) {
  auto [It, Inserted] = NameCache.try_emplace(FD);
  if (Inserted)
    It->second = Saver.save(matchName(FD));
  return It->second;
}

/// The API a function pointer's name calls, without a loader's prefix
/// (`pfn_`, `p_`): empty when it names no CUDA library function.
static StringRef pointerApiName(StringRef Name) {
  for (StringRef Prefix : {"pfn_", "p_", "fn_", "ptr_", "g_", "_"})
    if (Name.consume_front(Prefix))
      break;
  for (StringRef Lib : {"cuda", "cu", "nccl", "cublas", "nvrtc"}) {
    StringRef Rest = Name;
    if (Rest.consume_front(Lib) && !Rest.empty() && isUppercase(Rest.front()))
      return Name;
  }
  return {};
}

namespace {
struct PointerApi {
  const ASTContext *Ctx;
  FunctionDecl *Stand;
};
} // namespace

static llvm::DenseMap<const ValueDecl *, PointerApi> &pointerApis() {
  static llvm::DenseMap<const ValueDecl *, PointerApi> Apis;
  return Apis;
}

void forgetPointerApis() { pointerApis().clear(); }

const FunctionDecl *calleeOf(const CallExpr *Call) {
  if (!Call)
    return nullptr;
  if (const FunctionDecl *FD = Call->getDirectCallee())
    return FD;
  const Expr *E = Call->getCallee()->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->getOpcode() == UO_Deref)
    E = UO->getSubExpr()->IgnoreParenImpCasts();
  const ValueDecl *VD = nullptr;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *Var = dyn_cast<VarDecl>(DRE->getDecl());
    if (Var && !Var->hasLocalStorage())
      VD = Var;
  } else if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    VD = dyn_cast<FieldDecl>(ME->getMemberDecl());
  }
  if (!VD || !VD->getIdentifier())
    return nullptr;
  StringRef Name = pointerApiName(VD->getName());
  const auto *PT = VD->getType()->getAs<PointerType>();
  const auto *FT =
      PT ? PT->getPointeeType()->getAs<FunctionProtoType>() : nullptr;
  if (Name.empty() || !FT)
    return nullptr;
  ASTContext &Ctx = VD->getASTContext();
  auto [It, Inserted] = pointerApis().try_emplace(VD, PointerApi{&Ctx, nullptr});
  if (!Inserted && It->second.Ctx == &Ctx)
    return It->second.Stand;
  SourceLocation Loc = VD->getLocation();
  QualType Type(FT, 0);
  auto *Stand = FunctionDecl::Create(
      Ctx, Ctx.getTranslationUnitDecl(), Loc, Loc,
      DeclarationName(&Ctx.Idents.get(Name)), Type,
      Ctx.getTrivialTypeSourceInfo(Type, Loc), SC_Extern);
  llvm::SmallVector<ParmVarDecl *, 8> Params;
  for (unsigned I = 0; I < FT->getNumParams(); ++I) {
    QualType P = FT->getParamType(I);
    auto *Param = ParmVarDecl::Create(Ctx, Stand, Loc, Loc, nullptr, P,
                                      Ctx.getTrivialTypeSourceInfo(P, Loc),
                                      SC_None, nullptr);
    Param->setScopeInfo(0, I);
    Params.push_back(Param);
  }
  Stand->setParams(Params);
  It->second = {&Ctx, Stand};
  return Stand;
}

const FunctionDecl *definitionOf(const FunctionDecl *FD) {
  const FunctionDecl *Def = nullptr;
  if (FD && FD->hasBody(Def) && Def && !Def->isDependentContext())
    return Def;
  return nullptr;
}

bool isRepeatingLoop(const Stmt *S) {
  if (isa_and_nonnull<ForStmt, WhileStmt, CXXForRangeStmt>(S))
    return true;
  const auto *Do = dyn_cast_or_null<DoStmt>(S);
  if (!Do)
    return false;
  const Expr *Cond = Do->getCond()->IgnoreParenImpCasts();
  return !isa<IntegerLiteral>(Cond) && !isa<CXXBoolLiteralExpr>(Cond);
}

bool runsOnDeviceOnly(const FunctionDecl *FD) {
  return FD && (FD->hasAttr<CUDAGlobalAttr>() ||
                (FD->hasAttr<CUDADeviceAttr>() && !FD->hasAttr<CUDAHostAttr>()));
}

bool outsideUserCode(const CodeClassifier &Code, const Decl *D) {
  return !isa<TranslationUnitDecl>(D) && !isa<NamespaceDecl>(D) &&
         !isa<LinkageSpecDecl>(D) && !Code.isUserLocation(D->getLocation());
}

bool outsideHostUserCode(const CodeClassifier &Code, const Decl *D) {
  if (outsideUserCode(Code, D))
    return true;
  // Kernels and device-only functions run on the GPU: no host call in them
  // can touch a capture, and the kernel templates of a CUDA unit are most
  // of its functions.
  if (const auto *FD = dyn_cast<FunctionDecl>(D))
    return runsOnDeviceOnly(FD);
  if (const auto *FT = dyn_cast<FunctionTemplateDecl>(D))
    return runsOnDeviceOnly(FT->getTemplatedDecl());
  return false;
}

namespace {
class UserFunctionWalker : public RecursiveASTVisitor<UserFunctionWalker> {
public:
  UserFunctionWalker(const CodeClassifier &Code, FunctionWalk Walk,
                     llvm::function_ref<void(const FunctionDecl *)> Fn)
      : Code(Code), Instantiated(Walk == FunctionWalk::Instantiated), Fn(Fn) {}
  bool shouldVisitTemplateInstantiations() const { return Instantiated; }
  bool shouldVisitLambdaBody() const { return true; }

  bool TraverseDecl(Decl *D) {
    if (!D || outsideHostUserCode(Code, D))
      return true;
    return RecursiveASTVisitor::TraverseDecl(D);
  }
  bool VisitFunctionDecl(FunctionDecl *FD) {
    if (FD->doesThisDeclarationHaveABody() &&
        !(Instantiated && FD->isDependentContext()))
      Fn(FD);
    return true;
  }
  bool VisitLambdaExpr(LambdaExpr *L) {
    const CXXMethodDecl *Op = L->getCallOperator();
    if (!Instantiated || !Op)
      return true;
    if (Op->hasBody() && !Op->isDependentContext())
      Fn(Op);
    // A generic lambda (`[&](auto tag) { ... }`, a type dispatch's body):
    // its call operator is a template, and each type it is called with is
    // an instantiation of its own.
    if (const FunctionTemplateDecl *FT = Op->getDescribedFunctionTemplate())
      for (const FunctionDecl *Spec : FT->specializations())
        if (Spec->hasBody() && !Spec->isDependentContext())
          Fn(Spec);
    return true;
  }

private:
  const CodeClassifier &Code;
  bool Instantiated;
  llvm::function_ref<void(const FunctionDecl *)> Fn;
};
} // namespace

void forEachUserFunction(ASTContext &Ctx, const CodeClassifier &Code,
                         llvm::function_ref<void(const FunctionDecl *)> Fn,
                         FunctionWalk Walk) {
  UserFunctionWalker(Code, Walk, Fn).TraverseDecl(Ctx.getTranslationUnitDecl());
}

} // namespace clang::cudagraph
