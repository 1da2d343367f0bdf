//===--- ProjectIndex.cpp - cudagraph analysis ----------------------------===//

#include "ProjectIndex.h"
#include "CallSites.h"
#include "CaptureAnalysis.h"
#include "HazardMatch.h"
#include "OpRoots.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Index/USRGeneration.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/xxhash.h"
#include <deque>
#include <mutex>
#include <set>

namespace clang::cudagraph {

//===----------------------------------------------------------------------===//
// Keys, files
//===----------------------------------------------------------------------===//

std::string functionKey(const FunctionDecl *FD) {
  if (!FD)
    return "";
  if (const FunctionDecl *Pattern = FD->getTemplateInstantiationPattern())
    FD = Pattern;
  llvm::SmallString<128> USR;
  if (index::generateUSRForDecl(FD->getCanonicalDecl(), USR))
    return "";
  return std::string(USR);
}

std::string normalPath(llvm::StringRef Path) {
  llvm::SmallString<256> P(Path);
  llvm::sys::fs::make_absolute(P);
  llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

uint64_t hashFile(llvm::StringRef Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!Buffer)
    return 0;
  return llvm::xxh3_64bits((*Buffer)->getBuffer());
}

IndexInput currentInput(llvm::StringRef Path) {
  IndexInput In;
  In.Path = Path.str();
  llvm::sys::fs::file_status St;
  if (!llvm::sys::fs::status(Path, St)) {
    In.Size = St.getSize();
    In.MTime = llvm::sys::toTimeT(St.getLastModificationTime());
  }
  In.Hash = hashFile(Path);
  return In;
}

const char *eventName(CaptureEvent E) {
  switch (E) {
  case CaptureEvent::Begin:
    return "begin";
  case CaptureEvent::End:
    return "end";
  case CaptureEvent::None:
    break;
  }
  return "";
}

static CaptureEvent eventFromName(llvm::StringRef S) {
  if (S == "begin")
    return CaptureEvent::Begin;
  if (S == "end")
    return CaptureEvent::End;
  return CaptureEvent::None;
}

namespace {
struct Globals {
  std::mutex Lock;
  std::string DefaultIndex, SummaryOutput, SummaryKey;
};
Globals &globals() {
  static Globals G;
  return G;
}
} // namespace

void setDefaultProjectIndex(std::string Path) {
  globals().DefaultIndex = std::move(Path);
}
const std::string &defaultProjectIndex() { return globals().DefaultIndex; }
void setSummaryOutput(std::string Path, std::string Key) {
  globals().SummaryOutput = std::move(Path);
  globals().SummaryKey = std::move(Key);
}
const std::string &summaryOutput() { return globals().SummaryOutput; }
const std::string &summaryKey() { return globals().SummaryKey; }

//===----------------------------------------------------------------------===//
// Summaries
//===----------------------------------------------------------------------===//

namespace {
class Summarizer {
public:
  explicit Summarizer(CaptureAnalysis &A)
      : A(A), SM(A.context().getSourceManager()), Flows(A.flows()),
        Code(A.code()) {}

  TuSummary run() {
    TuSummary S;
    S.Key = summaryKey();
    if (OptionalFileEntryRef Main = SM.getFileEntryRefForID(SM.getMainFileID()))
      S.File = normalPath(Main->getName());
    S.CompileErrors = A.context().getDiagnostics().hasErrorOccurred();
    // Every file entered, once (a header included twice has two ids).
    llvm::StringSet<> Seen;
    for (unsigned I = 0, N = SM.local_sloc_entry_size(); I < N; ++I) {
      const SrcMgr::SLocEntry &E = SM.getLocalSLocEntry(I);
      if (!E.isFile())
        continue;
      FileID FID = SM.getDecomposedLoc(SourceLocation::getFromRawEncoding(
                                           E.getOffset()))
                       .first;
      OptionalFileEntryRef Entry = SM.getFileEntryRefForID(FID);
      if (!Entry || !Seen.insert(Entry->getName()).second ||
          !Code.isUserFile(FID))
        continue;
      S.Inputs.push_back(currentInput(normalPath(Entry->getName())));
    }
    llvm::sort(S.Inputs, [](const IndexInput &L, const IndexInput &R) {
      return L.Path < R.Path;
    });

    llvm::StringSet<> Defined;
    for (const FunctionDecl *FD : A.userFunctions())
      Defined.insert(key(FD));
    llvm::StringMap<unsigned> Slot;
    std::set<std::string> Externs;
    for (const FunctionDecl *FD : A.userFunctions()) {
      const std::string &K = key(FD);
      if (K.empty())
        continue;
      auto [It, New] = Slot.try_emplace(K, S.Functions.size());
      if (New) {
        IndexedFunction &F = S.Functions.emplace_back();
        F.Key = K;
        F.Name = name(FD);
        F.Loc = locText(FD->getLocation());
      }
      describe(FD, S.Functions[It->second]);
      for (const CallSite &Site : Flows.callsIn(FD))
        if (const FunctionDecl *Callee = userCallee(Site);
            Callee && !Defined.contains(key(Callee)))
          Externs.insert(key(Callee));
      seeds(FD, S.Seeds);
    }
    opSeeds(S.Seeds);
    S.Externs.assign(Externs.begin(), Externs.end());
    if (IndexView *View = A.indexView())
      S.EventsUsed = View->eventsUsed();
    return S;
  }

private:
  static bool isLambda(const FunctionDecl *FD) {
    const auto *M = dyn_cast<CXXMethodDecl>(FD);
    return M && M->getParent()->isLambda();
  }

  /// How the chain names a function: its qualified name, or "lambda".
  std::string name(const FunctionDecl *FD) {
    return isLambda(FD) ? "lambda" : Code.nameOf(FD).str();
  }

  const std::string &key(const FunctionDecl *FD) {
    auto [It, New] = Keys.try_emplace(FD);
    if (New)
      It->second = functionKey(FD);
    return It->second;
  }

