//===--- StackTrace.cpp - native and Python stacks for reports ------------===//

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "cudagraph/harness/StackTrace.h"
#include "cudagraph/harness/Json.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace cudagraph {
namespace harness {

std::string demangle(const char *Name) {
  if (!Name || !*Name)
    return "";
  int Status = 0;
  char *Demangled = abi::__cxa_demangle(Name, nullptr, nullptr, &Status);
  if (Status != 0 || !Demangled)
    return Name;
  std::string Out(Demangled);
  std::free(Demangled);
  return Out;
}

static const std::string &selfExePath() {
  static const std::string Path = [] {
    char Buf[4096];
    ssize_t N = readlink("/proc/self/exe", Buf, sizeof(Buf) - 1);
    return N > 0 ? std::string(Buf, N) : std::string();
  }();
  return Path;
}

NativeFrame describeAddress(uint64_t Pc) {
  NativeFrame F;
  F.Pc = Pc;
  Dl_info Info;
  struct link_map *Map = nullptr;
  if (!dladdr1(reinterpret_cast<void *>(Pc), &Info,
               reinterpret_cast<void **>(&Map), RTLD_DL_LINKMAP))
    return F;
  // l_addr is the load bias, so Pc - l_addr is the address addr2line wants
  // for executables and shared objects alike.
  uint64_t Bias = Map ? Map->l_addr : reinterpret_cast<uint64_t>(Info.dli_fbase);
  F.ModuleOffset = Pc - Bias;
  const char *Name = Map && Map->l_name && *Map->l_name ? Map->l_name
                                                          : nullptr;
  F.Module = Name ? Name : selfExePath();
  if (Info.dli_sname) {
    F.Symbol = demangle(Info.dli_sname);
    F.SymbolOffset = Pc - reinterpret_cast<uint64_t>(Info.dli_saddr);
  }
  return F;
}

std::vector<NativeFrame> captureNativeStack(const void *SkipModuleOf,
                                            unsigned MaxFrames) {
  void *Pcs[128];
  int N = backtrace(Pcs, MaxFrames + 16 < 128 ? MaxFrames + 16 : 128);
  const void *SkipBase = nullptr;
  Dl_info Self;
  if (SkipModuleOf && dladdr(SkipModuleOf, &Self))
    SkipBase = Self.dli_fbase;
  std::vector<NativeFrame> Frames;
  for (int I = 0; I < N && Frames.size() < MaxFrames; ++I) {
    if (SkipBase) {
      Dl_info Info;
      if (dladdr(Pcs[I], &Info) && Info.dli_fbase == SkipBase)
        continue;
    }
    Frames.push_back(describeAddress(reinterpret_cast<uint64_t>(Pcs[I])));
  }
  return Frames;
}

std::string toJson(const std::vector<NativeFrame> &Frames) {
  std::string Out = "[";
  for (size_t I = 0; I < Frames.size(); ++I) {
    const NativeFrame &F = Frames[I];
    JsonObject O;
    O.add("pc", hexString(F.Pc));
    O.add("module", F.Module);
    O.add("offset", hexString(F.ModuleOffset));
    if (!F.Symbol.empty()) {
      O.add("symbol", F.Symbol);
      O.add("symbol_offset", F.SymbolOffset);
    }
    if (I)
      Out += ',';
    Out += O.str();
  }
  return Out + "]";
}

std::string toJson(const std::vector<PythonFrame> &Frames) {
  std::string Out = "[";
  for (size_t I = 0; I < Frames.size(); ++I) {
    JsonObject O;
    O.add("file", Frames[I].File);
    O.add("line", Frames[I].Line);
    O.add("function", Frames[I].Function);
    if (I)
      Out += ',';
    Out += O.str();
  }
  return Out + "]";
}

} // namespace harness
} // namespace cudagraph
