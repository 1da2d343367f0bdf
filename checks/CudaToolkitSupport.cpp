//===--- CudaToolkitSupport.cpp - cudagraph-tidy --------------------------===//

#include "CudaToolkitSupport.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/HeaderSearch.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace clang::tidy::cudagraph {

// Clang's __clang_cuda_runtime_wrapper.h includes this header after its own
// texture support; CUDA 13 removed it. Texture fetches in device code are not
// something capture analysis needs, so the stand-in declares nothing.
static const char TextureFetchStandIn[] =
    "// cudagraph-tidy stand-in: CUDA 13 no longer ships this header.\n"
    "#pragma once\n";

static constexpr llvm::StringLiteral ShimDir = "/cudagraph-tidy-shims";

void addCudaToolkitSearchPaths(Preprocessor &PP) {
  if (!PP.getLangOpts().CUDA)
    return;
  HeaderSearch &HS = PP.getHeaderSearchInfo();
  FileManager &FM = PP.getFileManager();
  for (auto It = HS.search_dir_begin(), E = HS.search_dir_end(); It != E; ++It)
    if (It->getName() == ShimDir)
      return; // already set up for this compilation

  // Find the toolkit's include directory among the search paths.
  std::string CudaInclude;
  for (auto It = HS.search_dir_begin(), E = HS.search_dir_end(); It != E; ++It) {
    llvm::StringRef Dir = It->getName();
    llvm::SmallString<256> Probe(Dir);
    llvm::sys::path::append(Probe, "cuda_runtime_api.h");
    if (It->isNormalDir() && FM.getOptionalFileRef(Probe)) {
      CudaInclude = Dir.str();
      break;
    }
  }

  llvm::SmallString<128> ShimFile(ShimDir);
  llvm::sys::path::append(ShimFile, "texture_fetch_functions.h");
  bool NeedsShim = true;
  if (!CudaInclude.empty()) {
    llvm::SmallString<256> Real(CudaInclude);
    llvm::sys::path::append(Real, "texture_fetch_functions.h");
    NeedsShim = !FM.getOptionalFileRef(Real);
  }
  if (NeedsShim) {
    FileEntryRef FE = FM.getVirtualFileRef(
        ShimFile, sizeof(TextureFetchStandIn) - 1, /*ModificationTime=*/0);
    PP.getSourceManager().overrideFileContents(
        FE, llvm::MemoryBuffer::getMemBuffer(TextureFetchStandIn, ShimFile));
    if (auto Dir = FM.getOptionalDirectoryRef(ShimDir))
      HS.AddSystemSearchPath(
          DirectoryLookup(*Dir, SrcMgr::C_System, /*isFramework=*/false));
  }

  if (!CudaInclude.empty()) {
    llvm::SmallString<256> Cccl(CudaInclude);
    llvm::sys::path::append(Cccl, "cccl");
    bool Present = false;
    for (auto It = HS.search_dir_begin(), E = HS.search_dir_end(); It != E;
         ++It)
      Present |= It->getName() == Cccl;
    if (!Present)
      if (auto Dir = FM.getOptionalDirectoryRef(Cccl))
        HS.AddSystemSearchPath(
            DirectoryLookup(*Dir, SrcMgr::C_System, /*isFramework=*/false));
  }
}

} // namespace clang::tidy::cudagraph
