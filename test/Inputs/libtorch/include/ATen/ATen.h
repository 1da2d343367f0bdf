// Stand-in for ATen/ATen.h.
#pragma once

#include <ATen/Functions.h>
#include <ATen/Tensor.h>
#include <ATen/TensorIndexing.h>
#include <ATen/core/Formatting.h>
#include <ATen/core/Generator.h>
#include <c10/core/Device.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/Exception.h>
