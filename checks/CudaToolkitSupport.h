//===--- CudaToolkitSupport.h - cudagraph-tidy ------------------*- C++ -*-===//
//
// Lets clang 19 parse CUDA sources against the CUDA 13 toolkit, and libtorch
// sources against Debian's libtorch-dev, without help from the user: CUDA 13
// no longer ships texture_fetch_functions.h, which clang's CUDA runtime
// wrapper includes, and moved Thrust, CUB and libcu++ under include/cccl;
// Debian's c10/cuda headers include a generated header the package lacks.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_CUDATOOLKITSUPPORT_H
#define CUDAGRAPH_TIDY_CUDATOOLKITSUPPORT_H

namespace clang {
class Preprocessor;
namespace tidy::cudagraph {

/// Provides stand-ins for headers that installs are known to lack (CUDA 13's
/// texture_fetch_functions.h in CUDA compilations; Debian libtorch's
/// c10/cuda/impl/cuda_cmake_macros.h) and, in CUDA compilations, adds
/// <cuda>/include/cccl to the system include path; respells the kernel
/// launches of the main file and the project's headers written `<< <...>> >` (nvcc accepts them, clang does not).
/// Idempotent.
void addStandInHeaders(Preprocessor &PP);

/// A check that reports nothing and calls addStandInHeaders; cudagraph-tidy
/// enables it on every run. Its name does not start with "cudagraph-", so
/// `-cudagraph-*` in a configuration does not turn parsing support off.
inline constexpr const char ParseSupportCheckName[] = "cuda-parse-support";

} // namespace tidy::cudagraph
} // namespace clang

#endif // CUDAGRAPH_TIDY_CUDATOOLKITSUPPORT_H
