//===--- FunctionFlow.h - cudagraph analysis --------------------*- C++ -*-===//
//
// Per-function capture facts. For one function and an entry state (capture
// open or not), a forward dataflow over the function's CFG gives the capture
// state before every statement: begin calls (APIs, wrappers that leave a
// capture open, guard objects) open a region, end calls close it; on CFG
// edges, capture-status tests and conditions correlated with the begin's
// guard refine the state. Function summaries (does it begin, end, return a
// capture test) come from the same flow, so wrappers nest.
//
// Functions without events or capture tests get no CFG: every statement runs
// in the entry state.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_FUNCTIONFLOW_H
#define CUDAGRAPH_ANALYSIS_FUNCTIONFLOW_H

#include "BranchFacts.h"
#include "CallSites.h"
#include "CaptureApis.h"
#include "UserCode.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <memory>
#include <optional>

namespace clang {
class ASTContext;
class CFG;
class CFGBlock;
class CXXMethodDecl;
namespace cudagraph {

struct OpRegistration;
struct CrossReach;
struct IndexedFunction;
class IndexView;

/// Where a capture region starts.
struct RegionRoot {
  enum class Kind {
    BeginApi,    // cudaStreamBeginCapture, capture_begin, a listed function
    Wrapper,     // a call of a function that leaves a capture open
    GuardObject, // a constructor that begins capture
    Listed,      // a function listed in CapturedFunctions runs captured
    OpEntry,     // a custom op or Python binding: Python may capture it
    CrossFile,   // runs under a capture of another translation unit
    OtherThread, // a thread started before a global-mode capture begins
    Entry        // the capture the caller has open (placeholder)
  };
  Kind K = Kind::BeginApi;
  SourceLocation Loc;
  const Stmt *Call = nullptr;          // the begin call or construction
  const FunctionDecl *Owner = nullptr; // where the begin is
  const FunctionDecl *Via = nullptr;   // the wrapper or guard constructor
  const OpRegistration *Op = nullptr;  // OpEntry: the registration
  const CrossReach *Cross = nullptr;   // CrossFile: the chain from the index
  const RegionRoot *Capture = nullptr; // OtherThread: the capture it overlaps
  /// CrossFile with no Cross: a global-mode capture begun in another unit
  /// (the overlapped capture of an OtherThread root), as the index names it.
  std::string RemoteBegin;
  /// OtherThread: one of the threads a loop starts, each running the code
  /// that makes Capture (a worker pool).
  bool Pool = false;
  ModeSet Modes = AnyMode;
  /// Conditions the begin ran under: the if-statements around it and the
  /// early exits before it (`if (!enabled_) return;`), with the value each
  /// has on the way to the begin (loop conditions not included).
  llvm::SmallVector<std::pair<const Expr *, bool>, 2> Conditions;
  /// Their facts, loop conditions too: an edge contradicting one of them
  /// cannot be on a path where this capture is open.
  llvm::SmallVector<GuardFact, 1> Guards;
  /// Local pointers every way to the begin dereferenced (`slot->valid`),
  /// unchanged since: not null while the capture stays open and they are
  /// not assigned (`if (capturing && slot) end(s);` ends it).
  llvm::SmallVector<const VarDecl *, 1> NonNull;

  /// The stream a begin call names as a variable or field (namedStream), or
  /// null (not a begin call, or a stream the unit cannot tell apart).
  const Decl *beginStream() const;
};

/// The capture state at a program point.
struct CaptureState {
  /// Captures that may be open here (sorted); empty: not capturing.
  llvm::SmallVector<const RegionRoot *, 2> Roots;
  /// A capture-status test says the tested stream is not capturing here:
  /// only calls that wait on every stream still matter.
  bool StreamGuarded = false;
  /// Facts learned after a capture began, each holding while that capture
  /// stays open: a local flag a branch tests, set to a constant after the
  /// begin (`begin(s); capturing = true;`).
  llvm::SmallVector<std::pair<const RegionRoot *, GuardFact>, 0> Learned;

