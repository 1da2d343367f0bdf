//===--- HazardMatch.h - cudagraph analysis ---------------------*- C++ -*-===//
//
// Decides whether one call is a use of a catalog hazard, in the capture
// modes it runs under.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_HAZARDMATCH_H
#define CUDAGRAPH_ANALYSIS_HAZARDMATCH_H

#include "CallSites.h"
#include "CaptureApis.h"
#include "HazardCatalog.h"
#include "UserCode.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ParentMap.h"
#include "llvm/ADT/SmallVector.h"
#include <functional>

namespace clang::cudagraph {

/// An argument a call on the chain leading to a match passes for a
/// parameter, and the chain level of the function that call is written in
/// (NoLevel: that caller's own callers are not followed).
struct PassedArgument {
  const Expr *Arg = nullptr;
  unsigned Level = 0;
};
constexpr unsigned NoLevel = ~0u;
/// For a parameter \p P of the function at chain level \p Level or above
/// (level 0 holds the matched call; each level up is its caller), the
/// arguments the calls into P's function on that chain pass for it. False
/// when no call into P's function is on the chain.
using ArgumentsFn = std::function<bool(const ParmVarDecl *P, unsigned Level,
                                       llvm::SmallVectorImpl<PassedArgument> &)>;

/// Where a call runs: the capture modes it may run in, and whether a
/// capture-status test says its stream is not capturing.
struct MatchContext {
  ModeSet Modes = AnyMode;
  bool StreamGuarded = false;
  /// Stream 0 means the per-thread default stream in this translation unit
  /// (`--default-stream per-thread`, CUDA_API_PER_THREAD_DEFAULT_STREAM).
  bool PerThreadDefaultStream = false;
  /// The call runs on a thread that may run during another thread's
  /// global-mode capture (not on the capturing thread).
  bool OtherThread = false;
  /// The calls that led here, for what a parameter holds (may be empty).
  ArgumentsFn Arguments;
  /// Whether a stream variable or field is one no capture of the unit
  /// includes (may be empty: none known).
  std::function<bool(const Decl *)> IsolatedStream;
  /// The capture was begun with the raw CUDA API and no libtorch memory
  /// pool is registered for it: libtorch allocates from its shared pool.
  bool PoollessCapture = false;
};

/// Whether \p Call, a CUB two-phase algorithm, is given no temporary
/// storage (a null constant, or a local still holding its null
/// initializer), so that it only computes the size it needs.
bool asksTemporaryStorageSize(const CallExpr *Call, ASTContext &Ctx);


/// Whether \p S makes a libtorch stream current: a CUDAStreamGuard or
/// OptionalCUDAStreamGuard variable, a setCurrentCUDAStream call. \p Stream
/// is the stream it names (null for a guard made without one).
bool makesStreamCurrent(const Stmt *S, const Expr *&Stream);

/// The closest statement before \p S, in a block enclosing it within the
/// body \p PM maps, that makes a stream current (makesStreamCurrent), and
/// its stream in \p Stream; false when there is none.
bool currentStreamBefore(const Stmt *S, const ParentMap &PM,
                         const Expr *&Stream);

/// Whether \p Value is the legacy default stream in a translation unit
/// whose default stream is per-thread or not.
inline bool isLegacyStream(StreamValue Value, bool PerThreadDefault) {
  return Value == StreamValue::Legacy ||
         (Value == StreamValue::Default && !PerThreadDefault);
}

/// The expression that makes the stream \p E the legacy default stream in
/// \p Where: \p E itself when it is 0, nullptr or cudaStreamLegacy, or, for
/// a stream parameter its function never changes, the argument a call on
/// the chain (from level \p Level up) passes for it (`launch(0, ...)` for
/// `launch`'s `k<<<g, b, 0, stream>>>`). Null when it is not known to be.
const Expr *legacyStreamOrigin(const Expr *E, const ASTContext &Ctx,
                               const MatchContext &Where, unsigned Level = 0,
                               unsigned Depth = 0);

/// The first hazard in \p Hazards that \p Site uses in \p Where, or null.
const Hazard *matchHazard(CodeClassifier &Code, llvm::ArrayRef<Hazard> Hazards,
                          const CallSite &Site,
                          const MatchContext &Where = MatchContext());

/// Whether \p T is at::Tensor or at::TensorBase (or a reference to one).
bool isTensorType(QualType T);

/// Whether \p M is a tensor method that reads only the tensor's metadata,
/// known on the host without the device: dim, size(s), numel, strides,
/// dtype, defined, is_contiguous, ...
bool isTensorMetadataQuery(const CXXMethodDecl *M);

/// True for a tensor copy to the CPU that does not pass non_blocking=true.
bool isBlockingHostCopy(const CallExpr *Call);

/// Whether \p E is a host tensor in pinned memory: `pin_memory()`, a
/// factory given `pinned_memory(true)`, or a local or field holding one.
bool isPinnedHostTensor(const Expr *E);

} // namespace clang::cudagraph

#endif // CUDAGRAPH_ANALYSIS_HAZARDMATCH_H
