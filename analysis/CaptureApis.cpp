//===--- CaptureApis.cpp - cudagraph analysis -----------------------------===//

#include "CaptureApis.h"
#include "ConditionLeaves.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Analysis/Analyses/ExprMutationAnalyzer.h"
#include <limits>
#include <optional>

namespace clang::cudagraph {

//===----------------------------------------------------------------------===//
// Begin and end APIs
//===----------------------------------------------------------------------===//

CaptureApis::CaptureApis(llvm::StringRef Begin, llvm::StringRef End,
                         llvm::StringRef Status)
    : ExtraBegin(Begin), ExtraEnd(End), StatusFunctions(Status),
      HasExtra(!ExtraBegin.empty() || !ExtraEnd.empty()) {
  constexpr CaptureEvent Begin_ = CaptureEvent::Begin;
  constexpr CaptureEvent End_ = CaptureEvent::End;
  (void)Begin_;
  (void)End_;
#define CUDAGRAPH_CAPTURE(Role, Names, ModeArg)                                \
  Apis.push_back({Role##_, NamePatterns(Names), ModeArg});
#include "Hazards.def"
}

EventApi eventApiOf(llvm::StringRef Name) {
  struct Entry {
    NamePatterns Names;
    EventApi Api;
  };
  // Whether every name the entries list contains "Event" (an event, or a
  // stream's wait for one): then other names are answered without matching.
  static bool AllNameEvents = true;
  static const std::vector<Entry> Entries = [] {
    std::vector<Entry> E;
    llvm::SmallVector<llvm::StringRef, 8> Split;
#define CUDAGRAPH_EVENT_API(Role, Names, EventArg, OtherEventArg)              \
  E.push_back({NamePatterns(Names), {EventRole::Role, EventArg, OtherEventArg}}); \
  Split.clear();                                                               \
  llvm::StringRef(Names).split(Split, '|', -1, false);                         \
  for (llvm::StringRef N : Split)                                              \
    AllNameEvents &= N.contains("Event");
#include "Hazards.def"
    return E;
  }();
  if (AllNameEvents && !Name.contains("Event"))
    return {};
  for (const Entry &E : Entries)
    if (E.Names.matches(Name))
      return E.Api;
  return {};
}

CaptureEvent CaptureApis::eventOf(const FunctionDecl *FD,
                                  llvm::StringRef Name) const {
  if (!FD)
    return CaptureEvent::None;
  // Cheap filter before matching: every built-in API names a capture.
  if (!HasExtra) {
    const IdentifierInfo *II = FD->getIdentifier();
    if (!II || !II->getName().contains_insensitive("capture"))
      return CaptureEvent::None;
  }
  for (const Api &A : Apis)
    if (A.Names.matches(Name))
      return A.Event;
  if (ExtraBegin.matches(Name))
    return CaptureEvent::Begin;
  if (ExtraEnd.matches(Name))
    return CaptureEvent::End;
  return CaptureEvent::None;
}

ModeSet CaptureApis::beginModes(const CallExpr *Call, llvm::StringRef Name,
                                const ASTContext &Ctx) const {
  int ModeArg = -1;
  for (const Api &A : Apis)
    if (A.Event == CaptureEvent::Begin && A.Names.matches(Name))
      ModeArg = A.ModeArg;
  if (!Call || ModeArg < 0)
    return AnyMode;
  if (static_cast<unsigned>(ModeArg) >= Call->getNumArgs())
    return ModeGlobal; // libtorch's default
  return modesOf(Call->getArg(ModeArg), Ctx);
}

const Expr *CaptureApis::beginModeArg(const CallExpr *Call,
                                      llvm::StringRef Name) const {
  int ModeArg = -1;
  for (const Api &A : Apis)
    if (A.Event == CaptureEvent::Begin && A.Names.matches(Name))
      ModeArg = A.ModeArg;
  if (!Call || ModeArg < 0 ||
      static_cast<unsigned>(ModeArg) >= Call->getNumArgs())
    return nullptr;
  return Call->getArg(ModeArg);
}

ModeSet CaptureApis::modesOf(const Expr *Arg, const ASTContext &Ctx) {
  if (!Arg || Arg->isValueDependent())
    return AnyMode;
  Expr::EvalResult Result;
  if (!Arg->EvaluateAsInt(Result, Ctx))
    return AnyMode;
  switch (Result.Val.getInt().getExtValue()) {
  case 0:
    return ModeGlobal;
  case 1:
    return ModeThreadLocal;
  case 2:
    return ModeRelaxed;
  default:
    return AnyMode;
  }
}

//===----------------------------------------------------------------------===//
// Capture-status tests
//===----------------------------------------------------------------------===//

CaptureTest flip(CaptureTest T) {
  switch (T) {
  case CaptureTest::TrueWhenCapturing:
    return CaptureTest::TrueWhenNotCapturing;
  case CaptureTest::TrueWhenNotCapturing:
    return CaptureTest::TrueWhenCapturing;
  case CaptureTest::Unknown:
    break;
  }
  return CaptureTest::Unknown;
}

static bool isStatusEnum(QualType T) {
  const auto *ET = T.getNonReferenceType()->getAs<EnumType>();
  if (!ET)
    return false;
  StringRef Name = ET->getDecl()->getName();
  return Name.contains("CaptureStatus") || Name == "CUstreamCaptureStatus_enum";
}

const EnumConstantDecl *enumeratorOf(const Expr *E) {
  const auto *DRE = E ? dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()) : nullptr;
  return DRE ? dyn_cast<EnumConstantDecl>(DRE->getDecl()) : nullptr;
}

/// +1 for a "not capturing" status constant (cudaStreamCaptureStatusNone,
/// CaptureStatus::None), -1 for a "capturing" one (...Active), 0 otherwise.
static int statusConstant(const Expr *E) {
  const EnumConstantDecl *EC = enumeratorOf(E);
  if (!EC)
    return 0;
  StringRef Name = EC->getName();
  const auto *Enum = dyn_cast<EnumDecl>(EC->getDeclContext());
  bool StatusEnum = Enum && (Enum->getName().contains("CaptureStatus") ||
                             Enum->getName() == "CUstreamCaptureStatus_enum");
  if (Name == "cudaStreamCaptureStatusNone" ||
      Name == "CU_STREAM_CAPTURE_STATUS_NONE" || (StatusEnum && Name == "None"))
    return 1;
  if (Name == "cudaStreamCaptureStatusActive" ||
      Name == "CU_STREAM_CAPTURE_STATUS_ACTIVE" ||
      (StatusEnum && Name == "Active"))
    return -1;
  return 0;
}

/// Names that say "a capture is open": is_capturing, isGraphCapturing,
/// capturing_, current_capture, in_capture; not configuration switches
/// (enable_capturing, use_graph_capture).
static bool namesCapturing(StringRef Name) {
  std::string N;
  for (char C : Name)
    if (C != '_')
      N += llvm::toLower(C);
  StringRef S(N);
  for (StringRef Switch : {"enable", "disable", "allow", "use", "should",
                           "want", "support", "can", "try", "start", "stop",
                           "begin", "end", "set"})
    if (S.starts_with(Switch))
      return false;
  return S.ends_with("capturing") || S.contains("iscapturing") ||
         S.contains("currentcapture") || S.contains("activecapture") ||
         S == "incapture" || S == "incudagraphcapture" ||
         S == "ingraphcapture";
}

static CaptureTest comparison(const Expr *L, const Expr *R, bool IsEq) {
  int Status = statusConstant(L) + statusConstant(R);
  if (Status == 0)
    return CaptureTest::Unknown;
  bool TrueWhenNot = (Status > 0) == IsEq;
  return TrueWhenNot ? CaptureTest::TrueWhenNotCapturing
                     : CaptureTest::TrueWhenCapturing;
}

const ValueDecl *globalOrField(const Expr *E) {
  if (!E)
    return nullptr;
  E = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
        VD && VD->hasGlobalStorage())
      return VD;
  if (const auto *ME = dyn_cast<MemberExpr>(E))
    return dyn_cast<FieldDecl>(ME->getMemberDecl());
  return nullptr;
}

/// The variable or field an lvalue expression denotes: `x`, `a.b.c` (c),
/// `p->f` (f), `v[i]`, `m[k]` (v, m). A pointee (`*p`, a method called
/// through `p->`) denotes none.
bool isStreamType(QualType T) {
  T = T.getNonReferenceType().getCanonicalType();
  if (!T->isPointerType())
    return false;
  const auto *RD = T->getPointeeType()->getAsRecordDecl();
  return RD && RD->getName() == "CUstream_st";
}

std::optional<EqualityTest> equalityTest(const Expr *E) {
  if (!E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  if (const auto *BO = dyn_cast<BinaryOperator>(E);
      BO && (BO->getOpcode() == BO_EQ || BO->getOpcode() == BO_NE))
    return EqualityTest{BO->getLHS()->IgnoreParenImpCasts(),
                        BO->getRHS()->IgnoreParenImpCasts(),
                        BO->getOpcode() == BO_EQ};
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
      Op && Op->getNumArgs() == 2 &&
      (Op->getOperator() == OO_EqualEqual ||
       Op->getOperator() == OO_ExclaimEqual))
    return EqualityTest{Op->getArg(0)->IgnoreParenImpCasts(),
                        Op->getArg(1)->IgnoreParenImpCasts(),
                        Op->getOperator() == OO_EqualEqual};
  return std::nullopt;
}

bool isSuccessConstant(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    llvm::StringRef Name = DRE->getDecl()->getName();
    return isa<EnumConstantDecl>(DRE->getDecl()) &&
           (Name.ends_with("Success") || Name.ends_with("SUCCESS") ||
            Name == "kOk" || Name == "OK");
  }
  if (const auto *IL = dyn_cast<IntegerLiteral>(E))
    return IL->getValue() == 0;
  return false;
}

