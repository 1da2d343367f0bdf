// Stand-in for torch/csrc/jit/api/module.h: a loaded TorchScript module.
// forward runs the module's graph: its kernels go to the current stream.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <string>
#include <vector>

namespace torch {
namespace jit {

using ::c10::IValue;

struct Module {
  IValue forward(std::vector<IValue> inputs);
  void to(at::Device device, bool non_blocking = false);
  void eval();
};

namespace script {
using Module = ::torch::jit::Module;
} // namespace script

Module load(const std::string& filename);

} // namespace jit
} // namespace torch
