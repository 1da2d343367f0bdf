//===--- StackTrace.h - native and Python stacks for reports ----*- C++ -*-===//
//
// A report names the call site of each failure. In the process we only
// record addresses resolved to (module, address inside the module's ELF
// image, nearest exported symbol); file:line comes later from addr2line,
// run by cudagraph-symbolize once the target has exited, where the same
// binaries exist. Frames that never get a line keep module+offset and the
// symbol, so a report is useful even without debug info.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_HARNESS_STACKTRACE_H
#define CUDAGRAPH_HARNESS_STACKTRACE_H

#include <cstdint>
#include <string>
#include <vector>

namespace cudagraph {
namespace harness {

struct NativeFrame {
  uint64_t Pc = 0;
  std::string Module;       ///< Path of the ELF object; "" if unknown.
  uint64_t ModuleOffset = 0; ///< Pc as an address inside the ELF image.
  std::string Symbol;       ///< Demangled nearest symbol; "" if none.
  uint64_t SymbolOffset = 0;
};

struct PythonFrame {
  std::string File;
  int Line = 0;
  std::string Function;
};

/// The calling thread's native stack, innermost first. Frames whose code
/// lies in the module containing SkipModuleOf (an address of the caller's
/// own library) are left out, so the harness does not report itself.
std::vector<NativeFrame> captureNativeStack(const void *SkipModuleOf,
                                            unsigned MaxFrames = 48);

/// Resolves one address the way captureNativeStack does (for tests).
NativeFrame describeAddress(uint64_t Pc);

/// JSON arrays for the "stack" and "python_stack" report fields.
std::string toJson(const std::vector<NativeFrame> &Frames);
std::string toJson(const std::vector<PythonFrame> &Frames);

/// Demangles an Itanium C++ name; returns the input when it is not one.
std::string demangle(const char *Name);

} // namespace harness
} // namespace cudagraph

#endif // CUDAGRAPH_HARNESS_STACKTRACE_H
