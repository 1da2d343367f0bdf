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
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include <string>
#include <vector>

namespace clang {
class ASTContext;
namespace cudagraph {
class CodeClassifier;

/// The functions a unit stores in function pointers, by function type: what
/// a call through a pointer may run when the pointer's holder shows no
/// target (an op table filled by registrations, a plan copied from a
/// descriptor, `ops[i].fn(exec, ops[i])`). Only pointer types that name a
/// class of the program in their return or parameter types are resolved:
/// `void (*)(Executor &, const Op &)` is an op table's own, `void (*)(void
/// *)` any callback's. Built on first use from the user code of the unit.
class PointerTargets {
public:
  PointerTargets(ASTContext &Ctx, const CodeClassifier &Code)
      : Ctx(Ctx), Code(Code) {}

  /// The function type a call \p S makes through a function pointer when it
  /// names a class of the program and the pointer is not a parameter (a
  /// parameter's callable is its caller's to say); null otherwise.
  const FunctionType *callType(const Stmt *S) const;
  /// The user functions whose address the unit takes with type \p Fn.
  llvm::ArrayRef<const FunctionDecl *> ofType(const FunctionType *Fn);
  /// The function type \p FD's address is taken as, when the unit takes it
  /// and the type names a class of the program; null otherwise.
  const FunctionType *takenAs(const FunctionDecl *FD);
  /// The name of \p Fn across units (its canonical spelling).
  std::string key(const FunctionType *Fn) const;

private:
  void build();
  bool namesProgramClass(const FunctionType *Fn) const;

  ASTContext &Ctx;
  const CodeClassifier &Code;
  bool Built = false;
  llvm::DenseMap<const FunctionType *,
                 llvm::SmallVector<const FunctionDecl *, 4>>
      ByType;
  llvm::DenseMap<const FunctionDecl *, const FunctionType *> Taken;
};

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
  /// An Indirect call resolved by the pointer's type (PointerTargets): any
  /// function the unit stores as one may be Callee.
  bool ByType = false;
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
/// methods store in it. When none is visible and \p Pointers is given, the
/// functions of the unit stored as pointers of the call's type (\p ByType
/// is set). Empty when none is found. \p Held is set when the callable is
/// a field's.
llvm::SmallVector<const FunctionDecl *, 2>
invokedCallables(const Stmt *S, bool *Held = nullptr,
                 PointerTargets *Pointers = nullptr, bool *ByType = nullptr);

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
                     std::vector<CallSite> &Out, bool Stored = false,
                     PointerTargets *Pointers = nullptr);

/// The non-trivial destructor that runs when a local of type \p T ends.
const FunctionDecl *destructorOf(QualType T);

/// Every call made directly in \p FD's body, in source order (not in the
/// bodies of nested lambdas; a constructor's member initializers included).
std::vector<CallSite> collectCalls(const FunctionDecl *FD,
                                   PointerTargets *Pointers = nullptr);

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_CALLSITES_H
