//===--- CaptureApis.h - cudagraph analysis ---------------------*- C++ -*-===//
//
// What single expressions say about capture, before any control flow: which
// calls begin or end it (and in which mode), which conditions test whether a
// stream is capturing, and which conditions are stable enough that a begin
// and an end guarded by the same one are taken together.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_CAPTUREAPIS_H
#define CUDAGRAPH_ANALYSIS_CAPTUREAPIS_H

#include "HazardCatalog.h"
#include "UserCode.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/FoldingSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <optional>

namespace clang {
class ASTContext;
namespace cudagraph {

enum class CaptureEvent { None, Begin, End };

/// The begin and end APIs of the catalog plus the user's additions.
class CaptureApis {
public:
  CaptureApis(llvm::StringRef ExtraBegin, llvm::StringRef ExtraEnd,
              llvm::StringRef StatusFunctions);

  /// The event a call of \p FD (named \p Name) is, by API name alone.
  CaptureEvent eventOf(const FunctionDecl *FD, llvm::StringRef Name) const;
  /// The modes a begin call may capture in: its mode argument's constant
  /// value, or every mode when that is not a constant.
  ModeSet beginModes(const CallExpr *Call, llvm::StringRef Name,
                     const ASTContext &Ctx) const;
  /// The mode argument of a begin call, or null (no such argument, or the
  /// API's default).
  const Expr *beginModeArg(const CallExpr *Call, llvm::StringRef Name) const;
  /// The modes a mode argument's value selects: its constant, or every mode.
  static ModeSet modesOf(const Expr *Arg, const ASTContext &Ctx);
  /// A user-listed function whose true result means "capturing".
  bool isStatusFunction(llvm::StringRef Name) const {
    return StatusFunctions.matches(Name);
  }

private:
  struct Api {
    CaptureEvent Event;
    NamePatterns Names;
    int ModeArg;
  };
  std::vector<Api> Apis;
  NamePatterns ExtraBegin, ExtraEnd, StatusFunctions;
  bool HasExtra;
};

/// What a condition says about capture.
enum class CaptureTest { Unknown, TrueWhenCapturing, TrueWhenNotCapturing };

/// Whether a test covers one stream (a stream's capture status) or every
/// capture of the thread (a project's registry of open captures, a function
/// named by the CaptureStatusFunctions option).
enum class TestScope { Stream, Thread };

/// Classifies conditions: `status == cudaStreamCaptureStatusNone`,
/// `st != CaptureStatus::None`, a status value used as a boolean,
/// `is_capturing()`, a local that holds such a test, and calls of functions
/// whose result is one (\p ReturnedTest answers for a callee).
class CaptureTestClassifier {
public:
  using ReturnedTestFn = llvm::function_ref<CaptureTest(const FunctionDecl *)>;
  /// Whether a variable or field is a registry of open captures: a
  /// container a capture-beginning function adds to, or a counter it
  /// increments.
  using RegistryFn = llvm::function_ref<bool(const ValueDecl *)>;
  CaptureTestClassifier(const CaptureApis &Apis, CodeClassifier &Code,
                        ASTContext &Ctx, ReturnedTestFn ReturnedTest,
                        RegistryFn IsRegistry)
      : Apis(Apis), Code(Code), Ctx(Ctx), ReturnedTest(ReturnedTest),
        IsRegistry(IsRegistry) {}

  /// \p Body: the function holding \p Cond (locals are followed only when
  /// they are never modified there).
  CaptureTest classify(const Expr *Cond, const Stmt *Body, unsigned Depth = 0);
  /// The scope of the last test classify recognized.
  TestScope lastScope() const { return Scope; }

private:
  const CaptureApis &Apis;
  CodeClassifier &Code;
  ASTContext &Ctx;
  ReturnedTestFn ReturnedTest;
  RegistryFn IsRegistry;
  TestScope Scope = TestScope::Stream;

