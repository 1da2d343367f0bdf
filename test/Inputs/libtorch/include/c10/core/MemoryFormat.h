// Stand-in for c10/core/MemoryFormat.h.
#pragma once

#include <cstdint>

namespace c10 {
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };
} // namespace c10
