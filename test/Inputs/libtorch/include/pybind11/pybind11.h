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