  bool capturing() const { return !Roots.empty(); }
  bool join(const CaptureState &Other);
  bool operator==(const CaptureState &O) const;
};

struct FlowSite {
  CallSite Site;
  CaptureState State;
};

/// A call that invokes one of the function's parameters (a std::function,
/// a function pointer or reference) while capturing.
struct ParamCall {
  unsigned Param;
  SourceLocation Loc;
  CaptureState State;
};

struct FunctionFlow {
  const FunctionDecl *Function = nullptr;
  /// No events and no capture tests: every statement runs in Entry.
  bool Whole = true;
  CaptureState Entry;
  /// Entered on a thread that runs while another thread's capture is open:
  /// ending its own capture returns to Entry, not to no capture.
  bool EntryPersists = false;
  /// Before each statement of the CFG and at each branch (not Whole).
  llvm::DenseMap<const Stmt *, CaptureState> States;
  /// Calls made while capturing, with the state before the call.
  std::vector<FlowSite> Sites;
  std::vector<ParamCall> ParamCalls;
  /// Explicit returns reached with a capture of this function still open,
  /// while a later end in the function would have closed it; and catch
  /// handlers that go on with a capture of their try block open.
  std::vector<std::pair<const Stmt *, const RegionRoot *>> OpenReturns;
  /// End-capture calls given the legacy stream while a capture this
  /// function began on another stream is open: they end nothing.
  std::vector<std::pair<const CallExpr *, const RegionRoot *>> WrongStreamEnds;
  bool HasBegin = false, HasEnd = false;
  /// The state when the function returns normally.
  CaptureState Exit;

  /// The state before \p S, or null when S is not a statement of the flow.
  const CaptureState *stateAt(const Stmt *S) const;
};

/// What a function's own capture-status tests say at its statements: the
/// answers the paths reaching each statement carry. A path carries the
/// answer of the last status test it passed (`if (capturing) ...`,
/// `if (!isCapturing || !mixing) ...` on its first operand), or none.
struct StatusArms {
  enum : unsigned char { Capturing = 1, NotCapturing = 2, Untested = 4 };
  llvm::DenseMap<const Stmt *, unsigned char> At;
  /// The answers of the paths reaching \p S (0: not a statement here).
  unsigned char at(const Stmt *S) const {
    auto It = At.find(S);
    return It == At.end() ? 0 : It->second;
  }
};

struct FunctionSummary {
  /// Begin: leaves a capture open; End: ends a capture it did not begin.
  CaptureEvent Event = CaptureEvent::None;
  ModeSet Modes = 0; // of the capture a Begin leaves open
  /// Begin: the parameter that gives the capture's mode
  /// (`begin(s, mode) { cudaStreamBeginCapture(s, mode); }`), or -1.
  int ModeParam = -1;
  /// Returns an object that holds a callable ending the capture.
  bool ReturnedObjectEnds = false;
};

/// What a two-way branch at the end of \p B really tests: for `if (a && b)`
/// the block of `b` branches on `b`, not on the whole condition; null when
/// \p B does not branch two ways.
const Expr *effectiveCondition(const CFGBlock &B);
/// Whether \p B ends the program or throws (a no-return call, a throw).
bool abandonsFunction(const CFGBlock &B);
/// Calls \p Fn on every statement of \p S in source order, not descending
/// into lambdas (their bodies are functions of their own).
void forEachStmt(const Stmt *S, llvm::function_ref<void(const Stmt *)> Fn);
/// What \p S stores into, when \p S itself is a store: the left side of an
/// assignment (plain, compound, or an overloaded `operator=`, `+=`, ...) or
/// the operand of `++`/`--`; null otherwise. \p Plain, when given, says
/// whether the store is a plain `=` (its right side is then the new value).
const Expr *assignedBy(const Stmt *S, bool *Plain = nullptr);
/// Whether \p S may change \p V: a store to it (assignedBy), its address
/// taken (`cudaStreamCreate(&s)`), a non-const reference bound to it as a
/// call's argument.
bool mayChange(const Stmt *S, const VarDecl *V);
/// The same for \p S itself, not the statements inside it.
bool changesHere(const Stmt *S, const VarDecl *V);
/// Whether control never leaves \p S by falling off its end: a return, a
/// throw, break or continue, a call that does not return (`exit(1)`, a
/// check macro's failure handler), an if whose both arms do so, a block
/// holding one of these.
bool alwaysExits(const Stmt *S);
/// Whether \p S may leave the code around it: a return, throw, break,
/// continue or goto anywhere in it, or a call that does not return.
bool mayLeave(const Stmt *S);

class FlowEngine {
public:
  FlowEngine(ASTContext &Ctx, CodeClassifier &Code, const CaptureApis &Apis);
  ~FlowEngine();

