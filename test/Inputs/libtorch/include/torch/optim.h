// Stand-in for torch/optim.h: the optimizer interface and the optimizers
// whose step() is computed on the host (declarations only, as in libtorch,
// whose bodies live in the library).
#pragma once

#include <ATen/ATen.h>
#include <functional>
#include <memory>
#include <vector>

namespace torch {
namespace optim {

class OptimizerOptions {
public:
  virtual ~OptimizerOptions() = default;
  virtual double get_lr() const;
  virtual void set_lr(const double lr);
};

class OptimizerParamGroup {
public:
  OptimizerOptions &options();
  std::vector<at::Tensor> &params();
};

class Optimizer {
public:
  using LossClosure = std::function<at::Tensor()>;
  virtual ~Optimizer() = default;
  virtual at::Tensor step(LossClosure closure = nullptr) = 0;
  void zero_grad(bool set_to_none = true);
  std::vector<OptimizerParamGroup> &param_groups() noexcept;
};

struct AdamOptions : public OptimizerOptions {
  AdamOptions(double lr = 1e-3);
  AdamOptions &lr(double lr);
  double lr() const;
  AdamOptions &eps(double eps);
};

class Adam : public Optimizer {
public:
  explicit Adam(std::vector<at::Tensor> params,
                AdamOptions defaults = AdamOptions());
  at::Tensor step(LossClosure closure = nullptr) override;
};

struct AdamWOptions : public OptimizerOptions {
  AdamWOptions(double lr = 1e-3);
};

class AdamW : public Optimizer {
public:
  explicit AdamW(std::vector<at::Tensor> params,
                 AdamWOptions defaults = AdamWOptions());
  at::Tensor step(LossClosure closure = nullptr) override;
};

struct SGDOptions : public OptimizerOptions {
  SGDOptions(double lr);
};

class SGD : public Optimizer {
public:
  explicit SGD(std::vector<at::Tensor> params, SGDOptions defaults);
  at::Tensor step(LossClosure closure = nullptr) override;
};

} // namespace optim
} // namespace torch
