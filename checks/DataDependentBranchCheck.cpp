//===--- DataDependentBranchCheck.cpp - cudagraph-tidy --------------------===//

#include "DataDependentBranchCheck.h"
#include "ForwardAnalysis.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/CFG.h"
#include "llvm/ADT/StringSwitch.h"
#include <map>

namespace clang::tidy::cudagraph {

DataDependentBranchCheck::DataDependentBranchCheck(StringRef Name,
                                                   ClangTidyContext *Context)
    : CudaGraphCheck(Name, Context),
      DeviceReadFunctions(Options.get("DeviceReadFunctions", "")),
      ExtraReads(DeviceReadFunctions),
      BranchHazard(findHazard("data-dependent-branch")) {
  assert(BranchHazard && "the catalog lacks data-dependent-branch");
  for (const Hazard &H : allHazards())
    if (H.ReadsDevice)
      Reads.push_back(H);
}

void DataDependentBranchCheck::storeOptions(ClangTidyOptions::OptionMap &Opts) {
  CudaGraphCheck::storeOptions(Opts);
  Options.store(Opts, "DeviceReadFunctions", DeviceReadFunctions);
}

static bool isMemcpyToHost(CaptureAnalysis &Analysis, const CallExpr *Call) {
  const FunctionDecl *FD = calleeOf(Call);
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

static const VarDecl *varOf(const Expr *E) {
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E->IgnoreParenImpCasts()))
    return dyn_cast<VarDecl>(DRE->getDecl());
  return nullptr;
}

/// The variable a copy writes into: `&x` (x holds the value), or `x`,
/// `&x[0]`, `x.data()` (the memory x points to or owns holds it).
static std::pair<const VarDecl *, bool> destinationVariable(const Expr *Dst) {
  Dst = Dst->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(Dst);
      UO && UO->getOpcode() == UO_AddrOf) {
    const Expr *Sub = UO->getSubExpr()->IgnoreParenImpCasts();
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(Sub))
      return {varOf(AS->getBase()), true};
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Sub);
        Op && Op->getOperator() == OO_Subscript)
      return {varOf(Op->getArg(0)), true};
    return {varOf(Sub), false};
  }
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Dst))
    if (const CXXMethodDecl *M = MC->getMethodDecl();
        M && M->getIdentifier() && M->getName() == "data")
      return {varOf(MC->getImplicitObjectArgument()), true};
  return {varOf(Dst), true};
}

/// The variable \p E reads the memory of: `*p`, `p[i]`, `p->x`, `v[i]`.
static const VarDecl *dereferencedVariable(const Stmt *E) {
  const Expr *Base = nullptr;
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->getOpcode() == UO_Deref)
    Base = UO->getSubExpr();
  else if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E))
    Base = AS->getBase();
  else if (const auto *ME = dyn_cast<MemberExpr>(E); ME && ME->isArrow())
    Base = ME->getBase();
  else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
           Op && (Op->getOperator() == OO_Subscript ||
                  Op->getOperator() == OO_Star) &&
           Op->getNumArgs() > 0)
    Base = Op->getArg(0);
  else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E))
    if (const CXXMethodDecl *M = MC->getMethodDecl();
        M && M->getIdentifier() &&
        (M->getName() == "at" || M->getName() == "front" ||
         M->getName() == "back"))
      Base = MC->getImplicitObjectArgument();
  return Base ? varOf(Base) : nullptr;
}

/// Tensor methods whose result's shape depends on the tensor's values.
static bool hasDataDependentShape(StringRef Method) {
  return llvm::StringSwitch<bool>(Method)
      .Cases("nonzero", "masked_select", "unique", "unique_consecutive", true)
      .Cases("repeat_interleave", "index", "nonzero_static", true)
      .Default(false);
}

bool DataDependentBranchCheck::isDeviceReadCall(CaptureAnalysis &Analysis,
                                                const CallExpr *Call) {
  const FunctionDecl *FD = calleeOf(Call);
  if (!FD)
    return false;
  CallSite Site{CallSite::Kind::Call, Call, Call->getExprLoc(), FD};
  if (matchHazard(Analysis.code(), Reads, Site))
    return true;
  return !ExtraReads.empty() && ExtraReads.matches(Analysis.nameOf(FD));
}

//===----------------------------------------------------------------------===//
// Device values through locals, in statement order
//===----------------------------------------------------------------------===//

namespace {
struct DeviceVar {
  const Stmt *Read = nullptr;
  bool Pointee = false; // the memory the variable points to or owns
  /// A host copy of a device tensor (`t.cpu()`): its values came from the
  /// device, its shape did not.
  bool ShapeKnown = false;
};

struct Taint {
  std::map<const VarDecl *, DeviceVar> Vars;
  bool join(const Taint &Other) {
    bool Changed = false;
    for (const auto &[VD, Var] : Other.Vars)
      Changed |= Vars.emplace(VD, Var).second;
    return Changed;
  }
};

/// Calls \p Fn on \p S and its parts, not inside lambdas nor inside `&x`
/// (taking an address reads no value); \p Fn returns false to skip the
/// parts of what it is given.
void forEachValueUse(const Stmt *S, llvm::function_ref<bool(const Stmt *)> Fn) {
  if (!S)
    return;
  if (const auto *UO = dyn_cast<UnaryOperator>(S);
      UO && UO->getOpcode() == UO_AddrOf)
    return;
  if (!Fn(S) || isa<LambdaExpr>(S))
    return;
  for (const Stmt *Child : S->children())
    forEachValueUse(Child, Fn);
}
} // namespace

