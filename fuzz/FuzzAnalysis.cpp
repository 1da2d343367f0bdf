//===--- FuzzAnalysis.cpp - the capture analysis under a fuzzer -----------===//
//
// Builds a translation unit from the input (SourceGrammar) and runs every
// cudagraph check on it in-process, as cudagraph-tidy would: the hermetic
// libtorch and CUDA stubs on the include path, the unit in memory. A crash,
// a sanitizer report or a hang is a finding; diagnostics are not.
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
#include <string>
#include <vector>

#ifndef CUDAGRAPH_FUZZ_INPUTS
#error "CUDAGRAPH_FUZZ_INPUTS must name test/Inputs"
#endif

using namespace clang;
using namespace clang::tidy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  // Larger inputs only make the parser slower, not the analysis deeper.
  if (Size > 16384)
    return -1;
  std::string Source = cudagraph::fuzz::sourceFor(Data, Size);

  ClangTidyOptions Options = ClangTidyOptions::getDefaults();
  Options.Checks = "-*,cudagraph-*,cuda-parse-support";
  ClangTidyContext Context(std::make_unique<DefaultOptionsProvider>(
      ClangTidyGlobalOptions(), Options));

  const std::string File = "/cudagraph-fuzz/input.cpp";
  auto Memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  Memory->addFile(File, 0, llvm::MemoryBuffer::getMemBufferCopy(Source, File));
  auto Files = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      llvm::vfs::getRealFileSystem());
  Files->pushOverlay(Memory);

  std::string Inputs = CUDAGRAPH_FUZZ_INPUTS;
  tooling::FixedCompilationDatabase Database(
      "/cudagraph-fuzz",
      {"-std=c++17", "-fsyntax-only", "-w", "-ferror-limit=0", "-isystem",
       Inputs + "/libtorch/include", "-isystem", Inputs + "/cuda/include"});
  std::vector<ClangTidyError> Errors =
      runClangTidy(Context, Database, {File}, Files, /*ApplyAnyFix=*/false);
  (void)Errors;
  return 0;
}
