//===--- ThrowHook.cpp - see C++ exceptions before they unwind ------------===//
//
// libtorch reports many capture problems by throwing c10::Error, often after
// catching the CUDA error itself. To record the message and the stack at the
// throw, every __cxa_throw in the process must reach this library first:
//  - under LD_PRELOAD (the cudagraph-run launcher) our definition below
//    comes first in the global scope and every object binds to it;
//  - loaded only through CUDA_INJECTION64_PATH we come too late for that,
//    so installThrowHook rewrites the __cxa_throw GOT slots of the objects
//    already loaded (and is called again when a capture begins, to catch
//    objects loaded since).
//
//===----------------------------------------------------------------------===//

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "Injection.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>

using CxaThrowFn = void (*)(void *, std::type_info *, void (*)(void *));

// The hook's body has a hidden name so that taking its address inside this
// library yields our code; &__cxa_throw would bind to whichever definition
// comes first in the process, libstdc++'s unless we are preloaded.
extern "C" __attribute__((visibility("hidden"), noreturn)) void
cudagraphThrowHook(void *Object, std::type_info *Type,
                   void (*Destructor)(void *));
extern "C" CUDAGRAPH_EXPORT __attribute__((noreturn)) void
__cxa_throw(void *Object, std::type_info *Type, void (*Destructor)(void *))
    __attribute__((alias("cudagraphThrowHook")));