class DataDependentBranchCheck::DeviceValueFlow {
public:
  /// \p Captured: reads count only where the analysis says they run under
  /// capture (for a function analyzed as captured); otherwise any read.
  DeviceValueFlow(DataDependentBranchCheck &Check, CaptureAnalysis &Analysis,
                  const FunctionDecl *FD, bool Captured)
      : Check(Check), Analysis(Analysis), FD(FD), Captured(Captured) {}

  /// Runs the flow; returns false when the function has no CFG.
  bool run() {
    CFG::BuildOptions Options;
    Options.setAllAlwaysAdd();
    Cfg = CFG::buildCFG(FD, FD->getBody(), &Analysis.context(), Options);
    if (!Cfg)
      return false;
    auto In = solveForward<Taint>(
        *Cfg, Taint(),
        [&](const CFGBlock &B, const Taint &T) { return transfer(B, T); },
        [](const CFGBlock &, const CFGBlock &, unsigned, const Taint &T) {
          return std::optional<Taint>(T);
        });
    for (const CFGBlock *B : *Cfg)
      if (In[B->getBlockID()])
        transfer(*B, *In[B->getBlockID()], /*Record=*/true);
    return true;
  }

  /// The read that makes \p E a device value where \p At is, or null.
  const Stmt *readIn(const Expr *E, const Taint &T) {
    const Stmt *Found = nullptr;
    forEachValueUse(E, [&](const Stmt *S) {
      if (Found)
        return false;
      if (const VarDecl *VD = dereferencedVariable(S)) {
        auto It = T.Vars.find(VD);
        if (It != T.Vars.end() && It->second.Pointee) {
          Found = It->second.Read;
          return false;
        }
      }
      // `copy.dim()`, `copy.size(0)` of a host copy: shape, not device data.
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S);
          MC && isTensorMetadataQuery(MC->getMethodDecl()))
        if (const VarDecl *VD = varOf(MC->getImplicitObjectArgument())) {
          auto It = T.Vars.find(VD);
          if (It != T.Vars.end() && It->second.ShapeKnown)
            return false;
        }
      if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
        if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl())) {
          auto It = T.Vars.find(VD);
          if (It != T.Vars.end() && !It->second.Pointee)
            Found = It->second.Read;
        }
        return false;
      }
      const auto *Call = dyn_cast<CallExpr>(S);
      if (!Call || !readsHere(Call))
        return true;
      if (Check.isDeviceReadCall(Analysis, Call)) {
        Found = Call;
        return false;
      }
      const FunctionDecl *Def = definitionOf(calleeOf(Call));
      if (Def && Def != FD && Analysis.isUserLocation(Def->getLocation()) &&
          Check.returnedRead(Analysis, Def))
        Found = Call;
      return !Found;
    });
    return Found;
  }

  /// The taint at each branch and return, in CFG order.
  std::vector<std::pair<const Stmt *, Taint>> Points;

