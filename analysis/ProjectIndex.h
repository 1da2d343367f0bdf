//===--- ProjectIndex.h - cudagraph analysis --------------------*- C++ -*-===//
//
// Facts that cross translation units. One analysis sees one translation
// unit; a capture begun in a.cu that calls a helper defined in b.cu, a custom
// op registered in one file and defined in another, or a capture wrapper
// exported from a library file are invisible to it. The index carries them:
//
//   summary  one per translation unit, written by `cudagraph-tidy --index`:
//            for every user function defined there (keyed by USR) its
//            capture event (begins, ends, returns a capture test), the user
//            functions it calls while a capture is open at its entry, the
//            parameters it invokes (capture helpers), the callables it passes
//            on, the virtual methods it overrides, the catalog hazards its own
//            calls use when it runs under capture; and the seeds: calls made
//            inside the unit's own capture regions, and registered custom
//            ops. Summaries hold local facts only, so they are produced in
//            parallel and independently, like object files.
//   index    the summaries merged: every function that runs under capture
//            from a root in another unit, with the chain that leads there,
//            plus the events of every function, for callers in other units.
//
// An analysis reads the index for two things: the events of functions it
// has no body for (an end wrapper in another file closes the region), and
// the functions of its own unit that run under capture from elsewhere
// (analyzed as roots, with the chain in a note).
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_PROJECTINDEX_H
#define CUDAGRAPH_ANALYSIS_PROJECTINDEX_H

#include "CaptureApis.h"
#include "clang/AST/Decl.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace clang::cudagraph {

class CaptureAnalysis;

/// Version of the summary and index formats; files of another version are
/// rebuilt.
inline constexpr int IndexFormatVersion = 4;

/// The key of a function across translation units: the USR of its template
/// pattern (for instantiations) or of itself. Empty when it has none.
std::string functionKey(const FunctionDecl *FD);

/// The key of a function pointer type across translation units: a call
/// through one may run every function stored as one (listed as overriding
/// it, like a virtual method).
inline constexpr llvm::StringLiteral PointerKeyPrefix = "fnptr:";

/// A file a summary was made from, to tell when it changed.
struct IndexInput {
  std::string Path;
  uint64_t Size = 0;
  int64_t MTime = 0;
  uint64_t Hash = 0;
};

/// A call made while capturing, by function key.
struct IndexedCall {
  std::string Callee, Name, Loc;
};

/// A callable passed to a function that may invoke it.
struct IndexedPass {
  std::string Invoker, InvokerName;
  unsigned Arg = 0; // the invoker's parameter
  std::string Callable, CallableName, Loc;
  bool Captured = false; // passed while a capture is open at its entry
};

/// A catalog hazard a function's own body uses while a capture is open at
/// its entry.
struct IndexedHazard {
  std::string Id, Loc;
};
/// The cross-unit facts of one function.
struct IndexedFunction {
  std::string Key, Name, Loc;
  CaptureEvent Event = CaptureEvent::None;
  ModeSet Modes = 0;
  bool ReturnedObjectEnds = false;
  CaptureTest Test = CaptureTest::Unknown;
  bool Virtual = false;
  /// Calls of user functions made while a capture is open at entry.
  std::vector<IndexedCall> Calls;
  /// Parameters invoked while a capture is open at entry, and while its own
  /// region is open.
  std::vector<unsigned> Invokes, InvokesInRegion;
  std::vector<IndexedPass> Passes;
  std::vector<std::string> Overrides;
  /// Hazards its calls use when it runs under capture.
  std::vector<IndexedHazard> Hazards;
};

/// Something a unit runs under capture: a call inside one of its regions, or
/// a registered op.
struct IndexedSeed {
  enum class Kind { Region, Op };
  Kind K = Kind::Region;
  std::string Function, Name, Loc;
  /// Region: the function holding the region and where the capture begins;
  /// Op: the op's name, registration kind, and when it runs under capture.
  std::string Holder, HolderKey, RootLoc, OpName, OpKind, OpWhen;
  /// Op: the program runs it eagerly before it captures it.
  bool OpWarmedUp = false;
  ModeSet Modes = AnyMode;
  /// Region seeds may pass a callable to Function rather than call it.
  std::optional<IndexedPass> Pass;
};

/// One translation unit's summary.
struct TuSummary {
  std::string File, Key;
  std::vector<IndexInput> Inputs;
  std::vector<IndexedFunction> Functions;
  std::vector<IndexedSeed> Seeds;
  /// User functions called here but defined elsewhere, and the events the
  /// index gave them when this summary was made.
  std::vector<std::string> Externs;
  std::map<std::string, std::string> EventsUsed;
  bool CompileErrors = false;
};

/// The summary of \p A's translation unit.
TuSummary summarize(CaptureAnalysis &A);
llvm::json::Value toJSON(const TuSummary &S);
std::optional<TuSummary> readSummary(llvm::StringRef Path, std::string &Error);
bool writeJSONFile(llvm::StringRef Path, const llvm::json::Value &V,
                   std::string &Error);