  std::string locText(SourceLocation Loc) {
    Loc = SM.getExpansionLoc(Code.visibleLoc(Loc));
    PresumedLoc P = SM.getPresumedLoc(Loc);
    if (P.isInvalid())
      return "";
    return normalPath(P.getFilename()) + ":" + std::to_string(P.getLine());
  }

  /// The user function \p Site calls (not a capture API, not a lambda).
  const FunctionDecl *userCallee(const CallSite &Site) {
    const FunctionDecl *Callee = Site.Callee;
    if (!Callee || Site.K == CallSite::Kind::Callable || isLambda(Callee) ||
        Callee->getBuiltinID() ||
        Callee->getCanonicalDecl()->getLocation().isInvalid() ||
        !Code.isUserLocation(Callee->getCanonicalDecl()->getLocation()) ||
        Callee->isInStdNamespace())
      return nullptr;
    return Callee;
  }

  std::string pointerKey(const FunctionType *Fn) {
    return PointerKeyPrefix.str() + Flows.pointers().key(Fn);
  }

  /// A call through a function pointer whose type names a class of the
  /// program (the site of the call itself, not of its targets): every
  /// function of the project stored as one may run there.
  std::optional<IndexedCall> pointerCall(const CallSite &Site) {
    if (Site.K != CallSite::Kind::Call || Site.Callee || Site.Indirect)
      return std::nullopt;
    const FunctionType *Fn = Flows.pointers().callType(Site.S);
    if (!Fn)
      return std::nullopt;
    // Named as the program spells the pointer's type (`StepFn`).
    QualType Written =
        cast<CallExpr>(Site.S)->getCallee()->IgnoreParenImpCasts()->getType();
    return IndexedCall{pointerKey(Fn),
                       Written.getUnqualifiedType().getAsString(),
                       locText(Site.Loc)};
  }

  /// The parameter of the invoker a callable site passes.
  static std::optional<unsigned> passedParam(const CallSite &Site,
                                             const FunctionDecl *Invoker) {
    unsigned Offset =
        isa<CXXOperatorCallExpr>(Site.S) && isa<CXXMethodDecl>(Invoker);
    if (Site.ArgIndex < Offset)
      return std::nullopt;
    return Site.ArgIndex - Offset;
  }

  std::optional<IndexedPass> pass(const CallSite &Site, bool Captured) {
    if (Site.K != CallSite::Kind::Callable || !Site.Callee ||
        !Code.isUserLocation(Site.Callee->getLocation()))
      return std::nullopt;
    const FunctionDecl *Invoker = directCallee(Site.S);
    if (!Invoker ||
        !Code.isUserLocation(Invoker->getCanonicalDecl()->getLocation()))
      return std::nullopt;
    std::optional<unsigned> Param = passedParam(Site, Invoker);
    if (!Param)
      return std::nullopt;
    IndexedPass P;
    P.Invoker = key(Invoker);
    P.InvokerName = name(Invoker);
    P.Arg = *Param;
    P.Callable = key(Site.Callee);
    P.CallableName = name(Site.Callee);
    P.Loc = locText(Site.Loc);
    P.Captured = Captured;
    if (P.Invoker.empty() || P.Callable.empty())
      return std::nullopt;
    return P;
  }

  static void addCall(std::vector<IndexedCall> &Calls, IndexedCall C) {
    for (const IndexedCall &Old : Calls)
      if (Old.Callee == C.Callee)
        return;
    Calls.push_back(std::move(C));
  }

  static void addPass(std::vector<IndexedPass> &Passes, IndexedPass P) {
    for (IndexedPass &Old : Passes)
      if (Old.Invoker == P.Invoker && Old.Arg == P.Arg &&
          Old.Callable == P.Callable) {
        Old.Captured |= P.Captured;
        return;
      }
    Passes.push_back(std::move(P));
  }

  void describe(const FunctionDecl *FD, IndexedFunction &F) {
    if (Flows.hasEvents(FD)) {
      const FunctionSummary &Sum = Flows.summary(FD);
      if (Sum.Event != CaptureEvent::None) {
        F.Event = Sum.Event;
        F.Modes |= Sum.Modes;
        F.ReturnedObjectEnds |= Sum.ReturnedObjectEnds;
      }
      const FunctionFlow &Own = Flows.flow(FD, /*EntryCapturing=*/false);
      for (const ParamCall &PC : Own.ParamCalls)
        if (PC.State.capturing() &&
            !llvm::is_contained(F.InvokesInRegion, PC.Param))
          F.InvokesInRegion.push_back(PC.Param);
      if (!F.Modes)
        for (const auto &R : Own.Exit.Roots)
          F.Modes |= R->Modes;
    }
    if (!FD->getReturnType()->isVoidType())
      F.Test = Flows.returnedTest(FD);
    // A function declared capture-safe runs under capture as it is: what it
    // calls is not followed from there.
    if (A.isCaptureSafe(FD))
      return;
    const FunctionFlow &Flow = Flows.flow(FD, /*EntryCapturing=*/true);
    for (const FlowSite &FS : Flow.Sites) {
      if (FS.State.StreamGuarded)
        continue;
      if (FS.State.capturing())
        if (const Hazard *H = matchHazard(Code, allHazards(), FS.Site);
            H && llvm::none_of(F.Hazards, [&](const IndexedHazard &Old) {
              return Old.Id == H->Id && Old.Loc == locText(FS.Site.Loc);
            }))
          F.Hazards.push_back({H->Id.str(), locText(FS.Site.Loc)});
      if (std::optional<IndexedPass> P = pass(FS.Site, true)) {
        addPass(F.Passes, std::move(*P));
        continue;
      }
      if (std::optional<IndexedCall> C = pointerCall(FS.Site)) {
        addCall(F.Calls, std::move(*C));
        continue;
      }
      if (FS.Site.ByType)
        continue; // the pointer's type stands for its targets
      if (const FunctionDecl *Callee = userCallee(FS.Site))
        if (!key(Callee).empty() && Flows.eventOf(Callee) == CaptureEvent::None)
          addCall(F.Calls, {key(Callee), name(Callee),
                            locText(FS.Site.Loc)});
    }
    for (const ParamCall &PC : Flow.ParamCalls)
      if (!llvm::is_contained(F.Invokes, PC.Param))
        F.Invokes.push_back(PC.Param);
    for (const CallSite &Site : Flows.callsIn(FD))
      if (std::optional<IndexedPass> P = pass(Site, false))
        addPass(F.Passes, std::move(*P));
    // Stored in a function pointer: a call through one of its type in any
    // unit may run it, as a virtual call may run an override.
    if (const FunctionType *Fn = Flows.pointers().takenAs(FD)) {
      std::string Sig = pointerKey(Fn);
      if (!llvm::is_contained(F.Overrides, Sig))
        F.Overrides.push_back(Sig);
    }
    if (const auto *M = dyn_cast<CXXMethodDecl>(FD); M && M->isVirtual()) {
      F.Virtual = true;
      llvm::SmallVector<const CXXMethodDecl *, 4> Bases(
          M->overridden_methods());
      while (!Bases.empty()) {
        const CXXMethodDecl *Base = Bases.pop_back_val();
        std::string BK = key(Base);
        if (!BK.empty() && !llvm::is_contained(F.Overrides, BK))
          F.Overrides.push_back(BK);
        Bases.append(Base->overridden_methods().begin(),
                     Base->overridden_methods().end());
      }
    }
  }

