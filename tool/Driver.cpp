//===--- Driver.cpp - cudagraph-tidy --------------------------------------===//

#include "Driver.h"
#include "CudaToolkitSupport.h"
#include "FindingLog.h"
#include "IndexBuilder.h"
#include "NvccCommand.h"
#include "ProjectIndex.h"
#include "Report.h"
#include "clang-tidy/tool/ClangTidyMain.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <thread>

#ifndef CUDAGRAPH_TIDY_VERSION
#define CUDAGRAPH_TIDY_VERSION "0.0.0"
#endif

namespace clang::tidy {
// Defined next to the cudagraph module; referencing it keeps the module's
// static registration linked into the tool.
extern volatile int CudaGraphModuleAnchorSource;
} // namespace clang::tidy

namespace cudagraph {

namespace {

/// clang-tidy accepts -name, --name, -name=value and --name=value.
bool isOption(llvm::StringRef Arg, llvm::StringRef Name) {
  Arg.consume_front("-");
  Arg.consume_front("-");
  return Arg == Name || Arg.starts_with((Name + "=").str());
}

/// clang-tidy options whose value may follow as the next argument.
bool takesSeparateValue(llvm::StringRef Arg) {
  if (Arg.contains('='))
    return false;
  for (const char *Name : {"p",
                           "checks",
                           "config",
                           "config-file",
                           "export-fixes",
                           "format-style",
                           "header-filter",
                           "line-filter",
                           "extra-arg",
                           "extra-arg-before",
                           "vfsoverlay",
                           "store-check-profile",
                           "load",
                           "exclude-header-filter",
                           "warnings-as-errors",
                           "export-clang-database",
                           "index-jobs",
                           "index-tu",
                           "index-key",
                           "project-index",
                           "sarif",
                           "baseline",
                           "write-baseline",
                           "changed-lines",
                           "gitlab-codequality"})
    if (isOption(Arg, Name))
      return true;
  return false;
}

/// The value of option \p Arg (`-p=DIR` or `-p DIR`).
std::string valueOf(const std::vector<std::string> &Args, size_t &I) {
  llvm::StringRef Arg = Args[I];
  if (Arg.contains('='))
    return Arg.split('=').second.str();
  return I + 1 < Args.size() ? Args[++I] : "";
}

/// Whether a check list or a YAML/JSON configuration text sets Checks.
bool setsChecks(llvm::StringRef Config) {
  for (size_t At = Config.find("Checks"); At != llvm::StringRef::npos;
       At = Config.find("Checks", At + 1)) {
    bool WordStart =
        At == 0 || !(isalnum(Config[At - 1]) || Config[At - 1] == '_');
    llvm::StringRef Rest = Config.drop_front(At + 6).ltrim(" \t\"'");
    if (WordStart && Rest.starts_with(":"))
      return true;
  }
  return false;
}

/// The Checks text of the nearest .clang-tidy above \p Source that sets it.
std::optional<std::string> configChecksFor(llvm::StringRef Source) {
  llvm::SmallString<256> Dir(Source);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_filename(Dir);
  while (!Dir.empty()) {
    for (const char *Name : {".clang-tidy", "_clang-tidy"}) {
      llvm::SmallString<256> Config(Dir);
      llvm::sys::path::append(Config, Name);
      if (auto Buffer = llvm::MemoryBuffer::getFile(Config)) {
        llvm::StringRef Text = (*Buffer)->getBuffer();
        if (setsChecks(Text))
          return Text.str();
      }
    }
    // The parent is a prefix of Dir: shorten Dir in place (assigning a
    // view of its own buffer to it is not allowed).
    size_t ParentSize = llvm::sys::path::parent_path(Dir).size();
    if (ParentSize == Dir.size())
      break;
    Dir.truncate(ParentSize);
  }
  return std::nullopt;
}

/// The command line split into clang-tidy's options, the sources, and the
/// compiler flags after `--`.
struct CommandLine {
  std::vector<std::string> Options; // in order, without sources
  std::vector<std::string> Sources;
  bool HasDashDash = false;
  std::vector<std::string> Flags; // after --
  std::optional<std::string> BuildPath;
  std::optional<std::string> ExportDatabase;
  bool Index = false; // --index: build or refresh the project index
  unsigned IndexJobs = 0;
  std::optional<std::string> IndexUnit, IndexKey, ProjectIndexPath;
  std::optional<std::string> Sarif, Baseline, WriteBaseline, ChangedLines,
      CodeQuality;
  std::optional<std::string> ExportFixes;
  bool Quiet = false;
  bool ExitZeroOnFindings = false;
  /// An option that makes clang-tidy print something and analyze nothing.
  bool InfoOnly = false;
};

CommandLine parse(const std::vector<std::string> &Args) {
  CommandLine C;
  for (size_t I = 0; I < Args.size(); ++I) {
    llvm::StringRef Arg = Args[I];
    if (Arg == "--") {
      C.HasDashDash = true;
      C.Flags.assign(Args.begin() + I + 1, Args.end());
      break;
    }
    if (!Arg.starts_with("-") || Arg == "-") {
      C.Sources.push_back(Args[I]);
      continue;
    }
    // The tool's own options with a value; clang-tidy never sees them.
    static const std::pair<const char *,
                           std::optional<std::string> CommandLine::*>
        Valued[] = {{"p", &CommandLine::BuildPath},
                    {"export-clang-database", &CommandLine::ExportDatabase},
                    {"index-tu", &CommandLine::IndexUnit},
                    {"index-key", &CommandLine::IndexKey},
                    {"project-index", &CommandLine::ProjectIndexPath},
                    {"sarif", &CommandLine::Sarif},
                    {"gitlab-codequality", &CommandLine::CodeQuality},
                    {"baseline", &CommandLine::Baseline},
                    {"write-baseline", &CommandLine::WriteBaseline},
                    {"changed-lines", &CommandLine::ChangedLines}};
    auto Own = llvm::find_if(
        Valued, [&](const auto &V) { return isOption(Arg, V.first); });
    if (Own != std::end(Valued)) {
      C.*(Own->second) = valueOf(Args, I);
      continue;
    }
    if (isOption(Arg, "index") && !Arg.contains('=')) {
      C.Index = true;
      continue;
    }
    if (isOption(Arg, "index-jobs")) {
      llvm::StringRef(valueOf(Args, I)).getAsInteger(10, C.IndexJobs);
      continue;
    }
    if (isOption(Arg, "exit-zero-on-findings")) {
      C.ExitZeroOnFindings = true;
      continue;
    }
    if (isOption(Arg, "export-fixes") && Arg.contains('='))
      C.ExportFixes = Arg.split('=').second.str();
    else if (isOption(Arg, "export-fixes") && I + 1 < Args.size())
      C.ExportFixes = Args[I + 1];
    if (isOption(Arg, "quiet"))
      C.Quiet = true;
    for (const char *Name :
         {"dump-config", "explain-config", "list-checks", "verify-config",
          "help", "help-list", "help-hidden", "version"})
      C.InfoOnly |= isOption(Arg, Name);
    C.Options.push_back(Args[I]);
    if (takesSeparateValue(Arg) && I + 1 < Args.size())
      C.Options.push_back(Args[++I]);
  }
  return C;
}

/// What chooseChecks did, for --explain-config.
std::string ChecksChoice;

/// Which checks to add so that cudagraph-* stays on unless the user named a
/// cudagraph check: rewrites --checks in \p Options or adds one.
void chooseChecks(std::vector<std::string> &Options,
                  const std::vector<std::string> &Sources) {
  std::string CommandChecks, InlineConfig;
  int ChecksAt = -1;
  bool ConfigFile = false;
  for (size_t I = 0; I < Options.size(); ++I) {
    llvm::StringRef O = Options[I];
    bool Separate = !O.contains('=') && I + 1 < Options.size();
    if (isOption(O, "checks")) {
      ChecksAt = I;
      CommandChecks = Separate ? Options[I + 1] : O.split('=').second.str();
    } else if (isOption(O, "config")) {
      InlineConfig = Separate ? Options[I + 1] : O.split('=').second.str();
    } else if (isOption(O, "config-file")) {
      ConfigFile = true;
      std::string Path = Separate ? Options[I + 1] : O.split('=').second.str();
      if (auto Buffer = llvm::MemoryBuffer::getFile(Path))
        InlineConfig = (*Buffer)->getBuffer().str();
    }
  }
  // The configuration the run reads: --config or --config-file, else the
  // .clang-tidy files above the sources.
  std::string ConfigChecks;
  bool ConfigSets = false;
  if (!InlineConfig.empty() || ConfigFile) {
    ConfigSets = setsChecks(InlineConfig);
    ConfigChecks = InlineConfig;
  } else {
    for (const std::string &S : Sources)
      if (std::optional<std::string> Text = configChecksFor(S)) {
        ConfigSets = true;
        ConfigChecks += *Text;
      }
  }
  bool Named =
      llvm::StringRef(CommandChecks).contains("cudagraph") ||
      (ConfigSets && llvm::StringRef(ConfigChecks).contains("cudagraph"));
  if (Named) {
    ChecksChoice = "the configuration or the command line names cudagraph "
                   "checks, so its choice is used as written";
    return; // the user's choice of cudagraph checks wins
  }
  ChecksChoice = "no configuration or --checks names a cudagraph check, so "
                 "cudagraph-tidy adds 'cudagraph-*' to the checks (shown "
                 "below as the command-line option '-checks'); name a "
                 "cudagraph check in Checks or --checks to choose them";
  if (ChecksAt >= 0) {
    std::string Value = CommandChecks + ",cudagraph-*";
    llvm::StringRef O = Options[ChecksAt];
    if (!O.contains('=')) {
      Options[ChecksAt + 1] = Value;
    } else {
      Options[ChecksAt] = O.split('=').first.str() + "=" + Value;
    }
    return;
  }
  // A configuration that chooses other checks keeps them; cudagraph-* is
  // added. With no choice at all, only the cudagraph checks run (not
  // clang-tidy's default clang-analyzer-* set).
  Options.insert(Options.begin(), ConfigSets ? "--checks=cudagraph-*"
                                             : "--checks=-*,cudagraph-*");
}

std::string absolute(llvm::StringRef Path) {
  llvm::SmallString<256> P(Path);
  llvm::sys::fs::make_absolute(P);
  llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

/// Writes a compile_commands.json holding \p Commands to \p Dir.
bool writeDatabase(llvm::StringRef Dir,
                   const std::vector<clang::tooling::CompileCommand> &Commands,
                   std::string &Error) {
  if (std::error_code EC = llvm::sys::fs::create_directories(Dir)) {
    Error = "cannot create '" + Dir.str() + "': " + EC.message();
    return false;
  }
  llvm::json::Array Entries;
  for (const clang::tooling::CompileCommand &C : Commands) {
    llvm::json::Array Arguments;
    for (const std::string &A : C.CommandLine)
      Arguments.push_back(A);
    Entries.push_back(llvm::json::Object{{"directory", C.Directory},
                                         {"file", C.Filename},
                                         {"arguments", std::move(Arguments)}});
  }
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, "compile_commands.json");
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  if (EC) {
    Error = "cannot write '" + std::string(Path) + "': " + EC.message();
    return false;
  }
  OS << llvm::formatv("{0:2}", llvm::json::Value(std::move(Entries))) << "\n";
  return true;
}

/// Rewrites every nvcc command of \p Commands for clang; returns how many.
std::optional<unsigned>
translateCommands(std::vector<clang::tooling::CompileCommand> &Commands,
                  std::string &Error) {
  unsigned Count = 0;
  for (clang::tooling::CompileCommand &C : Commands) {
    if (!isNvccCommand(C.CommandLine))
      continue;
    std::optional<NvccTranslation> T =
        translateNvccCommand(C.CommandLine, C.Directory, Error);
    if (!T) {
      Error = C.Filename + ": " + Error;
      return std::nullopt;
    }
    C.CommandLine = std::move(T->Args);
    ++Count;
  }
  return Count;
}

/// Says what went wrong; a usage error by default, an analysis failure
/// (an input that cannot be read) when \p Code says so.
int fail(llvm::StringRef Message, int Code = ExitUsage) {
  llvm::errs() << "cudagraph-tidy: error: " << Message << "\n";
  return Code;
}

/// cudagraph-tidy's own part of --help; clang-tidy's follows.
void printHelp() {
  llvm::outs() << "cudagraph-tidy " CUDAGRAPH_TIDY_VERSION
                  ": clang-tidy 19 with the cudagraph checks built in.\n\n"
                  "CUDAGRAPH CHECKS (on unless a configuration or --checks "
                  "names one):\n";
  for (const clang::cudagraph::CheckEntry &Check :
       clang::cudagraph::allChecks())
    llvm::outs() << "  " << Check.Name << "\n      " << Check.Summary << "\n";
  llvm::outs()
      << "\nCUDAGRAPH OPTIONS:\n"
         "  -p <dir>                      build directory "
         "(compile_commands.json;\n"
         "                                nvcc commands are translated)\n"
         "  --index                       build or refresh the project index\n"
         "  --index-jobs=<n>              units summarized in parallel\n"
         "  --project-index=<file>        use this index\n"
         "  --export-clang-database=<dir> write the translated database\n"
         "  --sarif=<file>                write SARIF 2.1.0\n"
         "  --gitlab-codequality=<file>   write a GitLab Code Quality report\n"
         "  --write-baseline=<file>       record this run's findings\n"
         "  --baseline=<file>             report only findings not recorded\n"
         "  --changed-lines=<diff|->      report only findings on lines a\n"
         "                                unified diff adds (or whose call\n"
         "                                chain passes one)\n"
         "  --exit-zero-on-findings       exit 0 for findings (CMake's\n"
         "                                CMAKE_<LANG>_CLANG_TIDY)\n"
         "\nCHECK OPTIONS (CheckOptions): CaptureBeginFunctions, "
         "CaptureEndFunctions,\n  CapturedFunctions, CaptureStatusFunctions, "
         "CaptureSafeFunctions, CustomOpRoots,\n  ProjectIndex, Baseline, "
         "MaxChainNotes, MaxCallSiteNotes.\n"
         "\nEXIT STATUS: 0 clean, 1 findings, 2 usage error, 3 a file could "
         "not be analyzed.\nSee man cudagraph-tidy and docs/ for more.\n\n";
}

} // namespace

std::vector<std::string> adjustArguments(const std::vector<std::string> &Args) {
  CommandLine C = parse(Args);
  std::vector<std::string> Result = C.Options;
  chooseChecks(Result, C.Sources);
  // Clang 19 knows CUDA up to 12.5 and warns about every newer toolkit.
  Result.insert(Result.begin(), "--extra-arg-before=-Wno-unknown-cuda-version");
  // Keep parsing past clang's default limit of 20 errors: code nvcc takes
  // and clang does not, or a header of another library version, would
  // otherwise hide the rest of the file, its captures included. A
  // -ferror-limit in the compile command comes later and wins.
  Result.insert(Result.begin(), "--extra-arg-before=-ferror-limit=0");
  // Clang looks for its own headers next to the running binary; this one
  // is not installed there. Without them CUDA files miss the wrappers
  // (cuda_wrappers/new, cmath, ...) and Thrust or CUB sorts fail to parse.
  // A -resource-dir in the compile command comes later and wins.
  if (llvm::sys::fs::is_directory(CUDAGRAPH_CLANG_RESOURCE_DIR "/include"))
    Result.insert(Result.begin(),
                  std::string("--extra-arg-before=-resource-dir=") +
                      CUDAGRAPH_CLANG_RESOURCE_DIR);
  if (C.BuildPath)
    Result.push_back("-p=" + *C.BuildPath);
  Result.insert(Result.end(), C.Sources.begin(), C.Sources.end());
  if (C.HasDashDash) {
    Result.push_back("--");
    Result.insert(Result.end(), C.Flags.begin(), C.Flags.end());
  }
  return Result;
}

int runCudaGraphTidy(int Argc, const char **Argv) {
  (void)clang::tidy::CudaGraphModuleAnchorSource;
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &OS) {
    OS << "cudagraph-tidy version " CUDAGRAPH_TIDY_VERSION
          " (the cudagraph checks built into clang-tidy "
       << LLVM_VERSION_STRING << ")\n";
  });
  std::vector<std::string> Args(Argv + 1, Argv + Argc);
  CommandLine C = parse(Args);
  std::optional<std::string> UserBuildPath = C.BuildPath;
  if (C.Index && !C.BuildPath)
    return fail("--index needs -p <build directory> (the directory holding "
                "compile_commands.json; the index is written there)");
  if (C.Index && C.HasDashDash)
    return fail("--index reads the compilation database; it takes no "
                "compiler flags after '--'");

  // nvcc flags after `--` (CMake's CMAKE_CUDA_CLANG_TIDY passes the whole
  // nvcc command line there): translate them for clang.
  if (C.HasDashDash && hasNvccOnlyFlags(C.Flags)) {
    std::vector<std::string> Command = C.Flags;
    if (!isNvccCommand(Command))
      Command.insert(Command.begin(), "nvcc");
    std::string Error;
    std::optional<NvccTranslation> T = translateNvccCommand(Command, "", Error);
    if (!T)
      return fail(Error);
    C.Flags.assign(T->Args.begin() + 1, T->Args.end());
  }

  // A compilation database: an explicit -p must load; nvcc commands in it
  // are translated into a database of clang commands for this run.
  std::string TempDir;
  auto RemoveTemp = llvm::make_scope_exit([&] {
    if (!TempDir.empty())
      llvm::sys::fs::remove_directories(TempDir);
  });
  if (!C.HasDashDash &&
      (C.BuildPath || !C.Sources.empty() || C.ExportDatabase)) {
    std::string Error;
    std::unique_ptr<clang::tooling::CompilationDatabase> DB;
    if (C.BuildPath) {
      DB = clang::tooling::CompilationDatabase::loadFromDirectory(*C.BuildPath,
                                                                  Error);
      if (!DB)
        return fail("no usable compilation database in '" + *C.BuildPath +
                        "': " + Error,
                    ExitFailure);
    } else if (!C.Sources.empty()) {
      DB = clang::tooling::CompilationDatabase::autoDetectFromSource(
          absolute(C.Sources.front()), Error);
    } else {
      return fail("--export-clang-database needs -p <build directory>");
    }
    if (DB) {
      std::vector<clang::tooling::CompileCommand> Commands;
      if (C.Sources.empty()) {
        Commands = DB->getAllCompileCommands();
      } else {
        for (const std::string &S : C.Sources) {
          std::vector<clang::tooling::CompileCommand> Found =
              DB->getCompileCommands(absolute(S));
          Commands.insert(Commands.end(), Found.begin(), Found.end());
        }
      }
      std::optional<unsigned> Translated = translateCommands(Commands, Error);
      if (!Translated)
        return fail(Error);
      if (C.ExportDatabase) {
        if (!writeDatabase(*C.ExportDatabase, Commands, Error))
          return fail(Error);
        llvm::errs() << "cudagraph-tidy: wrote " << Commands.size()
                     << " compile commands (" << *Translated
                     << " translated from nvcc) to " << *C.ExportDatabase
                     << "/compile_commands.json\n";
        return 0;
      }
      if (*Translated) {
        llvm::SmallString<128> Prefix, Dir;
        llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Prefix);
        llvm::sys::path::append(Prefix, "cudagraph-tidy-db");
        if (std::error_code EC =
                llvm::sys::fs::createUniqueDirectory(Prefix, Dir))
          return fail("cannot create a temporary directory: " + EC.message());
        TempDir = std::string(Dir);
        if (!writeDatabase(TempDir, Commands, Error))
          return fail(Error);
        C.BuildPath = TempDir;
      }
    }
  }

  if (C.Index) {
    IndexRequest R;
    R.Self = llvm::sys::fs::getMainExecutable(
        Argv[0], reinterpret_cast<void *>(&runCudaGraphTidy));
    R.BuildPath = *UserBuildPath;
    R.DatabaseDir = *C.BuildPath;
    std::string Error;
    std::unique_ptr<clang::tooling::CompilationDatabase> DB =
        clang::tooling::CompilationDatabase::loadFromDirectory(R.DatabaseDir,
                                                               Error);
    if (!DB)
      return fail("no usable compilation database in '" + R.DatabaseDir +
                      "': " + Error,
                  ExitFailure);
    if (C.Sources.empty()) {
      R.Commands = DB->getAllCompileCommands();
    } else {
      for (const std::string &S : C.Sources) {
        if (!llvm::sys::fs::exists(S))
          return fail("'" + S + "': no such file");
        std::vector<clang::tooling::CompileCommand> Found =
            DB->getCompileCommands(absolute(S));
        if (Found.empty())
          return fail("'" + S + "' is not in the compilation database of '" +
                      *UserBuildPath + "'");
        R.Commands.insert(R.Commands.end(), Found.begin(), Found.end());
      }
    }
    // Only the options that change what the analysis sees travel to the
    // units' runs; which checks report does not matter there.
    for (size_t I = 0; I < C.Options.size(); ++I) {
      llvm::StringRef O = C.Options[I];
      bool Keep = false;
      for (const char *Name : {"config", "config-file", "extra-arg",
                               "extra-arg-before", "vfsoverlay"})
        Keep |= isOption(O, Name);
      if (!Keep)
        continue;
      R.Options.push_back(C.Options[I]);
      if (takesSeparateValue(O) && I + 1 < C.Options.size())
        R.Options.push_back(C.Options[++I]);
    }
    // The units read the index being refreshed for the events of functions
    // defined in other units.
    R.Options.push_back("--project-index=" + indexPathFor(R.BuildPath));
    R.Jobs = C.IndexJobs ? C.IndexJobs
                         : std::max(1u, std::thread::hardware_concurrency());
    R.Quiet = C.Quiet;
    return buildIndex(R);
  }

  // The project index: the one named, else the one next to the build.
  if (C.IndexUnit) {
    // A unit's run for --index: summarize, report nothing.
    clang::cudagraph::setSummaryOutput(*C.IndexUnit, C.IndexKey.value_or(""));
    std::vector<std::string> Kept;
    for (size_t I = 0; I < C.Options.size(); ++I) {
      llvm::StringRef O = C.Options[I];
      bool Drop = isOption(O, "checks") || isOption(O, "warnings-as-errors") ||
                  isOption(O, "export-fixes") || isOption(O, "fix") ||
                  isOption(O, "fix-errors");
      if (Drop) {
        if (takesSeparateValue(O) && I + 1 < C.Options.size())
          ++I;
        continue;
      }
      Kept.push_back(C.Options[I]);
    }
    Kept.push_back("--checks=-*,cudagraph-capture-left-open");
    C.Options = std::move(Kept);
    std::string Existing = C.ProjectIndexPath ? *C.ProjectIndexPath
                           : UserBuildPath    ? indexPathFor(*UserBuildPath)
                                              : "";
    if (!Existing.empty() && llvm::sys::fs::exists(Existing))
      clang::cudagraph::setDefaultProjectIndex(Existing);
  } else if (C.ProjectIndexPath) {
    std::string Error;
    if (!clang::cudagraph::ProjectIndex::load(*C.ProjectIndexPath, Error))
      return fail(Error, ExitFailure);
    clang::cudagraph::setDefaultProjectIndex(*C.ProjectIndexPath);
  } else if (UserBuildPath && !C.ExportDatabase) {
    clang::cudagraph::setDefaultProjectIndex(
        checkIndex(*UserBuildPath, C.Sources, C.Quiet));
  }

  // Filters the checks apply before they report, and the diagnostics file
  // the summary, SARIF and baselines are made from.
  bool Analyzes = !C.IndexUnit && !C.InfoOnly && !C.Sources.empty();
  if (!Analyzes && (C.Sarif || C.Baseline || C.WriteBaseline ||
                    C.ChangedLines || C.CodeQuality))
    return fail("--sarif, --baseline, --write-baseline and --changed-lines "
                "need source files to analyze");
  auto &Filters = clang::tidy::cudagraph::findingFilters();
  std::string Error;
  // A baseline being written holds every finding, old ones included.
  if (C.Baseline && !C.WriteBaseline &&
      !Filters.loadBaseline(*C.Baseline, Error))
    return fail(Error);
  if (C.ChangedLines) {
    std::unique_ptr<llvm::MemoryBuffer> Diff;
    if (auto Buffer = *C.ChangedLines == "-"
                          ? llvm::MemoryBuffer::getSTDIN()
                          : llvm::MemoryBuffer::getFile(*C.ChangedLines))
      Diff = std::move(*Buffer);
    else
      return fail("cannot read the diff '" + *C.ChangedLines +
                  "': " + Buffer.getError().message());
    llvm::SmallString<256> Root;
    llvm::sys::fs::current_path(Root);
    if (!Filters.loadChangedLines(Diff->getBuffer(), Root, Error))
      return fail(Error);
  }
  std::string DiagnosticsFile;
  if (Analyzes) {
    if (C.ExportFixes) {
      DiagnosticsFile = *C.ExportFixes;
      llvm::sys::fs::remove(DiagnosticsFile);
    } else {
      llvm::SmallString<128> Path;
      if (std::error_code EC = llvm::sys::fs::createTemporaryFile(
              "cudagraph-tidy-diagnostics", "yaml", Path))
        return fail("cannot create a temporary file: " + EC.message(),
                    ExitFailure);
      llvm::sys::fs::remove(Path);
      DiagnosticsFile = std::string(Path);
      C.Options.push_back("--export-fixes=" + DiagnosticsFile);
    }
  }
  auto RemoveDiagnostics = llvm::make_scope_exit([&] {
    if (!DiagnosticsFile.empty() && !C.ExportFixes)
      llvm::sys::fs::remove(DiagnosticsFile);
  });

  std::vector<std::string> Rebuilt = C.Options;
  if (C.BuildPath)
    Rebuilt.push_back("-p=" + *C.BuildPath);
  Rebuilt.insert(Rebuilt.end(), C.Sources.begin(), C.Sources.end());
  if (C.HasDashDash) {
    Rebuilt.push_back("--");
    Rebuilt.insert(Rebuilt.end(), C.Flags.begin(), C.Flags.end());
  }
  std::vector<std::string> Adjusted = adjustArguments(Rebuilt);
  // CUDA and libtorch parsing support, whichever checks the configuration
  // turns on: last in --checks, so no earlier glob turns it off.
  if (Analyzes) {
    std::string Support = clang::tidy::cudagraph::ParseSupportCheckName;
    bool Added = false;
    for (size_t I = 0; I < Adjusted.size() && Adjusted[I] != "--"; ++I) {
      llvm::StringRef A = Adjusted[I];
      if (!isOption(A, "checks"))
        continue;
      if (A.contains('='))
        Adjusted[I] += "," + Support;
      else if (I + 1 < Adjusted.size())
        Adjusted[I + 1] += "," + Support;
      Added = true;
      break;
    }
    if (!Added)
      Adjusted.insert(Adjusted.begin(), "--checks=" + Support);
  }
  std::vector<const char *> NewArgv;
  NewArgv.push_back(Argv[0]);
  for (const std::string &A : Adjusted)
    NewArgv.push_back(A.c_str());
  for (const std::string &O : C.Options) {
    if (isOption(O, "explain-config"))
      llvm::outs() << "cudagraph-tidy: " << ChecksChoice << ".\n";
    if (isOption(O, "help") || isOption(O, "help-list"))
      printHelp();
  }
  int TidyExit = clang::tidy::clangTidyMain(static_cast<int>(NewArgv.size()),
                                            NewArgv.data());
  if (!Analyzes)
    return TidyExit;
  ReportRequest Report;
  Report.Diagnostics = DiagnosticsFile;
  Report.Sources = C.Sources;
  Report.Sarif = C.Sarif;
  Report.WriteBaseline = C.WriteBaseline;
  Report.CodeQuality = C.CodeQuality;
  Report.Self = llvm::sys::fs::getMainExecutable(
      Argv[0], reinterpret_cast<void *>(&runCudaGraphTidy));
  Report.Quiet = C.Quiet;
  Report.TidyExit = TidyExit;
  int Exit = finishRun(Report);
  return Exit == ExitFindings && C.ExitZeroOnFindings ? ExitClean : Exit;
}

} // namespace cudagraph
