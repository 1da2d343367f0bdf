//===--- IndexBuilder.cpp - cudagraph-tidy --------------------------------===//

#include "IndexBuilder.h"
#include "ProjectIndex.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include <chrono>
#include <thread>

#ifndef CUDAGRAPH_TIDY_VERSION
#define CUDAGRAPH_TIDY_VERSION "0.0.0"
#endif

namespace cudagraph {

using clang::cudagraph::IndexInput;
using clang::cudagraph::ProjectIndex;
using clang::cudagraph::TuSummary;

namespace {

std::string absolute(llvm::StringRef Path, llvm::StringRef Base = "") {
  llvm::SmallString<256> P(Path);
  if (!Base.empty() && llvm::sys::path::is_relative(P)) {
    llvm::SmallString<256> B(Base);
    llvm::sys::path::append(B, P);
    P = B;
  }
  return clang::cudagraph::normalPath(P);
}

std::string indexDir(const std::string &BuildPath) {
  llvm::SmallString<256> Dir(BuildPath);
  llvm::sys::path::append(Dir, "cudagraph-index");
  return absolute(Dir);
}

/// A unit to summarize: its command, the file its summary goes to and the
/// key that says whether an existing summary still fits.
struct Unit {
  const clang::tooling::CompileCommand *Command;
  std::string File, SummaryPath, Key;
  std::optional<TuSummary> Summary;
};

std::string hex(uint64_t V) { return llvm::utohexstr(V, /*LowerCase=*/true); }

/// The analyzer that makes the summaries: the content of this executable,
/// so that a rebuilt or upgraded tool summarizes every unit again.
const std::string &toolIdentity() {
  static const std::string Identity = [] {
    static int Anchor;
    std::string Exe = llvm::sys::fs::getMainExecutable(
        "cudagraph-tidy", reinterpret_cast<void *>(&Anchor));
    return Exe.empty() ? std::string()
                       : hex(clang::cudagraph::hashFile(Exe));
  }();
  return Identity;
}

/// The key of a unit: tool version and build, options the analysis reads,
/// the command line and the source's content. Headers are checked through
/// the inputs the summary lists.
std::string unitKey(const clang::tooling::CompileCommand &C,
                    const std::string &File,
                    const std::vector<std::string> &Options) {
  std::string Text = CUDAGRAPH_TIDY_VERSION "\n" + toolIdentity() + "\n" +
                     std::to_string(clang::cudagraph::IndexFormatVersion) +
                     "\n" + C.Directory + "\n";
  for (const std::string &A : C.CommandLine)
    Text += A + '\0';
  Text += '\n';
  for (const std::string &O : Options)
    Text += O + '\0';
  Text += '\n' + hex(clang::cudagraph::hashFile(File));
  return hex(llvm::xxh3_64bits(Text));
}

/// Whether every input the summary lists still holds what it held.
bool inputsUnchanged(const TuSummary &S) {
  for (const IndexInput &In : S.Inputs) {
    llvm::sys::fs::file_status St;
    if (llvm::sys::fs::status(In.Path, St))
      return false;
    if (St.getSize() == In.Size &&
        llvm::sys::toTimeT(St.getLastModificationTime()) == In.MTime)
      continue;
    if (clang::cudagraph::hashFile(In.Path) != In.Hash)
      return false;
  }
  return true;
}

/// Whether the index gives the functions \p S calls from other units the
/// same events it gave when S was made: a begin wrapper defined elsewhere
/// changes the regions of its callers.
bool eventsAgree(const TuSummary &S, const ProjectIndex &I) {
  std::map<std::string, std::string> Now;
  for (const std::string &K : S.Externs) {
    std::optional<clang::cudagraph::IndexedFunction> Overridden;
    const clang::cudagraph::IndexedFunction *F = I.function(K);
    // A virtual method with no body anywhere: its overrides' event (the
    // analysis asks only for virtual ones; a non-virtual function with no
    // body has no overriders either).
    if (!F && (Overridden = I.overriders(K)))
      F = &*Overridden;
    if (F && F->Event != clang::cudagraph::CaptureEvent::None)
      Now[K] = clang::cudagraph::eventName(F->Event);
  }
  return Now == S.EventsUsed;
}

class Runner {
public:
  Runner(const IndexRequest &R, std::string LogDir)
      : R(R), LogDir(std::move(LogDir)) {}

