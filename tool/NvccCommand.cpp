//===--- NvccCommand.cpp - cudagraph-tidy ---------------------------------===//

#include "NvccCommand.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/StringSaver.h"
#include <algorithm>

namespace cudagraph {

namespace {

/// What an nvcc option means for the clang command line.
enum class Kind {
  Include,       // -I<dir>
  System,        // -isystem <dir>
  Define,        // -D<macro>
  Undefine,      // -U<macro>
  PreInclude,    // -include <file>
  Std,           // -std=<standard>
  Language,      // -x cu|c++|c
  Arch,          // -arch sm_80: the GPU to parse device code for
  Code,          // -code sm_80,compute_80
  Gencode,       // -gencode arch=compute_80,code=sm_80
  DefaultStream, // --default-stream per-thread|legacy|null
  HostOptions,   // -Xcompiler a,b,c: options for the host compiler
  OptionsFile,   // --options-file <file>
  Optimize,      // --optimize <level>
  NvccWerror,    // -Werror <kind,...> (nvcc's) or -Werror (the host's)
  CompileOnly,   // -c, -dc, -ptx, ...: parse, do not link
  DropValue,     // an option of code generation, linking or output with a value
  Drop,          // an option of code generation without a value
};

struct OptionInfo {
  Kind K;
  bool TakesValue;
};

/// nvcc's options by name without leading dashes (nvcc accepts one or two
/// dashes for both its short and long names).
std::optional<OptionInfo> lookup(llvm::StringRef Name) {
  using K = Kind;
  auto Value = [](Kind Kd) { return std::optional<OptionInfo>({Kd, true}); };
  auto Flag = [](Kind Kd) { return std::optional<OptionInfo>({Kd, false}); };
  return llvm::StringSwitch<std::optional<OptionInfo>>(Name)
      .Cases("I", "include-path", Value(K::Include))
      .Cases("isystem", "system-include", Value(K::System))
      .Cases("D", "define-macro", Value(K::Define))
      .Cases("U", "undefine-macro", Value(K::Undefine))
      .Cases("include", "pre-include", Value(K::PreInclude))
      .Case("std", Value(K::Std))
      .Case("x", Value(K::Language))
      .Cases("arch", "gpu-architecture", Value(K::Arch))
      .Cases("code", "gpu-code", Value(K::Code))
      .Cases("gencode", "generate-code", Value(K::Gencode))
      .Case("default-stream", Value(K::DefaultStream))
      .Cases("Xcompiler", "compiler-options", Value(K::HostOptions))
      .Cases("optf", "options-file", Value(K::OptionsFile))
      .Case("optimize", Value(K::Optimize))
      .Case("Werror", Flag(K::NvccWerror))
      .Cases("c", "compile", "dc", "device-c", Flag(K::CompileOnly))
      .Cases("dw", "device-w", "ptx", "cubin", "fatbin", Flag(K::CompileOnly))
      .Cases("optix-ir", "cuda", Flag(K::CompileOnly))
      // Code generation, linking, dependency files, output and diagnostics
      // of the device compiler, each followed by a value.
      .Cases("ccbin", "compiler-bindir", "Xcudafe", "Xptxas", "ptxas-options",
             Value(K::DropValue))
      .Cases("Xnvlink", "nvlink-options", "Xarchive", "archive-options",
             "Xlinker", Value(K::DropValue))
      .Cases("linker-options", "Xfatbin", "fatbin-options", "t", "threads",
             Value(K::DropValue))
      .Cases("o", "output-file", "MF", "MT", "MQ", Value(K::DropValue))
      .Cases("dependency-output", "odir", "output-directory", "L",
             "library-path", Value(K::DropValue))
      .Cases("l", "library", "maxrregcount", "diag-suppress", "diag-warn",
             Value(K::DropValue))
      .Cases("diag-error", "diag-default", "rdc", "relocatable-device-code",
             "ftz", Value(K::DropValue))
      .Cases("prec-div", "prec-sqrt", "fmad", "m", "machine",
             Value(K::DropValue))
      .Cases("keep-dir", "run-args", "idp", "input-drive-prefix",
             "dependency-target-name", Value(K::DropValue))
      .Cases("split-compile", "time", "cudart", "cudadevrt", "dopt",
             Value(K::DropValue))
      .Cases("static-global-template-stub", "device-entity-has-hidden-visibility",
             "jump-table-density", "device-stack-protector",
             "fdevice-time-trace", Value(K::DropValue))
      .Cases("use_fast_math", "forward-unknown-to-host-compiler",
             "forward-unknown-to-host-linker", "forward-unknown-opts",
             "expt-relaxed-constexpr", Flag(K::Drop))
      .Cases("expt-extended-lambda", "extended-lambda", "lineinfo",
             "generate-line-info", "G", Flag(K::Drop))
      .Cases("device-debug", "keep", "src-in-ptx", "source-in-ptx",
             "res-usage", Flag(K::Drop))
      .Cases("resource-usage", "restrict", "dlto", "dlink-time-opt",
             "display-error-number", Flag(K::Drop))
      .Cases("no-display-error-number", "err-no", "allow-unsupported-compiler",
             "v", "verbose", Flag(K::Drop))
      .Cases("dryrun", "shared", "lib", "dlink", "device-link", Flag(K::Drop))
      .Cases("link", "generate-dependencies", "generate-dependencies-with-compile",
             "generate-nonsystem-dependencies", "M", Flag(K::Drop))
      .Cases("generate-nonsystem-dependencies-with-compile", "MD", "MMD", "MP",
             "use-local-env", Flag(K::Drop))
      .Cases("extra-device-vectorization", "E", "preprocess", "m64", "m32",
             Flag(K::Drop))
      .Default(std::nullopt);
}

/// nvcc's kinds of -Werror (`-Werror all-warnings`); any other -Werror is
/// the host compiler's, without a value.
bool isNvccWarningKind(llvm::StringRef V) {
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  V.split(Parts, ',');
  return llvm::all_of(Parts, [](llvm::StringRef P) {
    return P == "cross-execution-space-call" || P == "reorder" ||
           P == "default-stream-launch" || P == "missing-launch-bounds" ||
           P == "ext-lambda-captures-this" || P == "deprecated-declarations" ||
           P == "all-warnings";
  });
}

/// Host compiler options that decide how the source parses and that clang
/// accepts; everything else the host compiler gets (warnings, code
/// generation, GCC-only -f options) is dropped.
bool keepHostFlag(llvm::StringRef F) {
  if (F.size() > 2 && (F.starts_with("-D") || F.starts_with("-U") ||
                       F.starts_with("-I") || F.starts_with("-O")))
    return true;
  if (F.starts_with("-std=") || F.starts_with("-fvisibility=") ||
      F.starts_with("-fopenmp="))
    return true;
  return llvm::StringSwitch<bool>(F)
      .Cases("-g", "-g0", "-g1", "-g2", "-g3", "-w", "-O", true)
      .Cases("-pthread", "-fopenmp", "-fexceptions", "-fno-exceptions", true)
      .Cases("-frtti", "-fno-rtti", "-fPIC", "-fpic", "-fPIE", true)
      .Cases("-fpie", "-fsigned-char", "-funsigned-char", true)
      .Cases("-fno-strict-aliasing", "-fstrict-aliasing", true)
      .Default(false);
}

/// The GPU number of `sm_80`, `compute_90a`, `lto_86` (0: none).
std::string gpuOf(llvm::StringRef V) {
  for (llvm::StringRef Prefix : {"sm_", "compute_", "lto_"})
    if (V.consume_front(Prefix))
      return V.str();
  return "";
}

/// Clang 19 parses device code for these; newer GPUs parse as sm_90.
std::string clangArch(llvm::StringRef Gpu) {
  static const char *const Known[] = {"50", "52", "53", "60", "61", "62",
                                      "70", "72", "75", "80", "86", "87",
                                      "89", "90", "90a"};
  for (const char *K : Known)
    if (Gpu == K)
      return ("sm_" + Gpu).str();
  return "sm_90";
}

bool isLauncher(llvm::StringRef Path) {
  llvm::StringRef Name = llvm::sys::path::filename(Path);
  return Name == "ccache" || Name == "sccache" || Name == "buildcache" ||
         Name == "distcc" || Name == "icecc";
}

bool isNvccPath(llvm::StringRef Path) {
  llvm::StringRef Name = llvm::sys::path::filename(Path);
  return Name == "nvcc" || Name == "nvcc.exe";
}

/// The index of the compiler in \p Args, past launchers.
size_t compilerIndex(llvm::ArrayRef<std::string> Args) {
  size_t I = 0;
  while (I + 1 < Args.size() && isLauncher(Args[I]))
    ++I;
  return I;
}

/// The toolkit nvcc belongs to: <root>/bin/nvcc, when <root> has headers.
std::string toolkitOf(llvm::StringRef Nvcc) {
  std::string Path = Nvcc.str();
  if (!Nvcc.contains('/')) {
    llvm::ErrorOr<std::string> Found = llvm::sys::findProgramByName(Nvcc);
    if (!Found)
      return "";
    Path = *Found;
  }
  llvm::SmallString<256> Real;
  if (llvm::sys::fs::real_path(Path, Real))
    Real = Path;
  llvm::StringRef Root =
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(Real));
  llvm::SmallString<256> Header(Root);
  llvm::sys::path::append(Header, "include", "cuda.h");
  return llvm::sys::fs::exists(Header) ? Root.str() : "";
}

/// CUDA_VERSION of the toolkit's cuda.h (13000 for 13.0), or 0.
int toolkitVersion(llvm::StringRef Root) {
  llvm::SmallString<256> Header(Root);
  llvm::sys::path::append(Header, "include", "cuda.h");
  auto Buffer = llvm::MemoryBuffer::getFile(Header);
  if (!Buffer)
    return 0;
  llvm::StringRef Text = (*Buffer)->getBuffer();
  size_t At = Text.find("#define CUDA_VERSION ");
  if (At == llvm::StringRef::npos)
    return 0;
  int Version = 0;
  Text.drop_front(At + strlen("#define CUDA_VERSION "))
      .take_while([](char C) { return C >= '0' && C <= '9'; })
      .getAsInteger(10, Version);
  return Version;
}

class Translator {
public:
  Translator(llvm::StringRef Directory) : Directory(Directory) {}

