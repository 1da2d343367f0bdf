// Stand-in for torch/script.h: TorchScript modules and values.
#pragma once

#include <torch/csrc/jit/api/module.h>
#include <torch/types.h>