/// How a function comes to run under capture from another unit.
struct CrossReach {
  std::string Key, Name;
  /// The steps from the root: the first is where the capture begins (or
  /// the op's registration), each next one a call ("name (file:line)").
  std::vector<std::string> Chain;
  ModeSet Modes = 0;
  /// The functions of the chain, by key (the root's holder first).
  std::vector<std::string> ChainKeys;
  /// The translation unit holding the root.
  std::string RootFile;
  bool OpRoot = false;
  /// OpRoot: the op runs eagerly before it is captured (a warm-up).
  bool OpWarmedUp = false;
};

/// The merged index of a project.
class ProjectIndex {
public:
  /// The index at \p Path, loaded once per process and reloaded when the
  /// file changes; null (with \p Error set) when it cannot be read.
  static std::shared_ptr<const ProjectIndex> load(llvm::StringRef Path,
                                                  std::string &Error);
  /// Merges \p Summaries into an index.
  static ProjectIndex merge(const std::vector<TuSummary> &Summaries);
  llvm::json::Value toJSON() const;
  static std::optional<ProjectIndex> fromJSON(const llvm::json::Value &V,
                                              std::string &Error);

  const IndexedFunction *function(llvm::StringRef Key) const;
  /// What the overrides of virtual method \p Key (one without a body in the
  /// index) agree on: the capture event those that begin or end share, with
  /// their modes; none when none does or they disagree.
  std::optional<IndexedFunction> overriders(llvm::StringRef Key) const;
  /// Every function, by key.
  const std::map<std::string, IndexedFunction, std::less<>> &
  functions() const {
    return Functions;
  }
  /// Every function that runs under capture from some root, by key.
  const std::map<std::string, CrossReach, std::less<>> &reaches() const {
    return Reaches;
  }
  const CrossReach *reach(llvm::StringRef Key) const;
  /// Whether \p Key is defined in the unit of \p File.
  bool definedIn(llvm::StringRef Key, llvm::StringRef File) const;
  /// The files the index was built from with what they held then.
  const std::vector<IndexInput> &inputs() const { return Inputs; }
  const std::map<std::string, std::string> &units() const { return Units; }

  /// Inputs changed since the index was built (by size and time, then
  /// content).
  std::vector<std::string> changedInputs() const;

private:
  std::map<std::string, IndexedFunction, std::less<>> Functions;
  std::map<std::string, CrossReach, std::less<>> Reaches;
  std::map<std::string, std::vector<std::string>, std::less<>> DefinedIn;
  std::vector<IndexInput> Inputs;
  std::map<std::string, std::string> Units; // file -> summary key
};

/// What one translation unit's analysis asks of the index, cached per
/// declaration.
class IndexView {
public:
  IndexView(std::shared_ptr<const ProjectIndex> Index, std::string MainFile)
      : Index(std::move(Index)), MainFile(std::move(MainFile)) {}
  const ProjectIndex &index() const { return *Index; }
  /// The index's facts about \p FD (a function without a body here). For a
  /// virtual method the index has no body of (an interface's pure virtual
  /// `beginCapture()`), the capture event its overrides in the project agree
  /// on, with their modes: the call may run any of them.
  const IndexedFunction *external(const FunctionDecl *FD);
  /// How \p FD (defined here) runs under capture from another unit.
  const CrossReach *crossReach(const FunctionDecl *FD);
  /// Where a capture that may be in global mode begins in another unit
  /// ("holder (file:line)"), or empty when the index knows none: a thread
  /// this unit starts may run while it is open. \p Holders receives the
  /// keys of every function of another unit holding such a capture.
  std::string remoteGlobalCapture(std::set<std::string> &Holders) const;
  const std::string &keyOf(const FunctionDecl *FD);
  /// The events used so far, for the summary.
  const std::map<std::string, std::string> &eventsUsed() const {
    return EventsUsed;
  }

private:
  std::shared_ptr<const ProjectIndex> Index;
  std::string MainFile;
  const IndexedFunction *overridden(const std::string &Key);

  llvm::DenseMap<const FunctionDecl *, std::string> Keys;
  std::map<std::string, std::string> EventsUsed;
  /// Virtual methods without a body in the index: what their overrides
  /// agree on (null when nothing).
  std::map<std::string, std::unique_ptr<IndexedFunction>> Overridden;
};

/// The index the tool found next to the build (used when no ProjectIndex
/// option is given), and where summaries go in `--index` runs.
void setDefaultProjectIndex(std::string Path);
const std::string &defaultProjectIndex();
void setSummaryOutput(std::string Path, std::string Key);
const std::string &summaryOutput();
const std::string &summaryKey();

/// \p Path made absolute, without `.` and `..`: how the index names files.
std::string normalPath(llvm::StringRef Path);

/// Hash of a file's content (0 when it cannot be read).
uint64_t hashFile(llvm::StringRef Path);
/// The input record of \p Path as it is now.
IndexInput currentInput(llvm::StringRef Path);

const char *eventName(CaptureEvent E);

/// \p Text with absolute paths under the current directory made relative.
std::string shortenPaths(llvm::StringRef Text);

} // namespace clang::cudagraph

#endif // CUDAGRAPH_ANALYSIS_PROJECTINDEX_H
