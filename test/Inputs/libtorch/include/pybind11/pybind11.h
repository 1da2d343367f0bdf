// Minimal stand-in for pybind11/pybind11.h, enough for the module-definition
// boilerplate of torch extensions.
#pragma once

namespace pybind11 {

class module_ {
 public:
  explicit module_(const char* name);
  template <typename Func, typename... Extra>
  module_& def(const char* name_, Func&& f, const Extra&... extra);
};
using module = module_;

class object;
namespace detail {
// Calls into Python: obj(args...) runs the Python callable.
template <typename Derived>
class object_api {
 public:
  template <typename... Args>
  object operator()(Args&&... args) const;
};
} // namespace detail

class handle : public detail::object_api<handle> {
 public:
  handle() = default;
  handle(const module_&) {}
};

class object : public handle {
 public:
  template <typename T>
  T cast() const;
};

namespace detail::initimpl {
template <typename... Args>
struct constructor {};
} // namespace detail::initimpl

template <typename type_, typename... options>
class class_ {
 public:
  template <typename... Extra>
  class_(handle scope, const char* name, const Extra&... extra);
  template <typename Func, typename... Extra>
  class_& def(const char* name_, Func&& f, const Extra&... extra);
  template <typename... Args, typename... Extra>
  class_& def(detail::initimpl::constructor<Args...>&& init, const Extra&... extra);
  template <typename Func, typename... Extra>
  class_& def_static(const char* name_, Func&& f, const Extra&... extra);
};

template <typename... Args>
detail::initimpl::constructor<Args...> init() {
  return {};
}


struct arg {
  constexpr explicit arg(const char* name = nullptr) : name(name) {}
  const char* name;
};

} // namespace pybind11

#define PYBIND11_MODULE(name, variable)                                          \
  static void pybind11_init_##name(::pybind11::module_&);                        \
  extern "C" __attribute__((visibility("default"))) void* PyInit_##name() {      \
    static ::pybind11::module_ m(#name);                                         \
    pybind11_init_##name(m);                                                     \
    return &m;                                                                   \
  }                                                                              \
  void pybind11_init_##name(::pybind11::module_& variable)