  /// Calls and passes made inside \p FD's own capture regions.
  void seeds(const FunctionDecl *FD, std::vector<IndexedSeed> &Out) {
    if (!Flows.hasEvents(FD))
      return;
    const FunctionFlow &Own = Flows.flow(FD, /*EntryCapturing=*/false);
    for (const FlowSite &FS : Own.Sites) {
      if (FS.State.StreamGuarded || !FS.State.capturing())
        continue;
      const RegionRoot *Root = nullptr;
      for (const RegionRoot *R : FS.State.Roots)
        if (R->K != RegionRoot::Kind::Entry) {
          Root = R;
          break;
        }
      if (!Root)
        continue;
      IndexedSeed Seed;
      Seed.K = IndexedSeed::Kind::Region;
      Seed.Holder = name(FD);
      Seed.HolderKey = key(FD);
      Seed.RootLoc = locText(Root->Loc);
      Seed.Modes = Root->Modes ? Root->Modes : AnyMode;
      if (std::optional<IndexedPass> P = pass(FS.Site, true)) {
        Seed.Function = P->Invoker;
        Seed.Name = P->InvokerName;
        Seed.Loc = P->Loc;
        Seed.Pass = std::move(*P);
      } else if (std::optional<IndexedCall> C = pointerCall(FS.Site)) {
        Seed.Function = C->Callee;
        Seed.Name = C->Name;
        Seed.Loc = C->Loc;
      } else if (FS.Site.ByType) {
        continue;
      } else if (const FunctionDecl *Callee = userCallee(FS.Site)) {
        if (key(Callee).empty() || Flows.eventOf(Callee) != CaptureEvent::None)
          continue;
        Seed.Function = key(Callee);
        Seed.Name = name(Callee);
        Seed.Loc = locText(FS.Site.Loc);
      } else {
        continue;
      }
      Out.push_back(std::move(Seed));
    }
  }

  /// Registered ops whose functions may be defined in other units.
  void opSeeds(std::vector<IndexedSeed> &Out) {
    for (const OpRegistration &Op : A.selectedOps(/*WithDeclared=*/true)) {
      IndexedSeed Seed;
      Seed.K = IndexedSeed::Kind::Op;
      Seed.Function = key(Op.Function);
      if (Seed.Function.empty())
        continue;
      Seed.Name = name(Op.Function);
      Seed.Loc = locText(Op.Loc);
      Seed.RootLoc = Seed.Loc;
      Seed.OpName = Op.Name;
      Seed.OpKind = registrationKindName(Op.K).str();
      Seed.OpWhen = registrationCapturedWhen(Op.K).str();
      Seed.OpWarmedUp = registrationWarmedUp(Op.K);
      Out.push_back(std::move(Seed));
    }
  }