  /// The event a call of \p Callee is: a capture API, or a user function
  /// whose summary begins or ends.
  CaptureEvent eventOf(const FunctionDecl *Callee);
  /// The event call \p S of \p Callee is: eventOf, except that a qualified
  /// call of a virtual method (`Base::hook(s)`) runs that method alone, not
  /// an override.
  CaptureEvent eventOfCall(const Stmt *S, const FunctionDecl *Callee);
  const FunctionSummary &summary(const FunctionDecl *Def);
  /// Whether \p FD's body calls a capture API, directly or through user
  /// functions.
  bool hasEvents(const FunctionDecl *FD);
  /// The flow of \p Def entered with no capture open, or with one open.
  /// \p Decided: what the caller's constant arguments decide about the
  /// branches of \p Def, named by \p DecidedKey for the cache.
  /// \p EntryPersists: entered with another thread's capture open (the
  /// function's own end-capture does not end it).
  const FunctionFlow &flow(const FunctionDecl *Def, bool EntryCapturing,
                           const BranchFacts *Decided = nullptr,
                           llvm::StringRef DecidedKey = "",
                           bool EntryPersists = false);
  /// Whether the conditions around \p S in \p FD (the if-conditions and
  /// early exits on the way to it) contradict a condition capture \p Root
  /// began under: `if (debug()) sync();` in a function the capture calls,
  /// where the capture runs only when `debug()` is false. \p Aliases: the
  /// variables of the begin's function FD's parameters stand for.
  bool contradictsGuards(const RegionRoot &Root, const FunctionDecl *FD,
                         const Stmt *S,
                         const ParamAliases *Aliases = nullptr);
  /// The facts the conditions around \p S in \p FD say on the way to it
  /// (loop conditions left out). False when S is not in FD's body.
  bool wayFacts(const FunctionDecl *FD, const Stmt *S,
                llvm::SmallVectorImpl<GuardFact> &Out,
                const ParamAliases *Aliases = nullptr);
  /// Every region root made so far (begins of analyzed functions).
  const std::deque<RegionRoot> &roots() const { return Roots; }
  /// The placeholder root of flows entered with a capture open.
  const RegionRoot *entryRoot() const { return &EntryRootObject; }
  /// Calls in \p FD in source order (cached; locations made visible).
  llvm::ArrayRef<CallSite> callsIn(const FunctionDecl *FD);
  /// What \p FD's boolean result says about capture.
  CaptureTest returnedTest(const FunctionDecl *FD);
  /// What \p Def's capture-status tests say at its statements; null when
  /// it tests nothing (or has no CFG).
  const StatusArms *statusArms(const FunctionDecl *Def);
  /// A call of \p FD fails in every capture mode (a host synchronization).
  bool alwaysFails(const FunctionDecl *FD);
  /// Whether \p D (a global variable or a field) records open captures: a
  /// function of the project's code that calls a begin API also adds to it
  /// (insert, push_back, `reg[k] = v`) or increments it.
  bool isRegistry(const ValueDecl *D);

