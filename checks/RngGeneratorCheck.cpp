//===--- RngGeneratorCheck.cpp - cudagraph-tidy ---------------------------===//

#include "RngGeneratorCheck.h"
#include "clang/AST/ExprCXX.h"

namespace clang::tidy::cudagraph {

static bool isGeneratorType(QualType T) {
  T = T.getNonReferenceType().getUnqualifiedType();
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  if (!RD)
    return false;
  std::string Name = RD->getQualifiedNameAsString();
  if (Name == "at::Generator")
    return true;
  // std::optional<at::Generator>, c10::optional<at::Generator>
  if (const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD))
    if (RD->getName() == "optional" && Spec->getTemplateArgs().size() == 1 &&
        Spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type)
      return isGeneratorType(Spec->getTemplateArgs()[0].getAsType());
  return false;
}

bool RngGeneratorCheck::isCreation(const Expr *E,
                                   CaptureAnalysis &Analysis) const {
  const auto *Call = dyn_cast_or_null<CallExpr>(E ? E->IgnoreImplicit() : E);
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD)
    return false;
  StringRef Name = Analysis.code().nameOf(FD);
  if (Name == "at::cuda::detail::createCUDAGenerator")
    return true;
  if (Name != "at::make_generator")
    return false;
  const TemplateArgumentList *Args = FD->getTemplateSpecializationArgs();
  return Args && Args->size() > 0 &&
         Args->get(0).getKind() == TemplateArgument::Type &&
         StringRef(Args->get(0).getAsType().getAsString())
             .contains("CUDAGeneratorImpl");
}

const void *RngGeneratorCheck::originOf(const Expr *E,
                                        CaptureAnalysis &Analysis) const {
  for (unsigned Depth = 0; E && Depth < 8; ++Depth) {
    E = E->IgnoreImplicit();
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      // A copy, or the optional<Generator> made for a parameter.
      if (Construct->getNumArgs() == 0)
        return nullptr;
      E = Construct->getArg(0);
      continue;
    }
    if (isa<DeclRefExpr>(E) || isa<MemberExpr>(E))
      return storageOf(E);
    if (isCreation(E, Analysis))
      return E; // made right here: no registration can name it
    if (const auto *Call = dyn_cast<CallExpr>(E))
      if (const FunctionDecl *FD = calleeOf(Call);
          FD && !isa<CXXOperatorCallExpr>(Call))
        return FD->getCanonicalDecl();
    return nullptr;
  }
  return nullptr;
}

/// Calls \p Fn with the value of every return statement in \p S (not in
/// lambdas).
static void forEachReturn(const Stmt *S,
                          llvm::function_ref<void(const Expr *)> Fn) {
  if (!S || isa<LambdaExpr>(S))
    return;
  if (const auto *Ret = dyn_cast<ReturnStmt>(S); Ret && Ret->getRetValue())
    Fn(Ret->getRetValue());
  for (const Stmt *Child : S->children())
    forEachReturn(Child, Fn);
}