  CaptureAnalysis &A;
  const SourceManager &SM;
  FlowEngine &Flows;
  CodeClassifier &Code;
  llvm::DenseMap<const FunctionDecl *, std::string> Keys;
};
} // namespace

TuSummary summarize(CaptureAnalysis &A) { return Summarizer(A).run(); }

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static llvm::json::Array strings(const std::vector<std::string> &V) {
  llvm::json::Array A;
  for (const std::string &S : V)
    A.push_back(S);
  return A;
}

static llvm::json::Array numbers(const std::vector<unsigned> &V) {
  llvm::json::Array A;
  for (unsigned N : V)
    A.push_back(static_cast<int64_t>(N));
  return A;
}

static llvm::json::Value toJSON(const IndexInput &I) {
  return llvm::json::Object{{"path", I.Path},
                            {"size", static_cast<int64_t>(I.Size)},
                            {"mtime", I.MTime},
                            {"hash", llvm::utohexstr(I.Hash)}};
}

static llvm::json::Value toJSON(const IndexedPass &P) {
  return llvm::json::Object{{"invoker", P.Invoker},
                            {"invoker_name", P.InvokerName},
                            {"arg", static_cast<int64_t>(P.Arg)},
                            {"callable", P.Callable},
                            {"callable_name", P.CallableName},
                            {"loc", P.Loc},
                            {"captured", P.Captured}};
}

static llvm::json::Value toJSON(const IndexedFunction &F) {
  llvm::json::Array Calls, Passes;
  for (const IndexedCall &C : F.Calls)
    Calls.push_back(
        llvm::json::Object{{"callee", C.Callee}, {"name", C.Name}, {"loc", C.Loc}});
  for (const IndexedPass &P : F.Passes)
    Passes.push_back(toJSON(P));
  llvm::json::Object O{{"key", F.Key}, {"name", F.Name}, {"loc", F.Loc}};
  if (F.Event != CaptureEvent::None)
    O["event"] = eventName(F.Event);
  if (F.Modes)
    O["modes"] = static_cast<int64_t>(F.Modes);
  if (F.ReturnedObjectEnds)
    O["returned_object_ends"] = true;
  if (F.Test != CaptureTest::Unknown)
    O["test"] = F.Test == CaptureTest::TrueWhenCapturing ? "capturing"
                                                         : "not-capturing";
  if (F.Virtual)
    O["virtual"] = true;
  if (!Calls.empty())
    O["calls"] = std::move(Calls);
  if (!F.Invokes.empty())
    O["invokes"] = numbers(F.Invokes);
  if (!F.InvokesInRegion.empty())
    O["invokes_in_region"] = numbers(F.InvokesInRegion);
  if (!Passes.empty())
    O["passes"] = std::move(Passes);
  if (!F.Overrides.empty())
    O["overrides"] = strings(F.Overrides);
  if (!F.Hazards.empty()) {
    llvm::json::Array Hazards;
    for (const IndexedHazard &H : F.Hazards)
      Hazards.push_back(llvm::json::Object{{"id", H.Id}, {"loc", H.Loc}});
    O["hazards"] = std::move(Hazards);
  }
  return O;
}

static llvm::json::Value toJSON(const IndexedSeed &S) {
  llvm::json::Object O{{"kind", S.K == IndexedSeed::Kind::Op ? "op" : "region"},
                       {"function", S.Function},
                       {"name", S.Name},
                       {"loc", S.Loc},
                       {"root_loc", S.RootLoc},
                       {"modes", static_cast<int64_t>(S.Modes)}};
  if (!S.Holder.empty()) {
    O["holder"] = S.Holder;
    O["holder_key"] = S.HolderKey;
  }
  if (!S.OpName.empty()) {
    O["op_name"] = S.OpName;
    O["op_kind"] = S.OpKind;
    O["op_when"] = S.OpWhen;
    O["op_warmed_up"] = S.OpWarmedUp;
  }
  if (S.Pass)
    O["pass"] = toJSON(*S.Pass);
  return O;
}

llvm::json::Value toJSON(const TuSummary &S) {
  llvm::json::Array Inputs, Functions, Seeds;
  for (const IndexInput &I : S.Inputs)
    Inputs.push_back(toJSON(I));
  for (const IndexedFunction &F : S.Functions)
    Functions.push_back(toJSON(F));
  for (const IndexedSeed &Seed : S.Seeds)
    Seeds.push_back(toJSON(Seed));
  llvm::json::Object Used;
  for (const auto &[K, E] : S.EventsUsed)
    Used[K] = E;
  return llvm::json::Object{{"version", IndexFormatVersion},
                            {"file", S.File},
                            {"key", S.Key},
                            {"compile_errors", S.CompileErrors},
                            {"inputs", std::move(Inputs)},
                            {"functions", std::move(Functions)},
                            {"seeds", std::move(Seeds)},
                            {"externs", strings(S.Externs)},
                            {"events_used", std::move(Used)}};
}

namespace {
/// Reads fields, remembering the first that is missing or malformed.
class Reader {
public:
  explicit Reader(std::string &Error) : Error(Error) {}

  std::string str(const llvm::json::Object &O, llvm::StringRef K,
                  bool Required = true) {
    if (std::optional<llvm::StringRef> S = O.getString(K))
      return S->str();
    if (Required)
      fail(K);
    return "";
  }
  int64_t num(const llvm::json::Object &O, llvm::StringRef K,
              int64_t Default = 0) {
    return O.getInteger(K).value_or(Default);
  }
  bool flag(const llvm::json::Object &O, llvm::StringRef K) {
    return O.getBoolean(K).value_or(false);
  }
  std::vector<std::string> strs(const llvm::json::Object &O, llvm::StringRef K) {
    std::vector<std::string> Out;
    if (const llvm::json::Array *A = O.getArray(K))
      for (const llvm::json::Value &V : *A)
        if (std::optional<llvm::StringRef> S = V.getAsString())
          Out.push_back(S->str());
    return Out;
  }
  std::vector<unsigned> nums(const llvm::json::Object &O, llvm::StringRef K) {
    std::vector<unsigned> Out;
    if (const llvm::json::Array *A = O.getArray(K))
      for (const llvm::json::Value &V : *A)
        if (std::optional<int64_t> N = V.getAsInteger(); N && *N >= 0)
          Out.push_back(static_cast<unsigned>(*N));
    return Out;
  }
  const llvm::json::Array &array(const llvm::json::Object &O, llvm::StringRef K) {
    static const llvm::json::Array Empty;
    const llvm::json::Array *A = O.getArray(K);
    return A ? *A : Empty;
  }

