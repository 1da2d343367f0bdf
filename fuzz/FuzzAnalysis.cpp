//===--- FuzzAnalysis.cpp - the capture analysis under a fuzzer -----------===//
//
// Builds a translation unit from the input (SourceGrammar) and runs every
// cudagraph check on it in-process, as cudagraph-tidy would: the hermetic
// libtorch and CUDA stubs on the include path, the unit in memory. A crash,
// a sanitizer report or a hang is a finding; diagnostics are not.
//
// Under libFuzzer the prelude every unit starts with is parsed once, into a
// precompiled header made with clang++-19 (CUDAGRAPH_FUZZ_CLANG overrides)
// when the fuzzer starts: that makes each run a few times faster. Without
// it (the replay tool, or no clang), units are parsed whole.
//
//===----------------------------------------------------------------------===//

#include "SourceGrammar.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang-tidy/ClangTidyOptions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#ifndef CUDAGRAPH_FUZZ_INPUTS
#error "CUDAGRAPH_FUZZ_INPUTS must name test/Inputs"
#endif

using namespace clang;
using namespace clang::tidy;

static std::string stubIncludes() {
  std::string Inputs = CUDAGRAPH_FUZZ_INPUTS;
  return "-isystem " + Inputs + "/libtorch/include -isystem " + Inputs +
         "/cuda/include";
}

/// The precompiled prelude, or "" when there is none.
static std::string &preludePch() {
  static std::string Path;
  return Path;
}

#ifdef CUDAGRAPH_FUZZ_LIBFUZZER
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::string Dir = "/tmp/cudagraph-fuzz-pch." + std::to_string(getpid());
  std::string Header = Dir + ".h", Pch = Dir + ".pch";
  std::ofstream(Header) << cudagraph::fuzz::prelude();
  const char *Clang = std::getenv("CUDAGRAPH_FUZZ_CLANG");
  std::string Command = std::string(Clang ? Clang : "clang++-19") +
                        " -std=c++17 -x c++-header " + stubIncludes() + " " +
                        Header + " -o " + Pch + " 2>/dev/null";
  if (std::system(Command.c_str()) == 0)
    preludePch() = Pch;
  else
    std::fprintf(stderr,
                 "fuzz: no precompiled prelude (%s failed); units "
                 "are parsed whole\n",
                 Command.c_str());
  return 0;
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  // Larger inputs only make the parser slower, not the analysis deeper.
  if (Size > 16384)
    return -1;
  std::string Source = cudagraph::fuzz::sourceFor(Data, Size);

  ClangTidyOptions Options = ClangTidyOptions::getDefaults();
  Options.Checks = "-*,cudagraph-*,cuda-parse-support";
  ClangTidyContext Context(std::make_unique<DefaultOptionsProvider>(
      ClangTidyGlobalOptions(), Options));

  // The unit lives in memory; its directory must also exist on disk, since
  // the tool changes into the compilation directory.
  const std::string File = "/cudagraph-fuzz-input.cpp";

  std::string Inputs = CUDAGRAPH_FUZZ_INPUTS;
  std::vector<std::string> Flags = {"-std=c++17", "-fsyntax-only",
                                    "-w",         "-ferror-limit=0",
                                    "-isystem",   Inputs + "/libtorch/include",
                                    "-isystem",   Inputs + "/cuda/include"};
  llvm::StringRef Prelude = cudagraph::fuzz::prelude();
  if (!preludePch().empty() && llvm::StringRef(Source).starts_with(Prelude)) {
    // The same text, its first lines from the precompiled header.
    Source =
        std::string(Prelude.count('\n'), '\n') + Source.substr(Prelude.size());
    Flags.push_back("-include-pch");
    Flags.push_back(preludePch());
  }
  tooling::FixedCompilationDatabase Database("/", Flags);
  auto Memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  Memory->addFile(File, 0, llvm::MemoryBuffer::getMemBufferCopy(Source, File));
  auto Files = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      llvm::vfs::getRealFileSystem());
  Files->pushOverlay(Memory);

  std::vector<ClangTidyError> Errors =
      runClangTidy(Context, Database, {File}, Files, /*ApplyAnyFix=*/false);
  (void)Errors;
  return 0;
}
