//===--- ConditionLeaves.h - cudagraph analysis -----------------*- C++ -*-===//
//
// The operands a condition's value fixes. One splitter for the guard atoms
// (CaptureApis), the member values (ValueFacts) and the early exits before
// a begin (FunctionFlow), so the three agree on what a condition says.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_CONDITIONLEAVES_H
#define CUDAGRAPH_ANALYSIS_CONDITIONLEAVES_H

#include "clang/AST/Expr.h"
#include "llvm/ADT/SmallVector.h"
#include <utility>

namespace clang {
namespace cudagraph {

/// One operand of a condition (parentheses and implicit casts stripped) and
/// the value it has.
using ConditionLeaf = std::pair<const Expr *, bool>;

/// The operands \p Cond having \p Value fixes: `a && b` true gives a and b
/// true, `a || b` false both false, `!a` flips. `a && b` false and `a || b`
/// true fix neither side and give nothing.
inline void conditionLeaves(const Expr *Cond, bool Value,
                            llvm::SmallVectorImpl<ConditionLeaf> &Out) {
  if (!Cond)
    return;
  const Expr *E = Cond->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->getOpcode() == UO_LNot)
    return conditionLeaves(UO->getSubExpr(), !Value, Out);
  if (const auto *BO = dyn_cast<BinaryOperator>(E); BO && BO->isLogicalOp()) {
    if ((BO->getOpcode() == BO_LAnd) == Value) {
      conditionLeaves(BO->getLHS(), Value, Out);
      conditionLeaves(BO->getRHS(), Value, Out);
    }
    return;
  }
  Out.push_back({E, Value});
}

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_CONDITIONLEAVES_H