  bool run(llvm::ArrayRef<std::string> Args, std::string &Error) {
    std::vector<std::string> Flags(Args.begin(), Args.end());
    for (size_t I = 0; I < Flags.size(); ++I) {
      llvm::StringRef A = Flags[I];
      auto Next = [&]() -> std::optional<std::string> {
        if (I + 1 >= Flags.size())
          return std::nullopt;
        return Flags[++I];
      };
      if (A.starts_with("@")) {
        if (!expandFile(A.drop_front(), Flags, I, Error))
          return false;
        continue;
      }
      if (!A.starts_with("-") || A == "-") {
        Out.push_back(A.str()); // an input file
        if (A.ends_with(".cu"))
          Cuda = true;
        continue;
      }
      llvm::StringRef Name = A.drop_front(A.starts_with("--") ? 2 : 1);
      std::optional<std::string> Value;
      std::optional<OptionInfo> Info = lookup(Name);
      if (!Info && Name.contains('=')) {
        auto [N, V] = Name.split('=');
        Info = lookup(N);
        if (Info && Info->TakesValue) {
          Name = N;
          Value = V.str();
        } else {
          Info.reset();
        }
      }
      if (!Info && !A.starts_with("--") && Name.size() > 1) {
        // Short options with the value attached: -I<dir>, -DX=1, -O3, -lm.
        char C = Name.front();
        if (C == 'I' || C == 'D' || C == 'U' || C == 'L' || C == 'l' ||
            C == 'x') {
          Info = lookup(Name.take_front(1));
          Value = Name.drop_front(1).str();
          Name = Name.take_front(1);
        } else if (C == 'O') {
          Out.push_back(A.str());
          continue;
        }
      }
      if (!Info) {
        // Not nvcc's: CMake forwards it to the host compiler
        // (-forward-unknown-to-host-compiler).
        host(A);
        continue;
      }
      if (Info->TakesValue && !Value) {
        Value = Next();
        if (!Value) {
          Dropped.push_back(A.str());
          continue;
        }
      }
      if (!apply(Info->K, A, Value ? *Value : "", Flags, I, Error))
        return false;
    }
    return true;
  }

