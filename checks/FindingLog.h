//===--- FindingLog.h - cudagraph-tidy --------------------------*- C++ -*-===//
//
// What the cudagraph checks emitted in this process, and the filters they
// apply before emitting: a baseline of accepted findings, the changed lines
// of a pull request, and NOLINT comments on a finding's call chain.
//
// A finding's fingerprint names it across unrelated edits: the check, the
// hazard, the function holding the finding, the file's name and the text of
// the finding's line (whitespace and comments aside), plus a count among
// identical ones. Line numbers are not part of it.
//
// The cudagraph-tidy driver reads the log after clang-tidy's run to write
// SARIF, baselines, its summary line and exit code; the plugin fills the
// filters from the Baseline option.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_FINDINGLOG_H
#define CUDAGRAPH_TIDY_FINDINGLOG_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace clang::tidy::cudagraph {

/// One finding as a check emitted it.
struct EmittedFinding {
  std::string File; // real path
  unsigned Offset = 0;
  std::string Check, Hazard, Function, Fingerprint;
};

/// What the cudagraph checks did in this process.
struct FindingLog {
  std::vector<EmittedFinding> Findings;
  /// Each analyzed main file (real path): whether it had compile errors.
  llvm::StringMap<bool> Units;
  unsigned SuppressedOnChain = 0; // NOLINT on a call site of the chain
  unsigned InBaseline = 0;
  unsigned OutsideChanges = 0;

  /// The finding a check emitted at \p File (real path) + \p Offset.
  const EmittedFinding *find(llvm::StringRef File, unsigned Offset,
                             llvm::StringRef Check) const;
};
FindingLog &findingLog();

/// Lines changed by a pull request: file (real path) -> sorted ranges of
/// 1-based lines, inclusive.
using ChangedLines =
    std::map<std::string, std::vector<std::pair<unsigned, unsigned>>>;

/// Filters every cudagraph check applies before it emits a finding.
struct FindingFilters {
  bool HasBaseline = false;
  llvm::StringSet<> Baseline; // fingerprints
  bool HasChangedLines = false;
  ChangedLines Changed;

  /// Reads a baseline written by --write-baseline (JSON). False and \p Error
  /// on a missing or malformed file.
  bool loadBaseline(llvm::StringRef Path, std::string &Error);
  /// The same for the text of a baseline; \p Path names it in errors.
  bool loadBaselineText(llvm::StringRef Text, llvm::StringRef Path,
                        std::string &Error);
  /// Reads the changed lines from a unified diff (`git diff -U0`); paths
  /// are taken relative to \p Root, with `a/` and `b/` prefixes dropped.
  bool loadChangedLines(llvm::StringRef DiffText, llvm::StringRef Root,
                        std::string &Error);
  bool changed(llvm::StringRef RealFile, unsigned Line) const;
};
FindingFilters &findingFilters();

/// What a finding's fingerprint hashes, less its occurrence: the check, the
/// hazard, the function holding it, the file name and the line's code with
/// spacing normalized. Findings with one key are told apart by occurrence.
std::string fingerprintKey(llvm::StringRef Check, llvm::StringRef Hazard,
                           llvm::StringRef Function, llvm::StringRef FileName,
                           llvm::StringRef LineText);
/// The fingerprint (16 hex digits) of the \p Occurrence-th finding (from 0)
/// with \p Key.
std::string fingerprintOf(llvm::StringRef Key, unsigned Occurrence);

/// \p Line without comments and with runs of whitespace as one space.
std::string normalizedCode(llvm::StringRef Line);

/// The real path of \p Path, or \p Path made absolute when it has none.
std::string realPathOf(llvm::StringRef Path);

/// NOLINT comments of one file, as clang-tidy reads them: NOLINT(checks)
/// on a line, NOLINTNEXTLINE(checks) for the next one, and
/// NOLINTBEGIN(checks) ... NOLINTEND(checks) around lines.
class NolintLines {
public:
  explicit NolintLines(llvm::StringRef Text);
  /// Whether the comments suppress \p Check on 1-based line \p Line.
  bool suppresses(unsigned Line, llvm::StringRef Check) const;

private:
  struct Span {
    unsigned First, Last;
    std::string Checks; // empty: every check
  };
  std::vector<Span> Spans;
};

} // namespace clang::tidy::cudagraph

#endif // CUDAGRAPH_TIDY_FINDINGLOG_H
