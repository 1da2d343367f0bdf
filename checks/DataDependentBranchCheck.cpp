//===--- DataDependentBranchCheck.cpp - cudagraph-tidy --------------------===//

#include "DataDependentBranchCheck.h"
#include "HazardMatch.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

namespace clang::tidy::cudagraph {

DataDependentBranchCheck::DataDependentBranchCheck(StringRef Name,
                                                   ClangTidyContext *Context)
    : CudaGraphCheck(Name, Context),
      DeviceReadFunctions(Options.get("DeviceReadFunctions", "")),
      ExtraReads(DeviceReadFunctions) {
  for (const Hazard &H : allHazards())
    if (H.ReadsDevice)
      Reads.push_back(H);
}

void DataDependentBranchCheck::storeOptions(ClangTidyOptions::OptionMap &Opts) {
  CudaGraphCheck::storeOptions(Opts);
  Options.store(Opts, "DeviceReadFunctions", DeviceReadFunctions);
}

static bool isMemcpyToHost(CaptureAnalysis &Analysis, const CallExpr *Call) {
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD)
    return false;
  StringRef Name = Analysis.nameOf(FD);
  if (Name.starts_with("cuMemcpyDtoH"))
    return true;
  if (!Name.starts_with("cudaMemcpy"))
    return false;
  for (const Expr *Arg : Call->arguments())
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Arg->IgnoreParenImpCasts()))
      if (DRE->getDecl()->getName() == "cudaMemcpyDeviceToHost" ||
          DRE->getDecl()->getName() == "cudaMemcpyDefault")
        return true;
  return false;
}

/// The variable a copy writes into: `&x` (x holds the value), or `x` and
/// `&x[0]` (the memory x points to holds it).
static std::pair<const VarDecl *, bool> destinationVariable(const Expr *Dst) {
  Dst = Dst->IgnoreParenImpCasts();
  bool Pointee = true;
  if (const auto *UO = dyn_cast<UnaryOperator>(Dst);
      UO && UO->getOpcode() == UO_AddrOf) {
    Dst = UO->getSubExpr()->IgnoreParenImpCasts();
    Pointee = false;
  }
  if (const auto *AS = dyn_cast<ArraySubscriptExpr>(Dst)) {
    Dst = AS->getBase()->IgnoreParenImpCasts();
    Pointee = true;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Dst))
    return {dyn_cast<VarDecl>(DRE->getDecl()), Pointee};
  return {nullptr, false};
}

/// The variable \p E dereferences: `*p`, `p[i]`, `p->x`.
static const VarDecl *dereferencedVariable(const Stmt *E) {
  const Expr *Base = nullptr;
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->getOpcode() == UO_Deref)
    Base = UO->getSubExpr();
  else if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E))
    Base = AS->getBase();
  else if (const auto *ME = dyn_cast<MemberExpr>(E); ME && ME->isArrow())
    Base = ME->getBase();
  if (!Base)
    return nullptr;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Base->IgnoreParenImpCasts()))
    return dyn_cast<VarDecl>(DRE->getDecl());
  return nullptr;
}

bool DataDependentBranchCheck::isDeviceReadCall(CaptureAnalysis &Analysis,
                                                const CallExpr *Call) {
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD)
    return false;
  if (matchHazard(Analysis, Reads, {Call, Call->getExprLoc(), FD}))
    return true;
  return !ExtraReads.empty() && ExtraReads.matches(Analysis.nameOf(FD));
}

static void forEachStmt(const Stmt *S,
                        llvm::function_ref<void(const Stmt *)> Fn) {
  if (!S)
    return;
  Fn(S);
  if (isa<LambdaExpr>(S))
    return; // lambda bodies are scopes of their own
  for (const Stmt *Child : S->children())
    forEachStmt(Child, Fn);
}