std::optional<SuccessTest> successTest(const Expr *E) {
  std::optional<EqualityTest> T = equalityTest(E);
  if (!T)
    return std::nullopt;
  if (isSuccessConstant(T->L))
    std::swap(T->L, T->R);
  if (!isSuccessConstant(T->R))
    return std::nullopt;
  return SuccessTest{T->L, T->Equal};
}

/// Whether \p T is a graph handle (cudaGraph_t, CUgraph) the callee can
/// write: a pointer to one or a non-const reference to one.
static bool isGraphOutType(QualType T) {
  QualType Pointee;
  if (const auto *Ref = T->getAs<ReferenceType>())
    Pointee = Ref->getPointeeType();
  else if (T->isPointerType())
    Pointee = T->getPointeeType();
  else
    return false;
  if (Pointee.isConstQualified())
    return false;
  QualType Handle = Pointee.getCanonicalType();
  if (!Handle->isPointerType())
    return false;
  const auto *RD = Handle->getPointeeType()->getAsRecordDecl();
  return RD && RD->getName() == "CUgraph_st";
}

bool hasCaptureStatusOutput(const FunctionDecl *FD) {
  if (!FD)
    return false;
  for (const ParmVarDecl *P : FD->parameters()) {
    QualType T = P->getType();
    if (T->isPointerType() || T->isReferenceType())
      if (const auto *ET = T->getPointeeType()
                               .getCanonicalType()
                               ->getAs<EnumType>();
          ET && ET->getDecl()->getName().contains("CaptureStatus"))
        return true;
  }
  return false;
}