  const ValueDecl *registryOf(const Expr *E) const;
  CaptureTest registryTest(const Expr *Cond);
};

CaptureTest flip(CaptureTest T);

/// Whether \p T is a CUDA stream handle (cudaStream_t, CUstream), or a
/// reference to one.
bool isStreamType(QualType T);

/// What an event API does with its events (the catalog's
/// CUDAGRAPH_EVENT_API).
enum class EventRole { None, Record, Wait, Read, Timing };
struct EventApi {
  EventRole Role = EventRole::None;
  /// Argument positions of the events (-1: none, or the object of a method).
  int EventArg = -1, OtherEventArg = -1;
};
/// The catalog's entry for \p Name (a qualified name, version suffix
/// stripped), or a None role.
EventApi eventApiOf(llvm::StringRef Name);
/// Whether \p Name reads the time between two recorded events.
inline bool isElapsedTimeApi(llvm::StringRef Name) {
  return eventApiOf(Name).Role == EventRole::Timing;
}

/// Whether \p FD hands out a capture status (a pointer or reference
/// to a `...CaptureStatus` enum), as cudaStreamIsCapturing and
/// cudaStreamGetCaptureInfo do.
bool hasCaptureStatusOutput(const FunctionDecl *FD);

/// Whether \p FD has the shape of an end-capture call: a stream parameter
/// and a graph handle (cudaGraph_t, CUgraph) it writes, by pointer or by
/// non-const reference, like `cudaStreamEndCapture(stream, &graph)`, and
/// no capture-status output (that is a query's shape).
bool hasEndCaptureShape(const FunctionDecl *FD);

/// The operands of an equality test, `L == R` or `L != R`, built in or an
/// overloaded operator; parentheses and implicit casts taken off.
struct EqualityTest {
  const Expr *L = nullptr, *R = nullptr;
  bool Equal = false; // `==`
};
std::optional<EqualityTest> equalityTest(const Expr *E);

/// Whether \p E names success: an enumerator spelled like one
/// (cudaSuccess, CUDA_SUCCESS, NCCL_SUCCESS, kOk, OK) or the literal 0.
bool isSuccessConstant(const Expr *E);

/// `X == success` or `X != success` (either order): X and whether the test
/// is true when X is success.
struct SuccessTest {
  const Expr *Status = nullptr;
  bool TrueOnSuccess = false;
};
std::optional<SuccessTest> successTest(const Expr *E);

/// The argument of \p Call passed to a stream parameter (cudaStream_t,
/// CUstream), the stream of a `<<<...>>>` launch, or null.
const Expr *streamArgument(const CallExpr *Call);

/// The enumerator \p E names (parentheses and implicit casts taken off),
/// or null.
const EnumConstantDecl *enumeratorOf(const Expr *E);

/// \p E without the wrappers around a value: implicit casts, parentheses,
/// temporaries, functional casts and one-argument constructions.
const Expr *unwrap(const Expr *E);

/// What a stream argument names.
enum class StreamValue {
  Unknown,
  Default,   // 0, nullptr, or left out: the legacy stream, or the
             // per-thread stream when that is the default
  Legacy,    // cudaStreamLegacy
  PerThread, // cudaStreamPerThread
};
StreamValue streamValue(const Expr *E, const ASTContext &Ctx);
/// A call of c10::cuda::getDefaultCUDAStream, possibly converted to a
/// cudaStream_t or a c10::Stream.
bool isTorchDefaultStream(const Expr *E);

/// Whether \p Call's stream argument is the legacy default stream, which
/// no capture can be open on (beginning one there fails): cudaStreamLegacy,
/// or a null stream given to an API that is not the per-thread variant
/// (`_ptsz`, what CUDA_API_PER_THREAD_DEFAULT_STREAM selects).
bool namesLegacyStream(const CallExpr *Call, const ASTContext &Ctx);

/// The global variable (static storage) or field \p E names, or null.
const ValueDecl *globalOrField(const Expr *E);

/// The variable or field an lvalue expression denotes (canonical): `x`,
/// `a.b.c` (c), `p->f` (f), `v[i]`, `m[k]` (v, m). A pointee (`*p`, a
/// method called through `p->`) denotes none.
const Decl *storageOf(const Expr *E);

/// The stream a call of a CUDA API names (streamArgument), when it is a
/// local, parameter or field by value (not an element, not a reference, not
/// a method's receiver), or null: two such streams of different names are
/// taken as different streams.
const Decl *namedStream(const Stmt *St);

/// One atom of a guard condition and the value it has on a path.
struct GuardFact {
  llvm::FoldingSetNodeID Atom;
  bool Value = true;
  /// The loop whose condition gave the fact (its own exit edge does not
  /// contradict it).
  const Stmt *Loop = nullptr;
  /// For an integer operand compared with a constant (`n >= 3`, `n == 0`,
  /// `n` alone as `n != 0`): the operand's key and the values the fact
  /// allows, [Lo, Hi], or every value but Lo when Except.
  llvm::FoldingSetNodeID Subject;
  bool HasRange = false, Except = false;
  int64_t Lo = 0, Hi = 0;
  /// For a bit test of an integer operand (`flags & M`, `(flags & M) != 0`,
  /// `(flags & M) == 0`): the mask, and whether some bit of it is set.
  uint64_t Mask = 0;
  bool MaskSet = false;
  /// The operand is a member of `this` (a method's object, whose setters
  /// ValueFacts follows).
  bool OnThis = false;

