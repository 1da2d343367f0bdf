//===--- CudaToolkitSupport.h - cudagraph-tidy ------------------*- C++ -*-===//
//
// Lets clang 19 parse CUDA sources against the CUDA 13 toolkit without help
// from the user: CUDA 13 no longer ships texture_fetch_functions.h, which
// clang's CUDA runtime wrapper includes, and moved Thrust, CUB and libcu++
// under include/cccl.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_CUDATOOLKITSUPPORT_H
#define CUDAGRAPH_TIDY_CUDATOOLKITSUPPORT_H

namespace clang {
class Preprocessor;
namespace tidy::cudagraph {

/// In CUDA compilations, provides a stand-in texture_fetch_functions.h and
/// adds <cuda>/include/cccl to the system include path when it exists and is
/// not there yet. Does nothing for other languages. Idempotent.
void addCudaToolkitSearchPaths(Preprocessor &PP);

} // namespace tidy::cudagraph
} // namespace clang

#endif // CUDAGRAPH_TIDY_CUDATOOLKITSUPPORT_H
