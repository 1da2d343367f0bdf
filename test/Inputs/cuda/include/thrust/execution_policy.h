// Stand-in for Thrust's execution policies: the CUDA policies `par` and
// `par_nosync`, their stream-bound forms `.on(s)` and allocator-carrying
// forms `(alloc).on(s)`, with Thrust's type names.
#pragma once

#include <cuda_runtime_api.h>

namespace thrust {
namespace detail {
template <typename Derived> struct execution_policy_base {};

template <typename Allocator, typename Base>
struct execute_with_allocator
    : execution_policy_base<execute_with_allocator<Allocator, Base>> {
  explicit execute_with_allocator(Allocator a) : alloc(a) {}
  execute_with_allocator on(cudaStream_t) const { return *this; }
  Allocator alloc;
};
} // namespace detail

namespace cuda_cub {
struct execute_on_stream_base {};
struct execute_on_stream
    : thrust::detail::execution_policy_base<execute_on_stream> {};
struct par_t : thrust::detail::execution_policy_base<par_t> {
  execute_on_stream on(cudaStream_t) const { return execute_on_stream(); }
  template <typename Allocator>
  thrust::detail::execute_with_allocator<Allocator &, execute_on_stream_base>
  operator()(Allocator &a) const {
    return thrust::detail::execute_with_allocator<Allocator &,
                                                  execute_on_stream_base>(a);
  }
};
static const par_t par;

struct execute_on_stream_nosync_base {};
struct execute_on_stream_nosync
    : thrust::detail::execution_policy_base<execute_on_stream_nosync> {};
struct par_nosync_t : thrust::detail::execution_policy_base<par_nosync_t> {
  execute_on_stream_nosync on(cudaStream_t) const {
    return execute_on_stream_nosync();
  }
  template <typename Allocator>
  thrust::detail::execute_with_allocator<Allocator &,
                                         execute_on_stream_nosync_base>
  operator()(Allocator &a) const {
    return thrust::detail::execute_with_allocator<
        Allocator &, execute_on_stream_nosync_base>(a);
  }
};
static const par_nosync_t par_nosync;
} // namespace cuda_cub

namespace cuda {
using thrust::cuda_cub::par;
using thrust::cuda_cub::par_nosync;
} // namespace cuda

struct device_t : detail::execution_policy_base<device_t> {};
static const device_t device;
} // namespace thrust
