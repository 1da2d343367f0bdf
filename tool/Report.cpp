//===--- Report.cpp - cudagraph-tidy --------------------------------------===//

#include "Report.h"
#include "FindingLog.h"
#include "HazardCatalog.h"
#include "clang/Tooling/DiagnosticsYaml.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <map>

#ifndef CUDAGRAPH_TIDY_VERSION
#define CUDAGRAPH_TIDY_VERSION "0.0.0"
#endif

namespace cudagraph {

using clang::tidy::cudagraph::EmittedFinding;
using clang::tidy::cudagraph::findingLog;
using clang::tidy::cudagraph::fingerprintKey;
using clang::tidy::cudagraph::fingerprintOf;
using clang::tidy::cudagraph::realPathOf;

namespace {

/// A place in a file, 1-based.
struct Place {
  std::string File; // absolute
  unsigned Line = 0, Column = 0;
  std::string LineText;
};

struct Note {
  std::string Message;
  Place Where;
};

/// One diagnostic of the run, as clang-tidy kept it (NOLINT, header and
/// line filters applied).
struct Finding {
  std::string Check, Message;
  bool Error = false;
  Place Where;
  std::vector<Note> Notes;
  std::string Hazard, Function, Fingerprint;
};

/// File contents, read once.
class Files {
public:
  Place place(llvm::StringRef Path, unsigned Offset) {
    Place P;
    P.File = Path.str();
    llvm::StringRef Text = text(Path);
    if (Text.empty() || Offset > Text.size())
      return P;
    llvm::StringRef Before = Text.take_front(Offset);
    size_t LineStart = Before.rfind('\n');
    LineStart = LineStart == llvm::StringRef::npos ? 0 : LineStart + 1;
    P.Line = Before.count('\n') + 1;
    // Columns in Unicode code points (SARIF's columnKind below).
    P.Column = 1;
    for (char C : Before.drop_front(LineStart))
      if ((static_cast<unsigned char>(C) & 0xC0) != 0x80)
        ++P.Column;
    P.LineText = Text.slice(LineStart, Text.find('\n', Offset)).str();
    return P;
  }

private:
  llvm::StringRef text(llvm::StringRef Path) {
    auto It = Buffers.find(Path);
    if (It == Buffers.end()) {
      auto Buffer = llvm::MemoryBuffer::getFile(Path);
      It = Buffers.try_emplace(Path, Buffer ? std::move(*Buffer) : nullptr)
               .first;
    }
    return It->second ? It->second->getBuffer() : llvm::StringRef();
  }
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> Buffers;
};

std::string absoluteIn(llvm::StringRef Path, llvm::StringRef Dir) {
  llvm::SmallString<256> P(Path);
  if (!llvm::sys::path::is_absolute(P) && !Dir.empty()) {
    P = Dir;
    llvm::sys::path::append(P, Path);
  }
  llvm::sys::fs::make_absolute(P);
  llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

/// The run's diagnostics from clang-tidy's exported YAML, in order.
bool readFindings(llvm::StringRef Path, std::vector<Finding> &Out,
                  std::string &Error) {
  if (!llvm::sys::fs::exists(Path))
    return true; // clang-tidy writes nothing when nothing was reported
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer) {
    Error = "cannot read '" + Path.str() + "': " + Buffer.getError().message();
    return false;
  }
  clang::tooling::TranslationUnitDiagnostics TUD;
  llvm::yaml::Input YIn((*Buffer)->getBuffer());
  YIn >> TUD;
  if (YIn.error()) {
    Error = "cannot read clang-tidy's diagnostics in '" + Path.str() + "'";
    return false;
  }
  Files Sources;
  const auto &Log = findingLog();
  llvm::StringMap<unsigned> Occurrences;
  for (const clang::tooling::Diagnostic &D : TUD.Diagnostics) {
    Finding F;
    F.Check = D.DiagnosticName;
    F.Message = D.Message.Message;
    F.Error = D.DiagLevel == clang::tooling::Diagnostic::Error;
    if (!D.Message.FilePath.empty())
      F.Where = Sources.place(absoluteIn(D.Message.FilePath, D.BuildDirectory),
                              D.Message.FileOffset);
    for (const clang::tooling::DiagnosticMessage &N : D.Notes) {
      Note Each{N.Message, {}};
      if (!N.FilePath.empty())
        Each.Where = Sources.place(absoluteIn(N.FilePath, D.BuildDirectory),
                                   N.FileOffset);
      F.Notes.push_back(std::move(Each));
    }
    if (!F.Error && !F.Where.File.empty()) {
      // The cudagraph checks logged each finding with its fingerprint; a
      // location inside a macro may be exported at another offset of the
      // same line.
      std::string Real = realPathOf(F.Where.File);
      const EmittedFinding *Logged =
          Log.find(Real, D.Message.FileOffset, F.Check);
      if (!Logged)
        for (const EmittedFinding &E : Log.Findings)
          if (E.File == Real && E.Check == F.Check &&
              Sources.place(E.File, E.Offset).Line == F.Where.Line) {
            Logged = &E;
            break;
          }
      if (Logged) {
        F.Hazard = Logged->Hazard;
        F.Function = Logged->Function;
        F.Fingerprint = Logged->Fingerprint;
      } else {
        std::string Name = llvm::sys::path::filename(F.Where.File).str();
        std::string Key = fingerprintKey(F.Check, "", "", Name,
                                         F.Where.LineText);
        F.Fingerprint = fingerprintOf(Key, Occurrences[Key]++);
      }
    }
    Out.push_back(std::move(F));
  }
  return true;
}

/// \p Path for people: relative to the working directory when under it.
std::string shown(llvm::StringRef Path) {
  llvm::SmallString<256> Cwd;
  if (!llvm::sys::fs::current_path(Cwd)) {
    llvm::StringRef P = Path;
    if (P.consume_front(Cwd) && P.consume_front("/"))
      return P.str();
  }
  return Path.str();
}

std::string fileUri(llvm::StringRef Path) {
  std::string Out = "file://";
  for (char C : Path) {
    if (isalnum(static_cast<unsigned char>(C)) ||
        llvm::StringRef("/-_.~").contains(C))
      Out += C;
    else
      Out += llvm::formatv("%{0:X-2}", static_cast<unsigned char>(C)).str();
  }
  return Out;
}

/// A relative path as a URI reference (segments percent-encoded).
std::string relativeUri(llvm::StringRef Path) {
  std::string Uri = fileUri(Path);
  return Uri.substr(7);
}

/// Where the check's documentation is: installed next to the tool, else in
/// the source tree the tool was built from.
std::string docsUri(llvm::StringRef Self, llvm::StringRef Check) {
  std::string Page =
      Check.drop_front(llvm::StringRef("cudagraph-").size()).str() + ".md";
  llvm::SmallString<256> Installed(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(Self)));
  llvm::sys::path::append(Installed, "share", "doc", "cudagraph-tidy",
                          "checks");
  llvm::sys::path::append(Installed, Page);
  if (llvm::sys::fs::exists(Installed))
    return fileUri(Installed);
  llvm::SmallString<256> Source(CUDAGRAPH_SOURCE_DIR);
  llvm::sys::path::append(Source, "docs", "checks", Page);
  return fileUri(Source);
}

llvm::json::Object physicalLocation(const Place &P, llvm::StringRef Root) {
  llvm::json::Object Artifact;
  llvm::StringRef File = P.File;
  if (File.consume_front(Root) && File.consume_front("/")) {
    Artifact["uri"] = relativeUri(File);
    Artifact["uriBaseId"] = "SRCROOT";
  } else {
    Artifact["uri"] = fileUri(P.File);
  }
  llvm::json::Object Region;
  if (P.Line) {
    Region["startLine"] = P.Line;
    Region["startColumn"] = P.Column;
    if (!P.LineText.empty())
      Region["snippet"] = llvm::json::Object{{"text", P.LineText}};
  }
  llvm::json::Object Physical{{"artifactLocation", std::move(Artifact)}};
  if (P.Line)
    Physical["region"] = std::move(Region);
  return Physical;
}

llvm::json::Object rule(const clang::cudagraph::CheckEntry &C,
                        llvm::StringRef Self) {
  std::string Text = C.Summary.str() + ".";
  std::string Markdown = ("**" + C.Name + "**: " + C.Summary + ".\n").str();
  llvm::json::Array Hazards;
  for (const clang::cudagraph::Hazard &H : clang::cudagraph::allHazards()) {
    if (H.Check != C.Name)
      continue;
    Text += "\n" + H.Id.str() + ": " + H.Effect.str() + "; " + H.Outcome.str() +
            "; " + H.Instead.str() + ".";
    Markdown += "\n- `" + H.Id.str() + "`: " + H.Effect.str() + ". " +
                H.Outcome.str() + ". Instead: " + H.Instead.str() + ".";
    Hazards.push_back(llvm::json::Object{{"id", H.Id},
                                         {"effect", H.Effect},
                                         {"outcome", H.Outcome},
                                         {"instead", H.Instead}});
  }
  return llvm::json::Object{
      {"id", C.Name},
      {"shortDescription", llvm::json::Object{{"text", C.Summary}}},
      {"fullDescription", llvm::json::Object{{"text", Text}}},
      {"help", llvm::json::Object{{"text", Text}, {"markdown", Markdown}}},
      {"helpUri", docsUri(Self, C.Name)},
      {"defaultConfiguration", llvm::json::Object{{"level", "warning"}}},
      {"properties",
       llvm::json::Object{{"hazards", std::move(Hazards)},
                          {"tags", llvm::json::Array{"cuda", "cuda-graphs"}}}}};
}

bool writeJson(llvm::StringRef Path, llvm::json::Value V, std::string &Error) {
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  if (EC) {
    Error = "cannot write '" + Path.str() + "': " + EC.message();
    return false;
  }
  OS << llvm::formatv("{0:2}", V) << "\n";
  return true;
}

bool writeSarif(llvm::StringRef Path, const std::vector<Finding> &All,
                const ReportRequest &R, bool Successful, int Exit,
                std::string &Error) {
  llvm::SmallString<256> Root;
  llvm::sys::fs::current_path(Root);
  llvm::json::Array Rules;
  std::map<std::string, unsigned> RuleIndex;
  for (const clang::cudagraph::CheckEntry &C : clang::cudagraph::allChecks()) {
    RuleIndex[C.Name.str()] = Rules.size();
    Rules.push_back(rule(C, R.Self));
  }
  llvm::json::Array Results, Notifications;
  for (const Finding &F : All) {
    if (F.Error) {
      llvm::json::Object N{{"level", "error"},
                           {"message", llvm::json::Object{{"text", F.Message}}},
                           {"descriptor", llvm::json::Object{{"id", F.Check}}}};
      if (!F.Where.File.empty())
        N["locations"] = llvm::json::Array{llvm::json::Object{
            {"physicalLocation", physicalLocation(F.Where, Root)}}};
      Notifications.push_back(std::move(N));
      continue;
    }
    if (!RuleIndex.count(F.Check)) {
      RuleIndex[F.Check] = Rules.size();
      Rules.push_back(llvm::json::Object{
          {"id", F.Check},
          {"shortDescription", llvm::json::Object{{"text", F.Check}}}});
    }
    llvm::json::Object Result{
        {"ruleId", F.Check},
        {"ruleIndex", RuleIndex[F.Check]},
        {"level", "warning"},
        {"message", llvm::json::Object{{"text", F.Message}}},
        {"locations",
         llvm::json::Array{llvm::json::Object{
             {"physicalLocation", physicalLocation(F.Where, Root)}}}},
        {"partialFingerprints",
         llvm::json::Object{{"cudagraphFindingHash/v1", F.Fingerprint}}}};
    llvm::json::Object Properties;
    if (!F.Hazard.empty())
      Properties["hazard"] = F.Hazard;
    if (!F.Function.empty())
      Properties["function"] = F.Function;
    if (!Properties.empty())
      Result["properties"] = std::move(Properties);
    if (!F.Notes.empty()) {
      // Notes run from the finding back to where capture begins; the code
      // flow runs forward, as the program does.
      llvm::json::Array Related, Steps;
      unsigned Id = 1;
      for (const Note &N : F.Notes) {
        if (N.Where.File.empty())
          continue;
        Related.push_back(llvm::json::Object{
            {"id", Id++},
            {"physicalLocation", physicalLocation(N.Where, Root)},
            {"message", llvm::json::Object{{"text", N.Message}}}});
      }
      for (auto It = F.Notes.rbegin(); It != F.Notes.rend(); ++It)
        if (!It->Where.File.empty())
          Steps.push_back(llvm::json::Object{
              {"location",
               llvm::json::Object{
                   {"physicalLocation", physicalLocation(It->Where, Root)},
                   {"message", llvm::json::Object{{"text", It->Message}}}}}});
      Steps.push_back(llvm::json::Object{
          {"location",
           llvm::json::Object{
               {"physicalLocation", physicalLocation(F.Where, Root)},
               {"message", llvm::json::Object{{"text", F.Message}}}}}});
      Result["relatedLocations"] = std::move(Related);
      Result["codeFlows"] = llvm::json::Array{llvm::json::Object{
          {"threadFlows", llvm::json::Array{llvm::json::Object{
                              {"locations", std::move(Steps)}}}}}};
    }
    Results.push_back(std::move(Result));
  }
  llvm::json::Object Invocation{{"executionSuccessful", Successful},
                                {"exitCode", Exit}};
  if (!Notifications.empty())
    Invocation["toolExecutionNotifications"] = std::move(Notifications);
  llvm::json::Object Run{
      {"tool",
       llvm::json::Object{
           {"driver",
            llvm::json::Object{{"name", "cudagraph-tidy"},
                               {"version", CUDAGRAPH_TIDY_VERSION},
                               {"semanticVersion", CUDAGRAPH_TIDY_VERSION},
                               {"rules", std::move(Rules)}}}}},
      {"originalUriBaseIds",
       llvm::json::Object{
           {"SRCROOT", llvm::json::Object{{"uri", fileUri(Root) + "/"}}}}},
      {"columnKind", "unicodeCodePoints"},
      {"invocations", llvm::json::Array{std::move(Invocation)}},
      {"results", std::move(Results)}};
  return writeJson(
      Path,
      llvm::json::Object{
          {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", llvm::json::Array{std::move(Run)}}},
      Error);
}

/// GitLab's Code Quality report: one issue per finding.
bool writeCodeQuality(llvm::StringRef Path, const std::vector<Finding> &All,
                      std::string &Error) {
  llvm::json::Array Issues;
  for (const Finding &F : All) {
    if (F.Error)
      continue;
    Issues.push_back(llvm::json::Object{
        {"description", F.Message},
        {"check_name", F.Check},
        {"fingerprint", F.Fingerprint},
        {"severity", "major"},
        {"location",
         llvm::json::Object{
             {"path", shown(F.Where.File)},
             {"lines", llvm::json::Object{{"begin", F.Where.Line}}}}}});
  }
  return writeJson(Path, std::move(Issues), Error);
}

bool writeBaseline(llvm::StringRef Path, const std::vector<Finding> &All,
                   std::string &Error) {
  llvm::json::Array Entries;
  for (const Finding &F : All) {
    if (F.Error || F.Fingerprint.empty() ||
        !llvm::StringRef(F.Check).starts_with("cudagraph-"))
      continue;
    Entries.push_back(llvm::json::Object{{"fingerprint", F.Fingerprint},
                                         {"check", F.Check},
                                         {"hazard", F.Hazard},
                                         {"function", F.Function},
                                         {"file", shown(F.Where.File)},
                                         {"line", F.Where.Line},
                                         {"message", F.Message}});
  }
  return writeJson(Path,
                   llvm::json::Object{{"tool", "cudagraph-tidy"},
                                      {"version", 1},
                                      {"findings", std::move(Entries)}},
                   Error);
}

} // namespace

int finishRun(const ReportRequest &R) {
  std::vector<Finding> All;
  std::string Error;
  if (!readFindings(R.Diagnostics, All, Error)) {
    llvm::errs() << "cudagraph-tidy: error: " << Error << "\n";
    return ExitFailure;
  }
  const auto &Log = findingLog();
  llvm::StringSet<> FindingFiles;
  unsigned Findings = 0, Errors = 0;
  for (const Finding &F : All) {
    if (F.Error) {
      ++Errors;
      continue;
    }
    ++Findings;
    FindingFiles.insert(F.Where.File);
  }
  // A file failed when it had compile errors or never reached the checks.
  unsigned Failed = 0;
  llvm::StringSet<> Requested;
  for (const std::string &S : R.Sources)
    Requested.insert(realPathOf(S));
  bool NothingChecked = Log.Units.empty() && !Errors && R.TidyExit == 0;
  if (!NothingChecked)
    for (const auto &S : Requested) {
      auto It = Log.Units.find(S.getKey());
      Failed += It == Log.Units.end() || It->second;
    }
  // Errors of the compiler driver (an unknown flag) name no file: they
  // count against every file; errors in a source count against it.
  bool DriverError = false;
  llvm::StringSet<> ErrorFiles;
  for (const Finding &F : All)
    if (F.Error) {
      if (F.Where.File.empty())
        DriverError = true;
      else
        ErrorFiles.insert(realPathOf(F.Where.File));
    }
  if (!Requested.empty() &&
      ((Log.Units.empty() && R.TidyExit != 0) || DriverError))
    Failed = Requested.size();
  else if (!NothingChecked)
    for (const auto &S : Requested) {
      auto It = Log.Units.find(S.getKey());
      if (It != Log.Units.end() && !It->second &&
          ErrorFiles.contains(S.getKey()))
        ++Failed;
    }

  int Exit = Failed ? ExitFailure : Findings ? ExitFindings : ExitClean;
  bool Ok = true;
  if (R.Sarif && !writeSarif(*R.Sarif, All, R, Failed == 0, Exit, Error))
    Ok = false;
  else if (R.WriteBaseline && !writeBaseline(*R.WriteBaseline, All, Error))
    Ok = false;
  else if (R.CodeQuality && !writeCodeQuality(*R.CodeQuality, All, Error))
    Ok = false;
  if (!Ok) {
    llvm::errs() << "cudagraph-tidy: error: " << Error << "\n";
    return ExitFailure;
  }

  if (NothingChecked) {
    llvm::errs() << "cudagraph-tidy: warning: no cudagraph check is enabled "
                    "for "
                 << (Requested.size() == 1 ? "this file" : "these files")
                 << "; the configuration turns them all off (see "
                    "--explain-config)\n";
    return Exit;
  }
  if (R.Quiet && !Findings && !Failed)
    return Exit;
  std::string Line =
      llvm::formatv("cudagraph-tidy: {0} finding{1} in {2} file{3}", Findings,
                    Findings == 1 ? "" : "s", FindingFiles.size(),
                    FindingFiles.size() == 1 ? "" : "s");
  Line += llvm::formatv("; {0} of {1} file{2} failed to analyze", Failed,
                        Requested.size(), Requested.size() == 1 ? "" : "s");
  if (Log.InBaseline)
    Line += llvm::formatv("; {0} in the baseline not shown", Log.InBaseline);
  if (Log.SuppressedOnChain)
    Line += llvm::formatv("; {0} suppressed by NOLINT on their call chain",
                          Log.SuppressedOnChain);
  if (Log.OutsideChanges)
    Line += llvm::formatv("; {0} outside the changed lines not shown",
                          Log.OutsideChanges);
  llvm::errs() << Line << "\n";
  return Exit;
}

} // namespace cudagraph