bool hasEndCaptureShape(const FunctionDecl *FD) {
  // A capture-status output is a query's (a wrapper of
  // cuStreamGetCaptureInfo hands out the graph being captured).
  if (!FD || hasCaptureStatusOutput(FD))
    return false;
  bool Stream = false, Graph = false;
  for (const ParmVarDecl *P : FD->parameters()) {
    Stream |= isStreamType(P->getType());
    Graph |= isGraphOutType(P->getType());
  }
  return Stream && Graph;
}

const Expr *unwrap(const Expr *E) {
  while (E) {
    E = E->IgnoreImplicit()->IgnoreParens();
    if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(E))
      E = MT->getSubExpr();
    else if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(E))
      E = BT->getSubExpr();
    else if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
      E = FC->getSubExpr();
    else if (const auto *CE = dyn_cast<CXXConstructExpr>(E);
             CE && CE->getNumArgs() >= 1 && !isa<CXXTemporaryObjectExpr>(E))
      E = CE->getArg(0); // std::optional<bool>(true), Device(kCPU), ...
    else
      return E;
  }
  return E;
}

/// A call of c10::cuda::getDefaultCUDAStream, possibly converted to a
/// cudaStream_t or a c10::Stream.
bool isTorchDefaultStream(const Expr *E) {
  E = unwrap(E);
  // `getDefaultCUDAStream()` converted, or its `.stream()`.
  if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(E);
      MC && MC->getMethodDecl() &&
      (isa<CXXConversionDecl>(MC->getMethodDecl()) ||
       (MC->getMethodDecl()->getIdentifier() &&
        MC->getMethodDecl()->getName() == "stream")))
    E = unwrap(MC->getImplicitObjectArgument());
  const auto *Call = dyn_cast_or_null<CallExpr>(E);
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  return FD && FD->getIdentifier() && FD->getName() == "getDefaultCUDAStream";
}

StreamValue streamValue(const Expr *E, const ASTContext &Ctx) {
  if (!E)
    return StreamValue::Unknown;
  if (const auto *DA = dyn_cast<CXXDefaultArgExpr>(E))
    E = DA->getExpr();
  if (isTorchDefaultStream(E))
    return StreamValue::Default;
  // 0, NULL, nullptr, (cudaStream_t)0x1 (cudaStreamLegacy), 0x2 (per-thread)
  const Expr *Inner = E->IgnoreParenCasts();
  if (Inner->isValueDependent() || Inner->isTypeDependent())
    return StreamValue::Unknown;
  if (Inner->getType()->isNullPtrType())
    return StreamValue::Default;
  Expr::EvalResult R;
  if (!Inner->getType()->isIntegerType() || !Inner->EvaluateAsInt(R, Ctx))
    return StreamValue::Unknown;
  switch (R.Val.getInt().getLimitedValue()) {
  case 0:
    return StreamValue::Default;
  case 1:
    return StreamValue::Legacy;
  case 2:
    return StreamValue::PerThread;
  default:
    return StreamValue::Unknown;
  }
}

const Expr *streamArgument(const CallExpr *Call) {
  if (!Call)
    return nullptr;
  if (const auto *Launch = dyn_cast<CUDAKernelCallExpr>(Call)) {
    const CallExpr *Config = Launch->getConfig();
    return Config && Config->getNumArgs() >= 4 ? Config->getArg(3) : nullptr;
  }
  const FunctionDecl *FD = calleeOf(Call);
  if (!FD)
    return nullptr;
  unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD);
  for (unsigned I = 0, N = FD->getNumParams(); I < N; ++I)
    if (isStreamType(FD->getParamDecl(I)->getType()))
      return I + Offset < Call->getNumArgs() ? Call->getArg(I + Offset)
                                             : nullptr;
  return nullptr;
}

bool namesLegacyStream(const CallExpr *Call, const ASTContext &Ctx) {
  const FunctionDecl *FD = Call ? calleeOf(Call) : nullptr;
  if (!FD || !FD->getIdentifier())
    return false;
  bool PerThread = FD->getName().ends_with("_ptsz") ||
                   FD->getName().ends_with("_ptds");
  switch (streamValue(streamArgument(Call), Ctx)) {
  case StreamValue::Legacy:
    return true;
  case StreamValue::Default:
    return !PerThread;
  default:
    return false;
  }
}

