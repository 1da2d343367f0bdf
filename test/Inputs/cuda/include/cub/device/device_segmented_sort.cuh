// Stand-in for cub/device/device_segmented_sort.cuh and
// cub/device/device_segmented_radix_sort.cuh: the two-phase entry points
// (null temporary storage asks for its size).
#pragma once

#include <cstddef>
#include <cuda_runtime.h>

namespace cub {
struct DeviceSegmentedSort {
  template <typename KeyT, typename OffsetIt>
  static cudaError_t SortKeys(void *temp, std::size_t &bytes, const KeyT *in,
                              KeyT *out, long long items, long long segments,
                              OffsetIt begins, OffsetIt ends,
                              cudaStream_t stream = 0);
  template <typename KeyT, typename OffsetIt>
  static cudaError_t StableSortKeys(void *temp, std::size_t &bytes,
                                    const KeyT *in, KeyT *out, long long items,
                                    long long segments, OffsetIt begins,
                                    OffsetIt ends, cudaStream_t stream = 0);
  template <typename KeyT, typename ValueT, typename OffsetIt>
  static cudaError_t
  StableSortPairs(void *temp, std::size_t &bytes, const KeyT *keys_in,
                  KeyT *keys_out, const ValueT *values_in, ValueT *values_out,
                  long long items, long long segments, OffsetIt begins,
                  OffsetIt ends, cudaStream_t stream = 0);
};

struct DeviceSegmentedRadixSort {
  template <typename KeyT, typename OffsetIt>
  static cudaError_t SortKeys(void *temp, std::size_t &bytes, const KeyT *in,
                              KeyT *out, long long items, long long segments,
                              OffsetIt begins, OffsetIt ends, int begin_bit = 0,
                              int end_bit = sizeof(KeyT) * 8,
                              cudaStream_t stream = 0);
};
} // namespace cub
