//===--- RngGeneratorCheck.h - cudagraph-tidy -------------------*- C++ -*-===//
//
// cudagraph-rng-generator: random number generation that libtorch refuses
// during capture. A CUDA generator the project makes itself
// (createCUDAGenerator, make_generator<CUDAGeneratorImpl>) handed to a
// captured call without ever being registered with the graph
// (register_generator_state); philox_engine_inputs (philox_cuda_state is the
// capture-safe form); reseeding during capture.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_RNGGENERATORCHECK_H
#define CUDAGRAPH_TIDY_RNGGENERATORCHECK_H

#include "ApiHazardCheck.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace clang::tidy::cudagraph {

class RngGeneratorCheck : public ApiHazardCheck {
public:
  using ApiHazardCheck::ApiHazardCheck;

protected:
  void checkCapture(CaptureAnalysis &Analysis) override;
  void notesFor(CaptureAnalysis &Analysis, const Hazard &H,
                const CapturedSite &Site) override;

private:
  /// What a generator expression is: the variable, field or function
  /// (returning a generator) it names, or a creating call itself.
  const void *originOf(const Expr *E, CaptureAnalysis &Analysis) const;
  bool isCreation(const Expr *E, CaptureAnalysis &Analysis) const;
  void collectGenerators(CaptureAnalysis &Analysis);

  /// Generators the project makes, and where.
  llvm::DenseMap<const void *, SourceLocation> Created;
  /// Generators passed to register_generator_state.
  llvm::DenseSet<const void *> Registered;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_RNGGENERATORCHECK_H
