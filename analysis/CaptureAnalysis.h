//===--- CaptureAnalysis.h - cudagraph analysis -----------------*- C++ -*-===//
//
// Answers, once per translation unit and for every check, "can this statement
// run while a CUDA stream is being captured, under which capture, in which
// mode, and through which calls?".
//
// Layers, each using only those before it:
//   UserCode      user code vs library code, display locations, names
//   CaptureApis   begin/end APIs and modes, capture-status tests, guard facts
//   CallSites     the calls of one function body
//   FunctionFlow  per-function CFG dataflow of the capture state; summaries
//   CaptureAnalysis (this file): roots, reach, and the query contextOf
//
// Roots: every user function with capture events is analyzed with no
// capture open at entry; its regions' calls are captured. Reach: a function
// called while capturing is analyzed with a capture open at entry, once per
// set of capture modes, transitively; library functions with bodies in
// headers are walked too, and what they reach is reported at the user call
// that leads into them. Callables passed to a function that invokes them
// while capturing are reached from every call that passes them.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_CAPTUREANALYSIS_H
#define CUDAGRAPH_ANALYSIS_CAPTUREANALYSIS_H

#include "CaptureApis.h"
#include "FunctionFlow.h"
#include "OpRoots.h"
#include "ProjectIndex.h"
#include "UserCode.h"
#include "ValueFacts.h"
#include "WarmUp.h"
#include "clang/AST/DeclCXX.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
namespace cudagraph {

/// Options shared by every check.
struct CaptureOptions {
  std::string BeginFunctions;    // extra begin functions (globs)
  std::string EndFunctions;      // extra end functions (globs)
  std::string CapturedFunctions; // functions whose whole body runs captured
  std::string StatusFunctions;   // functions returning true while capturing
  /// Functions the project declares safe to run under capture (globs); the
  /// analysis does not follow calls into them. The attribute
  /// [[clang::annotate("cudagraph::capture_safe")]] says the same.
  std::string CaptureSafeFunctions;
  std::string LibraryHeaderRegex;
  /// Which registered custom ops and Python bindings run under capture:
  /// "true" (all), "false" (none), or globs of op or function names.
  std::string CustomOpRoots = "true";
  /// The project index (`cudagraph-tidy --index`); empty: the one the tool
  /// found next to the build, if any.
  std::string ProjectIndex;

  std::string key() const {
    return BeginFunctions + '\n' + EndFunctions + '\n' + CapturedFunctions +
           '\n' + StatusFunctions + '\n' + LibraryHeaderRegex + '\n' +
           CustomOpRoots + '\n' + ProjectIndex + '\n' + CaptureSafeFunctions;
  }
};

/// How a function came to run under capture: called at Site from the
/// function of Parent (or from the region of Root when Parent is null).
struct Reach {
  const FunctionDecl *Function = nullptr;
  CallSite Site;
  const Reach *Parent = nullptr;
  const RegionRoot *Root = nullptr;
  ModeSet Modes = AnyMode;
  bool InLibrary = false; // an entry into library code (Function)
  /// Reached as a callable passed at Site to Invoker, which calls it while
  /// capturing.
  const FunctionDecl *Invoker = nullptr;
  /// Constants Site passes to Function's parameters.
  Bindings Args;
  /// Function already ran on this path before the capture began (a warm-up
  /// call next to the begin, or a callee of a warmed-up function): its
  /// first-use branches are done.
  bool WarmedUp = false;
  /// Bit I: parameter I (a pointer to, or a non-const reference to, what
  /// the caller holds) designates state that outlives the call here (a
  /// global, a static local, a field, or such a parameter of the caller
  /// passed on): `ensure(&g_buf, &g_cap, n)`. Set on warmed-up reaches only.
  uint64_t OutlivingParams = 0;
  /// Other calls that reach Function the same way (same modes and
  /// arguments); the walk followed the first only.
  struct Other {
    CallSite Site;
    const Reach *Parent;
    const RegionRoot *Root;
    const FunctionDecl *Invoker;
  };
  std::vector<Other> Others;
};

/// Under which capture a statement runs.
struct CaptureContext {
  const RegionRoot *Root = nullptr;
  ModeSet Modes = AnyMode;
  /// The reach of the function containing the statement; null when the
  /// statement is in the root's own function.
  const Reach *Chain = nullptr;
  /// A capture-status test says the tested stream is not capturing.
  bool StreamGuarded = false;
  /// The streams of the captures open here when each was begun in the
  /// statement's own function on a stream it names (namedStream); empty
  /// when one is not known.
  llvm::SmallVector<const Decl *, 1> Streams;
};

/// A call that runs under capture.
struct CapturedSite {
  CallSite Site;
  CaptureContext Ctx;
  /// The user function whose call this is, or that calls into the library
  /// code holding it.
  const FunctionDecl *Function = nullptr;
  /// What constant arguments decide in Function's body (null: nothing).
  const ValueResult *Values = nullptr;
};

/// A function body, or part of it, that runs under capture.
struct CapturedScope {
  const FunctionDecl *Function = nullptr;
  const Reach *Context = nullptr; // null: the function holds the region
  const FunctionFlow *Flow = nullptr;
  /// The capture open at entry (for reached functions) and its modes.
  const RegionRoot *EntryRoot = nullptr;
  ModeSet EntryModes = 0;
  /// What the constants passed to Function decide (null: nothing).
  const ValueResult *Values = nullptr;
  /// Statements that do not run here: the branches of a function warmed up
  /// before the capture began (null: none).
  const llvm::DenseSet<const Stmt *> *Cold = nullptr;

