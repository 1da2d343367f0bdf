//===--- IndexBuilder.h - cudagraph-tidy ------------------------*- C++ -*-===//
//
// `cudagraph-tidy -p build --index`: one summary per translation unit,
// written by child processes run in parallel (like a build), skipped when
// the unit's command, source and headers are unchanged; then merged into
// build/cudagraph-index/index.json, which later runs read.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_TOOL_INDEXBUILDER_H
#define CUDAGRAPH_TIDY_TOOL_INDEXBUILDER_H

#include "clang/Tooling/CompilationDatabase.h"
#include <string>
#include <vector>

namespace cudagraph {

struct IndexRequest {
  /// This executable, run once per stale unit.
  std::string Self;
  /// Where the index lives (the -p directory the user gave).
  std::string BuildPath;
  /// The database the children read (translated from nvcc if needed).
  std::string DatabaseDir;
  std::vector<clang::tooling::CompileCommand> Commands;
  /// The user's clang-tidy options the analysis reads (configs), passed on.
  std::vector<std::string> Options;
  unsigned Jobs = 1;
  bool Quiet = false;
};

/// The index file of the build directory \p BuildPath.
std::string indexPathFor(const std::string &BuildPath);

/// Builds or refreshes the index; returns the exit code.
int buildIndex(const IndexRequest &R);

/// Before a normal run: whether the index of \p BuildPath exists and is up to
/// date for \p Sources; says so once on stderr when it is missing or stale.
/// Returns the index path to use, or empty.
std::string checkIndex(const std::string &BuildPath,
                       const std::vector<std::string> &Sources, bool Quiet);

} // namespace cudagraph

#endif // CUDAGRAPH_TIDY_TOOL_INDEXBUILDER_H
