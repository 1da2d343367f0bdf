//===--- SourceGrammar.h - C++ sources from fuzzer bytes --------*- C++ -*-===//
//
// Turns fuzzer input into a translation unit for the capture analysis.
//
// The first byte picks the form. Most inputs are grammar-built: the bytes
// choose, production by production, helpers, templates, lambdas, classes,
// custom-op registrations, error-check macros and guards around capture
// regions (raw CUDA, libtorch's CUDAGraph, stream guards), filled with the
// catalog's APIs, host branches on device values, loops, early returns,
// gotos, threads and calls between all of them. The rest are taken as
// source text after a fixed prelude, so mutations of the lit inputs reach
// the parser and the analysis as they are, broken or not.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_FUZZ_SOURCEGRAMMAR_H
#define CUDAGRAPH_FUZZ_SOURCEGRAMMAR_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudagraph {
namespace fuzz {

/// The includes every generated unit starts with (the hermetic stubs).
const char *prelude();

/// The translation unit for Data.
std::string sourceFor(const uint8_t *Data, size_t Size);

} // namespace fuzz
} // namespace cudagraph

#endif // CUDAGRAPH_FUZZ_SOURCEGRAMMAR_H
