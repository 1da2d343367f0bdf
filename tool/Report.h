//===--- Report.h - cudagraph-tidy ------------------------------*- C++ -*-===//
//
// What cudagraph-tidy does after clang-tidy's run: reads the run's findings
// (clang-tidy's exported diagnostics joined with the cudagraph checks' log),
// writes SARIF and baselines, prints the summary line and chooses the exit
// code.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TOOL_REPORT_H
#define CUDAGRAPH_TOOL_REPORT_H

#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace cudagraph {

/// Exit codes of cudagraph-tidy.
enum ExitCode : int {
  ExitClean = 0,    // analyzed, nothing reported
  ExitFindings = 1, // analyzed, findings reported
  ExitUsage = 2,    // a bad command line or option file
  ExitFailure = 3   // some input could not be analyzed
};

struct ReportRequest {
  std::string Diagnostics;          // clang-tidy's --export-fixes file
  std::vector<std::string> Sources; // as given on the command line
  std::optional<std::string> Sarif, WriteBaseline, CodeQuality;
  std::string Self; // this executable, to find the installed docs
  bool Quiet = false;
  int TidyExit = 0; // what clang-tidy's main returned
};

/// Reads the run's findings, writes what \p R asks for, prints the summary
/// line on stderr and returns the exit code.
int finishRun(const ReportRequest &R);

} // namespace cudagraph

#endif // CUDAGRAPH_TOOL_REPORT_H
