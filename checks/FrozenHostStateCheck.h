//===--- FrozenHostStateCheck.h - cudagraph-tidy ----------------*- C++ -*-===//
//
// cudagraph-frozen-host-state: host state the graph freezes at capture time
// and the program changes before a replay.
//
// A captured call keeps what its arguments were when it was captured: the
// storage a tensor or a pointer variable named (reassigned-static-input) and
// the value of a host scalar passed by value (frozen-host-scalar). The check
// gathers, per capture, the variables and fields that captured work reads
// (and that the capture does not write itself), then runs a forward dataflow
// over each user function that changes one of them and replays a graph: a
// change that reaches a replay of that graph, with no new capture, graph
// reset or executable update in between, is reported at the change. A local
// of the function holding the capture counts only after the capture. For the
// user-facing documentation see docs/checks/frozen-host-state.md.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_FROZENHOSTSTATECHECK_H
#define CUDAGRAPH_TIDY_FROZENHOSTSTATECHECK_H

#include "CaptureApis.h"
#include "CudaGraphCheck.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include <map>
#include <set>

namespace clang::tidy::cudagraph {

class FrozenHostStateCheck : public CudaGraphCheck {
public:
  FrozenHostStateCheck(StringRef Name, ClangTidyContext *Context);

protected:
  void checkCapture(CaptureAnalysis &Analysis) override;

public:
  /// TensorOwner: an object of a class of the project that owns a tensor
  /// (`NSL::Tensor`, a field of `at::Tensor` its methods hand to libtorch).
  enum class ValueKind { Tensor, TensorList, Pointer, Scalar, TensorOwner };

  /// A variable or field that captured work reads.
  struct CapturedRead {
    const Decl *Storage = nullptr;
    ValueKind Kind = ValueKind::Scalar;
    const CapturedSite *Site = nullptr;
    const Expr *Use = nullptr;
    /// The struct variable a member read belongs to (`p` of `p.alpha`).
    const VarDecl *Object = nullptr;
  };

  /// The graph a capture records into, or a replay launches.
  struct GraphRef {
    enum class Flavour { Unknown, Torch, Raw } F = Flavour::Unknown;
    /// The CUDAGraph object (Torch), the cudaGraph_t (a Raw capture) or the
    /// executable (a Raw launch); null: not known.
    const Decl *Key = nullptr;
    /// The expression that selects the graph (`graphs[bs]`, `exec`).
    const Expr *Via = nullptr;
  };

  /// What calling a user function does to the graphs.
  struct Summary {
    bool Captures = false;
    bool Kills = false;
    std::vector<GraphRef> Replays;
    /// Frees of pointers a graph reads, outside capture (`cudaFree(d_in_)`
    /// in a buffer-growing helper), and the storages the call assigns.
    std::vector<std::pair<const Stmt *, const Decl *>> Releases;
    llvm::SmallVector<const Decl *, 4> Writes;
  };

  struct Finding {
    const Stmt *Change;
    const RegionRoot *Root;
    const Stmt *Replay;
    /// The variable a release frees or ends (null for changes).
    const Decl *Released = nullptr;
    /// The call of the helper that frees it (null: freed here).
    const CallExpr *Via = nullptr;
    /// The replay is the one this function makes on its next call (the
    /// change comes after it: `launch(exec); cur = 1 - cur;`).
    bool NextCall = false;
  };

  /// A replay call in user code.
  struct ReplaySite {
    const CallExpr *Call = nullptr;
    GraphRef Graph;
    const FunctionDecl *Function = nullptr;
  };

private:
  void collectReads(CaptureAnalysis &Analysis);
  void collectGraphs(CaptureAnalysis &Analysis);
  void checkFunction(CaptureAnalysis &Analysis, const FunctionDecl *FD);
  void report(CaptureAnalysis &Analysis, const FunctionDecl *FD,
              const Finding &F);