/// Like forEachStmt, but does not look inside `&x`: taking an address reads
/// no value (cudaMemcpy(&flag, ...) in a checked call does not read flag).
static void forEachValueUse(const Stmt *S,
                            llvm::function_ref<void(const Stmt *)> Fn) {
  if (!S)
    return;
  if (const auto *UO = dyn_cast<UnaryOperator>(S);
      UO && UO->getOpcode() == UO_AddrOf)
    return;
  Fn(S);
  if (isa<LambdaExpr>(S))
    return;
  for (const Stmt *Child : S->children())
    forEachValueUse(Child, Fn);
}

const Stmt *DataDependentBranchCheck::deviceRead(CaptureAnalysis &Analysis,
                                                 const Expr *E,
                                                 const CapturedScope *Scope,
                                                 const DeviceVars &Vars) {
  const Stmt *Found = nullptr;
  forEachValueUse(E, [&](const Stmt *S) {
    if (Found)
      return;
    if (const VarDecl *VD = dereferencedVariable(S)) {
      auto It = Vars.find(VD);
      if (It != Vars.end() && It->second.Pointee) {
        Found = It->second.Read;
        return;
      }
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl())) {
        auto It = Vars.find(VD);
        if (It != Vars.end() && !It->second.Pointee)
          Found = It->second.Read;
      }
      return;
    }
    const auto *Call = dyn_cast<CallExpr>(S);
    if (!Call || (Scope && !Scope->rootOf(Call)))
      return;
    if (isDeviceReadCall(Analysis, Call)) {
      Found = Call;
      return;
    }
    const FunctionDecl *Def = nullptr;
    if (Call->getDirectCallee() && Call->getDirectCallee()->hasBody(Def) &&
        Analysis.isUserLocation(Def->getLocation()) &&
        returnedRead(Analysis, Def))
      Found = Call;
  });
  return Found;
}

DataDependentBranchCheck::DeviceVars
DataDependentBranchCheck::deviceVariables(CaptureAnalysis &Analysis,
                                          const FunctionDecl *FD,
                                          const CapturedScope *Scope) {
  DeviceVars Vars;
  bool Changed = true;
  for (unsigned Iter = 0; Changed && Iter < 8; ++Iter) {
    Changed = false;
    auto Taint = [&](const VarDecl *VD, const Stmt *Read,
                     bool Pointee = false) {
      if (VD && Read && Vars.try_emplace(VD, DeviceVar{Read, Pointee}).second)
        Changed = true;
    };
    forEachStmt(FD->getBody(), [&](const Stmt *S) {
      if (const auto *DS = dyn_cast<DeclStmt>(S)) {
        for (const Decl *D : DS->decls())
          if (const auto *VD = dyn_cast<VarDecl>(D);
              VD && VD->getInit() && !Vars.count(VD))
            Taint(VD, deviceRead(Analysis, VD->getInit(), Scope, Vars));
      } else if (const auto *BO = dyn_cast<BinaryOperator>(S)) {
        if (BO->isAssignmentOp())
          if (const auto *DRE =
                  dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
            if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
                VD && !Vars.count(VD))
              Taint(VD, deviceRead(Analysis, BO->getRHS(), Scope, Vars));
      } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S)) {
        if (Op->isAssignmentOp() && Op->getNumArgs() == 2)
          if (const auto *DRE =
                  dyn_cast<DeclRefExpr>(Op->getArg(0)->IgnoreParenImpCasts()))
            if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
                VD && !Vars.count(VD))
              Taint(VD, deviceRead(Analysis, Op->getArg(1), Scope, Vars));
      } else if (const auto *Call = dyn_cast<CallExpr>(S)) {
        if (Call->getNumArgs() > 0 && (!Scope || Scope->rootOf(Call)) &&
            isMemcpyToHost(Analysis, Call)) {
          auto [VD, Pointee] = destinationVariable(Call->getArg(0));
          Taint(VD, Call, Pointee);
        }
      }
    });
  }
  return Vars;
}

