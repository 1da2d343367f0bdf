//===--- UnjoinedForkCheck.cpp - cudagraph-tidy ---------------------------===//

#include "UnjoinedForkCheck.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include <deque>
#include <map>
#include <memory>
#include <set>

namespace clang::tidy::cudagraph {

namespace {

// Streams named by no storage.
char CurrentTag;   // the current libtorch stream where no guard is in scope
char LegacyTag;    // the legacy default stream (0, cudaStreamLegacy)
char PerThreadTag; // cudaStreamPerThread

/// A stream or an event as the region names it. Invalid: not nameable.
struct Handle {
  const void *Id = nullptr;   // storage, the function returning it, or a tag
  const void *Base = nullptr; // the object a method returning it is called on
  unsigned Instance = 0;      // the walk of a function a local belongs to
  int64_t Element = -1;       // an element of an array, by constant index

  bool valid() const { return Id != nullptr; }
  bool isTag() const {
    return Id == &CurrentTag || Id == &LegacyTag || Id == &PerThreadTag;
  }
  Handle whole() const { return {Id, Base, Instance}; }
  friend bool operator==(const Handle &A, const Handle &B) {
    return A.Id == B.Id && A.Base == B.Base && A.Instance == B.Instance &&
           A.Element == B.Element;
  }
  friend bool operator<(const Handle &A, const Handle &B) {
    return std::tie(A.Id, A.Base, A.Instance, A.Element) <
           std::tie(B.Id, B.Base, B.Instance, B.Element);
  }
};

/// One function body walked under the region.
struct Frame {
  const FunctionDecl *Function = nullptr;
  unsigned Instance = 0;
  /// The parameters are bound to the caller's arguments (false for the
  /// function holding the begin: its parameters name themselves).
  bool Bound = false;
  std::map<const ParmVarDecl *, Handle> Params;
  /// Fields a constructor being walked initializes, and from what.
  std::map<const FieldDecl *, const Expr *> FieldInits;
  Handle Current{&CurrentTag};
  /// What the caller names this call's result (a function returning a
  /// local container of events hands the caller that container).
  Handle Result;
  const Frame *Parent = nullptr;
  SourceLocation CallLoc; // where Parent calls Function
  const Stmt *CallStmt = nullptr;
  mutable std::unique_ptr<ParentMap> Parents;

  const ParentMap &parents() const {
    if (!Parents)
      Parents = std::make_unique<ParentMap>(Function->getBody());
    return *Parents;
  }
};

/// An event record or a wait under the region.
struct Op {
  enum Kind { Record, Wait } K;
  Handle Stream, Event;
  const CallExpr *Call;
  const Frame *In;
  /// A wait with cudaEventWaitExternal; a record with
  /// cudaEventRecordExternal, or one whose flags are not known.
  bool External = false;
};

enum class ApiRole { None, Record, Wait, OtherEvent };

/// The stream argument of a record (`cudaEventRecord(e, s)`,
/// `ev.record(s)`); null when the current stream is meant.
const Expr *streamArgOf(const CallExpr *Record) {
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Record))
    return MC->getNumArgs() ? MC->getArg(0) : nullptr;
  return Record->getNumArgs() >= 2 ? Record->getArg(1) : nullptr;
}

bool typeNames(QualType T, std::initializer_list<StringRef> Parts) {
  T = T.getNonReferenceType();
  std::string Canonical = T.getCanonicalType().getAsString();
  std::string Written = T.getAsString();
  return llvm::any_of(Parts, [&](StringRef P) {
    return StringRef(Canonical).contains(P) || StringRef(Written).contains(P);
  });
}

bool isStreamType(QualType T) {
  return typeNames(T, {"CUstream_st", "cudaStream_t", "CUDAStream"});
}
bool isEventType(QualType T) {
  return typeNames(T, {"CUevent_st", "cudaEvent_t", "CUDAEvent"});
}

} // namespace

UnjoinedForkCheck::UnjoinedForkCheck(StringRef Name, ClangTidyContext *Context)
    : CudaGraphCheck(Name, Context), Hazards(hazardsForCheck(Name, "")) {
  for (const Hazard &H : Hazards) {
    if (H.Kind == HazardKind::StreamFork)
      Fork = &H;
    else if (H.Kind == HazardKind::UncapturedWait)
      Isolation = &H;
    else if (H.Kind == HazardKind::CapturedEvent)
      Bound = &H;
    else if (H.Kind == HazardKind::EagerEventRecord)
      EagerRecord = &H;
  }
}

/// Walks one capture region: names streams and events, and gathers the
/// records and waits that run under it.
class UnjoinedForkCheck::RegionWalk {
public:
  RegionWalk(CaptureAnalysis &Analysis) : Analysis(Analysis) {}

  CaptureAnalysis &Analysis;
  std::deque<Frame> Frames;
  std::vector<Op> Ops;
  /// Something under the region records or waits on a stream or event the
  /// walk cannot name, or hands an event to code it cannot see.
  bool Opaque = false;

  Frame &rootFrame(const FunctionDecl *Owner) {
    Frame &F = Frames.emplace_back();
    F.Function = Owner;
    F.Instance = 0;
    return F;
  }

  ApiRole roleOf(const FunctionDecl *FD) {
    if (!FD)
      return ApiRole::None;
    StringRef Name = stripCudaApiSuffix(Analysis.code().nameOf(FD));
    switch (eventApiOf(Name).Role) {
    case EventRole::Record:
      return ApiRole::Record;
    case EventRole::Wait:
      return ApiRole::Wait;
    default:
      break;
    }
    if (Name.starts_with("cudaEvent") || Name.starts_with("cuEvent") ||
        Name.starts_with("at::cuda::CUDAEvent::"))
      return ApiRole::OtherEvent;
    return ApiRole::None;
  }

