// Stand-in for torch/csrc/autograd/custom_function.h: user-defined autograd
// functions (a class T deriving from Function<T> with static forward and
// backward taking an AutogradContext*).
#pragma once

#include <ATen/Tensor.h>

#include <vector>

namespace torch {
namespace autograd {

using Variable = at::Tensor;
using variable_list = std::vector<Variable>;

struct TORCH_API AutogradContext {
  void save_for_backward(variable_list to_save);
  variable_list get_saved_variables() const;
};

template <class T>
struct TORCH_API Function {
  template <typename X = T, typename... Args>
  static auto apply(Args&&... args);
};

} // namespace autograd
} // namespace torch