  /// Summarizes \p Units in parallel; returns how many failed.
  unsigned run(std::vector<Unit *> Units) {
    struct Running {
      llvm::sys::ProcessInfo PI;
      Unit *U;
      std::string Log;
    };
    std::vector<Running> Active;
    unsigned Failed = 0;
    size_t Next = 0;
    while (Next < Units.size() || !Active.empty()) {
      while (Next < Units.size() && Active.size() < std::max(1u, R.Jobs)) {
        Unit *U = Units[Next];
        std::string Log = LogDir + "/" + llvm::sys::path::filename(U->SummaryPath).str() + ".log";
        llvm::sys::fs::remove(U->SummaryPath);
        std::vector<std::string> Args{R.Self,
                                      "--index-tu=" + U->SummaryPath,
                                      "--index-key=" + U->Key,
                                      "--quiet",
                                      "-p=" + R.DatabaseDir};
        Args.insert(Args.end(), R.Options.begin(), R.Options.end());
        Args.push_back(U->File);
        std::vector<llvm::StringRef> Refs(Args.begin(), Args.end());
        std::optional<llvm::StringRef> Redirects[] = {
            llvm::StringRef(""), llvm::StringRef("/dev/null"),
            llvm::StringRef(Log)};
        std::string Error;
        bool ExecFailed = false;
        llvm::sys::ProcessInfo PI = llvm::sys::ExecuteNoWait(
            R.Self, Refs, std::nullopt, Redirects, 0, &Error, &ExecFailed);
        ++Next;
        if (ExecFailed) {
          llvm::errs() << "cudagraph-tidy: error: cannot run '" << R.Self
                       << "': " << Error << "\n";
          ++Failed;
          continue;
        }
        Active.push_back({PI, U, Log});
      }
      bool Progress = false;
      for (size_t I = 0; I < Active.size();) {
        llvm::sys::ProcessInfo Done =
            llvm::sys::Wait(Active[I].PI, 0, nullptr, nullptr, true);
        if (Done.Pid == 0) {
          ++I;
          continue;
        }
        Progress = true;
        if (!collect(*Active[I].U, Active[I].Log))
          ++Failed;
        Active.erase(Active.begin() + I);
      }
      if (!Progress && !Active.empty())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return Failed;
  }

private:
  bool collect(Unit &U, const std::string &Log) {
    std::string Error;
    U.Summary = clang::cudagraph::readSummary(U.SummaryPath, Error);
    if (U.Summary) {
      llvm::sys::fs::remove(Log);
      return true;
    }
    llvm::errs() << "cudagraph-tidy: error: no summary for " << U.File;
    if (auto Buffer = llvm::MemoryBuffer::getFile(Log)) {
      llvm::StringRef Text = (*Buffer)->getBuffer().trim();
      if (Text.size() > 2000)
        Text = Text.take_back(2000);
      if (!Text.empty())
        llvm::errs() << ":\n" << Text;
    }
    llvm::errs() << "\n";
    return false;
  }

  const IndexRequest &R;
  std::string LogDir;
};

} // namespace

std::string indexPathFor(const std::string &BuildPath) {
  return indexDir(BuildPath) + "/index.json";
}

int buildIndex(const IndexRequest &R) {
  auto Start = std::chrono::steady_clock::now();
  std::string Dir = indexDir(R.BuildPath);
  std::string UnitsDir = Dir + "/units";
  if (std::error_code EC = llvm::sys::fs::create_directories(UnitsDir)) {
    llvm::errs() << "cudagraph-tidy: error: cannot create '" << UnitsDir
                 << "': " << EC.message() << "\n";
    return 2;
  }
  std::string IndexPath = Dir + "/index.json";

  std::vector<Unit> Units;
  for (const clang::tooling::CompileCommand &C : R.Commands) {
    Unit &U = Units.emplace_back();
    U.Command = &C;
    U.File = absolute(C.Filename, C.Directory);
    U.Key = unitKey(C, U.File, R.Options);
    std::string Name = U.File + '\0' + C.Directory + '\0';
    for (const std::string &A : C.CommandLine)
      Name += A + '\0';
    U.SummaryPath = UnitsDir + "/" +
                    llvm::sys::path::filename(U.File).str() + "-" +
                    hex(llvm::xxh3_64bits(Name)) + ".json";
  }

  // Up to date: same key, headers unchanged.
  std::vector<Unit *> Stale;
  for (Unit &U : Units) {
    std::string Error;
    std::optional<TuSummary> Old =
        clang::cudagraph::readSummary(U.SummaryPath, Error);
    if (Old && Old->Key == U.Key && inputsUnchanged(*Old))
      U.Summary = std::move(Old);
    else
      Stale.push_back(&U);
  }
  if (!R.Quiet)
    llvm::errs() << "cudagraph-tidy: indexing " << Units.size() << " units ("
                 << Units.size() - Stale.size() << " up to date) with "
                 << R.Jobs << " job" << (R.Jobs == 1 ? "" : "s") << "\n";

  Runner Run(R, UnitsDir);
  unsigned Failed = Run.run(Stale);
  unsigned Summarized = Stale.size();

  auto Merge = [&]() -> std::optional<ProjectIndex> {
    std::vector<TuSummary> Summaries;
    for (Unit &U : Units)
      if (U.Summary)
        Summaries.push_back(*U.Summary);
    ProjectIndex I = ProjectIndex::merge(Summaries);
    std::string Error;
    if (!clang::cudagraph::writeJSONFile(IndexPath, I.toJSON(), Error)) {
      llvm::errs() << "cudagraph-tidy: error: " << Error << "\n";
      return std::nullopt;
    }
    return I;
  };
  std::optional<ProjectIndex> Index = Merge();
  if (!Index)
    return 2;
  // Events of functions defined in other units change the regions of their
  // callers: summarize those callers again until the events settle.
  for (unsigned Round = 0; Round < 3; ++Round) {
    std::vector<Unit *> Again;
    for (Unit &U : Units)
      if (U.Summary && !eventsAgree(*U.Summary, *Index))
        Again.push_back(&U);
    if (Again.empty())
      break;
    Failed += Run.run(Again);
    Summarized += Again.size();
    Index = Merge();
    if (!Index)
      return 2;
  }

  unsigned WithErrors = 0;
  for (Unit &U : Units)
    if (U.Summary && U.Summary->CompileErrors) {
      if (!WithErrors)
        llvm::errs() << "cudagraph-tidy: warning: units with compile errors "
                        "(their summaries may miss calls):\n";
      if (++WithErrors <= 10)
        llvm::errs() << "  " << U.File << "\n";
    }
  double Seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - Start)
                       .count();
  if (!R.Quiet) {
    unsigned Captured = 0, Hazards = 0;
    llvm::json::Value V = Index->toJSON();
    if (const llvm::json::Array *A = V.getAsObject()->getArray("captured"))
      for (const llvm::json::Value &R : *A) {
        ++Captured;
        const llvm::json::Object *O = R.getAsObject();
        std::optional<llvm::StringRef> Key = O ? O->getString("key") : std::nullopt;
        if (const clang::cudagraph::IndexedFunction *F =
                Key ? Index->function(*Key) : nullptr)
          Hazards += F->Hazards.size();
      }
    llvm::errs() << "cudagraph-tidy: wrote " << IndexPath << ": "
                 << Units.size() << " units (" << Summarized
                 << " summarized), " << Captured
                 << " functions run under capture from a root, with "
                 << Hazards << " hazard" << (Hazards == 1 ? "" : "s")
                 << " in their own calls, in "
                 << llvm::format("%.1f", Seconds) << " s\n";
  }
  if (Failed) {
    llvm::errs() << "cudagraph-tidy: error: " << Failed
                 << " units could not be summarized\n";
    return 1;
  }
  return 0;
}

std::string checkIndex(const std::string &BuildPath,
                       const std::vector<std::string> &Sources, bool Quiet) {
  std::string Path = indexPathFor(BuildPath);
  if (!llvm::sys::fs::exists(Path)) {
    if (!Quiet)
      llvm::errs() << "cudagraph-tidy: note: no project index in "
                   << indexDir(BuildPath)
                   << ": calls from other files are not followed; build it "
                      "with 'cudagraph-tidy -p "
                   << BuildPath << " --index'\n";
    return "";
  }
  std::string Error;
  std::shared_ptr<const ProjectIndex> I = ProjectIndex::load(Path, Error);
  if (!I) {
    llvm::errs() << "cudagraph-tidy: warning: " << Error << "\n";
    return "";
  }
  if (Quiet)
    return Path;
  std::vector<std::string> Changed = I->changedInputs();
  std::vector<std::string> Missing;
  for (const std::string &S : Sources)
    if (!I->units().count(absolute(S)))
      Missing.push_back(S);
  if (!Changed.empty() || !Missing.empty()) {
    llvm::errs() << "cudagraph-tidy: note: the project index in "
                 << indexDir(BuildPath) << " is out of date (";
    if (!Changed.empty())
      llvm::errs() << Changed.size() << " file"
                   << (Changed.size() == 1 ? "" : "s")
                   << " changed since it was built, first "
                   << llvm::sys::path::filename(Changed.front());
    if (!Changed.empty() && !Missing.empty())
      llvm::errs() << "; ";
    if (!Missing.empty())
      llvm::errs() << Missing.size() << " file"
                   << (Missing.size() == 1 ? "" : "s") << " not in it, first "
                   << llvm::sys::path::filename(Missing.front());
    llvm::errs() << "): findings across files may be missing or outdated; "
                    "refresh it with 'cudagraph-tidy -p "
                 << BuildPath << " --index'\n";
  }
  return Path;
}

} // namespace cudagraph