  IndexInput input(const llvm::json::Object &O) {
    IndexInput I;
    I.Path = str(O, "path");
    I.Size = num(O, "size");
    I.MTime = num(O, "mtime");
    llvm::StringRef(str(O, "hash", false)).getAsInteger(16, I.Hash);
    return I;
  }
  IndexedPass pass(const llvm::json::Object &O) {
    IndexedPass P;
    P.Invoker = str(O, "invoker");
    P.InvokerName = str(O, "invoker_name", false);
    P.Arg = num(O, "arg");
    P.Callable = str(O, "callable");
    P.CallableName = str(O, "callable_name", false);
    P.Loc = str(O, "loc", false);
    P.Captured = flag(O, "captured");
    return P;
  }
  IndexedFunction function(const llvm::json::Object &O) {
    IndexedFunction F;
    F.Key = str(O, "key");
    F.Name = str(O, "name", false);
    F.Loc = str(O, "loc", false);
    F.Event = eventFromName(str(O, "event", false));
    F.Modes = num(O, "modes");
    F.ReturnedObjectEnds = flag(O, "returned_object_ends");
    std::string Test = str(O, "test", false);
    F.Test = Test == "capturing"       ? CaptureTest::TrueWhenCapturing
             : Test == "not-capturing" ? CaptureTest::TrueWhenNotCapturing
                                       : CaptureTest::Unknown;
    F.Virtual = flag(O, "virtual");
    for (const llvm::json::Value &V : array(O, "calls"))
      if (const llvm::json::Object *C = V.getAsObject())
        F.Calls.push_back({str(*C, "callee"), str(*C, "name", false),
                           str(*C, "loc", false)});
    F.Invokes = nums(O, "invokes");
    F.InvokesInRegion = nums(O, "invokes_in_region");
    for (const llvm::json::Value &V : array(O, "passes"))
      if (const llvm::json::Object *P = V.getAsObject())
        F.Passes.push_back(pass(*P));
    F.Overrides = strs(O, "overrides");
    for (const llvm::json::Value &V : array(O, "hazards"))
      if (const llvm::json::Object *H = V.getAsObject())
        F.Hazards.push_back({str(*H, "id"), str(*H, "loc", false)});
    return F;
  }
  IndexedSeed seed(const llvm::json::Object &O) {
    IndexedSeed S;
    S.K = str(O, "kind") == "op" ? IndexedSeed::Kind::Op
                                 : IndexedSeed::Kind::Region;
    S.Function = str(O, "function");
    S.Name = str(O, "name", false);
    S.Loc = str(O, "loc", false);
    S.RootLoc = str(O, "root_loc", false);
    S.Modes = num(O, "modes", AnyMode);
    S.Holder = str(O, "holder", false);
    S.HolderKey = str(O, "holder_key", false);
    S.OpName = str(O, "op_name", false);
    S.OpKind = str(O, "op_kind", false);
    S.OpWhen = str(O, "op_when", false);
    S.OpWarmedUp = flag(O, "op_warmed_up");
    if (const llvm::json::Object *P = O.getObject("pass"))
      S.Pass = pass(*P);
    return S;
  }

  bool ok() const { return Error.empty(); }
  void fail(llvm::StringRef What) {
    if (Error.empty())
      Error = ("missing or malformed field '" + What + "'").str();
  }

private:
  std::string &Error;
};

std::optional<llvm::json::Value> readJSONFile(llvm::StringRef Path,
                                              std::string &Error) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer) {
    Error = "cannot read '" + Path.str() + "': " + Buffer.getError().message();
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> V = llvm::json::parse((*Buffer)->getBuffer());
  if (!V) {
    Error = "'" + Path.str() + "' is not valid JSON: " +
            llvm::toString(V.takeError());
    return std::nullopt;
  }
  return std::move(*V);
}

const llvm::json::Object *versioned(const llvm::json::Value &V,
                                    llvm::StringRef Path, std::string &Error) {
  const llvm::json::Object *O = V.getAsObject();
  if (!O) {
    Error = "'" + Path.str() + "' does not hold a JSON object";
    return nullptr;
  }
  if (O->getInteger("version").value_or(-1) != IndexFormatVersion) {
    Error = "'" + Path.str() + "' was written by another version of "
            "cudagraph-tidy";
    return nullptr;
  }
  return O;
}
} // namespace

std::optional<TuSummary> readSummary(llvm::StringRef Path, std::string &Error) {
  std::optional<llvm::json::Value> V = readJSONFile(Path, Error);
  if (!V)
    return std::nullopt;
  const llvm::json::Object *O = versioned(*V, Path, Error);
  if (!O)
    return std::nullopt;
  Reader R(Error);
  TuSummary S;
  S.File = R.str(*O, "file");
  S.Key = R.str(*O, "key", false);
  S.CompileErrors = R.flag(*O, "compile_errors");
  for (const llvm::json::Value &V : R.array(*O, "inputs"))
    if (const llvm::json::Object *I = V.getAsObject())
      S.Inputs.push_back(R.input(*I));
  for (const llvm::json::Value &V : R.array(*O, "functions"))
    if (const llvm::json::Object *F = V.getAsObject())
      S.Functions.push_back(R.function(*F));
  for (const llvm::json::Value &V : R.array(*O, "seeds"))
    if (const llvm::json::Object *Seed = V.getAsObject())
      S.Seeds.push_back(R.seed(*Seed));
  S.Externs = R.strs(*O, "externs");
  if (const llvm::json::Object *Used = O->getObject("events_used"))
    for (const auto &[K, E] : *Used)
      if (std::optional<llvm::StringRef> Name = E.getAsString())
        S.EventsUsed[K.str()] = Name->str();
  if (!R.ok()) {
    Error = "'" + Path.str() + "': " + Error;
    return std::nullopt;
  }
  return S;
}