void RngGeneratorCheck::collectGenerators(CaptureAnalysis &Analysis) {
  Created.clear();
  Registered.clear();
  std::vector<const FunctionDecl *> Functions;
  forEachUserFunction(Analysis.context(), Analysis.code(),
                      [&](const FunctionDecl *FD) { Functions.push_back(FD); });
  auto Walk = [&](const Stmt *S, auto &&Self) -> void {
    if (!S)
      return;
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D);
            VD && VD->getInit() && isGeneratorType(VD->getType())) {
          const void *From = originOf(VD->getInit(), Analysis);
          if (isCreation(VD->getInit(), Analysis) ||
              (From && Created.count(From)))
            Created.try_emplace(VD->getCanonicalDecl(), VD->getLocation());
        }
    } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S);
               Op && Op->getOperator() == OO_Equal && Op->getNumArgs() == 2 &&
               isGeneratorType(Op->getArg(0)->getType())) {
      const void *From = originOf(Op->getArg(1), Analysis);
      if (const void *To = originOf(Op->getArg(0), Analysis);
          To && (isCreation(Op->getArg(1), Analysis) ||
                 (From && Created.count(From))))
        Created.try_emplace(To, Op->getBeginLoc());
    } else if (const auto *Call = dyn_cast<CallExpr>(S)) {
      if (const FunctionDecl *FD = calleeOf(Call);
          FD && Call->getNumArgs() == 1 &&
          Analysis.code().nameOf(FD) ==
              "at::cuda::CUDAGraph::register_generator_state")
        if (const void *Key = originOf(Call->getArg(0), Analysis))
          Registered.insert(Key);
    }
    for (const Stmt *Child : S->children())
      Self(Child, Self);
  };
  // Twice: a generator copied from one made later in the file, and
  // functions returning one.
  for (unsigned Pass = 0; Pass < 2; ++Pass)
    for (const FunctionDecl *FD : Functions) {
      Walk(FD->getBody(), Walk);
      // Fields made in a constructor's member initializers, or by their
      // in-class initializer (which the constructor runs).
      if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(FD))
        for (const CXXCtorInitializer *Init : Ctor->inits()) {
          const FieldDecl *Field = Init->getMember();
          const Expr *Value = Init->getInit();
          if (!Field || !Value || !isGeneratorType(Field->getType()))
            continue;
          if (const auto *Default = dyn_cast<CXXDefaultInitExpr>(Value))
            Value = Default->getExpr();
          const void *From = originOf(Value, Analysis);
          if (isCreation(Value, Analysis) || (From && Created.count(From)))
            Created.try_emplace(Field->getCanonicalDecl(),
                                Init->getSourceLocation());
        }
      if (!isGeneratorType(FD->getReturnType()))
        continue;
      forEachReturn(FD->getBody(), [&](const Expr *Value) {
        const void *From = originOf(Value, Analysis);
        if (isCreation(Value, Analysis) || (From && Created.count(From)))
          Created.try_emplace(FD->getCanonicalDecl(), FD->getLocation());
      });
    }
}

void RngGeneratorCheck::checkCapture(CaptureAnalysis &Analysis) {
  ApiHazardCheck::checkCapture(Analysis);
  const Hazard *Unregistered = nullptr;
  for (const Hazard &H : Hazards)
    if (H.Kind == HazardKind::UnregisteredGenerator)
      Unregistered = &H;
  if (!Unregistered)
    return;
  collectGenerators(Analysis);
  if (Created.empty())
    return;
  for (const CapturedSite &Site : Analysis.sites()) {
    const auto *Call = dyn_cast_or_null<CallExpr>(Site.Site.S);
    if (!Call || !Site.Site.Callee ||
        Analysis.code().nameOf(Site.Site.Callee) ==
            "at::cuda::CUDAGraph::register_generator_state")
      continue;
    for (const Expr *Arg : Call->arguments()) {
      if (!isGeneratorType(Arg->getType()))
        continue;
      const void *Key = originOf(Arg, Analysis);
      auto It = Key ? Created.find(Key) : Created.end();
      if (It == Created.end() || Registered.count(Key))
        continue;
      const Reach *Via = nullptr;
      SourceLocation Loc = anchorOf(Analysis, Site, Via);
      if (Loc.isInvalid() || Via)
        continue; // a library's own generator use is not the project's
      if (!reportHazard(Analysis, *Unregistered, Loc, Call->getSourceRange(),
                        "'" + displayName(Site.Site.Callee) + "'",
                        Site.Function, Site.Ctx.Chain, Site.Ctx.Root))
        break;
      diag(It->second,
           "the generator is made here and never passed to "
           "CUDAGraph::register_generator_state",
           DiagnosticIDs::Note);
      addChainNotes(Analysis, Site.Ctx.Chain, Site.Ctx.Root);
      break;
    }
  }
}

void RngGeneratorCheck::notesFor(CaptureAnalysis &Analysis, const Hazard &H,
                                 const CapturedSite &Site) {
  // philox_engine_inputs -> philox_cuda_state: same argument, and the
  // kernel unpacks the state (at::cuda::philox::unpack). Offered on a note,
  // applied only with --fix-notes: the result's type changes.
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Site.Site.S);
  if (H.Id != "philox-engine-inputs" || !MC)
    return;
  const auto *ME = dyn_cast<MemberExpr>(MC->getCallee()->IgnoreParens());
  if (!ME || ME->getMemberLoc().isMacroID())
    return;
  diag(ME->getMemberLoc(),
       "use philox_cuda_state, which capture records, and unpack it in the "
       "kernel with at::cuda::philox::unpack",
       DiagnosticIDs::Note)
      << FixItHint::CreateReplacement(ME->getMemberLoc(), "philox_cuda_state");
}

} // namespace clang::tidy::cudagraph