  /// The frame that owns local variable \p VD: the innermost walk of the
  /// function declaring it (lambdas see their enclosing function's locals).
  const Frame &ownerOf(const VarDecl *VD, const Frame &F) {
    const auto *DC = dyn_cast_or_null<FunctionDecl>(
        VD->getParentFunctionOrMethod());
    for (const Frame *P = &F; P; P = P->Parent)
      if (DC && P->Function->getCanonicalDecl() == DC->getCanonicalDecl())
        return *P;
    return F;
  }

  /// Whether \p VD is assigned or has its address taken in \p FD's body.
  bool written(const VarDecl *VD, const FunctionDecl *FD) {
    auto Key = std::make_pair(VD, FD);
    if (auto It = WrittenCache.find(Key); It != WrittenCache.end())
      return It->second;
    bool Result = false;
    auto Refers = [&](const Expr *E) {
      const auto *DRE =
          E ? dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()) : nullptr;
      return DRE && DRE->getDecl() == VD;
    };
    auto Walk = [&](const Stmt *S, auto &&Self) -> void {
      if (!S || Result)
        return;
      if (const auto *BO = dyn_cast<BinaryOperator>(S);
          BO && BO->isAssignmentOp() && Refers(BO->getLHS()))
        Result = true;
      else if (const auto *UO = dyn_cast<UnaryOperator>(S);
               UO && UO->getOpcode() == UO_AddrOf && Refers(UO->getSubExpr()))
        Result = true;
      else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S);
               Op && Op->isAssignmentOp() && Op->getNumArgs() >= 1 &&
               Refers(Op->getArg(0)))
        Result = true;
      for (const Stmt *Child : S->children())
        Self(Child, Self);
    };
    Walk(FD->getBody(), Walk);
    WrittenCache[Key] = Result;
    return Result;
  }

  /// Whether \p FD returns local \p VD.
  bool returns(const FunctionDecl *FD, const VarDecl *VD) {
    bool Found = false;
    auto Walk = [&](const Stmt *S, auto &&Self) -> void {
      if (!S || Found || isa<LambdaExpr>(S))
        return;
      if (const auto *Ret = dyn_cast<ReturnStmt>(S))
        if (const Expr *V = Ret->getRetValue()) {
          const auto *DRE = dyn_cast<DeclRefExpr>(V->IgnoreImplicit());
          if (const auto *Construct =
                  dyn_cast<CXXConstructExpr>(V->IgnoreImplicit());
              Construct && Construct->getNumArgs() == 1)
            DRE = dyn_cast<DeclRefExpr>(Construct->getArg(0)->IgnoreImplicit());
          Found = DRE && DRE->getDecl()->getCanonicalDecl() == VD;
        }
      for (const Stmt *Child : S->children())
        Self(Child, Self);
    };
    Walk(FD->getBody(), Walk);
    return Found;
  }

  /// The range a range-for's loop variable \p VD walks.
  const Expr *rangeOf(const VarDecl *VD, const FunctionDecl *FD) {
    const Expr *Range = nullptr;
    auto Walk = [&](const Stmt *S, auto &&Self) -> void {
      if (!S || Range)
        return;
      if (const auto *For = dyn_cast<CXXForRangeStmt>(S);
          For && For->getLoopVariable() &&
          For->getLoopVariable()->getCanonicalDecl() == VD)
        Range = For->getRangeInit();
      for (const Stmt *Child : S->children())
        Self(Child, Self);
    };
    Walk(FD->getBody(), Walk);
    return Range;
  }

  /// The stream a libtorch guard or setter earlier in an enclosing block
  /// makes current at \p S, or the frame's current stream.
  Handle currentAt(const Stmt *S, const Frame &F, unsigned Depth) {
    const Expr *Stream = nullptr;
    if (currentStreamBefore(S, F.parents(), Stream))
      return Stream ? resolve(Stream, F, Depth + 1) : Handle();
    return F.Current;
  }

  /// Arrays of streams or events some use under the region indexes with a
  /// value the walk does not know: their elements are one handle.
  std::set<Handle> VariablyIndexed;

  /// \p H, or the whole array when an element of one indexed by value.
  Handle normalize(Handle H) const {
    if (H.Element >= 0 && VariablyIndexed.count(H.whole()))
      return H.whole();
    return H;
  }

  /// Once the walk is done: every element of an array also indexed by a
  /// value is the whole array.
  void collapseIndexedArrays() {
    for (Op &O : Ops) {
      O.Stream = normalize(O.Stream);
      O.Event = normalize(O.Event);
    }
  }

  /// The stream or event \p E names in frame \p F: an element of an array
  /// indexed by a constant (`streams[2]`) is a handle of its own.
  Handle resolve(const Expr *E, const Frame &F, unsigned Depth = 0) {
    return normalize(resolveRaw(E, F, Depth));
  }

  Handle resolveRaw(const Expr *E, const Frame &F, unsigned Depth = 0) {
    if (!E || Depth > 12)
      return {};
    E = E->IgnoreParens();
    if (const auto *ICE = dyn_cast<ImplicitCastExpr>(E))
      return resolve(ICE->getSubExpr(), F, Depth + 1);
    if (const auto *Full = dyn_cast<FullExpr>(E))
      return resolve(Full->getSubExpr(), F, Depth + 1);
    if (const auto *MTE = dyn_cast<MaterializeTemporaryExpr>(E))
      return resolve(MTE->getSubExpr(), F, Depth + 1);
    if (const auto *BTE = dyn_cast<CXXBindTemporaryExpr>(E))
      return resolve(BTE->getSubExpr(), F, Depth + 1);
    if (const auto *DAE = dyn_cast<CXXDefaultArgExpr>(E))
      return resolve(DAE->getExpr(), F, Depth + 1);
    if (isa<CXXNullPtrLiteralExpr>(E) || isa<GNUNullExpr>(E))
      return {&LegacyTag};
    if (const auto *IL = dyn_cast<IntegerLiteral>(E)) {
      uint64_t V = IL->getValue().getLimitedValue();
      if (V == 0 || V == 1)
        return {&LegacyTag};
      if (V == 2)
        return {&PerThreadTag};
      return {};
    }
    if (const auto *Cast = dyn_cast<ExplicitCastExpr>(E))
      return resolve(Cast->getSubExpr(), F, Depth + 1);
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      if (Construct->getNumArgs() == 1)
        return resolve(Construct->getArg(0), F, Depth + 1);
      return {};
    }
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E)) {
      const CXXMethodDecl *MD = MC->getMethodDecl();
      if (!MD)
        return {};
      const Expr *Object = MC->getImplicitObjectArgument();
      // A view of the same stream: CUDAStream::stream(), unwrap(), the
      // conversion to cudaStream_t.
      if (isa<CXXConversionDecl>(MD) ||
          (MD->getIdentifier() &&
           (MD->getName() == "stream" || MD->getName() == "unwrap" ||
            MD->getName() == "get") &&
           MC->getNumArgs() == 0 && Object &&
           (isStreamType(Object->getType()) ||
            isEventType(Object->getType()))))
        return resolve(Object, F, Depth + 1);
      Handle Base = Object ? resolve(Object, F, Depth + 1) : Handle();
      return {MD->getCanonicalDecl(), Base.Id, Base.Instance};
    }
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E)) {
      if ((Op->getOperator() == OO_Subscript || Op->getOperator() == OO_Star ||
           Op->getOperator() == OO_Arrow) &&
          Op->getNumArgs() >= 1)
        return resolve(Op->getArg(0), F, Depth + 1);
      return {};
    }
    if (const auto *Call = dyn_cast<CallExpr>(E)) {
      const FunctionDecl *FD = calleeOf(Call);
      if (!FD)
        return {};
      StringRef Name = Analysis.code().nameOf(FD);
      if (Name.ends_with("::getCurrentCUDAStream"))
        return currentAt(Call, F, Depth + 1);
      if (Name.ends_with("::getDefaultCUDAStream"))
        return {&LegacyTag};
      if (Name.ends_with("::getStreamFromPool") ||
          Name.ends_with("::getStreamFromExternal"))
        return {Call, nullptr, F.Instance}; // a stream of its own
      return {FD->getCanonicalDecl()};
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      if (UO->getOpcode() == UO_Deref || UO->getOpcode() == UO_AddrOf)
        return resolve(UO->getSubExpr(), F, Depth + 1);
      return {};
    }
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E)) {
      Handle Array = resolve(AS->getBase(), F, Depth + 1);
      if (!Array.valid() || Array.isTag() || Array.Element >= 0)
        return Array.whole();
      Expr::EvalResult Index;
      if (!AS->getIdx()->isValueDependent() &&
          AS->getIdx()->EvaluateAsInt(Index, Analysis.context()) &&
          Index.Val.getInt().isNonNegative()) {
        Handle Element = Array;
        Element.Element = Index.Val.getInt().getLimitedValue(INT64_MAX);
        return Element;
      }
      VariablyIndexed.insert(Array);
      return Array; // the array as a whole
    }
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      const auto *FD = dyn_cast<FieldDecl>(ME->getMemberDecl());
      if (!FD)
        return {};
      if (auto It = F.FieldInits.find(FD->getCanonicalDecl());
          It != F.FieldInits.end() && isa<CXXThisExpr>(
                                          ME->getBase()->IgnoreImpCasts()))
        if (Handle H = resolve(It->second, F, Depth + 1); H.valid())
          return H;
      return {FD->getCanonicalDecl()};
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
      if (!VD)
        return {};
      VD = VD->getCanonicalDecl();
      if (const auto *PVD = dyn_cast<ParmVarDecl>(VD)) {
        const Frame &Owner = ownerOf(PVD, F);
        if (!Owner.Bound)
          return {PVD, nullptr, Owner.Instance};
        auto It = Owner.Params.find(PVD);
        return It == Owner.Params.end() ? Handle() : It->second;
      }
      if (!VD->hasLocalStorage())
        return {VD};
      const Frame &Owner = ownerOf(VD, F);
      // A local the function returns is what the caller receives.
      if (Owner.Result.valid() && returns(Owner.Function, VD))
        return Owner.Result;
      // The variable of a range-for names the range as a whole.
      if (VD->isCXXForRangeDecl())
        if (const Expr *Range = rangeOf(VD, Owner.Function))
          return resolve(Range, Owner, Depth + 1);
      // A local that only copies another stream or event names it.
      if (const Expr *Init = VD->getInit();
          Init && !written(VD, Owner.Function))
        if (Handle H = resolve(Init, Owner, Depth + 1); H.valid())
          return H;
      return {VD, nullptr, Owner.Instance};
    }
    return {};
  }

  /// The arguments of a call or construction, in parameter order.
  static llvm::SmallVector<const Expr *, 4> argumentsOf(const Stmt *S,
                                                        const FunctionDecl *FD) {
    llvm::SmallVector<const Expr *, 4> Args;
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(S)) {
      Args.append(Construct->arg_begin(), Construct->arg_end());
      return Args;
    }
    const auto *Call = dyn_cast<CallExpr>(S);
    if (!Call)
      return Args;
    unsigned Skip = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD) &&
                            !cast<CXXMethodDecl>(FD)->isStatic()
                        ? 1
                        : 0;
    for (unsigned I = Skip; I < Call->getNumArgs(); ++I)
      Args.push_back(Call->getArg(I));
    return Args;
  }

  /// A frame for \p Def called at \p S from \p Caller.
  Frame &enter(const FunctionDecl *Def, const Stmt *S, SourceLocation Loc,
               const Frame &Caller, bool BindArgs) {
    Frame &F = Frames.emplace_back();
    F.Function = Def;
    F.Instance = Frames.size() - 1;
    F.Bound = true;
    F.Parent = &Caller;
    F.CallLoc = Loc;
    F.CallStmt = S;
    if (const auto *E = dyn_cast_or_null<Expr>(S))
      F.Result = resolve(E, Caller);
    F.Current = S ? currentAt(S, Caller, 0) : Caller.Current;
    if (BindArgs && S) {
      llvm::SmallVector<const Expr *, 4> Args = argumentsOf(S, Def);
      for (unsigned I = 0; I < Def->getNumParams() && I < Args.size(); ++I)
        F.Params[cast<ParmVarDecl>(Def->getParamDecl(I)->getCanonicalDecl())] =
            resolve(Args[I], Caller);
    }
    if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(Def))
      for (const CXXCtorInitializer *Init : Ctor->inits())
        if (const FieldDecl *Field = Init->getMember())
          F.FieldInits[Field->getCanonicalDecl()] = Init->getInit();
    return F;
  }

  void addOp(Op::Kind K, const Expr *StreamArg, const Expr *EventArg,
             const CallExpr *Call, const Frame &F, bool External = false) {
    Op O{K, StreamArg ? resolve(StreamArg, F) : currentAt(Call, F, 0),
         resolve(EventArg, F), Call, &F, External};
    if (!O.Stream.valid() || !O.Event.valid())
      Opaque = true;
    Ops.push_back(O);
  }

  /// Records the op \p S is, or walks into the function it calls.
  void visit(const CallSite &Site, const Frame &F, unsigned Depth) {
    const Stmt *S = Site.S;
    const FunctionDecl *Callee = Site.Callee;
    if (Site.K == CallSite::Kind::Callable ||
        Site.K == CallSite::Kind::LocalDtor) {
      if (const FunctionDecl *Def = definitionOf(Callee);
          Def && Depth < 6 && !Active.count(Def->getCanonicalDecl()) &&
          touches(Def))
        walk(enter(Def, nullptr, Site.Loc, F, false), Depth + 1);
      return;
    }
    const auto *Call = dyn_cast_or_null<CallExpr>(S);
    switch (Call ? roleOf(Callee) : ApiRole::None) {
    case ApiRole::Record:
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call)) {
        // libtorch's CUDAEvent decides its record flags itself.
        addOp(Op::Record, streamArgOf(Call), MC->getImplicitObjectArgument(),
              Call, F, /*External=*/true);
      } else if (Call->getNumArgs() >= 2) {
        // cudaEventRecordWithFlags(e, s, cudaEventRecordExternal): the
        // event stays usable outside the capture.
        bool External = false;
        if (Call->getNumArgs() >= 3) {
          Expr::EvalResult Flags;
          External = !Call->getArg(2)->EvaluateAsInt(Flags,
                                                     Analysis.context()) ||
                     Flags.Val.getInt() != 0;
        }
        addOp(Op::Record, streamArgOf(Call), Call->getArg(0), Call, F,
              External);
      }
      return;
    case ApiRole::Wait:
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call)) {
        if (MC->getNumArgs() >= 1)
          addOp(Op::Wait, MC->getArg(0), MC->getImplicitObjectArgument(), Call,
                F);
      } else if (Call->getNumArgs() >= 2) {
        bool External = false;
        if (Call->getNumArgs() >= 3) {
          Expr::EvalResult Flags;
          const Expr *Arg = Call->getArg(2);
          External = !Arg->EvaluateAsInt(Flags, Analysis.context()) ||
                     Flags.Val.getInt() != 0;
        }
        addOp(Op::Wait, Call->getArg(0), Call->getArg(1), Call, F, External);
      }
      return;
    case ApiRole::OtherEvent:
      return;
    case ApiRole::None:
      break;
    }
    if (!Callee)
      return;
    if (const FunctionDecl *Def = definitionOf(Callee)) {
      if (Depth < 6 && !Active.count(Def->getCanonicalDecl()) && touches(Def))
        walk(enter(Def, S, Site.Loc, F, true), Depth + 1);
      return;
    }
    if (hidesEvents(Callee))
      Opaque = true;
  }

  /// Whether the walk enters \p Def: code of the project, or a library
  /// function handed a stream or an event; never the standard library or a
  /// kernel.
  bool enters(const FunctionDecl *Def) {
    if (Def->isInStdNamespace() || Def->hasAttr<CUDAGlobalAttr>())
      return false;
    if (Analysis.isUserLocation(Def->getLocation()))
      return true;
    return llvm::any_of(Def->parameters(), [](const ParmVarDecl *P) {
      return isStreamType(P->getType()) || isEventType(P->getType());
    });
  }

  /// A function this unit cannot see that takes an event, or two streams:
  /// it may record and wait itself.
  bool hidesEvents(const FunctionDecl *Callee) {
    StringRef Name = Analysis.code().nameOf(Callee);
    if (Name.starts_with("cuda") || Name.starts_with("cu") ||
        Name.starts_with("nccl") || Name.starts_with("c10::") ||
        Name.starts_with("at::"))
      return false;
    unsigned Streams = 0, Events = 0;
    for (const ParmVarDecl *P : Callee->parameters()) {
      Streams += isStreamType(P->getType());
      Events += isEventType(P->getType());
    }
    return Events || Streams >= 2;
  }

  /// Whether \p Def records or waits on events, or calls something that
  /// may, through the functions the walk enters.
  bool touches(const FunctionDecl *Def, unsigned Depth = 0) {
    if (!enters(Def))
      return false;
    const FunctionDecl *Key = Def->getCanonicalDecl();
    if (auto It = TouchCache.find(Key); It != TouchCache.end())
      return It->second;
    TouchCache[Key] = false; // while in progress
    bool Result = false;
    for (const CallSite &Site : Analysis.flows().callsIn(Def)) {
      if (Site.K != CallSite::Kind::Callable &&
          Site.K != CallSite::Kind::LocalDtor && Site.call() &&
          roleOf(Site.Callee) != ApiRole::None) {
        Result = roleOf(Site.Callee) != ApiRole::OtherEvent;
      } else if (const FunctionDecl *D = definitionOf(Site.Callee)) {
        Result = Depth < 8 && touches(D, Depth + 1);
      } else if (Site.Callee) {
        Result = hidesEvents(Site.Callee);
      }
      if (Result)
        break;
    }
    TouchCache[Key] = Result;
    return Result;
  }

  void walk(const Frame &F, unsigned Depth) {
    const FunctionDecl *Key = F.Function->getCanonicalDecl();
    Active.insert(Key);
    for (const CallSite &Site : Analysis.flows().callsIn(F.Function))
      visit(Site, F, Depth);
    Active.erase(Key);
  }

  std::set<const FunctionDecl *> Active;

