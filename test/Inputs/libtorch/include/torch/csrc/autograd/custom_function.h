// Stand-in for torch/csrc/autograd/custom_function.h: user-defined autograd
// functions (a class T deriving from Function<T> with static forward and
// backward taking an AutogradContext*).
#pragma once

#include <ATen/Tensor.h>

#include <memory>
#include <utility>
#include <vector>

namespace torch {
namespace autograd {

using Variable = at::Tensor;
using variable_list = std::vector<Variable>;

struct TORCH_API AutogradContext {
  void save_for_backward(variable_list to_save);
  variable_list get_saved_variables() const;
};

// Records which arguments are tensors that need gradients.
template <typename... Args>
void extract_vars(std::vector<bool> &is_var, variable_list &list,
                  Args &&...args);

// The graph node that owns an application's context.
template <class T>
struct CppNode {
  AutogradContext ctx_;
};

template <class T>
struct TORCH_API Function {
  // Runs T::forward with the node's context and the arguments as given.
  template <typename X = T, typename... Args>
  static auto apply(Args&&... args) {
    auto node = std::make_shared<CppNode<T>>();
    std::vector<bool> is_var;
    variable_list inputs;
    extract_vars(is_var, inputs, args...);
    return T::forward(&node->ctx_, std::forward<Args>(args)...);
  }
};

} // namespace autograd
} // namespace torch