  /// Whether the fact constrains the value of the operand in Subject.
  bool constrainsSubject() const { return HasRange || Mask; }
  /// Whether no value of the same operand satisfies both facts
  /// (`debug >= 3` true and `debug == 0` true; `flags == 1` true and
  /// `flags & 2` true).
  bool excludes(const GuardFact &Other) const;
  /// Whether the two facts cannot hold together: one atom with two values,
  /// or ranges of one operand that do not meet.
  bool contradicts(const GuardFact &Other) const {
    return (Atom == Other.Atom && Value != Other.Value) || excludes(Other);
  }
};

/// Drops what guardFacts remembers of the unit's locals (a new unit).
void forgetGuardLocals();

/// What a store of \p Stored into \p Target (a variable or member, no
/// calls) says until the next store: the guard fact `Target == Stored`
/// (range only), with \p Target's key in Subject. False when Target is not
/// such an operand or Stored not an integer constant; Subject is still set
/// for an operand, so that facts about the old value can be dropped.
bool storedFact(const Expr *Target, const Expr *Stored, const ASTContext &Ctx,
                GuardFact &Out);

/// The facts that hold when \p Cond evaluates to \p Value: `a && b` true
/// gives both, `!a` flips, `a || b` false gives both. Only atoms without side
/// effects (variables, members, comparisons, const methods) are kept. In
/// the condition of loop \p Loop, its induction variable is one placeholder
/// whatever its declaration, so `for (int i = 0; i < n; ++i)` loops over the
/// same bound share their facts.
/// \p Aliases: the variables a callee's parameters stand for (the caller's
/// variable its call passes: `step(r)` makes the callee's `r->debug` the
/// caller's), so that its facts compare with the caller's.
using ParamAliases = llvm::DenseMap<const ValueDecl *, const ValueDecl *>;
void guardFacts(const Expr *Cond, bool Value, const ASTContext &Ctx,
                llvm::SmallVectorImpl<GuardFact> &Out,
                const Stmt *Loop = nullptr,
                const ParamAliases *Aliases = nullptr);

/// The atom of a condition that is the variable \p D alone (`if (flag)`).
void variableAtom(const ValueDecl *D, llvm::FoldingSetNodeID &ID);

/// The variable a for-loop initializes (`int i = 0`, `i = 0`), or null.
const VarDecl *loopVariable(const Stmt *Loop);

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_CAPTUREAPIS_H