const Stmt *DataDependentBranchCheck::returnedRead(CaptureAnalysis &Analysis,
                                                   const FunctionDecl *FD) {
  auto [It, Inserted] = ReturnCache.try_emplace(FD, nullptr);
  if (!Inserted)
    return It->second; // known, or in progress
  const Stmt *Result = nullptr;
  if (!FD->getReturnType()->isVoidType()) {
    auto Vars = deviceVariables(Analysis, FD, nullptr);
    forEachStmt(FD->getBody(), [&](const Stmt *S) {
      if (const auto *Ret = dyn_cast<ReturnStmt>(S);
          Ret && !Result && Ret->getRetValue())
        Result = deviceRead(Analysis, Ret->getRetValue(), nullptr, Vars);
    });
  }
  ReturnCache[FD] = Result;
  return Result;
}

/// The condition of a branch statement and where the branch is reported.
static std::pair<const Expr *, SourceLocation> branchOf(const Stmt *S) {
  if (const auto *If = dyn_cast<IfStmt>(S))
    return {If->getCond(), If->getIfLoc()};
  if (const auto *While = dyn_cast<WhileStmt>(S))
    return {While->getCond(), While->getWhileLoc()};
  if (const auto *For = dyn_cast<ForStmt>(S))
    return {For->getCond(), For->getForLoc()};
  if (const auto *Do = dyn_cast<DoStmt>(S))
    return {Do->getCond(), Do->getWhileLoc()};
  if (const auto *Switch = dyn_cast<SwitchStmt>(S))
    return {Switch->getCond(), Switch->getSwitchLoc()};
  if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S))
    return {CO->getCond(), CO->getQuestionLoc()};
  return {nullptr, {}};
}

void DataDependentBranchCheck::checkCapture(CaptureAnalysis &Analysis) {
  const Hazard *BranchHazard = nullptr;
  for (const Hazard &H : allHazards())
    if (H.Kind == HazardKind::Branch)
      BranchHazard = &H;
  std::string Message =
      ("branch condition depends on a device value read on the host during "
       "CUDA graph capture: " +
       BranchHazard->Outcome + "; " + BranchHazard->Instead)
          .str();

  for (const CapturedScope &Scope : Analysis.scopes()) {
    const FunctionDecl *FD = Scope.Function;
    if (!Analysis.isUserLocation(FD->getLocation()) || !FD->getBody())
      continue;
    const CapturedScope *Region = Scope.RegionStmts ? &Scope : nullptr;
    auto Vars = deviceVariables(Analysis, FD, Region);
    forEachStmt(FD->getBody(), [&](const Stmt *S) {
      auto [Cond, Loc] = branchOf(S);
      if (!Cond)
        return;
      const RegionRoot *Root = Scope.rootOf(S);
      if (!Root || (!Scope.RegionStmts && Analysis.runsOutsideCapture(FD, S)))
        return;
      const Stmt *Read = deviceRead(Analysis, Cond, Region, Vars);
      Loc = Analysis.visibleLoc(Loc);
      if (!Read || !reportOnce(Loc, Message))
        return;
      const auto *ReadCall = dyn_cast<CallExpr>(Read);
      const FunctionDecl *Callee =
          ReadCall ? ReadCall->getDirectCallee() : nullptr;
      SourceLocation ReadLoc = Analysis.visibleLoc(
          ReadCall ? ReadCall->getExprLoc() : Read->getBeginLoc());
      if (Callee && isMemcpyToHost(Analysis, ReadCall))
        diag(ReadLoc, "the host variable is filled from the device here",
             DiagnosticIDs::Note);
      else if (Callee && !isDeviceReadCall(Analysis, ReadCall))
        diag(ReadLoc, "'%0' returns a device value read on the host",
             DiagnosticIDs::Note)
            << displayName(Callee);
      else
        diag(ReadLoc, "the device value is read on the host here",
             DiagnosticIDs::Note);
      addChainNotes(Analysis, Scope.Context, Root);
    });
  }
}

} // namespace clang::tidy::cudagraph