const Decl *storageOf(const Expr *E) {
  if (!E)
    return nullptr;
  E = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    return isa<VarDecl>(DRE->getDecl()) ? DRE->getDecl()->getCanonicalDecl()
                                        : nullptr;
  if (const auto *ME = dyn_cast<MemberExpr>(E))
    return isa<FieldDecl>(ME->getMemberDecl())
               ? ME->getMemberDecl()->getCanonicalDecl()
               : nullptr;
  if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E))
    return storageOf(AS->getBase());
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
      Op && Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2)
    return storageOf(Op->getArg(0));
  return nullptr;
}

const Decl *namedStream(const Stmt *St) {
  const auto *Call = dyn_cast_or_null<CallExpr>(St);
  if (!Call || isa<CXXMemberCallExpr>(Call))
    return nullptr;
  const Expr *Arg = streamArgument(Call);
  if (!Arg || !isa<DeclRefExpr, MemberExpr>(Arg->IgnoreParenImpCasts()))
    return nullptr;
  const Decl *D = storageOf(Arg);
  if (const auto *VD = dyn_cast_or_null<VarDecl>(D);
      VD && VD->getType()->isReferenceType())
    return nullptr;
  return D;
}

/// The global variable or field \p E names, when it is a registry.
const ValueDecl *CaptureTestClassifier::registryOf(const Expr *E) const {
  const ValueDecl *D = globalOrField(E);
  return D && IsRegistry(cast<ValueDecl>(D->getCanonicalDecl())) ? D : nullptr;
}

static bool isZero(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  if (const auto *IL = dyn_cast<IntegerLiteral>(E))
    return IL->getValue() == 0;
  return false;
}

/// `reg.empty()`, `reg.size() == 0`, `count == 0`, `count > 0`, `count`: the
/// registry is empty exactly when no capture is open.
CaptureTest CaptureTestClassifier::registryTest(const Expr *Cond) {
  auto measure = [&](const Expr *E) -> const ValueDecl * {
    E = E->IgnoreParenImpCasts();
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E)) {
      const CXXMethodDecl *M = MC->getMethodDecl();
      if (M && M->getIdentifier() && M->getName() == "size" &&
          MC->getNumArgs() == 0 && MC->getImplicitObjectArgument())
        return registryOf(MC->getImplicitObjectArgument());
      return nullptr;
    }
    const ValueDecl *D = registryOf(E);
    return D && D->getType()->isIntegerType() ? D : nullptr;
  };
  const Expr *C = Cond->IgnoreParenImpCasts();
  const ValueDecl *Found = nullptr;
  CaptureTest T = CaptureTest::Unknown;
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(C)) {
    const CXXMethodDecl *M = MC->getMethodDecl();
    if (M && M->getIdentifier() && M->getName() == "empty" &&
        MC->getNumArgs() == 0 && MC->getImplicitObjectArgument() &&
        (Found = registryOf(MC->getImplicitObjectArgument())))
      T = CaptureTest::TrueWhenNotCapturing;
  } else if (const auto *BO = dyn_cast<BinaryOperator>(C)) {
    const Expr *L = BO->getLHS(), *R = BO->getRHS();
    BinaryOperatorKind Op = BO->getOpcode();
    if (isZero(L) && BO->isRelationalOp()) // `0 < n` is `n > 0`
      Op = BinaryOperator::reverseComparisonOp(Op);
    if (isZero(L))
      std::swap(L, R);
    if (isZero(R) && (Found = measure(L))) {
      if (Op == BO_EQ || Op == BO_LE)
        T = CaptureTest::TrueWhenNotCapturing;
      else if (Op == BO_NE || Op == BO_GT)
        T = CaptureTest::TrueWhenCapturing;
    }
  } else if ((Found = measure(C))) {
    T = CaptureTest::TrueWhenCapturing; // a count used as a boolean
  }
  if (T != CaptureTest::Unknown)
    Scope = TestScope::Thread;
  return T;
}