private:
  std::map<const FunctionDecl *, bool> TouchCache;
  std::map<std::pair<const VarDecl *, const FunctionDecl *>, bool>
      WrittenCache;
};

void UnjoinedForkCheck::checkCapture(CaptureAnalysis &Analysis) {
  RegionRecords.clear();
  if (!Fork && !Isolation && !Bound && !EagerRecord)
    return;
  for (const RegionRoot &Root : Analysis.flows().roots()) {
    if (!Root.Owner || !Root.Call || !Analysis.isUserLocation(Root.Loc) ||
        (Root.K != RegionRoot::Kind::BeginApi &&
         Root.K != RegionRoot::Kind::Wrapper &&
         Root.K != RegionRoot::Kind::GuardObject))
      continue;
    const FunctionDecl *Owner = definitionOf(Root.Owner);
    if (!Owner)
      continue;
    checkRegion(Analysis, Root, Analysis.flows().flow(Owner, false));
  }
  if (EagerRecord)
    checkEagerEvents(Analysis);
}

/// The event argument(s) of an eager use of an event: a wait, a query, a
/// host wait, a timing.
static llvm::SmallVector<const Expr *, 2> eventUses(CaptureAnalysis &Analysis,
                                                    const CallExpr *Call) {
  const FunctionDecl *FD = calleeOf(Call);
  if (!FD)
    return {};
  EventApi Api = eventApiOf(stripCudaApiSuffix(Analysis.code().nameOf(FD)));
  if (Api.Role != EventRole::Read && Api.Role != EventRole::Wait &&
      Api.Role != EventRole::Timing)
    return {};
  llvm::SmallVector<const Expr *, 2> Uses;
  for (int Pos : {Api.EventArg, Api.OtherEventArg})
    if (Pos >= 0 && unsigned(Pos) < Call->getNumArgs())
      Uses.push_back(Call->getArg(Pos));
  return Uses;
}