  CodeClassifier &code() { return Code; }
  ASTContext &context() { return Ctx; }
  /// The functions the unit stores in function pointers, by type.
  PointerTargets &pointers() { return Pointers; }
  /// The calls of \p FD in the unit's user code, with the functions making
  /// them; a null entry when its address is taken (callers unknown).
  llvm::ArrayRef<std::pair<const FunctionDecl *, const CallExpr *>>
  callersOf(const FunctionDecl *FD);
  /// The project index, for the events of functions defined in other units.
  void setIndex(IndexView *View) { Index = View; }
  /// The unit's overrides of a virtual method (class hierarchy analysis).
  using OverridersFn =
      std::function<llvm::ArrayRef<const FunctionDecl *>(const CXXMethodDecl *)>;
  void setOverriders(OverridersFn Fn) { Overriders = std::move(Fn); }
  /// For a call of a virtual method of the project whose own body (if any)
  /// has no capture event: the definition of the override that begins or
  /// ends a capture, when every override that does agrees (a hook interface
  /// with a capturing and a no-op implementation); null otherwise.
  const FunctionDecl *capturingOverride(const FunctionDecl *Callee);

private:
  /// What the index says of \p FD, a user function without a body here.
  const IndexedFunction *external(const FunctionDecl *FD);
  class Builder;
  bool hasCaptureTests(const FunctionDecl *FD);
  bool endsThroughHolder(const VarDecl *VD);
  /// The mode argument of a begin call: the API's, or the argument a
  /// wrapper forwards as the mode of the capture it begins.
  const Expr *modeArgOf(const CallExpr *Call);
  int modeParam(const FunctionDecl *Def,
                llvm::ArrayRef<const RegionRoot *> Roots);
  /// The guard facts that hold at every call of \p FD in the unit's code
  /// (`if (!debug()) exec = capture();`), and those that hold at every
  /// call of the function making such a call (a few levels up): none when
  /// a call has none, when
  /// the function's address is taken, when it is virtual, or when a method
  /// is called on another object than the caller's own.
  void callerFacts(const FunctionDecl *FD,
                   llvm::SmallVectorImpl<GuardFact> &Out, unsigned Depth = 0);
  const RegionRoot *rootFor(const Stmt *S, const FunctionDecl *Owner,
                            const FunctionDecl *Callee, SourceLocation Loc);

  struct ReturnedTestThunk {
    FlowEngine *Engine;
    CaptureTest operator()(const FunctionDecl *FD) const {
      return Engine->returnedTest(FD);
    }
  };

  ASTContext &Ctx;
  CodeClassifier &Code;
  const CaptureApis &Apis;
  PointerTargets Pointers{Ctx, Code};
  struct RegistryThunk {
    FlowEngine *Engine;
    bool operator()(const ValueDecl *D) const { return Engine->isRegistry(D); }
  };

  ReturnedTestThunk Thunk{this};
  RegistryThunk Registry{this};
  CaptureTestClassifier Tests;
  std::optional<llvm::DenseSet<const Decl *>> Registries;
  RegionRoot EntryRootObject;
  IndexView *Index = nullptr;
  OverridersFn Overriders;
  llvm::DenseMap<const FunctionDecl *, const FunctionDecl *> OverrideCache;

  llvm::DenseMap<const FunctionDecl *, std::vector<CallSite>> CallsCache;
  enum class Tri : unsigned char { InProgress, No, Yes };
  llvm::DenseMap<const FunctionDecl *, Tri> EventsCache, TestsCache;
  llvm::DenseMap<const FunctionDecl *, CaptureTest> ReturnedTestCache;
  llvm::DenseMap<const FunctionDecl *, FunctionSummary> SummaryCache;
  llvm::DenseMap<const VarDecl *, bool> HolderCache;
  llvm::DenseMap<const FunctionDecl *, bool> FailsCache;
  llvm::DenseMap<const FunctionDecl *, std::unique_ptr<StatusArms>> ArmsCache;
  std::map<std::tuple<const FunctionDecl *, unsigned, std::string>,
           std::unique_ptr<FunctionFlow>>
      Flows;
  llvm::DenseMap<const Stmt *, const RegionRoot *> RootsByBegin;
  std::deque<RegionRoot> Roots;
  /// The calls of each user function in user code (made on first use);
  /// null entries: the function escapes (its address is taken).
  std::optional<llvm::DenseMap<const FunctionDecl *,
                               llvm::SmallVector<std::pair<const FunctionDecl *,
                                                           const CallExpr *>,
                                                 2>>>
      CallersOf;
  llvm::DenseMap<const FunctionDecl *, llvm::SmallVector<GuardFact, 2>>
      CallerFactsMemo;
};

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_FUNCTIONFLOW_H