CaptureTest CaptureTestClassifier::classify(const Expr *Cond, const Stmt *Body,
                                            unsigned Depth) {
  if (!Cond || Depth > 4)
    return CaptureTest::Unknown;
  if (Depth == 0)
    Scope = TestScope::Stream;
  Cond = Cond->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(Cond);
      UO && UO->getOpcode() == UO_LNot)
    return flip(classify(UO->getSubExpr(), Body, Depth + 1));
  if (CaptureTest T = registryTest(Cond); T != CaptureTest::Unknown)
    return T;
  if (const auto *BO = dyn_cast<BinaryOperator>(Cond)) {
    if (BO->getOpcode() == BO_EQ || BO->getOpcode() == BO_NE)
      return comparison(BO->getLHS(), BO->getRHS(),
                        BO->getOpcode() == BO_EQ);
    if (BO->getOpcode() == BO_LAnd) {
      // `a && b` is true only when both are: enough to know the true edge.
      CaptureTest L = classify(BO->getLHS(), Body, Depth + 1);
      if (L == CaptureTest::Unknown)
        L = classify(BO->getRHS(), Body, Depth + 1);
      return L;
    }
    return CaptureTest::Unknown;
  }
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Cond);
      Op && Op->getNumArgs() == 2 &&
      (Op->getOperator() == OO_EqualEqual ||
       Op->getOperator() == OO_ExclaimEqual))
    return comparison(Op->getArg(0), Op->getArg(1),
                      Op->getOperator() == OO_EqualEqual);
  // A status used as a boolean: non-zero means capturing (or invalidated).
  if (isStatusEnum(Cond->getType()))
    return CaptureTest::TrueWhenCapturing;
  if (const auto *Call = dyn_cast<CallExpr>(Cond)) {
    const FunctionDecl *FD = calleeOf(Call);
    if (!FD)
      return CaptureTest::Unknown;
    if (Apis.isStatusFunction(Code.nameOf(FD))) {
      Scope = TestScope::Thread;
      return CaptureTest::TrueWhenCapturing;
    }
    QualType Result = FD->getReturnType();
    if (FD->getIdentifier() && namesCapturing(FD->getName()) &&
        (Result->isBooleanType() || Result->isPointerType())) {
      // No stream argument: a registry of the captures open in the program.
      if (Call->getNumArgs() == 0)
        Scope = TestScope::Thread;
      return CaptureTest::TrueWhenCapturing;
    }
    return ReturnedTest(FD);
  }
  if (const auto *ME = dyn_cast<MemberExpr>(Cond)) {
    if (ME->getMemberDecl()->getIdentifier() &&
        namesCapturing(ME->getMemberDecl()->getName()))
      return CaptureTest::TrueWhenCapturing;
    return CaptureTest::Unknown;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Cond)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (!VD)
      return CaptureTest::Unknown;
    // A local that holds a test: `bool live = st != None; if (live) ...`.
    if (VD->hasLocalStorage() && !isa<ParmVarDecl>(VD) && VD->getInit() &&
        Body) {
      CaptureTest T = classify(VD->getInit(), Body, Depth + 1);
      if (T != CaptureTest::Unknown &&
          !ExprMutationAnalyzer(*Body, Ctx).isMutated(VD))
        return T;
    }
    if (VD->getIdentifier() && namesCapturing(VD->getName()) &&
        VD->getType()->isBooleanType())
      return CaptureTest::TrueWhenCapturing;
  }
  return CaptureTest::Unknown;
}

//===----------------------------------------------------------------------===//
// Guard facts
//===----------------------------------------------------------------------===//

/// `Settings::get()`, `Registry::instance()`: a call without arguments of
/// a static method or free function that returns a reference or pointer to
/// an object of a class (a singleton's accessor).
static bool isSingletonAccess(const CallExpr *Call) {
  const FunctionDecl *FD = calleeOf(Call);
  if (!FD || Call->getNumArgs() || isa<CXXMemberCallExpr>(Call) ||
      isa<CXXOperatorCallExpr>(Call))
    return false;
  if (const auto *M = dyn_cast<CXXMethodDecl>(FD); M && !M->isStatic())
    return false;
  QualType T = FD->getReturnType();
  if (!T->isReferenceType() && !T->isPointerType())
    return false;
  return !T->getPointeeType().isNull() &&
         T->getPointeeType()->isRecordType();
}

/// Whether evaluating \p E twice gives the same value when nothing else
/// changes: no assignments, increments or calls other than const methods
/// (of a singleton's object too).
static bool isStable(const Stmt *S) {
  if (!S)
    return true;
  if (const auto *UO = dyn_cast<UnaryOperator>(S))
    if (UO->isIncrementDecrementOp())
      return false;
  if (const auto *BO = dyn_cast<BinaryOperator>(S))
    if (BO->isAssignmentOp())
      return false;
  if (isa<CXXOperatorCallExpr>(S)) {
    // Comparisons of stable operands (enum classes, optional) are stable.
    const auto *Op = cast<CXXOperatorCallExpr>(S);
    if (!Op->isComparisonOp() && Op->getOperator() != OO_Exclaim &&
        Op->getOperator() != OO_Arrow)
      return false;
  } else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S)) {
    const CXXMethodDecl *M = MC->getMethodDecl();
    if (!M || !M->isConst())
      return false;
  } else if (const auto *Call = dyn_cast<CallExpr>(S);
             Call && isSingletonAccess(Call)) {
    // `Settings::get()`: the one object of its class.
  } else if (isa<CallExpr>(S) || isa<LambdaExpr>(S) || isa<CXXNewExpr>(S) ||
             isa<CXXDeleteExpr>(S) || isa<CXXThrowExpr>(S) ||
             isa<StmtExpr>(S)) {
    return false;
  }
  for (const Stmt *Child : S->children())
    if (!isStable(Child))
      return false;
  return true;
}