/// The storage of an event an object or the program keeps (a field, a
/// global, a static local) named directly; null for locals, parameters and
/// elements of containers.
static const Decl *keptEvent(const Expr *E) {
  if (!E)
    return nullptr;
  const Expr *Bare = E->IgnoreParenImpCasts();
  if (!isa<MemberExpr>(Bare) && !isa<DeclRefExpr>(Bare))
    return nullptr;
  const Decl *D = storageOf(Bare);
  if (const auto *VD = dyn_cast_or_null<VarDecl>(D))
    return VD->hasGlobalStorage() ? VD : nullptr;
  return dyn_cast_or_null<FieldDecl>(D);
}

/// The event a record binds to a capture when made on a capturing stream:
/// `cudaEventRecord(e, s)`, `cudaEventRecordWithFlags(e, s, 0)`,
/// `cuEventRecord(e, s)`. Null for an external record, flags not known, or
/// libtorch's CUDAEvent (it picks its flags itself).
static const Expr *plainRecordedEvent(CaptureAnalysis &Analysis,
                                      const CallExpr *Call) {
  if (isa<CXXMemberCallExpr>(Call) || Call->getNumArgs() < 2)
    return nullptr;
  if (Call->getNumArgs() >= 3) {
    Expr::EvalResult Flags;
    if (!Call->getArg(2)->EvaluateAsInt(Flags, Analysis.context()) ||
        Flags.Val.getInt() != 0)
      return nullptr;
  }
  return Call->getArg(0);
}

