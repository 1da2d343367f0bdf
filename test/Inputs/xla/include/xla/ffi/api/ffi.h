// Stand-in for XLA's FFI C++ API (xla/ffi/api/ffi.h and api.h): the
// namespaces, class and enumerator names, binding methods and handler
// macros that custom-call code uses, in simplified form.
#ifndef CUDAGRAPH_TEST_XLA_FFI_API_FFI_H
#define CUDAGRAPH_TEST_XLA_FFI_API_FFI_H

#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

extern "C" {
typedef struct XLA_FFI_Error XLA_FFI_Error;
typedef struct XLA_FFI_CallFrame XLA_FFI_CallFrame;
typedef XLA_FFI_Error *XLA_FFI_Handler(XLA_FFI_CallFrame *call_frame);
typedef uint32_t XLA_FFI_Handler_Traits;
typedef struct XLA_FFI_Api XLA_FFI_Api;
struct XLA_FFI_Handler_Bundle {
  XLA_FFI_Handler *instantiate;
  XLA_FFI_Handler *prepare;
  XLA_FFI_Handler *initialize;
  XLA_FFI_Handler *execute;
};
enum XLA_FFI_Handler_TraitsBits {
  XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0,
};
typedef enum {
  XLA_FFI_ExecutionStage_INSTANTIATE = 0,
  XLA_FFI_ExecutionStage_PREPARE = 1,
  XLA_FFI_ExecutionStage_INITIALIZE = 2,
  XLA_FFI_ExecutionStage_EXECUTE = 3,
} XLA_FFI_ExecutionStage;
}

namespace xla::ffi {

enum class ExecutionStage : uint8_t {
  kInstantiate = XLA_FFI_ExecutionStage_INSTANTIATE,
  kPrepare = XLA_FFI_ExecutionStage_PREPARE,
  kInitialize = XLA_FFI_ExecutionStage_INITIALIZE,
  kExecute = XLA_FFI_ExecutionStage_EXECUTE,
};

enum class Traits : uint32_t {
  kCmdBufferCompatible = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE,
};

enum class DataType : uint8_t { F32, F64, S32, S64, U8 };

class Error {
public:
  static Error Success();
  static Error Internal(std::string message);
};

class AnyBuffer {
public:
  void *untyped_data() const;
  DataType element_type() const;
  size_t element_count() const;
  size_t size_bytes() const;
};

template <typename T> class Result {
public:
  T *operator->();
};

template <typename T> struct PlatformStream {};

class Ffi {
public:
  virtual ~Ffi() = default;
  virtual XLA_FFI_Error *Call(XLA_FFI_CallFrame *call_frame) const = 0;

  template <ExecutionStage stage = ExecutionStage::kExecute>
  static auto Bind();

  static XLA_FFI_Error *RegisterStaticHandler(const XLA_FFI_Api *api,
                                              std::string_view name,
                                              std::string_view platform,
                                              XLA_FFI_Handler_Bundle bundle,
                                              XLA_FFI_Handler_Traits traits = 0);
  static XLA_FFI_Error *RegisterStaticHandler(const XLA_FFI_Api *api,
                                              std::string_view name,
                                              std::string_view platform,
                                              XLA_FFI_Handler *execute,
                                              XLA_FFI_Handler_Traits traits = 0);

  template <typename Fn, ExecutionStage stage = ExecutionStage::kExecute>
  static std::unique_ptr<Ffi> BindTo(Fn fn,
                                     std::initializer_list<Traits> traits = {}) {
    return nullptr;
  }
};

template <ExecutionStage stage, typename Fn, typename... Ts>
class Handler : public Ffi {
public:
  XLA_FFI_Error *Call(XLA_FFI_CallFrame *call_frame) const override;
};

template <ExecutionStage stage, typename... Ts> class Binding {
public:
  template <typename T> Binding<stage, Ts..., T> Arg() &&;
  template <typename T> Binding<stage, Ts..., Result<T>> Ret() &&;
  template <typename T> Binding<stage, Ts..., T> Ctx() &&;
  template <typename T> Binding<stage, Ts..., T> Attr(std::string attr) &&;

  template <typename Fn>
  std::unique_ptr<Handler<stage, Fn, Ts...>>
  To(Fn fn, std::initializer_list<Traits> traits = {});
};

template <ExecutionStage stage> auto Ffi::Bind() { return Binding<stage>(); }

const XLA_FFI_Api *GetXlaFfiApi();

} // namespace xla::ffi

// A handler as a static function pointer, bound on first call; the traits
// argument is optional.
#define XLA_FFI_DEFINE_HANDLER(fn, impl, binding, ...)                        \
  static constexpr XLA_FFI_Handler *fn = +[](XLA_FFI_CallFrame *call_frame) { \
    static auto *handler = (binding).To(impl, ##__VA_ARGS__).release();       \
    return handler->Call(call_frame);                                         \
  }

// A handler exported as a C symbol.
#define XLA_FFI_DEFINE_HANDLER_SYMBOL(fn, impl, binding, ...)                 \
  extern "C" XLA_FFI_Error *fn(XLA_FFI_CallFrame *call_frame) {               \
    XLA_FFI_DEFINE_HANDLER(handler, impl, binding, ##__VA_ARGS__);            \
    return (*handler)(call_frame);                                            \
  }

// Registers a handler (or a bundle, one handler per stage) with XLA at
// load time; the traits argument is optional.
#define XLA_FFI_REGISTER_HANDLER(api, name, platform, handler, ...)           \
  static const XLA_FFI_Error *xla_ffi_registered_##handler =                  \
      ::xla::ffi::Ffi::RegisterStaticHandler(api, name, platform, handler,    \
                                             ##__VA_ARGS__)

#endif // CUDAGRAPH_TEST_XLA_FFI_API_FFI_H