/// A structural key of a stable expression: the same variables, members,
/// constants, operators and const methods give the same key, however the
/// object is spelled (`flag_`, `this->flag_`). \p Aliases names a callee's
/// parameters by the caller's variables.
static void atomKey(const Expr *E, const ASTContext &Ctx,
                    llvm::FoldingSetNodeID &ID,
                    const VarDecl *LoopVar = nullptr,
                    const ParamAliases *Aliases = nullptr) {
  E = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E);
      DRE && !(LoopVar && DRE->getDecl() == LoopVar)) {
    const ValueDecl *D = DRE->getDecl();
    if (Aliases)
      if (const ValueDecl *Alias = Aliases->lookup(D))
        D = Alias;
    return variableAtom(D, ID);
  }
  ID.AddInteger(E->getStmtClass());
  if (isa<DeclRefExpr>(E)) {
    ID.AddString("<loop variable>");
  } else if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    ID.AddPointer(ME->getMemberDecl()->getCanonicalDecl());
    atomKey(ME->getBase(), Ctx, ID, LoopVar, Aliases);
  } else if (isa<CXXThisExpr>(E)) {
    // every `this` of one function is the same object
  } else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E)) {
    ID.AddPointer(MC->getMethodDecl()->getCanonicalDecl());
    atomKey(MC->getImplicitObjectArgument(), Ctx, ID, LoopVar, Aliases);
    for (const Expr *Arg : MC->arguments())
      atomKey(Arg, Ctx, ID, LoopVar, Aliases);
  } else if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    ID.AddInteger(BO->getOpcode());
    atomKey(BO->getLHS(), Ctx, ID, LoopVar, Aliases);
    atomKey(BO->getRHS(), Ctx, ID, LoopVar, Aliases);
  } else if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    ID.AddInteger(UO->getOpcode());
    atomKey(UO->getSubExpr(), Ctx, ID, LoopVar, Aliases);
  } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E)) {
    ID.AddInteger(Op->getOperator());
    for (const Expr *Arg : Op->arguments())
      atomKey(Arg, Ctx, ID, LoopVar, Aliases);
  } else {
    E->Profile(ID, Ctx, /*Canonical=*/true);
  }
}

const VarDecl *loopVariable(const Stmt *Loop) {
  const auto *For = dyn_cast_or_null<ForStmt>(Loop);
  const Stmt *Init = For ? For->getInit() : nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(Init))
    return DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl())
                              : nullptr;
  if (const auto *BO = dyn_cast_or_null<BinaryOperator>(Init);
      BO && BO->getOpcode() == BO_Assign)
    if (const auto *DRE =
            dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
      return dyn_cast<VarDecl>(DRE->getDecl());
  return nullptr;
}

void variableAtom(const ValueDecl *D, llvm::FoldingSetNodeID &ID) {
  ID.AddInteger(Stmt::DeclRefExprClass);
  ID.AddPointer(D->getCanonicalDecl());
}

bool GuardFact::excludes(const GuardFact &O) const {
  if (!constrainsSubject() || !O.constrainsSubject() || Subject != O.Subject)
    return false;
  if (Mask || O.Mask) {
    const GuardFact &Bits = Mask ? *this : O, &Other = Mask ? O : *this;
    if (Other.Mask) {
      // `(x & M1) == 0` excludes `x & M2` when M2 lies within M1.
      if (Bits.MaskSet == Other.MaskSet)
        return false;
      const GuardFact &Clear = Bits.MaskSet ? Other : Bits;
      const GuardFact &Set = Bits.MaskSet ? Bits : Other;
      return (Set.Mask & ~Clear.Mask) == 0;
    }
    // One known value decides every bit test.
    if (Other.Except || Other.Lo != Other.Hi)
      return false;
    return ((static_cast<uint64_t>(Other.Lo) & Bits.Mask) != 0) !=
           Bits.MaskSet;
  }
  if (Except && O.Except)
    return false;
  if (Except || O.Except) {
    const GuardFact &Point = Except ? *this : O, &Span = Except ? O : *this;
    return Span.Lo == Point.Lo && Span.Hi == Point.Lo;
  }
  return std::max(Lo, O.Lo) > std::min(Hi, O.Hi);
}

/// The integer operand of a bit test `x & M` with a constant mask M, or
/// null.
static const Expr *isBitTest(const Expr *E, const ASTContext &Ctx) {
  const auto *BO = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
  if (!BO || BO->getOpcode() != BO_And || BO->isValueDependent() ||
      !BO->getType()->isIntegralOrEnumerationType())
    return nullptr;
  const Expr *L = BO->getLHS()->IgnoreParenImpCasts();
  const Expr *R = BO->getRHS()->IgnoreParenImpCasts();
  bool LC = L->isIntegerConstantExpr(Ctx), RC = R->isIntegerConstantExpr(Ctx);
  if (LC == RC)
    return nullptr;
  return RC ? L : R;
}

