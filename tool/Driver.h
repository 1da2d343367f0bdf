//===--- Driver.h - cudagraph-tidy ------------------------------*- C++ -*-===//
//
// The cudagraph-tidy driver: clang-tidy's own command line, with the
// cudagraph module built in and cudagraph-* enabled when no check list is
// given.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_TOOL_DRIVER_H
#define CUDAGRAPH_TIDY_TOOL_DRIVER_H

#include <string>
#include <vector>

namespace cudagraph {

/// The arguments clang-tidy receives for \p Args (argv without argv[0]):
/// adds --checks=-*,cudagraph-* when neither the command line nor a
/// .clang-tidy file above a source file chooses checks, and the flags CUDA 13
/// sources need with clang 19.
std::vector<std::string> adjustArguments(const std::vector<std::string> &Args);

/// Runs cudagraph-tidy; returns the exit code.
int runCudaGraphTidy(int Argc, const char **Argv);

} // namespace cudagraph

#endif // CUDAGRAPH_TIDY_TOOL_DRIVER_H
