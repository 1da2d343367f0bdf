// Stand-in for c10/core/DeviceType.h.
#pragma once

#include <cstdint>

namespace c10 {

enum class DeviceType : int8_t {
  CPU = 0,
  CUDA = 1,
  MKLDNN = 2,
  OPENGL = 3,
  OPENCL = 4,
  IDEEP = 5,
  HIP = 6,
  FPGA = 7,
  MAIA = 8,
  XLA = 9,
  Vulkan = 10,
  Metal = 11,
  XPU = 12,
  MPS = 13,
  Meta = 14,
  HPU = 15,
  VE = 16,
  Lazy = 17,
  IPU = 18,
  MTIA = 19,
  PrivateUse1 = 20,
};

constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kHIP = DeviceType::HIP;
constexpr DeviceType kMPS = DeviceType::MPS;
constexpr DeviceType kMeta = DeviceType::Meta;
constexpr DeviceType kXPU = DeviceType::XPU;

} // namespace c10
