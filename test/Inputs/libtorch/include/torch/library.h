// Stand-in for torch/library.h: operator registration API and the
// TORCH_LIBRARY / TORCH_LIBRARY_IMPL macros. Each macro ends by opening the
// definition of a function that takes `torch::Library&`.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/macros/Macros.h>
#include <c10/util/Optional.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace c10 {

enum class DispatchKey : uint16_t {
  Undefined = 0,
  CPU,
  CUDA,
  HIP,
  XLA,
  MPS,
  Meta,
  PrivateUse1,
  BackendSelect,
  Python,
  Functionalize,
  ADInplaceOrView,
  AutogradOther,
  AutogradCPU,
  AutogradCUDA,
  AutogradMeta,
  AutogradPrivateUse1,
  Autocast,
  AutocastCPU,
  AutocastCUDA,
  Autograd,
  CompositeImplicitAutograd,
  CompositeExplicitAutograd,
  CompositeExplicitAutogradNonFunctional,
};

template <class FuncType_, FuncType_* func_ptr_>
struct CompileTimeFunctionPointer final {
  using FuncType = FuncType_;
  static constexpr FuncType* func_ptr() { return func_ptr_; }
};

} // namespace c10

#define TORCH_FN_TYPE(func)                                                     \
  ::c10::CompileTimeFunctionPointer<                                            \
      std::remove_pointer_t<std::remove_reference_t<decltype(func)>>, func>
#define TORCH_FN(func) TORCH_FN_TYPE(func)()

namespace torch {

class TORCH_API Library final {
 public:
  enum Kind { DEF, IMPL, FRAGMENT };

  Library(Kind kind, std::string ns, std::optional<c10::DispatchKey> k, const char* file,
          uint32_t line);
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  Library(Library&&) = default;
  Library& operator=(Library&&) = default;

  template <typename Schema>
  Library& def(Schema&& raw_schema) & { return *this; }
  template <typename NameOrSchema, typename Func>
  Library& def(NameOrSchema&& raw_name_or_schema, Func&& raw_f) & { return *this; }
  template <typename Name, typename Func>
  Library& impl(Name name, Func&& raw_f) & { return *this; }
  template <typename Name, typename Dispatch, typename Func>
  Library& impl(Name name, Dispatch&& key, Func&& raw_f) & { return *this; }
  template <typename Func>
  Library& fallback(Func&& raw_f) &;
};

class TORCH_API CppFunction final {
 public:
  template <typename Func>
  explicit CppFunction(Func* f);
  template <typename FuncPtr>
  explicit CppFunction(FuncPtr f);
};

template <typename Func>
CppFunction dispatch(c10::DispatchKey k, Func&& raw_f);
template <typename Func>
CppFunction dispatch(c10::DeviceType type, Func&& raw_f);

namespace detail {

class TorchLibraryInit final {
 private:
  using InitFn = void(Library&);

 public:
  TorchLibraryInit(Library::Kind kind, InitFn* fn, const char* ns,
                   std::optional<c10::DispatchKey> k, const char* file, uint32_t line);
};

} // namespace detail
} // namespace torch

#define TORCH_LIBRARY(ns, m)                                                   \
  static void TORCH_LIBRARY_init_##ns(torch::Library&);                        \
  static const torch::detail::TorchLibraryInit TORCH_LIBRARY_static_init_##ns( \
      torch::Library::DEF, &TORCH_LIBRARY_init_##ns, #ns, std::nullopt,        \
      __FILE__, __LINE__);                                                     \
  void TORCH_LIBRARY_init_##ns(torch::Library& m)

#define TORCH_LIBRARY_FRAGMENT(ns, m) _TORCH_LIBRARY_FRAGMENT(ns, m, C10_UID)
#define _TORCH_LIBRARY_FRAGMENT(ns, m, uid)                                    \
  static void C10_CONCATENATE(TORCH_LIBRARY_FRAGMENT_init_##ns##_, uid)(       \
      torch::Library&);                                                        \
  static const torch::detail::TorchLibraryInit C10_CONCATENATE(                \
      TORCH_LIBRARY_FRAGMENT_static_init_##ns##_, uid)(                        \
      torch::Library::FRAGMENT,                                                \
      &C10_CONCATENATE(TORCH_LIBRARY_FRAGMENT_init_##ns##_, uid), #ns,         \
      std::nullopt, __FILE__, __LINE__);                                       \
  void C10_CONCATENATE(TORCH_LIBRARY_FRAGMENT_init_##ns##_, uid)(torch::Library & m)

#define TORCH_LIBRARY_IMPL(ns, k, m) _TORCH_LIBRARY_IMPL(ns, k, m, C10_UID)
#define _TORCH_LIBRARY_IMPL(ns, k, m, uid)                                     \
  static void C10_CONCATENATE(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(     \
      torch::Library&);                                                        \
  static const torch::detail::TorchLibraryInit C10_CONCATENATE(                \
      TORCH_LIBRARY_IMPL_static_init_##ns##_##k##_, uid)(                      \
      torch::Library::IMPL,                                                    \
      &C10_CONCATENATE(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid), #ns,       \
      std::make_optional(c10::DispatchKey::k), __FILE__, __LINE__);            \
  void C10_CONCATENATE(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(torch::Library & m)
