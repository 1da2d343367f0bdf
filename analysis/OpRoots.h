//===--- OpRoots.h - cudagraph analysis -------------------------*- C++ -*-===//
//
// Functions a Python program can run while it captures a CUDA graph: the
// bodies of PyTorch custom operators and Python bindings. vLLM, SGLang,
// FlashInfer and torch.compile's CUDA graphs capture every op a model calls,
// so an op's body runs under capture without any begin call in C++.
//
// Found from the registrations themselves:
//   TORCH_LIBRARY / TORCH_LIBRARY_FRAGMENT / TORCH_LIBRARY_IMPL bodies:
//     m.def("op(...) -> ...", &fn), m.impl("op", &fn), m.impl("op",
//     torch::kCUDA, TORCH_FN(fn)), torch::dispatch(key, fn), lambdas;
//     implementations for a dispatch key that cannot run on a CUDA tensor
//     (CPU, Meta, XLA, ...) are not roots;
//   PYBIND11_MODULE: m.def("name", &fn, ...), py::class_<T>(...).def(...);
//   torch::autograd::Function<T> subclasses: T::forward and T::backward;
//   XLA FFI handlers bound with the command-buffer trait
//     (XLA_FFI_DEFINE_HANDLER(fn, impl, binding,
//     {xla::ffi::Traits::kCmdBufferCompatible}), Ffi::BindTo(impl, traits),
//     or the trait given at registration: XLA_FFI_REGISTER_HANDLER(api,
//     name, platform, handler, XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_..)):
//     XLA records them into a CUDA graph by stream capture; handlers without
//     the trait, or bound for a stage other than execution, are never
//     captured.
// PyTorch ops only when they take or return a tensor: a binding with no
// tensor in its signature (a handle's creation, communicator setup) runs
// when the program sets up, not inside a captured model.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_ANALYSIS_OPROOTS_H
#define CUDAGRAPH_ANALYSIS_OPROOTS_H

#include "UserCode.h"
#include "clang/AST/Decl.h"
#include <string>
#include <vector>

namespace clang {
class ASTContext;
namespace cudagraph {

struct OpRegistration {
  enum class Kind {
    TorchLibrary,     // TORCH_LIBRARY* m.def / m.impl
    Pybind,           // pybind11 module_ / class_ def
    AutogradFunction, // torch::autograd::Function<T>::forward / backward
    XlaFfiHandler,    // XLA FFI handler with Traits::kCmdBufferCompatible
  };
  Kind K;
  /// The registered function's definition (a lambda's call operator too),
  /// or its declaration when it is defined in another unit.
  const FunctionDecl *Function = nullptr;
  /// The name Python calls it by ("myops::rms_norm", "fwd", "Norm.forward"),
  /// or an XLA handler's symbol ("tp_forward").
  std::string Name;
  /// Where it is registered (the def/impl call, or the class).
  SourceLocation Loc;
};

/// What \p K registers, for messages: "custom op", "XLA FFI handler".
llvm::StringRef registrationKindName(OpRegistration::Kind K);

/// When a registered function of kind \p K runs under capture, ending a
/// message: "when a captured model calls it".
llvm::StringRef registrationCapturedWhen(OpRegistration::Kind K);

/// Whether the program runs a function registered as \p K eagerly before
/// it captures it: Python warms a model up before capturing it; XLA may
/// record a handler's first execution.
bool registrationWarmedUp(OpRegistration::Kind K);

/// Every registration in user code of \p Ctx's translation unit whose
/// function has a body here (or, with \p WithDeclared, is only declared
/// here: Function is then the declaration), once per function and in source
/// order.
std::vector<OpRegistration> findOpRegistrations(ASTContext &Ctx,
                                                const CodeClassifier &Code,
                                                bool WithDeclared = false);

/// Whether an implementation registered for \p Key (a c10::DispatchKey or
/// c10::DeviceType enumerator name) can run on CUDA tensors.
bool dispatchKeyRunsOnCuda(llvm::StringRef Key);

} // namespace cudagraph
} // namespace clang

#endif // CUDAGRAPH_ANALYSIS_OPROOTS_H
