// Stand-in for torch/torch.h (torch/all.h).
#pragma once

#include <torch/cuda.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>
#include <torch/optim.h>
#include <torch/types.h>
#include <torch/version.h>