bool writeJSONFile(llvm::StringRef Path, const llvm::json::Value &V,
                   std::string &Error) {
  // Written beside the target and renamed over it: a reader never sees a
  // half-written file.
  llvm::SmallString<256> Temp(Path);
  Temp += ".tmp-" + std::to_string(llvm::sys::Process::getProcessId());
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Temp, EC);
    if (EC) {
      Error = "cannot write '" + std::string(Temp) + "': " + EC.message();
      return false;
    }
    OS << llvm::formatv("{0:1}", V) << "\n";
  }
  if (std::error_code EC = llvm::sys::fs::rename(Temp, Path)) {
    Error = "cannot write '" + Path.str() + "': " + EC.message();
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Merge
//===----------------------------------------------------------------------===//

/// Locations stay absolute in the index; reports shorten them
/// (shortenPaths) for the directory they run in.
static std::string relativeLoc(llvm::StringRef Loc) { return Loc.str(); }

std::string shortenPaths(llvm::StringRef Text) {
  llvm::SmallString<256> Cwd;
  if (llvm::sys::fs::current_path(Cwd))
    return Text.str();
  Cwd += llvm::sys::path::get_separator();
  std::string Out;
  for (size_t At = 0;;) {
    size_t Hit = Text.find(Cwd, At);
    if (Hit == llvm::StringRef::npos) {
      Out += Text.drop_front(At);
      return Out;
    }
    Out += Text.slice(At, Hit);
    At = Hit + Cwd.size();
  }
}

ProjectIndex ProjectIndex::merge(const std::vector<TuSummary> &Summaries) {
  ProjectIndex I;
  std::map<std::string, IndexInput> Inputs;
  for (const TuSummary &S : Summaries) {
    I.Units[S.File] = S.Key;
    for (const IndexInput &In : S.Inputs)
      Inputs[In.Path] = In;
    for (const IndexedFunction &F : S.Functions) {
      auto [It, New] = I.Functions.try_emplace(F.Key, F);
      std::vector<std::string> &Files = I.DefinedIn[F.Key];
      if (!llvm::is_contained(Files, S.File))
        Files.push_back(S.File);
      if (New)
        continue;
      IndexedFunction &M = It->second;
      if (M.Event == CaptureEvent::None)
        M.Event = F.Event;
      M.Modes |= F.Modes;
      M.ReturnedObjectEnds |= F.ReturnedObjectEnds;
      if (M.Test == CaptureTest::Unknown)
        M.Test = F.Test;
      M.Virtual |= F.Virtual;
      for (const IndexedCall &C : F.Calls)
        if (llvm::none_of(M.Calls, [&](const IndexedCall &Old) {
              return Old.Callee == C.Callee;
            }))
          M.Calls.push_back(C);
      for (unsigned P : F.Invokes)
        if (!llvm::is_contained(M.Invokes, P))
          M.Invokes.push_back(P);
      for (unsigned P : F.InvokesInRegion)
        if (!llvm::is_contained(M.InvokesInRegion, P))
          M.InvokesInRegion.push_back(P);
      for (const IndexedPass &P : F.Passes)
        M.Passes.push_back(P);
      for (const std::string &O : F.Overrides)
        if (!llvm::is_contained(M.Overrides, O))
          M.Overrides.push_back(O);
      for (const IndexedHazard &H : F.Hazards)
        if (llvm::none_of(M.Hazards, [&](const IndexedHazard &Old) {
              return Old.Id == H.Id && Old.Loc == H.Loc;
            }))
          M.Hazards.push_back(H);
    }
  }
  for (auto &[Path, In] : Inputs)
    I.Inputs.push_back(In);

  std::map<std::string, std::vector<std::string>> Overriders;
  for (const auto &[Key, F] : I.Functions)
    for (const std::string &Base : F.Overrides)
      Overriders[Base].push_back(Key);

  // Breadth first from the seeds: each function keeps the first (shortest)
  // chain that reaches it; modes accumulate over every chain.
  std::deque<std::string> Work;
  auto Add = [&](const std::string &Key, const std::string &Name,
                 const CrossReach *From, std::string Step, ModeSet Modes,
                 llvm::StringRef RootFile, bool OpRoot) {
    if (Key.empty())
      return;
    auto [It, New] = I.Reaches.try_emplace(Key);
    CrossReach &R = It->second;
    if (New) {
      R.Key = Key;
      R.Name = Name;
      R.Chain = From ? From->Chain : std::vector<std::string>();
      R.ChainKeys = From ? From->ChainKeys : std::vector<std::string>();
      R.Chain.push_back(std::move(Step));
      R.ChainKeys.push_back(Key);
      R.RootFile = RootFile.str();
      R.OpRoot = OpRoot;
      R.OpWarmedUp = From && From->OpWarmedUp;
      R.Modes = Modes;
      Work.push_back(Key);
      return;
    }
    if ((R.Modes | Modes) != R.Modes) {
      R.Modes |= Modes;
      Work.push_back(Key);
    }
  };
  auto CallStep = [](llvm::StringRef Name, llvm::StringRef Loc) {
    return ("'" + Name + "' is called at " + relativeLoc(Loc)).str();
  };
  auto StepTo = [&](const std::string &Key, const std::string &Name,
                    llvm::StringRef Loc) {
    if (llvm::StringRef(Key).starts_with(PointerKeyPrefix))
      return "a function pointer of type '" + Name + "' is called at " +
             relativeLoc(Loc);
    return CallStep(Name, Loc);
  };
  auto PassStep = [](const IndexedPass &P) {
    return "'" + P.CallableName + "' is passed to '" + P.InvokerName +
           "', which calls it, at " + relativeLoc(P.Loc);
  };
  auto Invokes = [&](const std::string &Invoker, unsigned Arg, bool InRegion) {
    auto It = I.Functions.find(Invoker);
    if (It == I.Functions.end())
      return false;
    return llvm::is_contained(InRegion ? It->second.InvokesInRegion
                                       : It->second.Invokes,
                              Arg);
  };

  for (const TuSummary &S : Summaries)
    for (const IndexedSeed &Seed : S.Seeds) {
      if (Seed.K == IndexedSeed::Kind::Op) {
        CrossReach Registration;
        Registration.OpWarmedUp = Seed.OpWarmedUp;
        Add(Seed.Function, Seed.Name, &Registration,
            "'" + Seed.Name + "' is registered as " + Seed.OpKind + " '" +
                Seed.OpName + "' at " + relativeLoc(Seed.Loc) +
                ": it runs under CUDA graph capture " + Seed.OpWhen,
            AnyMode, S.File, true);
        continue;
      }
      CrossReach Root;
      Root.Chain.push_back("capture begins in '" + Seed.Holder + "' at " +
                           relativeLoc(Seed.RootLoc));
      Root.ChainKeys.push_back(Seed.HolderKey);
      if (Seed.Pass) {
        if (Invokes(Seed.Pass->Invoker, Seed.Pass->Arg, false))
          Add(Seed.Pass->Callable, Seed.Pass->CallableName, &Root,
              PassStep(*Seed.Pass), Seed.Modes, S.File, false);
        continue;
      }
      Add(Seed.Function, Seed.Name, &Root,
          StepTo(Seed.Function, Seed.Name, Seed.Loc), Seed.Modes, S.File,
          false);
    }
  // Callables passed to a function that begins a capture and calls them in
  // it (`run_captured(s, work)`).
  for (const auto &[Key, F] : I.Functions)
    for (const IndexedPass &P : F.Passes)
      if (Invokes(P.Invoker, P.Arg, true)) {
        const IndexedFunction &Helper = I.Functions.find(P.Invoker)->second;
        CrossReach Root;
        Root.Chain.push_back("capture begins in '" + P.InvokerName + "' at " +
                             relativeLoc(Helper.Loc));
        Root.ChainKeys.push_back(P.Invoker);
        std::vector<std::string> Files = I.DefinedIn[P.Invoker];
        Add(P.Callable, P.CallableName, &Root, PassStep(P),
            Helper.Modes ? Helper.Modes : AnyMode,
            Files.empty() ? "" : Files.front(), false);
      }

  while (!Work.empty()) {
    std::string Key = Work.front();
    Work.pop_front();
    // A copy: adding to Reaches may not move entries (std::map), but the
    // entry itself changes when its modes grow.
    CrossReach From = I.Reaches[Key];
    // A virtual call may run every override in the project.
    if (auto OIt = Overriders.find(Key); OIt != Overriders.end())
      for (const std::string &O : OIt->second) {
        const IndexedFunction &Override = I.Functions.find(O)->second;
        CrossReach Base = From;
        Base.Chain.pop_back();
        Base.ChainKeys.pop_back();
        bool Pointer = llvm::StringRef(Key).starts_with(PointerKeyPrefix);
        Add(O, Override.Name, &Base,
            From.Chain.back() +
                (Pointer ? ", which may run '"
                         : ", a virtual call that may run '") +
                Override.Name + "' (" + relativeLoc(Override.Loc) + ")",
            From.Modes, From.RootFile, From.OpRoot);
      }
    auto FIt = I.Functions.find(Key);
    if (FIt == I.Functions.end())
      continue;
    const IndexedFunction &F = FIt->second;
    for (const IndexedCall &C : F.Calls)
      Add(C.Callee, C.Name, &From, StepTo(C.Callee, C.Name, C.Loc),
          From.Modes, From.RootFile, From.OpRoot);
    for (const IndexedPass &P : F.Passes)
      if (P.Captured && Invokes(P.Invoker, P.Arg, false))
        Add(P.Callable, P.CallableName, &From, PassStep(P), From.Modes,
            From.RootFile, From.OpRoot);
  }
  // Pointer types were steps of the walk, not functions.
  for (auto It = I.Reaches.begin(); It != I.Reaches.end();)
    if (llvm::StringRef(It->first).starts_with(PointerKeyPrefix))
      It = I.Reaches.erase(It);
    else
      ++It;
  return I;
}

//===----------------------------------------------------------------------===//
// The index file
//===----------------------------------------------------------------------===//

llvm::json::Value ProjectIndex::toJSON() const {
  llvm::json::Array Fns, Reached, Ins;
  for (const auto &[Key, F] : Functions) {
    llvm::json::Value V = cudagraph::toJSON(F);
    V.getAsObject()->insert({"defined_in", strings(DefinedIn.find(Key)->second)});
    Fns.push_back(std::move(V));
  }
  for (const auto &[Key, R] : Reaches)
    Reached.push_back(llvm::json::Object{{"key", R.Key},
                                         {"name", R.Name},
                                         {"chain", strings(R.Chain)},
                                         {"chain_keys", strings(R.ChainKeys)},
                                         {"modes", static_cast<int64_t>(R.Modes)},
                                         {"root_file", R.RootFile},
                                         {"op_root", R.OpRoot},
                                         {"op_warmed_up", R.OpWarmedUp}});
  for (const IndexInput &In : Inputs)
    Ins.push_back(cudagraph::toJSON(In));
  llvm::json::Object UnitsO;
  for (const auto &[File, Key] : Units)
    UnitsO[File] = Key;
  return llvm::json::Object{{"version", IndexFormatVersion},
                            {"units", std::move(UnitsO)},
                            {"inputs", std::move(Ins)},
                            {"functions", std::move(Fns)},
                            {"captured", std::move(Reached)}};
}

std::optional<ProjectIndex> ProjectIndex::fromJSON(const llvm::json::Value &V,
                                                   std::string &Error) {
  const llvm::json::Object *O = versioned(V, "index", Error);
  if (!O)
    return std::nullopt;
  Reader R(Error);
  ProjectIndex I;
  if (const llvm::json::Object *U = O->getObject("units"))
    for (const auto &[File, Key] : *U)
      I.Units[File.str()] = Key.getAsString().value_or("").str();
  for (const llvm::json::Value &In : R.array(*O, "inputs"))
    if (const llvm::json::Object *Obj = In.getAsObject())
      I.Inputs.push_back(R.input(*Obj));
  for (const llvm::json::Value &Fn : R.array(*O, "functions"))
    if (const llvm::json::Object *Obj = Fn.getAsObject()) {
      IndexedFunction F = R.function(*Obj);
      I.DefinedIn[F.Key] = R.strs(*Obj, "defined_in");
      std::string Key = F.Key;
      I.Functions.emplace(std::move(Key), std::move(F));
    }
  for (const llvm::json::Value &Re : R.array(*O, "captured"))
    if (const llvm::json::Object *Obj = Re.getAsObject()) {
      CrossReach C;
      C.Key = R.str(*Obj, "key");
      C.Name = R.str(*Obj, "name", false);
      C.Chain = R.strs(*Obj, "chain");
      C.ChainKeys = R.strs(*Obj, "chain_keys");
      C.Modes = R.num(*Obj, "modes", AnyMode);
      C.RootFile = R.str(*Obj, "root_file", false);
      C.OpRoot = R.flag(*Obj, "op_root");
      C.OpWarmedUp = R.flag(*Obj, "op_warmed_up");
      std::string Key = C.Key;
      I.Reaches.emplace(std::move(Key), std::move(C));
    }
  if (!R.ok())
    return std::nullopt;
  return I;
}

std::shared_ptr<const ProjectIndex> ProjectIndex::load(llvm::StringRef Path,
                                                       std::string &Error) {
  struct Loaded {
    std::string Path;
    IndexInput Stamp;
    std::shared_ptr<const ProjectIndex> Index;
  };
  static Loaded Cache;
  std::lock_guard<std::mutex> Guard(globals().Lock);
  llvm::sys::fs::file_status St;
  if (std::error_code EC = llvm::sys::fs::status(Path, St)) {
    Error = "cannot read the project index '" + Path.str() + "': " + EC.message();
    return nullptr;
  }
  int64_t MTime = llvm::sys::toTimeT(St.getLastModificationTime());
  if (Cache.Index && Cache.Path == Path && Cache.Stamp.Size == St.getSize() &&
      Cache.Stamp.MTime == MTime)
    return Cache.Index;
  std::optional<llvm::json::Value> V = readJSONFile(Path, Error);
  if (!V)
    return nullptr;
  std::optional<ProjectIndex> I = fromJSON(*V, Error);
  if (!I) {
    Error = "the project index '" + Path.str() + "' cannot be used: " + Error +
            "; rebuild it with 'cudagraph-tidy -p <build> --index'";
    return nullptr;
  }
  Cache.Path = Path.str();
  Cache.Stamp.Size = St.getSize();
  Cache.Stamp.MTime = MTime;
  Cache.Index = std::make_shared<const ProjectIndex>(std::move(*I));
  return Cache.Index;
}

const IndexedFunction *ProjectIndex::function(llvm::StringRef Key) const {
  auto It = Functions.find(Key);
  return It == Functions.end() ? nullptr : &It->second;
}

std::optional<IndexedFunction>
ProjectIndex::overriders(llvm::StringRef Key) const {
  std::optional<IndexedFunction> Agreed;
  for (const auto &[OKey, O] : Functions) {
    if (O.Event == CaptureEvent::None ||
        !llvm::is_contained(O.Overrides, Key))
      continue;
    if (Agreed && Agreed->Event != O.Event)
      return std::nullopt; // one override begins, another ends: no hook
    if (!Agreed) {
      Agreed.emplace();
      Agreed->Key = Key.str();
      Agreed->Name = O.Name;
      Agreed->Loc = O.Loc;
      Agreed->Event = O.Event;
    }
    Agreed->Modes |= O.Modes;
  }
  return Agreed;
}

const CrossReach *ProjectIndex::reach(llvm::StringRef Key) const {
  auto It = Reaches.find(Key);
  return It == Reaches.end() ? nullptr : &It->second;
}

bool ProjectIndex::definedIn(llvm::StringRef Key, llvm::StringRef File) const {
  auto It = DefinedIn.find(Key);
  return It != DefinedIn.end() && llvm::is_contained(It->second, File);
}

std::vector<std::string> ProjectIndex::changedInputs() const {
  std::vector<std::string> Changed;
  for (const IndexInput &In : Inputs) {
    llvm::sys::fs::file_status St;
    if (llvm::sys::fs::status(In.Path, St)) {
      Changed.push_back(In.Path);
      continue;
    }
    if (St.getSize() == In.Size &&
        llvm::sys::toTimeT(St.getLastModificationTime()) == In.MTime)
      continue;
    if (St.getSize() != In.Size || hashFile(In.Path) != In.Hash)
      Changed.push_back(In.Path);
  }
  return Changed;
}

//===----------------------------------------------------------------------===//
// The view of one translation unit
//===----------------------------------------------------------------------===//

const std::string &IndexView::keyOf(const FunctionDecl *FD) {
  auto [It, New] = Keys.try_emplace(FD);
  if (New)
    It->second = functionKey(FD);
  return It->second;
}

const IndexedFunction *IndexView::external(const FunctionDecl *FD) {
  const std::string &K = keyOf(FD);
  if (K.empty())
    return nullptr;
  const IndexedFunction *F = Index->function(K);
  if (!F)
    if (const auto *M = dyn_cast<CXXMethodDecl>(FD); M && M->isVirtual())
      F = overridden(K);
  if (F && F->Event != CaptureEvent::None)
    EventsUsed[K] = eventName(F->Event);
  return F;
}

const IndexedFunction *IndexView::overridden(const std::string &Key) {
  auto [It, New] = Overridden.try_emplace(Key);
  if (New)
    if (std::optional<IndexedFunction> F = Index->overriders(Key))
      It->second = std::make_unique<IndexedFunction>(std::move(*F));
  return It->second.get();
}

std::string IndexView::remoteGlobalCapture(
    std::set<std::string> &Holders) const {
  std::string First;
  for (const auto &[Key, R] : Index->reaches())
    if (!R.OpRoot && (R.Modes & ModeGlobal) && R.RootFile != MainFile &&
        !R.Chain.empty() && !R.ChainKeys.empty()) {
      if (First.empty())
        First = R.Chain.front();
      Holders.insert(R.ChainKeys.front());
    }
  return First;
}

const CrossReach *IndexView::crossReach(const FunctionDecl *FD) {
  const std::string &K = keyOf(FD);
  if (K.empty())
    return nullptr;
  const CrossReach *R = Index->reach(K);
  if (!R)
    return nullptr;
  // A chain that stays inside this unit is the local analysis's to follow
  // (with what it knows of constant arguments and warm-up calls).
  bool Crosses = R->RootFile != MainFile ||
                 llvm::any_of(R->ChainKeys, [&](const std::string &Step) {
                   return !Index->definedIn(Step, MainFile);
                 });
  return Crosses ? R : nullptr;
}

} // namespace clang::cudagraph
