// Stand-in for torch/extension.h: the libtorch API plus the pybind11 module
// boilerplate used by C++/CUDA extensions.
#pragma once

#include <pybind11/pybind11.h>
#include <torch/all.h>

namespace py = pybind11;
