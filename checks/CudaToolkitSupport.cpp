//===--- CudaToolkitSupport.cpp - cudagraph-tidy --------------------------===//

#include "CudaToolkitSupport.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/HeaderSearch.h"
#include "clang/Lex/PPCallbacks.h"
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

// Debian's libtorch-dev ships c10/cuda headers without the CMake-generated
// c10/cuda/impl/cuda_cmake_macros.h they include.
static const char CudaCMakeMacrosStandIn[] =
    "// cudagraph-tidy stand-in: this libtorch install lacks the header.\n"
    "#pragma once\n";

namespace {
struct StandIn {
  const char *Path;     // relative to the stand-in directory
  const char *Contents; // null-terminated
};
} // namespace

static bool isSearchDir(HeaderSearch &HS, llvm::StringRef Dir) {
  for (auto It = HS.search_dir_begin(), E = HS.search_dir_end(); It != E; ++It)
    if (It->getName() == Dir)
      return true;
  return false;
}

/// The first normal search directory that holds \p Header, or "".
static std::string findInSearchPath(HeaderSearch &HS, FileManager &FM,
                                    llvm::StringRef Header) {
  for (auto It = HS.search_dir_begin(), E = HS.search_dir_end(); It != E;
       ++It) {
    if (!It->isNormalDir())
      continue;
    llvm::SmallString<256> Probe(It->getName());
    llvm::sys::path::append(Probe, Header);
    if (FM.getOptionalFileRef(Probe))
      return It->getName().str();
  }
  return "";
}

/// Visual Studio's formatter writes kernel launches `k << <grid, block >> >
/// (args)`, which nvcc accepts and clang does not. The launches of the main
/// file and of the project's headers (not system headers) are respelled
/// `<<< ` and `>>> ` in place: the same length, so every location,
/// diagnostic and fix stays where it is in the file on disk. A
/// `>> >` is respelled only as the close of a `<< <` before the next `;`
/// (`vector<vector<vector<int>> >` elsewhere is left alone).
static void respellLaunches(SourceManager &SM, FileEntryRef File) {
  if (SM.isFileOverridden(File))
    return;
  std::optional<llvm::MemoryBufferRef> Buffer =
      SM.getMemoryBufferForFileOrNone(File);
  if (!Buffer || Buffer->getBuffer().find("<< <") == llvm::StringRef::npos)
    return;
  std::string Text = Buffer->getBuffer().str();
  bool Changed = false;
  for (size_t Open = Text.find("<< <"); Open != std::string::npos;
       Open = Text.find("<< <", Open + 4)) {
    size_t Close = Text.find(">> >", Open + 4);
    size_t End = Text.find(';', Open + 4);
    if (Close == std::string::npos || (End != std::string::npos && End < Close))
      continue;
    Text.replace(Open, 4, "<<< ");
    Text.replace(Close, 4, ">>> ");
    Changed = true;
  }
  if (Changed)
    SM.overrideFileContents(
        File, llvm::MemoryBuffer::getMemBufferCopy(Text, File.getName()));
}

namespace {
/// Respells the launches of the project's own headers as they are
/// included (before the preprocessor reads them).
class LaunchRespelling : public PPCallbacks {
public:
  explicit LaunchRespelling(SourceManager &SM) : SM(SM) {}
  void InclusionDirective(SourceLocation, const Token &, llvm::StringRef, bool,
                          CharSourceRange, OptionalFileEntryRef File,
                          llvm::StringRef, llvm::StringRef, const Module *,
                          bool, SrcMgr::CharacteristicKind FileType) override {
    if (File && FileType == SrcMgr::C_User)
      respellLaunches(SM, *File);
  }

private:
  SourceManager &SM;
};
} // namespace

/// Respells the main file now and the project's headers as they come, once
/// per compilation (a marker file overridden in its source manager says it
/// is done: the file manager outlives one compilation, the source manager
/// does not).
static void respellLaunches(Preprocessor &PP) {
  SourceManager &SM = PP.getSourceManager();
  llvm::SmallString<128> Marker(ShimDir);
  llvm::sys::path::append(Marker, ".launch-respelling");
  FileEntryRef MarkerFile =
      PP.getFileManager().getVirtualFileRef(Marker, 0, /*ModificationTime=*/0);
  if (SM.isFileOverridden(MarkerFile))
    return;
  SM.overrideFileContents(MarkerFile,
                          llvm::MemoryBuffer::getMemBuffer("", Marker));
  if (OptionalFileEntryRef Main = SM.getFileEntryRefForID(SM.getMainFileID()))
    respellLaunches(SM, *Main);
  PP.addPPCallbacks(std::make_unique<LaunchRespelling>(SM));
}

void addStandInHeaders(Preprocessor &PP) {
  HeaderSearch &HS = PP.getHeaderSearchInfo();
  FileManager &FM = PP.getFileManager();
  if (PP.getLangOpts().CUDA)
    respellLaunches(PP);
  if (isSearchDir(HS, ShimDir))
    return; // already set up for this compilation

  std::vector<StandIn> Needed;
  // The toolkit's include directory, searched by CUDA sources and by host
  // C++ that uses the runtime API.
  std::string CudaInclude = findInSearchPath(HS, FM, "cuda_runtime_api.h");
  if (PP.getLangOpts().CUDA &&
      findInSearchPath(HS, FM, "texture_fetch_functions.h").empty())
    Needed.push_back({"texture_fetch_functions.h", TextureFetchStandIn});
  if (!findInSearchPath(HS, FM, "c10/cuda/CUDAMacros.h").empty() &&
      findInSearchPath(HS, FM, "c10/cuda/impl/cuda_cmake_macros.h").empty())
    Needed.push_back(
        {"c10/cuda/impl/cuda_cmake_macros.h", CudaCMakeMacrosStandIn});

  for (const StandIn &S : Needed) {
    llvm::SmallString<128> File(ShimDir);
    llvm::sys::path::append(File, S.Path);
    llvm::StringRef Contents(S.Contents);
    FileEntryRef FE = FM.getVirtualFileRef(File, Contents.size(),
                                           /*ModificationTime=*/0);
    PP.getSourceManager().overrideFileContents(
        FE, llvm::MemoryBuffer::getMemBuffer(Contents, File));
  }
  if (!Needed.empty())
    if (auto Dir = FM.getOptionalDirectoryRef(ShimDir))
      HS.AddSystemSearchPath(
          DirectoryLookup(*Dir, SrcMgr::C_System, /*isFramework=*/false));

  // CUDA 13 keeps Thrust, CUB and libcu++ under include/cccl (a host C++
  // file includes <cuda/atomic> or <thrust/...> from there too).
  if (!CudaInclude.empty()) {
    llvm::SmallString<256> Cccl(CudaInclude);
    llvm::sys::path::append(Cccl, "cccl");
    if (!isSearchDir(HS, Cccl))
      if (auto Dir = FM.getOptionalDirectoryRef(Cccl))
        HS.AddSystemSearchPath(
            DirectoryLookup(*Dir, SrcMgr::C_System, /*isFramework=*/false));
  }
}

} // namespace clang::tidy::cudagraph
