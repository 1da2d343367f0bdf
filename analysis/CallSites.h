//===--- CallSites.h - cudagraph analysis -----------------------*- C++ -*-===//
//
// The calls a function body makes: calls, constructions, destructors of
// locals, and callables (lambdas, functions) passed as arguments, which run
// where the callee calls them.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_CALLSITES_H
#define CUDAGRAPH_ANALYSIS_CALLSITES_H

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/SmallVector.h"
#include <vector>

namespace clang::cudagraph {

struct CallSite {
  enum class Kind {
    Call,      // CallExpr (S)
    Construct, // CXXConstructExpr (S)
    LocalDtor, // destructor of a local variable (Var) at scope end
    Callable   // a lambda or function passed as an argument of S's call
  };
  Kind K = Kind::Call;
  const Stmt *S = nullptr;
  SourceLocation Loc;
  const FunctionDecl *Callee = nullptr;
  const VarDecl *Var = nullptr; // LocalDtor: the variable
  /// For Call/Construct: the argument index that passed a Callable.
  unsigned ArgIndex = 0;
  /// A Call of Callee through a std::function or a function pointer: S's
  /// direct callee (if any) is not Callee.
  bool Indirect = false;
  /// An Indirect call through a callable an object keeps in a field (a
  /// task queue's entries): which of the field's targets runs depends on
  /// the object.
  bool Held = false;
  /// In the initializer of a static local (`static bool once = [] {
  /// ... }();`): runs on the first call of the function only.
  bool OnceInit = false;

  const CallExpr *call() const { return llvm::dyn_cast_or_null<CallExpr>(S); }
};

/// The function a call argument passes as a callable: a lambda, a function
/// (`work`, `&work`), or a local std::function / auto variable initialized
/// from one; null otherwise.
const FunctionDecl *passedCallable(const Expr *Arg);

/// The functions a call \p S runs through a std::function or a function
/// pointer held in a variable or a field: the callables it is initialized
/// with or, for a local, assigned in its function; for a field, those its
/// class's constructors (instantiations with a lambda type included) and
/// methods store in it. Empty when none is visible. \p Held is set when
/// the callable is a field's.
llvm::SmallVector<const FunctionDecl *, 2>
invokedCallables(const Stmt *S, bool *Held = nullptr);

/// Whether \p FD emplaces into a standard container of std::thread or
/// std::jthread: the callable it gets starts a thread.
bool emplacesThread(const FunctionDecl *FD);

/// The function a call or construction \p S invokes directly, or null.
const FunctionDecl *directCallee(const Stmt *S);

/// The site of call or construction \p S followed by the callables it
/// passes. Callables a std::function or a standard container keeps for
/// later are left out unless \p Stored. Appends nothing for other
/// statements.
void appendCallSites(const Stmt *S, SourceLocation Loc,
                     std::vector<CallSite> &Out, bool Stored = false);

/// The non-trivial destructor that runs when a local of type \p T ends.
const FunctionDecl *destructorOf(QualType T);

/// Every call made directly in \p FD's body, in source order (not in the
/// bodies of nested lambdas; a constructor's member initializers included).
std::vector<CallSite> collectCalls(const FunctionDecl *FD);

} // namespace clang::cudagraph

#endif // CUDAGRAPH_ANALYSIS_CALLSITES_H
