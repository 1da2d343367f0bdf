//===--- UserCode.h - cudagraph analysis ------------------------*- C++ -*-===//
//
// The lowest layer: which code is the user's (reported, walked as the user's
// own) and which is a library's (walked for what it reaches, reported at the
// user call leading in), where a location is shown, and the names functions
// are matched by.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_USERCODE_H
#define CUDAGRAPH_ANALYSIS_USERCODE_H

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/StringSaver.h"
#include <string>

namespace clang {
class ASTContext;
class SourceManager;
namespace cudagraph {

/// Headers of libraries whose code is walked but never reported in place.
extern const char DefaultLibraryHeaderRegex[];

class CodeClassifier {
public:
  CodeClassifier(const SourceManager &SM, llvm::StringRef LibraryRegex);

  /// True when \p Loc is in the user's code (not a system or library header).
  bool isUserLocation(SourceLocation Loc) const;
  bool isUserFile(FileID FID) const;
  /// \p Loc, or where a library macro that spells it is used.
  SourceLocation visibleLoc(SourceLocation Loc) const;

  /// The qualified name used for matching, without CUDA API suffixes.
  static std::string matchName(const FunctionDecl *FD);
  /// matchName, cached for the translation unit.
  llvm::StringRef nameOf(const FunctionDecl *FD);

  const SourceManager &sourceManager() const { return SM; }

private:
  const SourceManager &SM;
  llvm::Regex LibraryRegex;
  mutable llvm::DenseMap<FileID, bool> UserFileCache;
  llvm::DenseMap<const FunctionDecl *, llvm::StringRef> NameCache;
  llvm::BumpPtrAllocator NameAlloc;
  llvm::StringSaver Saver{NameAlloc};
};

/// The function \p Call calls: its direct callee, or, for a call through
/// a global or member function pointer named for a CUDA API
/// (`cuStreamBeginCapture_v2(...)` with cuew's `extern tcu.. *cu..;`, a
/// dlsym table's `drv->cuLaunchKernel(...)`, `pfn_cuMemAlloc(...)`), a
/// stand-in declaration of that API with the pointer's signature, the same
/// one for every call through that pointer. Null otherwise.
const FunctionDecl *calleeOf(const CallExpr *Call);

/// Drops the stand-in declarations calleeOf made (a new translation unit).
void forgetPointerApis();

/// The definition of \p FD when it has a body that is not a template pattern.
const FunctionDecl *definitionOf(const FunctionDecl *FD);

/// Whether \p S is a loop that may run its body more than once: a for,
/// while or range-for loop, or a do loop other than a macro's statement
/// wrapper `do { ... } while (0)`.
bool isRepeatingLoop(const Stmt *S);

/// Whether \p FD runs on the GPU only: a kernel or a __device__ function
/// without __host__.
bool runsOnDeviceOnly(const FunctionDecl *FD);

/// Whether a walk of the user's code skips \p D whole: a declaration in a
/// system or library header (translation units, namespaces and linkage
/// specifications hold both and are entered).
bool outsideUserCode(const CodeClassifier &Code, const Decl *D);
/// outsideUserCode, and kernels and device-only functions (templates
/// included): what a walk of the host code the user writes skips.
bool outsideHostUserCode(const CodeClassifier &Code, const Decl *D);

/// Which functions forEachUserFunction visits: templates as written, or the
/// code that runs (instantiations and lambda bodies, no template patterns).
enum class FunctionWalk { AsWritten, Instantiated };

/// Calls \p Fn for every function with a body declared in the user's code.
/// Library headers are skipped whole, so the walk costs little on
/// libtorch-sized units.
void forEachUserFunction(ASTContext &Ctx, const CodeClassifier &Code,
                         llvm::function_ref<void(const FunctionDecl *)> Fn,
                         FunctionWalk Walk = FunctionWalk::AsWritten);

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_USERCODE_H