  /// The context of a state of this scope's flow.
  CaptureContext resolve(const CaptureState &State) const;

  /// The capture \p S runs under, or nullopt when it runs outside capture.
  std::optional<CaptureContext> contextOf(const Stmt *S) const;
};

/// A return that leaves a capture of its function open.
struct OpenReturn {
  const FunctionDecl *Function;
  const Stmt *Return;
  const RegionRoot *Root;
};

/// An end-capture call on the legacy stream while a capture \p Function
/// began on another stream is open (FunctionFlow::WrongStreamEnds).
struct WrongStreamEnd {
  const FunctionDecl *Function;
  const CallExpr *End;
  const RegionRoot *Root;
};

class CaptureAnalysis {
public:
  /// The analysis of \p Ctx's translation unit, computed on first use.
  static CaptureAnalysis &get(ASTContext &Ctx, const CaptureOptions &Opts);
  /// Drops the cached analysis (at the end of each translation unit).
  static void reset();
  ~CaptureAnalysis();

  llvm::ArrayRef<CapturedSite> sites() const { return Sites; }
  /// Calls made on another thread while a global-mode capture of this
  /// thread may be open (not captured: only calls the capture prohibits
  /// from any thread matter there).
  llvm::ArrayRef<CapturedSite> threadSites() const { return ThreadSites; }
  llvm::ArrayRef<CapturedScope> scopes() const { return Scopes; }
  llvm::ArrayRef<OpenReturn> openReturns() const { return OpenReturns; }
  llvm::ArrayRef<WrongStreamEnd> wrongStreamEnds() const {
    return WrongStreamEnds;
  }

  /// The capture \p S (a statement of \p FD) runs under, in any context FD
  /// is analyzed in; nullopt when it never runs under capture.
  std::optional<CaptureContext> contextOf(const FunctionDecl *FD,
                                          const Stmt *S) const;

  /// Whether \p Site uses \p H in one arm of a per-value choice whose
  /// other arm does the work in a capture-safe form, and no constant
  /// argument fixes the choice.
  bool choosesSafeForm(const CapturedSite &Site, const Hazard &H);