private:
  /// Whether \p Value is the copy \p Read of a tensor to the host, or a
  /// tensor made from that copy by methods whose result shape does not
  /// depend on the data (`.cpu().to(torch::kInt32)`, `.contiguous()`).
  bool isHostCopyOf(const Expr *Value, const Stmt *Read) {
    const auto *Call = dyn_cast<CallExpr>(Read);
    if (!Call || !calleeOf(Call))
      return false;
    const Expr *V = Value->IgnoreImplicit();
    while (V != Call->IgnoreImplicit()) {
      const auto *MC = dyn_cast<CXXMemberCallExpr>(V);
      const CXXMethodDecl *M = MC ? MC->getMethodDecl() : nullptr;
      if (!M || !M->getIdentifier() || !isTensorType(MC->getType()) ||
          !isTensorType(M->getFunctionObjectParameterType()) ||
          hasDataDependentShape(M->getName()))
        return false;
      V = MC->getImplicitObjectArgument()->IgnoreImplicit();
    }
    CallSite Site{CallSite::Kind::Call, Call, Call->getExprLoc(),
                  calleeOf(Call)};
    const Hazard *H = matchHazard(Analysis.code(), Check.Reads, Site);
    return H && (H->Id == "tensor-cpu" || H->Id == "tensor-to-host");
  }

  bool readsHere(const Stmt *S) const {
    return !Captured || Analysis.contextOf(FD, S).has_value();
  }

  void assign(Taint &T, const VarDecl *VD, const Expr *Value, bool Compound) {
    if (!VD)
      return;
    if (const Stmt *Read = readIn(Value, T))
      T.Vars[VD] = {Read, false, isHostCopyOf(Value, Read)};
    else if (!Compound)
      T.Vars.erase(VD); // overwritten with a host value
  }

  Taint transfer(const CFGBlock &B, Taint T, bool Record = false) {
    for (const CFGElement &E : B) {
      auto CS = E.getAs<CFGStmt>();
      if (!CS)
        continue;
      const Stmt *S = CS->getStmt();
      if (const auto *DS = dyn_cast<DeclStmt>(S)) {
        for (const Decl *D : DS->decls())
          if (const auto *VD = dyn_cast<VarDecl>(D); VD && VD->getInit())
            assign(T, VD, VD->getInit(), false);
      } else if (const auto *BO = dyn_cast<BinaryOperator>(S)) {
        if (BO->isAssignmentOp())
          assign(T, varOf(BO->getLHS()), BO->getRHS(),
                 BO->isCompoundAssignmentOp());
      } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S)) {
        if (Op->isAssignmentOp() && Op->getNumArgs() == 2)
          assign(T, varOf(Op->getArg(0)), Op->getArg(1),
                 Op->getOperator() != OO_Equal);
      } else if (const auto *Call = dyn_cast<CallExpr>(S)) {
        if (Call->getNumArgs() > 0 && isMemcpyToHost(Analysis, Call) &&
            readsHere(Call)) {
          auto [VD, Pointee] = destinationVariable(Call->getArg(0));
          if (VD)
            T.Vars[VD] = {Call, Pointee};
        }
      } else if (Record && isa<ReturnStmt>(S)) {
        Points.push_back({S, T});
      }
    }
    if (Record)
      if (const Stmt *Term = B.getTerminatorStmt())
        Points.push_back({Term, T});
    return T;
  }

  DataDependentBranchCheck &Check;
  CaptureAnalysis &Analysis;
  const FunctionDecl *FD;
  bool Captured;
  std::unique_ptr<CFG> Cfg;
};

const Stmt *DataDependentBranchCheck::returnedRead(CaptureAnalysis &Analysis,
                                                   const FunctionDecl *FD) {
  auto [It, Inserted] = ReturnCache.try_emplace(FD, nullptr);
  if (!Inserted)
    return It->second; // known, or in progress
  const Stmt *Result = nullptr;
  if (!FD->getReturnType()->isVoidType()) {
    DeviceValueFlow Flow(*this, Analysis, FD, /*Captured=*/false);
    if (Flow.run())
      for (auto &[S, T] : Flow.Points)
        if (const auto *Ret = dyn_cast<ReturnStmt>(S);
            Ret && Ret->getRetValue() && !Result)
          Result = Flow.readIn(Ret->getRetValue(), T);
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

/// Whether \p FD makes a call that may read a device value: without one no
/// branch in it can depend on one.
static bool mayReadDevice(const FunctionDecl *FD) {
  bool Found = false;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
    if (!S || Found || isa<LambdaExpr>(S))
      return;
    if (isa<CallExpr>(S)) {
      Found = true;
      return;
    }
    for (const Stmt *Child : S->children())
      Walk(Child);
  };
  Walk(FD->getBody());
  return Found;
}

void DataDependentBranchCheck::checkFunction(CaptureAnalysis &Analysis,
                                             const FunctionDecl *FD) {
  if (!mayReadDevice(FD))
    return;
  DeviceValueFlow Flow(*this, Analysis, FD, /*Captured=*/true);
  if (!Flow.run())
    return;
  for (auto &[S, T] : Flow.Points) {
    auto [Cond, Loc] = branchOf(S);
    if (!Cond)
      continue;
    std::optional<CaptureContext> Ctx = Analysis.contextOf(FD, S);
    if (!Ctx || Ctx->StreamGuarded)
      continue;
    const Stmt *Read = Flow.readIn(Cond, T);
    if (!Read)
      continue;
    Loc = Analysis.visibleLoc(Loc);
    if (!reportHazard(Analysis, *BranchHazard, Loc, Cond->getSourceRange(),
                      "branch condition", FD, Ctx->Chain, Ctx->Root))
      continue;
    const auto *ReadCall = dyn_cast<CallExpr>(Read);
    const FunctionDecl *Callee =
        ReadCall ? calleeOf(ReadCall) : nullptr;
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
    addChainNotes(Analysis, Ctx->Chain, Ctx->Root);
  }
}

void DataDependentBranchCheck::checkCapture(CaptureAnalysis &Analysis) {
  llvm::DenseSet<const FunctionDecl *> Seen;
  for (const CapturedScope &Scope : Analysis.scopes()) {
    const FunctionDecl *FD = Scope.Function;
    if (!Analysis.isUserLocation(FD->getLocation()) || !FD->getBody() ||
        !Seen.insert(FD).second)
      continue;
    checkFunction(Analysis, FD);
  }
}

} // namespace clang::tidy::cudagraph