  void finish(llvm::StringRef Nvcc, NvccTranslation &T) {
    T.Args.push_back("clang++");
    std::string Root = toolkitOf(Nvcc);
    if (!Root.empty())
      T.Args.push_back("--cuda-path=" + Root);
    else if (llvm::sys::fs::exists("/usr/local/cuda/include/cuda.h"))
      Root = "/usr/local/cuda"; // where clang looks too: for the version

    if (!Gpu.empty())
      T.Args.push_back("--cuda-gpu-arch=" + clangArch(Gpu));
    // Device libraries are for code generation; analysis does not need them.
    T.Args.push_back("-nocudalib");
    if (Cuda) {
      // What nvcc predefines and headers test (CUTLASS, CCCL, AMReX):
      // clang's CUDA mode defines none of them.
      int Version = Root.empty() ? 0 : toolkitVersion(Root);
      if (Version) {
        T.Args.push_back("-D__CUDACC_VER_MAJOR__=" +
                         std::to_string(Version / 1000));
        T.Args.push_back("-D__CUDACC_VER_MINOR__=" +
                         std::to_string(Version % 1000 / 10));
        T.Args.push_back("-D__CUDACC_VER_BUILD__=0");
      }
    }
    if (PerThread)
      T.Args.push_back("-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1");
    T.Args.insert(T.Args.end(), Out.begin(), Out.end());
    T.Dropped = std::move(Dropped);
  }

private:
  bool apply(Kind K, llvm::StringRef A, llvm::StringRef V,
             std::vector<std::string> &Flags, size_t &I, std::string &Error) {
    switch (K) {
    case Kind::Include:
      Out.push_back(("-I" + V).str());
      return true;
    case Kind::System:
      Out.push_back("-isystem");
      Out.push_back(V.str());
      return true;
    case Kind::Define:
      Out.push_back(("-D" + V).str());
      return true;
    case Kind::Undefine:
      Out.push_back(("-U" + V).str());
      return true;
    case Kind::PreInclude:
      Out.push_back("-include");
      Out.push_back(V.str());
      return true;
    case Kind::Std:
      Out.push_back(("-std=" + V).str());
      return true;
    case Kind::Language:
      Out.push_back("-x");
      if (V == "cu" || V == "cuda") {
        Out.push_back("cuda");
        Cuda = true;
      } else {
        Out.push_back(V.str());
        Cuda = false;
      }
      return true;
    case Kind::Arch:
    case Kind::Code:
    {
      llvm::SmallVector<llvm::StringRef, 4> Parts;
      V.split(Parts, ',');
      for (llvm::StringRef Part : Parts)
        noteGpu(Part);
    }
      Dropped.push_back(A.str() + (A.contains('=') ? "" : " " + V.str()));
      return true;
    case Kind::Gencode: {
      // arch=compute_80,code=[compute_80,sm_80] or code=sm_80
      llvm::StringRef Rest = V;
      while (!Rest.empty()) {
        llvm::StringRef Part;
        std::tie(Part, Rest) = Rest.split(',');
        Part = Part.trim("[]\"' ");
        Part.consume_front("arch=");
        Part.consume_front("code=");
        noteGpu(Part.trim("[]\"' "));
      }
      Dropped.push_back(A.str() + (A.contains('=') ? "" : " " + V.str()));
      return true;
    }
    case Kind::DefaultStream:
      PerThread = V == "per-thread";
      return true;
    case Kind::HostOptions: {
      llvm::SmallVector<llvm::StringRef, 8> Parts;
      V.split(Parts, ',', -1, false);
      for (size_t P = 0; P < Parts.size(); ++P) {
        llvm::StringRef F = Parts[P].trim("\"' ");
        if ((F == "-isystem" || F == "-include" || F == "-I" || F == "-D") &&
            P + 1 < Parts.size()) {
          llvm::StringRef Arg = Parts[++P].trim("\"' ");
          if (F == "-I" || F == "-D") {
            Out.push_back((F + Arg).str());
          } else {
            Out.push_back(F.str());
            Out.push_back(Arg.str());
          }
          continue;
        }
        host(F);
      }
      return true;
    }
    case Kind::OptionsFile:
      return expandFile(V, Flags, I, Error);
    case Kind::Optimize:
      Out.push_back(("-O" + V).str());
      return true;
    case Kind::NvccWerror:
      if (I + 1 < Flags.size() && isNvccWarningKind(Flags[I + 1]))
        ++I;
      Dropped.push_back(A.str());
      return true;
    case Kind::CompileOnly:
      if (std::find(Out.begin(), Out.end(), "-c") == Out.end())
        Out.push_back("-c");
      return true;
    case Kind::DropValue:
      Dropped.push_back(A.str() + (A.contains('=') || V.empty()
                                       ? ""
                                       : " " + V.str()));
      return true;
    case Kind::Drop:
      Dropped.push_back(A.str());
      return true;
    }
    return true;
  }