  ASTContext &context() const { return Ctx; }
  CodeClassifier &code() { return Code; }
  /// User functions with bodies (instantiations and lambdas included).
  llvm::ArrayRef<const FunctionDecl *> userFunctions() const {
    return UserFunctions;
  }
  /// The registered ops CustomOpRoots selects; with \p WithDeclared, also
  /// those whose function is defined in another unit.
  std::vector<OpRegistration> selectedOps(bool WithDeclared);
  /// The project index as this unit sees it (null: no index).
  IndexView *indexView() { return Index.get(); }
  /// Why the project index could not be used (empty: it could, or none).
  const std::string &indexError() const { return IndexError; }
  FlowEngine &flows() { return *Flows; }
  bool isUserLocation(SourceLocation Loc) const {
    return Code.isUserLocation(Loc);
  }
  SourceLocation visibleLoc(SourceLocation Loc) const {
    return Code.visibleLoc(Loc);
  }
  llvm::StringRef nameOf(const FunctionDecl *FD) { return Code.nameOf(FD); }
  /// Whether \p FD works with libtorch (at::, c10::, torch:: names), so
  /// advice is given in its terms.
  bool isLibtorchCode(const FunctionDecl *FD);
  /// Whether \p FD is declared safe to run under capture (the
  /// CaptureSafeFunctions option or the cudagraph::capture_safe annotation):
  /// calls into it are not followed.
  bool isCaptureSafe(const FunctionDecl *FD);
  /// Whether \p D, a stream variable or field, is a stream no capture of
  /// this unit includes: the unit creates it (`cudaStreamCreate*(&d, ...)`,
  /// `cuStreamCreate*`) and nothing else writes it; it is never made to wait
  /// on an event nor given to a begin; and it is passed only to CUDA,
  /// library and NCCL APIs (not to functions that could do either).
  bool isIsolatedStream(const Decl *D);
  /// Whether \p Root is a capture begun with the raw CUDA API
  /// (cudaStreamBeginCapture, cuStreamBeginCapture, directly or in a begin
  /// wrapper) while no libtorch memory pool is registered for it: neither
  /// the function holding the begin nor the wrapper calls
  /// beginAllocateToPool (or another `*AllocateToPool` registration).
  bool beginsWithoutPool(const RegionRoot *Root);
  /// Whether \p Call names a stream that is not capturing while the
  /// captures of \p Ctx are open: a stream variable or field of another
  /// name than each capture's (CaptureContext::Streams), all of them made
  /// by a stream-create call of the unit and never assigned.
  bool onIdleStream(const CallExpr *Call, const CaptureContext &Ctx);

private:
  CaptureAnalysis(ASTContext &Ctx, const CaptureOptions &Opts);
  void run();
  void collectUserFunctions();
  /// Runs the reached functions' flows until no new reach appears.
  void drain();
  /// Whether CustomOpRoots turns op roots on (clearing it, on the first
  /// call, when it names no pattern, only "all").
  bool opRootsEnabled();
  void addScope(const CapturedScope &Scope);
  void addSite(const CallSite &Site, const CaptureContext &Ctx,
               const FunctionDecl *Function, const ValueResult *Values);
  void reach(const FunctionDecl *Def, const CallSite &Site,
             const CaptureContext &Ctx, const FunctionDecl *Invoker = nullptr,
             Bindings Args = Bindings());
  void reachPassedCallables();
  /// Roots the functions of this unit that the index says run under a
  /// capture of another unit.
  void addCrossFileRoots();
  /// Roots the functions of threads started before a global-mode capture
  /// begins and not joined before it.
  void addOtherThreadRoots();
  /// Whether some capture reaches \p FD already.
  bool isReached(const FunctionDecl *FD) const;
  void addSiblingThreadRoots(
      const llvm::DenseSet<const Stmt *> &Started,
      llvm::function_ref<void(const FunctionDecl *, const CallSite &,
                              const FunctionDecl *, const RegionRoot *)>
          StartThread);
  /// A global-mode (or unknown-mode) begin that \p FD makes itself or
  /// through the user functions and callables it calls, at any depth.
  /// \p Cut is set when the search met a function still being searched
  /// (recursion) without finding one: the answer is not final.
  const RegionRoot *globalBeginUnder(const FunctionDecl *FD,
                                     unsigned Depth = 0,
                                     bool *Cut = nullptr);
  llvm::DenseMap<const FunctionDecl *, const RegionRoot *> BeginUnderMemo;
  llvm::DenseSet<const FunctionDecl *> BeginUnderActive;
  const RegionRoot *otherGlobalBegin(llvm::ArrayRef<const RegionRoot *> Begins,
                                     const FunctionDecl *Def);
  /// Calls \p Fn on each user function \p FD calls on its own thread (calls
  /// and callables it runs; not a callable it starts a thread with) until
  /// \p Fn returns true. Returns whether it did.
  /// Whether \p Def calls, on its own thread and at any depth through the
  /// user functions with bodies here, a function whose key is in \p Keys.
  bool callsAnyOf(const FunctionDecl *Def, const std::set<std::string> &Keys);
  bool anySameThreadCallee(const FunctionDecl *FD,
                           llvm::function_ref<bool(const FunctionDecl *)> Fn);
  /// The variable holding the stream \p Root's begin captures
  /// (`cudaStreamBeginCapture(stream, ...)`), or null.
  const Decl *capturedStream(const RegionRoot *Root);
  /// The member facts of beganUnder(\p Root) that still hold at \p Site, a
  /// call \p Function (which made the begin) makes while the capture is
  /// open: a method called on the object between the begin and the call (a
  /// setter) may have changed them.
  Bindings heldAt(const RegionRoot *Root, const FunctionDecl *Function,
                  const CallSite &Site);
  /// What the conditions \p Root's begin ran under fix about the members
  /// of the object its function runs on, and the captured stream when it
  /// is a member (set: a capture never runs on stream 0).
  const Bindings &beganUnder(const RegionRoot *Root);
  /// Flags of the object that \p Root's function sets to a constant after
  /// the capture's end and not before it (`use_graph_ = true;` right after
  /// `cudaStreamEndCapture`): while the capture is open they still hold
  /// the other value. Added to \p Facts unless it knows the member.
  void setAfterEnd(const RegionRoot *Root, Bindings &Facts);
  llvm::DenseMap<const RegionRoot *, Bindings> BeganUnderMemo;
  /// Streams the unit creates, those it may join to a capture or write
  /// otherwise (isIsolatedStream), and those it assigns or initializes
  /// from a value (onIdleStream), found on first use.
  struct StreamUseSets {
    llvm::DenseSet<const Decl *> Created, Joinable, Assigned;
  };
  std::optional<StreamUseSets> StreamUses;
  const StreamUseSets &streamUses();
  void pushSite(const CapturedSite &Site);
  /// Whether the function holding \p Root's begin (or the begin wrapper)
  /// calls \p Def before the capture begins.
  bool warmedUpBefore(const RegionRoot *Root, const FunctionDecl *Def);
  /// A registered op or binding (here or, through the index, in another
  /// unit): Python may capture it, or may not.
  static bool isOpRoot(const RegionRoot *Root);
  /// Whether \p Def times its own work on every call (an elapsed-time
  /// query outside any branch): a benchmark, never captured.
  bool timesItsWork(const FunctionDecl *Def);
  llvm::DenseMap<const FunctionDecl *, bool> TimesWork;
  /// Whether a method of \p Class or of a base class begins or ends a
  /// capture itself: an
  /// object that records its own graphs, whose bound methods Python calls
  /// eagerly rather than inside a capture of its own.
  bool capturesItself(const CXXRecordDecl *Class);
  llvm::DenseMap<const CXXRecordDecl *, bool> CapturingClasses;
  /// Whether \p FD runs, through any chain of calls, from a call the
  /// function holding \p Root's begin makes before the begin (so a static
  /// local's initializer in it has run when the capture begins).
  /// ... or from what every caller of that function runs before its call.
  bool ranBefore(const RegionRoot *Root, const FunctionDecl *FD);
  /// Adds to \p Ran the functions the calls of \p Holder that \p Take
  /// selects run, through any chain.
  void reachFrom(const FunctionDecl *Holder,
                 llvm::function_ref<bool(const CallSite &)> Take,
                 llvm::DenseSet<const FunctionDecl *> &Ran);
  llvm::DenseMap<const RegionRoot *, llvm::DenseSet<const FunctionDecl *>>
      PreBeginReach;
  llvm::DenseMap<const FunctionDecl *, llvm::DenseSet<const FunctionDecl *>>
      CallerPreBeginReach;
  static constexpr unsigned MaxPreBeginFunctions = 4096;
  /// User overrides of \p M a virtual call of it may dispatch to.
  llvm::ArrayRef<const FunctionDecl *> overridersOf(const CXXMethodDecl *M);
  /// Polymorphic library classes the unit's user code makes (constructs,
  /// news, make_shared/make_unique).
  llvm::ArrayRef<const CXXRecordDecl *> constructedLibraryClasses();
  struct LibrarySite {
    CallSite Site;
    bool StreamGuarded;
    /// Runs only on some paths through the library (under a branch or in
    /// a loop there): depends on library state the user cannot see, so a
    /// hazard here is not reported at the user's call.
    bool Conditional;
  };
  /// The statements of \p FD's body that run only on some paths.
  const llvm::DenseSet<const Stmt *> &conditionalStmts(const FunctionDecl *FD);
  /// The statements of \p FD's branches that a warm-up of it took (see
  /// WarmUpModel): first uses and cache misses.
  /// \p Outliving: the parameters whose referents outlive the call
  /// (Reach::OutlivingParams).
  const llvm::DenseSet<const Stmt *> &firstUseStmts(const FunctionDecl *FD,
                                                    uint64_t Outliving);
  /// Every call inside the library code that \p Def (a library function)
  /// reaches, following library callees up to a depth limit.
  llvm::ArrayRef<LibrarySite> librarySites(const FunctionDecl *Def);