  /// Whether a graph reads the pointer held in \p Storage.
  bool readsPointer(const Decl *Storage) const;
  /// Whether branch condition \p Cond decides whether the graph still fits
  /// after \p Call, whose callee frees a buffer the graph reads: it tests
  /// the call's result, a storage the callee assigns, or every local and
  /// parameter the call's arguments are computed from.
  bool decidesAfter(CaptureAnalysis &Analysis, const FunctionDecl *FD,
                    const Stmt *Cond, const CallExpr *Call);
  /// Whether a replay of \p Replay may launch what \p Root captured.
  bool mayReplay(const RegionRoot *Root, const GraphRef &Replay) const;
  /// Whether \p Replay names the graph \p Root captured (both known).
  bool replaysCaptured(const RegionRoot *Root, const GraphRef &Replay) const;
  /// A replay, outside \p Except, of what \p Root captured (null: none).
  const ReplaySite *replayElsewhere(const RegionRoot *Root,
                                    const FunctionDecl *Except) const;
  void reportRelease(CaptureAnalysis &Analysis, const FunctionDecl *FD,
                     const Finding &F);
  /// The note at the replay a finding of \p FD leads to.
  void replayNote(CaptureAnalysis &Analysis, const FunctionDecl *FD,
                  const Finding &F);
  /// Locals made anew on every call that a capture the function skips on
  /// later calls reads (per-call-input).
  void checkPerCallInputs(CaptureAnalysis &Analysis);
  /// Parameters of a capturing function that captured work reads by value,
  /// where the capture runs only for some values of the parameter and the
  /// function replays the graph under a test that rules them out
  /// (`if (pos == 0) capture(); else if (pos > 0) replay();`).
  void checkPinnedParameters(CaptureAnalysis &Analysis);
  /// Whether \p Call replays what \p Root captured (itself, or a callee
  /// that replays it).
  bool replaysRoot(CaptureAnalysis &Analysis, const RegionRoot *Root,
                   const CallExpr *Call);
  /// Captured calls of library functions that compute on the host what
  /// their kernels use (the catalog's Callee entries of this check).
  void checkHostComputedCalls(CaptureAnalysis &Analysis);
  const Summary &summaryOf(CaptureAnalysis &Analysis, const FunctionDecl *FD,
                           unsigned Depth = 0);

public:
  /// Replay, kill (reset, destroy, executable update) and begin calls.
  bool isBegin(CaptureAnalysis &Analysis, const CallExpr *Call) const;
  bool isKill(CaptureAnalysis &Analysis, const CallExpr *Call) const;
  std::optional<GraphRef> replayOf(CaptureAnalysis &Analysis,
                                   const CallExpr *Call) const;

  /// Reads by storage (canonical declaration), in site order.
  std::map<const Decl *, std::vector<CapturedRead>> Reads;
  /// Every captured read of a scalar parameter, one per site (Reads keeps
  /// the first per capture).
  std::map<const Decl *, std::vector<CapturedRead>> ParamReads;
  /// Local variables whose address captured work was given (`v.data()`,
  /// `&x`, an array): the graph reads or writes them at every replay.
  std::map<const Decl *, std::vector<CapturedRead>> AddressReads;
  llvm::DenseMap<const Stmt *, const RegionRoot *> RootsByBegin;
  llvm::DenseSet<const FunctionDecl *> RootOwners;

private:
  CaptureApis Apis;
  const Hazard *Reassigned = nullptr;
  const Hazard *Scalar = nullptr;
  const Hazard *Freed = nullptr;
  const Hazard *PerCall = nullptr;
  std::vector<Hazard> CalleeHazards;
  std::vector<ReplaySite> ReplaySites;
  std::map<const RegionRoot *, GraphRef> RootGraphs;
  /// Raw executables and the graphs instantiated into them (null: a graph
  /// the check cannot name).
  llvm::DenseMap<const Decl *, llvm::SmallVector<const Decl *, 1>> ExecGraphs;
  llvm::DenseMap<const FunctionDecl *, Summary> Summaries;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_FROZENHOSTSTATECHECK_H