  void host(llvm::StringRef F) {
    if (F.empty())
      return;
    if (keepHostFlag(F))
      Out.push_back(F.str());
    else
      Dropped.push_back(F.str());
  }

  void noteGpu(llvm::StringRef Part) {
    std::string G = gpuOf(Part);
    if (Gpu.empty() && !G.empty())
      Gpu = G;
  }

  /// Splices the options of \p File in after position \p I.
  bool expandFile(llvm::StringRef File, std::vector<std::string> &Flags,
                  size_t &I, std::string &Error) {
    llvm::SmallString<256> Path(File);
    if (llvm::sys::path::is_relative(Path) && !Directory.empty()) {
      Path = Directory;
      llvm::sys::path::append(Path, File);
    }
    auto Buffer = llvm::MemoryBuffer::getFile(Path);
    if (!Buffer) {
      Error = "cannot read the options file '" + std::string(Path) +
              "' of an nvcc command: " + Buffer.getError().message();
      return false;
    }
    llvm::BumpPtrAllocator Alloc;
    llvm::StringSaver Saver(Alloc);
    llvm::SmallVector<const char *, 32> Tokens;
    llvm::cl::TokenizeGNUCommandLine((*Buffer)->getBuffer(), Saver, Tokens);
    Flags.insert(Flags.begin() + I + 1, Tokens.begin(), Tokens.end());
    return true;
  }