namespace {

CxaThrowFn realThrow() {
  static CxaThrowFn Real = [] {
    auto Fn = reinterpret_cast<CxaThrowFn>(dlsym(RTLD_NEXT, "__cxa_throw"));
    if (!Fn || Fn == &cudagraphThrowHook) {
      void *Lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
      if (Lib)
        Fn = reinterpret_cast<CxaThrowFn>(dlsym(Lib, "__cxa_throw"));
    }
    return Fn;
  }();
  return Real;
}

thread_local bool InHook = false;

#if defined(__x86_64__)
constexpr unsigned JumpSlot = R_X86_64_JUMP_SLOT;
constexpr unsigned GlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr unsigned JumpSlot = R_AARCH64_JUMP_SLOT;
constexpr unsigned GlobDat = R_AARCH64_GLOB_DAT;
#else
constexpr unsigned JumpSlot = ~0u;
constexpr unsigned GlobDat = ~0u;
#endif

struct PatchState {
  std::mutex Mutex;
  std::set<std::pair<uintptr_t, std::string>> Seen;
  uintptr_t SelfBase = 0;
  unsigned Patched = 0;
};

PatchState &patchState() {
  static PatchState State;
  return State;
}

bool skipObject(const char *Name) {
  // The loader, the vDSO and libstdc++ itself (its own throws are no
  // framework errors) keep their bindings.
  return std::strstr(Name, "linux-vdso") || std::strstr(Name, "ld-linux") ||
         std::strstr(Name, "libstdc++");
}

void writeSlot(void **Slot, void *Value, uintptr_t RelroBegin,
               uintptr_t RelroEnd) {
  long PageSize = sysconf(_SC_PAGESIZE);
  uintptr_t Page = reinterpret_cast<uintptr_t>(Slot) &
                   ~static_cast<uintptr_t>(PageSize - 1);
  if (mprotect(reinterpret_cast<void *>(Page), PageSize,
               PROT_READ | PROT_WRITE) != 0)
    return;
  *Slot = Value;
  uintptr_t Addr = reinterpret_cast<uintptr_t>(Slot);
  if (Addr >= RelroBegin && Addr < RelroEnd)
    mprotect(reinterpret_cast<void *>(Page), PageSize, PROT_READ);
}

int patchObject(struct dl_phdr_info *Info, size_t, void *) {
  PatchState &State = patchState();
  const char *Name = Info->dlpi_name ? Info->dlpi_name : "";
  uintptr_t Base = Info->dlpi_addr;
  if (Base == State.SelfBase || skipObject(Name))
    return 0;
  if (!State.Seen.insert({Base, Name}).second)
    return 0;

  const ElfW(Dyn) *Dynamic = nullptr;
  uintptr_t RelroBegin = 0, RelroEnd = 0;
  for (unsigned I = 0; I < Info->dlpi_phnum; ++I) {
    const ElfW(Phdr) &P = Info->dlpi_phdr[I];
    if (P.p_type == PT_DYNAMIC)
      Dynamic = reinterpret_cast<const ElfW(Dyn) *>(Base + P.p_vaddr);
    else if (P.p_type == PT_GNU_RELRO) {
      RelroBegin = Base + P.p_vaddr;
      RelroEnd = RelroBegin + P.p_memsz;
    }
  }
  if (!Dynamic)
    return 0;

  // glibc rewrites these entries to absolute addresses in place, except in
  // read-only dynamic sections; accept both.
  auto Abs = [Base](uintptr_t P) { return P < Base ? P + Base : P; };
  const ElfW(Sym) *Symbols = nullptr;
  const char *Strings = nullptr;
  const ElfW(Rela) *PltRelocs = nullptr, *Relocs = nullptr;
  size_t PltSize = 0, RelocSize = 0;
  bool PltIsRela = true;
  for (const ElfW(Dyn) *D = Dynamic; D->d_tag != DT_NULL; ++D) {
    switch (D->d_tag) {
    case DT_SYMTAB:
      Symbols = reinterpret_cast<const ElfW(Sym) *>(Abs(D->d_un.d_ptr));
      break;
    case DT_STRTAB:
      Strings = reinterpret_cast<const char *>(Abs(D->d_un.d_ptr));
      break;
    case DT_JMPREL:
      PltRelocs = reinterpret_cast<const ElfW(Rela) *>(Abs(D->d_un.d_ptr));
      break;
    case DT_PLTRELSZ:
      PltSize = D->d_un.d_val;
      break;
    case DT_PLTREL:
      PltIsRela = D->d_un.d_val == DT_RELA;
      break;
    case DT_RELA:
      Relocs = reinterpret_cast<const ElfW(Rela) *>(Abs(D->d_un.d_ptr));
      break;
    case DT_RELASZ:
      RelocSize = D->d_un.d_val;
      break;
    default:
      break;
    }
  }
  if (!Symbols || !Strings)
    return 0;

  void *Hook = reinterpret_cast<void *>(&cudagraphThrowHook);
  auto Scan = [&](const ElfW(Rela) *Begin, size_t Bytes) {
    if (!Begin)
      return;
    for (size_t I = 0; I < Bytes / sizeof(ElfW(Rela)); ++I) {
      const ElfW(Rela) &R = Begin[I];
      unsigned Type = ELF64_R_TYPE(R.r_info);
      if (Type != JumpSlot && Type != GlobDat)
        continue;
      const ElfW(Sym) &S = Symbols[ELF64_R_SYM(R.r_info)];
      if (std::strcmp(Strings + S.st_name, "__cxa_throw") != 0)
        continue;
      void **Slot = reinterpret_cast<void **>(Base + R.r_offset);
      if (*Slot == Hook)
        continue;
      writeSlot(Slot, Hook, RelroBegin, RelroEnd);
      ++State.Patched;
    }
  };
  if (PltIsRela)
    Scan(PltRelocs, PltSize);
  Scan(Relocs, RelocSize);
  return 0;
}

} // namespace

extern "C" void cudagraphThrowHook(void *Object, std::type_info *Type,
                                   void (*Destructor)(void *)) {
  if (!InHook) {
    InHook = true;
    cudagraph::harness::noteCxxThrow(Object, Type);
    InHook = false;
  }
  CxaThrowFn Real = realThrow();
  if (Real)
    Real(Object, Type, Destructor);
  __builtin_trap(); // No runtime to throw with: nothing sane is left.
}

namespace cudagraph {
namespace harness {

const char *installThrowHook() {
  realThrow(); // Resolve before any slot points at us.
  void *Global = dlsym(RTLD_DEFAULT, "__cxa_throw");
  if (Global == reinterpret_cast<void *>(&cudagraphThrowHook))
    return "preload";
#if defined(__x86_64__) || defined(__aarch64__)
  PatchState &State = patchState();
  std::lock_guard<std::mutex> Lock(State.Mutex);
  if (!State.SelfBase) {
    Dl_info Self;
    if (dladdr(reinterpret_cast<void *>(&installThrowHook), &Self))
      State.SelfBase = reinterpret_cast<uintptr_t>(Self.dli_fbase);
  }
  dl_iterate_phdr(patchObject, nullptr);
  return State.Patched ? "got" : "none";
#else
  return "none";
#endif
}

} // namespace harness
} // namespace cudagraph