/// Whether the arguments of \p Call name no parameter and nothing of
/// `this`: the streams and events it uses are the function's own choice.
static bool namesOwnHandles(const CallExpr *Call) {
  bool Own = true;
  auto Visit = [&](const Stmt *S) {
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S);
        DRE && isa<ParmVarDecl>(DRE->getDecl()))
      Own = false;
    if (isa<CXXThisExpr>(S))
      Own = false;
  };
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call))
    forEachStmt(MC->getImplicitObjectArgument(), Visit);
  for (const Expr *Arg : Call->arguments())
    forEachStmt(Arg, Visit);
  return Own;
}

static bool inRegion(const CaptureState *State, const RegionRoot &Root) {
  return State && llvm::is_contained(State->Roots, &Root);
}

void UnjoinedForkCheck::checkRegion(CaptureAnalysis &Analysis,
                                    const RegionRoot &Root,
                                    const FunctionFlow &Flow) {
  RegionWalk Walk(Analysis);
  Frame &Top = Walk.rootFrame(Flow.Function);
  Walk.Active.insert(Flow.Function->getCanonicalDecl());
  for (const FlowSite &FS : Flow.Sites)
    if (inRegion(&FS.State, Root))
      Walk.visit(FS.Site, Top, 0);

  // The stream the capture begins on.
  Handle Origin;
  const auto *BeginCall = dyn_cast<CallExpr>(Root.Call);
  const auto *BeginConstruct = dyn_cast<CXXConstructExpr>(Root.Call);
  auto OriginIn = [&](const CallExpr *Begin, const Frame &F) -> Handle {
    const FunctionDecl *FD = calleeOf(Begin);
    if (FD && isa<CXXMethodDecl>(FD))
      return Walk.currentAt(Begin, F, 0); // capture_begin: the current stream
    return Begin->getNumArgs() ? Walk.resolve(Begin->getArg(0), F) : Handle();
  };
  if (Root.K == RegionRoot::Kind::BeginApi && BeginCall) {
    Origin = OriginIn(BeginCall, Top);
  } else if (Root.Via && (BeginCall || BeginConstruct)) {
    // The begin inside the wrapper or the guard's constructor, with its
    // parameters bound to this call's arguments.
    const FunctionDecl *Via = definitionOf(Root.Via);
    if (!Via)
      return;
    Frame &F = Walk.enter(Via, Root.Call, Root.Loc, Top, true);
    for (const CallSite &Site : Analysis.flows().callsIn(Via))
      if (const auto *Call = dyn_cast_or_null<CallExpr>(Site.S);
          Call && Analysis.flows().eventOf(Site.Callee) == CaptureEvent::Begin) {
        Origin = OriginIn(Call, F);
        break;
      }
    // What the wrapper does after its begin is part of this region (a
    // fork it makes before returning the capture open).
    if (Walk.Active.insert(Via->getCanonicalDecl()).second) {
      for (const FlowSite &FS : Analysis.flows().flow(Via, false).Sites)
        if (FS.State.capturing())
          Walk.visit(FS.Site, F, 1);
      Walk.Active.erase(Via->getCanonicalDecl());
    }
  }
  if (Walk.Opaque || Walk.Ops.empty())
    return;
  Walk.collapseIndexedArrays();
  Origin = Walk.normalize(Origin);
  if (!Origin.valid() || Origin.Id == &LegacyTag || Origin.Id == &PerThreadTag)
    return;

  // Streams in the capture: reached from the origin through waits on events
  // recorded on streams already in it.
  std::map<Handle, const Op *> ForkedBy;
  std::set<Handle> InCapture{Origin};
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const Op &W : Walk.Ops) {
      if (W.K != Op::Wait || InCapture.count(W.Stream) ||
          W.Stream.Id == &LegacyTag || W.Stream.Id == &PerThreadTag)
        continue;
      for (const Op &R : Walk.Ops)
        if (R.K == Op::Record && R.Event == W.Event &&
            InCapture.count(R.Stream)) {
          InCapture.insert(W.Stream);
          ForkedBy[W.Stream] = &W;
          Changed = true;
          break;
        }
    }
  }
  // Streams that reach the origin back.
  std::set<Handle> Joined{Origin};
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const Op &R : Walk.Ops) {
      if (R.K != Op::Record || Joined.count(R.Stream))
        continue;
      for (const Op &W : Walk.Ops)
        if (W.K == Op::Wait && W.Event == R.Event && Joined.count(W.Stream)) {
          Joined.insert(R.Stream);
          Changed = true;
          break;
        }
    }
  }

  const SourceManager &SM = Analysis.context().getSourceManager();
  auto Spelled = [&](const Expr *E) {
    return Lexer::getSourceText(
               CharSourceRange::getTokenRange(E->getSourceRange()), SM,
               Analysis.context().getLangOpts())
        .str();
  };
  // A record or wait in a function the region calls is reported at that
  // call in the region when the helper works on the streams and events it
  // is given (parameters, the object it is called on): the helper may be
  // right, the region's use of it is not. The lead names what is called
  // there. A helper that names its own streams and events (globals, its
  // locals) is wrong wherever it runs: the record or wait itself is
  // reported, with the calls that lead to it as notes.
  auto AnchorOf = [&](const Op &O, std::string &Lead,
                      SourceRange &Range) -> SourceLocation {
    const Frame *Outer = O.In;
    while (Outer && Outer->Parent && Outer->Parent->Parent)
      Outer = Outer->Parent;
    if (Outer && Outer->Parent && Outer->CallLoc.isValid() &&
        !namesOwnHandles(O.Call) &&
        Analysis.isUserLocation(Outer->CallLoc)) {
      Lead = "'" + displayName(Outer->Function) + "'";
      Range = Outer->CallStmt ? Outer->CallStmt->getSourceRange()
                              : SourceRange();
      return Outer->CallLoc;
    }
    Lead = "'" + displayName(calleeOf(O.Call)) + "'";
    Range = O.Call->getSourceRange();
    SourceLocation Loc = Analysis.visibleLoc(O.Call->getBeginLoc());
    return Analysis.isUserLocation(Loc) ? Loc : SourceLocation();
  };
  auto FrameNotes = [&](const Op &O, SourceLocation Anchor) {
    for (const Frame *F = O.In; F && F->Parent; F = F->Parent)
      if (F->CallLoc.isValid() && F->CallLoc != Anchor &&
          Analysis.isUserLocation(F->CallLoc))
        diag(F->CallLoc, "'%0' is called here during capture",
             DiagnosticIDs::Note)
            << displayName(F->Function);
  };
  auto EndNote = [&]() {
    for (const FlowSite &FS : Flow.Sites)
      if (inRegion(&FS.State, Root) && FS.Site.K == CallSite::Kind::Call &&
          Analysis.flows().eventOf(FS.Site.Callee) == CaptureEvent::End) {
        diag(FS.Site.Loc, "the capture ends here", DiagnosticIDs::Note);
        return;
      }
  };

  // A function that begins the capture and returns with it open, ending it
  // nowhere itself (`ExecInit()` forks, `ExecEnd()` joins and ends): the
  // joins may come in the caller or another method, so its forks are not
  // judged here.
  bool EndsHere = llvm::any_of(Flow.Sites, [&](const FlowSite &FS) {
    return inRegion(&FS.State, Root) &&
           Analysis.flows().eventOf(FS.Site.Callee) == CaptureEvent::End;
  });
  bool LeftToCaller = !EndsHere && inRegion(&Flow.Exit, Root);

  if (Fork && !LeftToCaller)
    for (auto &[Stream, W] : ForkedBy) {
      if (Joined.count(Stream))
        continue;
      std::string Lead;
      SourceRange Range;
      SourceLocation Loc = AnchorOf(*W, Lead, Range);
      if (Loc.isInvalid())
        continue;
      const Expr *StreamArg = W->Call->getArg(0);
      if (!reportHazard(Analysis, *Fork, Loc, Range, Lead,
                        Flow.Function, nullptr, &Root))
        continue;
      diag(SM.getFileLoc(StreamArg->getBeginLoc()),
           "'%0' joins the capture here; no event recorded on it is waited on "
           "by the capturing stream before the capture ends",
           DiagnosticIDs::Note)
          << Spelled(StreamArg);
      FrameNotes(*W, Loc);
      EndNote();
      addChainNotes(Analysis, nullptr, &Root);
    }

  // Events kept in objects or globals that this capture binds, for
  // checkEagerEvents.
  for (const Op &R : Walk.Ops)
    if (R.K == Op::Record && !R.External && InCapture.count(R.Stream))
      if (const Decl *Event = keptEvent(R.Call->getArg(0)))
        RegionRecords.push_back({Event, R.Call, R.In->Function, &Root});

  if (Bound) {
    // Measured: an event recorded on a capturing stream without
    // cudaEventRecordExternal fails every host wait, query, timing and eager
    // stream wait after the capture ends (1, cudaErrorInvalidValue), until it
    // is recorded again outside a capture.
    std::map<Handle, const Op *> Captured;
    for (const Op &R : Walk.Ops)
      if (R.K == Op::Record && !R.External && R.Event.valid() &&
          !R.Event.isTag() && InCapture.count(R.Stream))
        Captured.emplace(R.Event, &R);
    // The end of this region in the function holding the begin.
    SourceLocation End;
    for (const FlowSite &FS : Flow.Sites)
      if (inRegion(&FS.State, Root) && FS.Site.K == CallSite::Kind::Call &&
          Analysis.flows().eventOf(FS.Site.Callee) == CaptureEvent::End)
        End = SM.getExpansionLoc(FS.Site.Loc);
    Frame &Top = Walk.Frames.front();
    std::set<Handle> Rerecorded;
    // Calls after the end, in source order, outside any capture.
    llvm::ArrayRef<CallSite> After;
    if (!Captured.empty() && End.isValid())
      After = Analysis.flows().callsIn(Flow.Function);
    for (const CallSite &Site : After) {
      const auto *Call = dyn_cast_or_null<CallExpr>(Site.S);
      if (!Call || Site.K != CallSite::Kind::Call ||
          !SM.isBeforeInTranslationUnit(End, SM.getExpansionLoc(Site.Loc)))
        continue;
      // Where this capture may still be open (its end sits under a test
      // the analysis cannot carry across the calls between), the use fails
      // either way: a host wait during the capture, or a bound event after.
      // Inside another capture it is that capture's business.
      const CaptureState *State = Flow.stateAt(Call);
      if (!State || llvm::any_of(State->Roots, [&](const RegionRoot *R) {
            return R != &Root;
          }))
        break;
      if (Walk.roleOf(Site.Callee) == ApiRole::Record &&
          Call->getNumArgs() >= 1) {
        const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
        Rerecorded.insert(Walk.resolve(
            MC ? MC->getImplicitObjectArgument() : Call->getArg(0), Top));
        continue;
      }
      for (const Expr *Arg : eventUses(Analysis, Call)) {
        Handle Event = Walk.resolve(Arg, Top);
        auto It = Captured.find(Event);
        if (It == Captured.end() || Rerecorded.count(Event))
          continue;
        SourceLocation Loc = Analysis.visibleLoc(Call->getBeginLoc());
        if (!Analysis.isUserLocation(Loc) ||
            !reportHazard(Analysis, *Bound, Loc, Call->getSourceRange(),
                          "'" + displayName(calleeOf(Call)) + "'",
                          Flow.Function, nullptr, &Root))
          break;
        diag(Analysis.visibleLoc(It->second->Call->getBeginLoc()),
             "the event is last recorded here, on a capturing stream",
             DiagnosticIDs::Note);
        diag(End, "the capture ends here", DiagnosticIDs::Note);
        addChainNotes(Analysis, nullptr, &Root);
        break;
      }
    }
  }

  if (!Isolation)
    return;
  // Waits of streams in the capture on events recorded only outside it: on
  // streams the capture never reaches, or before it began in the function
  // holding the begin.
  for (const Op &W : Walk.Ops) {
    if (W.K != Op::Wait || W.External || !InCapture.count(W.Stream))
      continue;
    const Op *Outside = nullptr;
    bool Inside = false;
    for (const Op &R : Walk.Ops) {
      if (R.K != Op::Record || !(R.Event == W.Event))
        continue;
      if (InCapture.count(R.Stream) || R.Stream.Id == &LegacyTag ||
          R.Stream.Id == &PerThreadTag)
        Inside = true;
      else if (!Outside)
        Outside = &R;
    }
    if (Inside)
      continue;
    if (Outside) {
      std::string Lead;
      SourceRange Range;
      SourceLocation Loc = AnchorOf(W, Lead, Range);
      if (Loc.isInvalid() || !reportHazard(Analysis, *Isolation, Loc, Range,
                                           Lead, Flow.Function, nullptr,
                                           &Root))
        continue;
      const Expr *StreamArg = streamArgOf(Outside->Call);
      diag(Analysis.visibleLoc(Outside->Call->getBeginLoc()),
           "the event is recorded here, on %0, a stream outside the capture "
           "(it never waits on the capturing stream's work)",
           DiagnosticIDs::Note)
          << (StreamArg ? "'" + Spelled(StreamArg) + "'"
                        : std::string("the current stream"));
      FrameNotes(W, Loc);
      addChainNotes(Analysis, nullptr, &Root);
      continue;
    }
    const CallExpr *Before = nullptr;
    for (const CallSite &Site : Analysis.flows().callsIn(Flow.Function)) {
      const auto *Call = dyn_cast_or_null<CallExpr>(Site.S);
      if (!Call || Walk.roleOf(Site.Callee) != ApiRole::Record ||
          inRegion(Flow.stateAt(Call), Root) ||
          !SM.isBeforeInTranslationUnit(Site.Loc, Root.Loc))
        continue;
      const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
      const Expr *EventArg =
          MC ? MC->getImplicitObjectArgument()
             : (Call->getNumArgs() ? Call->getArg(0) : nullptr);
      // Measured: a wait on a record made before the begin fails with 905
      // whichever stream recorded it, the waiting stream itself included.
      if (Walk.resolve(EventArg, Top) == W.Event)
        Before = Call;
    }
    if (!Before)
      continue;
    std::string Lead;
    SourceRange Range;
    SourceLocation Loc = AnchorOf(W, Lead, Range);
    if (Loc.isInvalid() || !reportHazard(Analysis, *Isolation, Loc, Range,
                                         Lead, Flow.Function, nullptr,
                                         &Root))
      continue;
    diag(Analysis.visibleLoc(Before->getBeginLoc()),
         "the event is recorded here, before the capture begins",
         DiagnosticIDs::Note);
    FrameNotes(W, Loc);
    addChainNotes(Analysis, nullptr, &Root);
  }
}


