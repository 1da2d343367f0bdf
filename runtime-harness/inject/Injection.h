//===--- Injection.h - pieces of the injection library ----------*- C++ -*-===//

#ifndef CUDAGRAPH_HARNESS_INJECT_INJECTION_H
#define CUDAGRAPH_HARNESS_INJECT_INJECTION_H

#include "cudagraph/harness/StackTrace.h"

#include <typeinfo>
#include <vector>

#define CUDAGRAPH_EXPORT __attribute__((visibility("default")))

namespace cudagraph {
namespace harness {

/// The calling thread's Python frames, innermost first; empty outside
/// Python or when CUDAGRAPH_HARNESS_PYTHON_STACK=0.
std::vector<PythonFrame> capturePythonStack(unsigned MaxFrames);

/// Routes __cxa_throw of already loaded objects through the harness. Safe to
/// call repeatedly; objects patched before are skipped. Returns how the
/// hook is installed: "preload" (LD_PRELOAD made it global), "got", "none".
const char *installThrowHook();

/// Called by the throw hook for every C++ throw in the process.
void noteCxxThrow(void *Object, std::type_info *Type);

} // namespace harness
} // namespace cudagraph

#endif // CUDAGRAPH_HARNESS_INJECT_INJECTION_H