  llvm::StringRef Directory;
  std::vector<std::string> Out, Dropped;
  std::string Gpu;
  bool Cuda = false;
  bool PerThread = false;
};

} // namespace

bool isNvccCommand(llvm::ArrayRef<std::string> Args) {
  if (Args.empty())
    return false;
  return isNvccPath(Args[compilerIndex(Args)]);
}

bool hasNvccOnlyFlags(llvm::ArrayRef<std::string> Flags) {
  for (llvm::StringRef F : Flags) {
    if (isNvccPath(F))
      return true;
    llvm::StringRef Name = F.drop_front(F.starts_with("--") ? 2 : 1);
    Name = Name.split('=').first;
    if (!F.starts_with("-"))
      continue;
    if (Name == "gencode" || Name == "generate-code" || Name == "Xcompiler" ||
        Name == "compiler-options" || Name == "expt-relaxed-constexpr" ||
        Name == "expt-extended-lambda" || Name == "extended-lambda" ||
        Name == "forward-unknown-to-host-compiler" || Name == "rdc" ||
        Name == "relocatable-device-code" || Name == "default-stream" ||
        Name == "ccbin" || Name == "Xcudafe" || Name == "Xptxas" ||
        Name == "use_fast_math" || F.starts_with("-isystem="))
      return true;
  }
  return false;
}

std::optional<NvccTranslation>
translateNvccCommand(llvm::ArrayRef<std::string> Args,
                     llvm::StringRef Directory, std::string &Error) {
  NvccTranslation T;
  if (Args.empty()) {
    Error = "empty compile command";
    return std::nullopt;
  }
  size_t First = compilerIndex(Args);
  std::string Nvcc = isNvccPath(Args[First]) ? Args[First] : "nvcc";
  size_t FlagsFrom = isNvccPath(Args[First]) ? First + 1 : First;
  Translator X(Directory);
  if (!X.run(Args.drop_front(FlagsFrom), Error))
    return std::nullopt;
  X.finish(Nvcc, T);
  return T;
}

} // namespace cudagraph