void UnjoinedForkCheck::checkEagerEvents(CaptureAnalysis &Analysis) {
  RegionWalk Names(Analysis);
  struct Use {
    const CallExpr *Call;
    const FunctionDecl *Function;
    bool Tested; // the function's own test says no capture is open here
  };
  struct Record {
    const CallExpr *Call;
    const FunctionDecl *Function;
    const RegionRoot *Root; // null: a status test says it is capturing
  };
  std::map<const Decl *, std::vector<Record>> Captured;
  std::map<const Decl *, std::vector<Use>> Uses;
  std::set<const Decl *> RecordedEagerly;
  for (const RegionRecord &R : RegionRecords)
    Captured[R.Event].push_back({R.Call, R.Function, R.Root});

  auto RunsCaptured = [&](const FunctionDecl *FD, const Stmt *S) {
    std::optional<CaptureContext> Ctx = Analysis.contextOf(FD, S);
    return Ctx && !Ctx->StreamGuarded;
  };
  for (const FunctionDecl *FD : Analysis.userFunctions()) {
    // Built only for functions that record or use an event.
    std::optional<const StatusArms *> Arms;
    auto ArmsAt = [&](const Stmt *S) -> unsigned char {
      if (!Arms)
        Arms = Analysis.flows().statusArms(FD);
      unsigned char Bits = *Arms ? (*Arms)->at(S) : 0;
      return Bits ? Bits : StatusArms::Untested;
    };
    // Events this function records before the call being looked at, on a
    // path where no capture is known to be open.
    std::set<const Decl *> RecordedHere;
    for (const CallSite &Site : Analysis.flows().callsIn(FD)) {
      const auto *Call = dyn_cast_or_null<CallExpr>(Site.S);
      if (!Call || Site.K != CallSite::Kind::Call)
        continue;
      if (Names.roleOf(Site.Callee) == ApiRole::Record) {
        const Decl *Event = keptEvent(plainRecordedEvent(Analysis, Call));
        if (!Event) {
          // An external record, or one through libtorch's CUDAEvent: the
          // event stays usable outside capture either way.
          const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
          if (const Decl *Any = keptEvent(
                  MC ? MC->getImplicitObjectArgument()
                     : (Call->getNumArgs() ? Call->getArg(0) : nullptr))) {
            RecordedHere.insert(Any);
            RecordedEagerly.insert(Any);
          }
          continue;
        }
        unsigned char Bits = ArmsAt(Call);
        bool InRegion = RunsCaptured(FD, Call);
        if ((Bits & StatusArms::Capturing) && !InRegion)
          Captured[Event].push_back({Call, FD, nullptr});
        if ((Bits & (StatusArms::NotCapturing | StatusArms::Untested)) &&
            !InRegion) {
          RecordedHere.insert(Event);
          RecordedEagerly.insert(Event);
        }
        continue;
      }
      for (const Expr *Arg : eventUses(Analysis, Call)) {
        const Decl *Event = keptEvent(Arg);
        if (!Event || RecordedHere.count(Event) || RunsCaptured(FD, Call))
          continue;
        // A stream wait with cudaEventWaitExternal, or flags not known, is
        // meant for a capture.
        StringRef Name =
            stripCudaApiSuffix(Analysis.code().nameOf(calleeOf(Call)));
        if (Name.ends_with("StreamWaitEvent") && Call->getNumArgs() >= 3) {
          Expr::EvalResult Flags;
          if (!Call->getArg(2)->EvaluateAsInt(Flags, Analysis.context()) ||
              Flags.Val.getInt() != 0)
            continue;
        }
        // A use the function's own test puts inside a capture.
        unsigned char Bits = ArmsAt(Call);
        if (!(Bits & (StatusArms::NotCapturing | StatusArms::Untested)))
          continue;
        Uses[Event].push_back(
            {Call, FD, (Bits & StatusArms::NotCapturing) != 0});
      }
    }
  }

  for (auto &[Event, Records] : Captured) {
    auto UsesIt = Uses.find(Event);
    if (UsesIt == Uses.end())
      continue;
    bool OnlyCaptured = !RecordedEagerly.count(Event);
    for (const Record &R : Records) {
      // A use the code itself runs outside capture; or, when nothing
      // records the event outside a capture, any use in another function.
      const Use *Found = nullptr;
      // In the function holding the begin, uses after the end are
      // capture-bound-event's.
      const FunctionDecl *Owner =
          R.Root && R.Root->Owner ? definitionOf(R.Root->Owner) : nullptr;
      for (const Use &U : UsesIt->second)
        if (U.Function != R.Function && U.Function != Owner &&
            (U.Tested || OnlyCaptured)) {
          Found = &U;
          break;
        }
      if (!Found)
        continue;
      SourceLocation Loc = Analysis.visibleLoc(R.Call->getBeginLoc());
      if (!Analysis.isUserLocation(Loc) ||
          !reportHazard(Analysis, *EagerRecord, Loc, R.Call->getSourceRange(),
                        "'" + displayName(calleeOf(R.Call)) + "'",
                        R.Function, nullptr, R.Root))
        continue;
      diag(Analysis.visibleLoc(Found->Call->getBeginLoc()),
           Found->Tested
               ? "'%0' uses the event here, in '%1', where its capture-status "
                 "test says no capture is open"
               : "'%0' uses the event here, in '%1'; nothing records it "
                 "outside a capture",
           DiagnosticIDs::Note)
          << displayName(calleeOf(Found->Call))
          << displayName(Found->Function);
      if (R.Root)
        addChainNotes(Analysis, nullptr, R.Root);
      break;
    }
  }
}

} // namespace clang::tidy::cudagraph
