//===--- PythonStack.cpp - the Python frames behind a CUDA call -----------===//
//
// For a Python program the native stack ends in the interpreter; the line
// that matters is the Python one. The interpreter's C API is looked up at
// run time (the harness must not link libpython), and only the stable
// functions are used, so one build serves every Python 3.9+ process.
//
//===----------------------------------------------------------------------===//

#include "Injection.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace cudagraph {
namespace harness {

namespace {

struct PythonApi {
  using IntFn = int (*)();
  using PtrFn = void *(*)();
  using ObjFn = void *(*)(void *);
  using LineFn = int (*)(void *);
  using AttrFn = void *(*)(void *, const char *);
  using Utf8Fn = const char *(*)(void *);
  using DecRefFn = void (*)(void *);
  using EnsureFn = int (*)();
  using ReleaseFn = void (*)(int);

  IntFn IsInitialized = nullptr;
  IntFn IsFinalizing = nullptr;
  PtrFn GetThisThreadState = nullptr;
  IntFn GilCheck = nullptr;
  EnsureFn GilEnsure = nullptr;
  ReleaseFn GilRelease = nullptr;
  PtrFn GetFrame = nullptr;
  ObjFn FrameGetBack = nullptr;
  ObjFn FrameGetCode = nullptr;
  LineFn FrameGetLineNumber = nullptr;
  AttrFn GetAttrString = nullptr;
  Utf8Fn AsUtf8 = nullptr;
  DecRefFn DecRef = nullptr;

  bool Complete = false;

  PythonApi() {
    auto Get = [](const char *Name) { return dlsym(RTLD_DEFAULT, Name); };
    IsInitialized = reinterpret_cast<IntFn>(Get("Py_IsInitialized"));
    IsFinalizing = reinterpret_cast<IntFn>(Get("Py_IsFinalizing"));
    if (!IsFinalizing)
      IsFinalizing = reinterpret_cast<IntFn>(Get("_Py_IsFinalizing"));
    GetThisThreadState =
        reinterpret_cast<PtrFn>(Get("PyGILState_GetThisThreadState"));
    GilCheck = reinterpret_cast<IntFn>(Get("PyGILState_Check"));
    GilEnsure = reinterpret_cast<EnsureFn>(Get("PyGILState_Ensure"));
    GilRelease = reinterpret_cast<ReleaseFn>(Get("PyGILState_Release"));
    GetFrame = reinterpret_cast<PtrFn>(Get("PyEval_GetFrame"));
    FrameGetBack = reinterpret_cast<ObjFn>(Get("PyFrame_GetBack"));
    FrameGetCode = reinterpret_cast<ObjFn>(Get("PyFrame_GetCode"));
    FrameGetLineNumber =
        reinterpret_cast<LineFn>(Get("PyFrame_GetLineNumber"));
    GetAttrString = reinterpret_cast<AttrFn>(Get("PyObject_GetAttrString"));
    AsUtf8 = reinterpret_cast<Utf8Fn>(Get("PyUnicode_AsUTF8"));
    DecRef = reinterpret_cast<DecRefFn>(Get("Py_DecRef"));
    Complete = IsInitialized && GetThisThreadState && GilEnsure &&
               GilRelease && GetFrame && FrameGetBack && FrameGetCode &&
               FrameGetLineNumber && GetAttrString && AsUtf8 && DecRef;
  }

  std::string codeAttr(void *Code, const char *Name) const {
    void *Attr = GetAttrString(Code, Name);
    if (!Attr)
      return "";
    const char *Text = AsUtf8(Attr);
    std::string Out = Text ? Text : "";
    DecRef(Attr);
    return Out;
  }
};

} // namespace

std::vector<PythonFrame> capturePythonStack(unsigned MaxFrames) {
  static const char *Env = std::getenv("CUDAGRAPH_HARNESS_PYTHON_STACK");
  if (Env && std::strcmp(Env, "0") == 0)
    return {};
  static const PythonApi Py;
  std::vector<PythonFrame> Frames;
  if (!Py.Complete || !Py.IsInitialized())
    return Frames;
  if (Py.IsFinalizing && Py.IsFinalizing())
    return Frames;
  // Threads Python never saw have no frames; do not give them a state.
  if (!Py.GetThisThreadState())
    return Frames;
  // Most libtorch calls release the GIL around CUDA work; take it back to
  // read this thread's frames, which cannot change while we are here.
  int State = Py.GilEnsure();
  void *Frame = Py.GetFrame(); // Borrowed.
  if (Frame) {
    void *Owned = nullptr; // Frames from GetBack are new references.
    while (Frame && Frames.size() < MaxFrames) {
      PythonFrame F;
      F.Line = Py.FrameGetLineNumber(Frame);
      if (void *Code = Py.FrameGetCode(Frame)) {
        F.File = Py.codeAttr(Code, "co_filename");
        F.Function = Py.codeAttr(Code, "co_name");
        Py.DecRef(Code);
      }
      Frames.push_back(std::move(F));
      void *Back = Py.FrameGetBack(Frame);
      if (Owned)
        Py.DecRef(Owned);
      Owned = Back;
      Frame = Back;
    }
    if (Owned)
      Py.DecRef(Owned);
  }
  Py.GilRelease(State);
  return Frames;
}

} // namespace harness
} // namespace cudagraph
