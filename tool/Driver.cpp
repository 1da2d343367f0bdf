//===--- Driver.cpp - cudagraph-tidy --------------------------------------===//

#include "Driver.h"
#include "clang-tidy/tool/ClangTidyMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace clang::tidy {
// Defined next to the cudagraph module; referencing it keeps the module's
// static registration linked into the tool.
extern volatile int CudaGraphModuleAnchorSource;
} // namespace clang::tidy

namespace cudagraph {

static bool isOption(llvm::StringRef Arg, llvm::StringRef Name) {
  // clang-tidy accepts -name, --name, -name=value and --name=value.
  Arg.consume_front("-");
  Arg.consume_front("-");
  return Arg == Name || Arg.starts_with((Name + "=").str());
}

/// Whether a .clang-tidy file above \p Source sets Checks.
static bool configChoosesChecks(llvm::StringRef Source) {
  llvm::SmallString<256> Dir(Source);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_filename(Dir);
  while (!Dir.empty()) {
    for (const char *Name : {".clang-tidy", "_clang-tidy"}) {
      llvm::SmallString<256> Config(Dir);
      llvm::sys::path::append(Config, Name);
      if (auto Buffer = llvm::MemoryBuffer::getFile(Config)) {
        llvm::StringRef Text = (*Buffer)->getBuffer();
        if (Text.starts_with("Checks:") || Text.contains("\nChecks:"))
          return true;
      }
    }
    llvm::StringRef Parent = llvm::sys::path::parent_path(Dir);
    if (Parent == Dir)
      break;
    Dir = Parent;
  }
  return false;
}

std::vector<std::string> adjustArguments(const std::vector<std::string> &Args) {
  bool ChecksGiven = false;
  std::vector<std::string> Sources;
  bool AfterDashDash = false;
  for (size_t I = 0; I < Args.size(); ++I) {
    llvm::StringRef Arg = Args[I];
    if (AfterDashDash)
      continue;
    if (Arg == "--") {
      AfterDashDash = true;
      continue;
    }
    if (isOption(Arg, "checks") || isOption(Arg, "config") ||
        isOption(Arg, "config-file") || isOption(Arg, "dump-config") ||
        isOption(Arg, "explain-config"))
      ChecksGiven = true;
    if (!Arg.starts_with("-"))
      Sources.push_back(Args[I]);
  }
  for (const std::string &Source : Sources)
    ChecksGiven = ChecksGiven || configChoosesChecks(Source);

  std::vector<std::string> Result;
  if (!ChecksGiven)
    Result.push_back("--checks=-*,cudagraph-*");
  // Clang 19 knows CUDA up to 12.5 and warns about every newer toolkit.
  Result.push_back("--extra-arg-before=-Wno-unknown-cuda-version");
  Result.insert(Result.end(), Args.begin(), Args.end());
  return Result;
}

int runCudaGraphTidy(int Argc, const char **Argv) {
  (void)clang::tidy::CudaGraphModuleAnchorSource;
  std::vector<std::string> Args(Argv + 1, Argv + Argc);
  std::vector<std::string> Adjusted = adjustArguments(Args);
  std::vector<const char *> NewArgv;
  NewArgv.push_back(Argv[0]);
  for (const std::string &A : Adjusted)
    NewArgv.push_back(A.c_str());
  return clang::tidy::clangTidyMain(static_cast<int>(NewArgv.size()),
                                    NewArgv.data());
}

} // namespace cudagraph
