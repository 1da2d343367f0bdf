//===--- WarmUp.h - cudagraph analysis --------------------------*- C++ -*-===//
//
// What a warm-up leaves undone. Code run once before a capture begins (the
// same function, called next to the begin) has taken the branches that set
// up state kept between calls, so the captured pass does not take them:
//
//  - first-use branches: an arm that changes what its condition reads
//    (`if (!ready_) { init(); ready_ = true; }`, a map miss that inserts),
//    also through a parameter that points at the caller's global or field
//    (`ensure(&g_buf, &g_cap, n)` growing the buffer when `*cap < n`);
//  - cache misses: a branch on the contents of the object's own containers
//    (a free list, a map of blocks), read directly, through a local, or
//    through a method of the same class, where one way acquires or
//    releases a cached resource (the catalog's CachedResource hazards:
//    device and pinned memory, library handles) and the other does not.
//    The acquiring way is the miss (a new block, a trim, a free past the
//    cache's limit); the warm-up sized the cache for the pass it ran.
//
// A branch on configuration (a field no container holds: `if (on_device_)
// cudaMalloc(...)`) runs the same way every call and is not cold.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_WARMUP_H
#define CUDAGRAPH_ANALYSIS_WARMUP_H

#include "UserCode.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace clang::cudagraph {

/// Whether \p D is a parameter of \p FD whose bit is set in \p Outliving
/// (Reach::OutlivingParams: it points or refers to state that outlives the
/// call).
bool isOutlivingParam(const Decl *D, const FunctionDecl *FD,
                      uint64_t Outliving);

class WarmUpModel {
public:
  explicit WarmUpModel(CodeClassifier &Code) : Code(Code) {}

  /// The arms of \p FD's body that a warm-up of \p FD has taken and the
  /// captured pass does not: if/else arms, and the statements after an
  /// `if (hit) return ...;`. Bit I of \p OutlivingParams says that
  /// parameter I points or refers to state that outlives the call (the
  /// caller's global, static local or field): `if (*cap >= n) return;
  /// ...; *cap = n;` is a first use of it, as it is of a global.
  void coldArms(const FunctionDecl *FD,
                llvm::SmallVectorImpl<const Stmt *> &Arms,
                uint64_t OutlivingParams = 0);

private:
  /// Whether \p S calls a cached-resource API, directly or through a
  /// method of \p Class (depth-limited); with \p Shallow, only \p S itself
  /// when it is a call, not the statements inside it.
  bool acquiresResource(const Stmt *S, const CXXRecordDecl *Class,
                        unsigned Depth, bool Shallow = false);
  bool functionAcquires(const FunctionDecl *FD, unsigned Depth);

  CodeClassifier &Code;
  llvm::DenseMap<const FunctionDecl *, bool> AcquiresCache;
};

} // namespace clang::cudagraph

#endif // CUDAGRAPH_ANALYSIS_WARMUP_H