/// The values `E` may have when \p Leaf, a comparison of an integer operand
/// E with a constant (or E alone), is \p Value: fills Subject and the range.
static void comparisonRange(const Expr *Leaf, bool Value, const ASTContext &Ctx,
                            const VarDecl *LoopVar, const ParamAliases *Aliases,
                            GuardFact &F) {
  constexpr int64_t Min = std::numeric_limits<int64_t>::min();
  constexpr int64_t Max = std::numeric_limits<int64_t>::max();
  auto Constant = [&](const Expr *E) -> std::optional<int64_t> {
    Expr::EvalResult R;
    if (E->isValueDependent() || !E->getType()->isIntegralOrEnumerationType() ||
        !E->EvaluateAsInt(R, Ctx) || R.Val.getInt().getSignificantBits() > 63)
      return std::nullopt;
    return R.Val.getInt().getSExtValue();
  };
  const Expr *Operand = Leaf;
  BinaryOperatorKind Op = BO_NE;
  int64_t C = 0;
  if (const auto *BO = dyn_cast<BinaryOperator>(Leaf);
      BO && BO->isComparisonOp()) {
    std::optional<int64_t> R = Constant(BO->getRHS()->IgnoreParenImpCasts());
    std::optional<int64_t> L = Constant(BO->getLHS()->IgnoreParenImpCasts());
    if (R && !L) {
      Operand = BO->getLHS();
      Op = BO->getOpcode();
      C = *R;
    } else if (L && !R) {
      Operand = BO->getRHS();
      Op = BinaryOperator::reverseComparisonOp(BO->getOpcode());
      C = *L;
    } else {
      return;
    }
  } else if ((isa<BinaryOperator>(Leaf) && !isBitTest(Leaf, Ctx)) ||
             Constant(Leaf)) {
    return;
  }
  Operand = Operand->IgnoreParenImpCasts();
  // A bit test: `x & M` alone, or compared with zero.
  if (const Expr *Bits = isBitTest(Operand, Ctx);
      Bits && C == 0 && (Op == BO_NE || Op == BO_EQ)) {
    const auto *And = cast<BinaryOperator>(Operand);
    const Expr *MaskExpr = And->getLHS()->IgnoreParenImpCasts() == Bits
                               ? And->getRHS()
                               : And->getLHS();
    std::optional<int64_t> M = Constant(MaskExpr->IgnoreParenImpCasts());
    if (!M || *M == 0)
      return;
    F.Mask = static_cast<uint64_t>(*M);
    F.MaskSet = (Op == BO_NE) == Value;
    atomKey(Bits, Ctx, F.Subject, LoopVar, Aliases);
    return;
  }
  QualType T = Operand->getType();
  if (T.isNull() || !(T->isIntegralOrEnumerationType() || T->isPointerType()))
    return;
  if (!Value)
    Op = BinaryOperator::negateComparisonOp(Op);
  F.Lo = Min;
  F.Hi = Max;
  switch (Op) {
  case BO_EQ:
    F.Lo = F.Hi = C;
    break;
  case BO_NE:
    F.Lo = F.Hi = C;
    F.Except = true;
    break;
  case BO_LT:
    if (C == Min)
      return;
    F.Hi = C - 1;
    break;
  case BO_LE:
    F.Hi = C;
    break;
  case BO_GT:
    if (C == Max)
      return;
    F.Lo = C + 1;
    break;
  case BO_GE:
    F.Lo = C;
    break;
  default:
    return;
  }
  atomKey(Operand, Ctx, F.Subject, LoopVar, Aliases);
  F.HasRange = true;
  const Expr *Base = Operand;
  while (const auto *ME = dyn_cast<MemberExpr>(Base))
    Base = ME->getBase()->IgnoreParenImpCasts();
  F.OnThis = isa<CXXThisExpr>(Base);
}

namespace {
struct LocalInit {
  const ASTContext *Ctx;
  const Expr *Init; // null: not a condition kept unchanged
  /// The local is only ever cleared after (`ok = 0;`): its being true still
  /// says the condition held, its being false says nothing.
  bool OnlyTrue = false;
};
} // namespace

static llvm::DenseMap<const VarDecl *, LocalInit> &guardLocals() {
  static llvm::DenseMap<const VarDecl *, LocalInit> Locals;
  return Locals;
}

void forgetGuardLocals() { guardLocals().clear(); }

/// Whether \p E names \p VD.
static bool namesLocal(const Expr *E, const VarDecl *VD) {
  const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  return DRE && DRE->getDecl() == VD;
}

/// Whether every write of local \p VD in \p S stores zero (`ok = 0;`,
/// `ok = false;`): no other assignment, increment, address taken, non-const
/// reference bound, or lambda capture.
static bool onlyCleared(const Stmt *S, const VarDecl *VD,
                        const ASTContext &Ctx) {
  if (!S)
    return true;
  if (const auto *L = dyn_cast<LambdaExpr>(S))
    return !L->getLambdaClass() || !L->getLambdaClass()->isLambda() ||
           llvm::none_of(L->captures(), [&](const LambdaCapture &C) {
             return C.capturesVariable() && C.getCapturedVar() == VD;
           });
  if (const auto *BO = dyn_cast<BinaryOperator>(S);
      BO && BO->isAssignmentOp() && namesLocal(BO->getLHS(), VD)) {
    Expr::EvalResult R;
    if (BO->getOpcode() != BO_Assign || BO->getRHS()->isValueDependent() ||
        !BO->getRHS()->EvaluateAsInt(R, Ctx) || !R.Val.getInt().isZero())
      return false;
    return onlyCleared(BO->getRHS(), VD, Ctx);
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(S);
      UO && (UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf) &&
      namesLocal(UO->getSubExpr(), VD))
    return false;
  if (const auto *Call = dyn_cast<CallExpr>(S)) {
    const FunctionDecl *Callee = Call->getDirectCallee();
    for (unsigned I = 0; I < Call->getNumArgs(); ++I) {
      if (!namesLocal(Call->getArg(I), VD))
        continue;
      unsigned Shift = isa<CXXOperatorCallExpr>(Call) &&
                               isa_and_nonnull<CXXMethodDecl>(Callee)
                           ? 1
                           : 0;
      if (I < Shift)
        return false;
      if (!Callee || I - Shift >= Callee->getNumParams()) {
        if (!Callee || !Callee->isVariadic())
          return false;
        continue;
      }
      QualType T = Callee->getParamDecl(I - Shift)->getType();
      if (T->isReferenceType() && !T.getNonReferenceType().isConstQualified())
        return false;
    }
  }
  for (const Stmt *Child : S->children())
    if (!onlyCleared(Child, VD, Ctx))
      return false;
  return true;
}

