//===--- NvccCommand.h - cudagraph-tidy -------------------------*- C++ -*-===//
//
// Compile commands written for nvcc, rewritten for clang's CUDA mode.
//
// CMake and PyTorch's extension builder record nvcc command lines in
// compile_commands.json. Clang rejects most of nvcc's own options
// (--generate-code, -Xcompiler, -rdc, --expt-relaxed-constexpr, ...) and
// reads CMake's `-isystem=<dir>` as a file name. The translation keeps what
// decides how the source parses (include paths, macros, language standard,
// forced includes, the toolkit that nvcc belongs to, the GPU architecture,
// the default-stream mode) and drops what only decides code generation.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_TIDY_NVCCCOMMAND_H
#define CUDAGRAPH_TIDY_NVCCCOMMAND_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace cudagraph {

/// Whether \p Args (a whole command line, compiler first) runs nvcc,
/// directly or through a launcher such as ccache or sccache.
bool isNvccCommand(llvm::ArrayRef<std::string> Args);

/// Whether \p Flags (compiler flags without the compiler) contain options
/// only nvcc accepts: what a tool receives after `--` from CMake's
/// CMAKE_CUDA_CLANG_TIDY, with the nvcc path possibly in front.
bool hasNvccOnlyFlags(llvm::ArrayRef<std::string> Flags);

struct NvccTranslation {
  /// The clang command line: "clang++" followed by the flags.
  std::vector<std::string> Args;
  /// Options that were dropped, for --explain output and tests.
  std::vector<std::string> Dropped;
};

/// Rewrites the nvcc command line \p Args (compiler first, launcher
/// allowed) for clang. \p Directory resolves relative options files.
/// Returns std::nullopt with \p Error set when an options file named on the
/// command line cannot be read.
std::optional<NvccTranslation>
translateNvccCommand(llvm::ArrayRef<std::string> Args,
                     llvm::StringRef Directory, std::string &Error);

} // namespace cudagraph

#endif // CUDAGRAPH_TIDY_NVCCCOMMAND_H
