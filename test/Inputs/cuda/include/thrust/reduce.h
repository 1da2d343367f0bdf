// Stand-in for thrust/reduce.h.
#pragma once

#include <thrust/execution_policy.h>
#include <iterator>

namespace thrust {
template <typename Policy, typename It>
typename std::iterator_traits<It>::value_type
reduce(const detail::execution_policy_base<Policy> &exec, It first, It last);
} // namespace thrust