/// The condition a local holds for the whole function: `int enabled = !off
/// && debug == 0;` or a copy of a flag (`int capture = cfg->graphs;`),
/// never written again. With \p OnlyTrue, a local that is
/// only cleared after (`do_capture = 0;` when the begin fails): true, it
/// still says the condition held. Null otherwise.
static const Expr *heldCondition(const Expr *Leaf, const ASTContext &Ctx,
                                 bool &OnlyTrue) {
  OnlyTrue = false;
  const auto *DRE = dyn_cast<DeclRefExpr>(Leaf);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || !VD->hasLocalStorage() || isa<ParmVarDecl>(VD) ||
      VD->getType()->isReferenceType() || !VD->getInit())
    return nullptr;
  const Expr *Init = VD->getInit()->IgnoreParenImpCasts();
  const auto *BO = dyn_cast<BinaryOperator>(Init);
  const auto *UO = dyn_cast<UnaryOperator>(Init);
  // A copy of a flag (`int capture = cfg->graphs;`) holds it as well.
  bool Copy = isa<DeclRefExpr, MemberExpr>(Init) &&
              (Init->getType()->isIntegralOrEnumerationType() ||
               Init->getType()->isBooleanType());
  if (!(BO && (BO->isLogicalOp() || BO->isComparisonOp())) &&
      !(UO && UO->getOpcode() == UO_LNot) && !Copy)
    return nullptr;
  auto [It, Inserted] = guardLocals().try_emplace(VD, LocalInit{&Ctx, nullptr});
  if (Inserted || It->second.Ctx != &Ctx) {
    It->second = {&Ctx, nullptr};
    const auto *FD = dyn_cast<FunctionDecl>(VD->getDeclContext());
    const Stmt *Body = FD ? FD->getBody() : nullptr;
    if (Body && isStable(Init)) {
      if (!ExprMutationAnalyzer(*Body, const_cast<ASTContext &>(Ctx))
               .isMutated(VD))
        It->second.Init = Init;
      else if (onlyCleared(Body, VD, Ctx))
        It->second = {&Ctx, Init, true};
    }
  }
  OnlyTrue = It->second.OnlyTrue;
  return It->second.Init;
}

bool storedFact(const Expr *Target, const Expr *Stored, const ASTContext &Ctx,
                GuardFact &Out) {
  Target = Target->IgnoreParenImpCasts();
  if (!isa<DeclRefExpr, MemberExpr>(Target) || !isStable(Target))
    return false;
  atomKey(Target, Ctx, Out.Subject);
  Expr::EvalResult R;
  if (!Stored || Stored->isValueDependent() ||
      !Stored->getType()->isIntegralOrEnumerationType() ||
      !Stored->EvaluateAsInt(R, Ctx) || R.Val.getInt().getSignificantBits() > 63)
    return false;
  Out.Atom.AddString("<stored>");
  Out.Atom.AddNodeID(Out.Subject);
  Out.HasRange = true;
  Out.Lo = Out.Hi = R.Val.getInt().getSExtValue();
  return true;
}

void guardFacts(const Expr *Cond, bool Value, const ASTContext &Ctx,
                llvm::SmallVectorImpl<GuardFact> &Out, const Stmt *Loop,
                const ParamAliases *Aliases) {
  const VarDecl *LoopVar = loopVariable(Loop);
  llvm::SmallVector<ConditionLeaf, 4> Leaves;
  conditionLeaves(Cond, Value, Leaves);
  for (unsigned I = 0; I < Leaves.size() && I < 32; ++I) {
    auto [Leaf, LeafValue] = Leaves[I];
    if (Leaf->getType().isNull() || !isStable(Leaf))
      continue;
    GuardFact F;
    atomKey(Leaf, Ctx, F.Atom, LoopVar, Aliases);
    F.Value = LeafValue;
    F.Loop = Loop;
    comparisonRange(Leaf, LeafValue, Ctx, LoopVar, Aliases, F);
    Out.push_back(std::move(F));
    // A local holding a condition stands for it: what `enabled` being true
    // says of `debug` (`int enabled = debug == 0 && ...;`).
    bool OnlyTrue = false;
    if (const Expr *Held = heldCondition(Leaf, Ctx, OnlyTrue);
        Held && (LeafValue || !OnlyTrue))
      conditionLeaves(Held, LeafValue, Leaves);
  }
}

} // namespace clang::cudagraph
