// Stand-in for c10/util/Exception.h: c10::Error and the TORCH_CHECK family.
#pragma once

#include <c10/macros/Macros.h>

#include <string>

namespace c10 {

class C10_API Error {
 public:
  Error(std::string msg, std::string backtrace, const void* caller = nullptr);
  const char* what() const noexcept;
  const std::string& msg() const;
};

namespace detail {
// Builds the error text from the variadic message arguments and throws.
[[noreturn]] void torchCheckFail(const char* func, const char* file, unsigned int line,
                                 const char* condMsg);
template <typename... Args>
const char* torchCheckMsg(const char* fallback, const Args&... /*args*/) {
  return fallback;
}
[[noreturn]] void torchInternalAssertFail(const char* func, const char* file,
                                          unsigned int line, const char* condMsg);
void torchWarn(const char* func, const char* file, unsigned int line, const char* msg);
} // namespace detail

} // namespace c10

#define TORCH_CHECK(cond, ...)                                                  \
  if (C10_UNLIKELY(!(cond))) {                                                  \
    ::c10::detail::torchCheckFail(                                              \
        __func__, __FILE__, static_cast<unsigned int>(__LINE__),                \
        ::c10::detail::torchCheckMsg("Expected " #cond " to be true", ##__VA_ARGS__)); \
  }

#define TORCH_INTERNAL_ASSERT(cond, ...)                                        \
  if (C10_UNLIKELY(!(cond))) {                                                  \
    ::c10::detail::torchInternalAssertFail(                                     \
        __func__, __FILE__, static_cast<unsigned int>(__LINE__), #cond);        \
  }

#define TORCH_WARN(...)                                                         \
  ::c10::detail::torchWarn(__func__, __FILE__, static_cast<unsigned int>(__LINE__), \
                           "warning")