  ASTContext &Ctx;
  CodeClassifier Code;
  WarmUpModel WarmUp{Code};
  CaptureApis Apis;
  std::unique_ptr<FlowEngine> Flows;
  ValueFacts Values;
  NamePatterns CapturedPatterns;
  NamePatterns SafePatterns;
  llvm::DenseMap<const FunctionDecl *, bool> LibtorchCache;
  std::optional<llvm::DenseMap<const CXXMethodDecl *,
                               std::vector<const FunctionDecl *>>>
      Overriders;
  std::optional<std::vector<const CXXRecordDecl *>> MadeLibraryClasses;

  std::vector<const FunctionDecl *> UserFunctions;
  std::deque<Reach> Reaches;
  std::deque<RegionRoot> ListedRoots;
  std::vector<OpRegistration> Ops;
  std::string OpRootsSpec;
  bool OpRootsDecided = false, OpRootsOn = false;
  std::unique_ptr<IndexView> Index;
  std::string IndexError;
  /// Reaches by function, modes, constant arguments and warm-up.
  std::map<std::tuple<const FunctionDecl *, ModeSet, std::string>, Reach *>
      Reached;
  /// How many argument bindings each function and mode set was reached with.
  llvm::DenseMap<std::pair<const FunctionDecl *, ModeSet>, unsigned> Variants;
  std::deque<const Reach *> Worklist;
  /// Functions that invoke a parameter while capturing, and the context.
  struct ParamInvocation {
    const FunctionDecl *Function;
    unsigned Param;
    CaptureContext Ctx;
  };
  std::vector<ParamInvocation> ParamInvocations;
  llvm::DenseMap<const FunctionDecl *, std::vector<LibrarySite>> LibraryCache;
  /// Boxed: scopes keep pointers to these sets while the map grows.
  llvm::DenseMap<const FunctionDecl *,
                 std::unique_ptr<llvm::DenseSet<const Stmt *>>>
      ConditionalCache;
  llvm::DenseMap<std::pair<const FunctionDecl *, uint64_t>,
                 std::unique_ptr<llvm::DenseSet<const Stmt *>>>
      FirstUseCache;
  std::vector<CapturedSite> Sites, ThreadSites;
  std::vector<CapturedScope> Scopes;
  std::vector<OpenReturn> OpenReturns;
  std::vector<WrongStreamEnd> WrongStreamEnds;
  llvm::DenseMap<const FunctionDecl *, std::vector<unsigned>> ScopesByFunction;
};

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_CAPTUREANALYSIS_H
