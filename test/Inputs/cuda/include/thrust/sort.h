// Stand-in for thrust/sort.h.
#pragma once

#include <thrust/execution_policy.h>

namespace thrust {
template <typename Policy, typename It>
void sort(const detail::execution_policy_base<Policy> &exec, It first, It last);
template <typename Policy, typename KeyIt, typename ValIt>
void sort_by_key(const detail::execution_policy_base<Policy> &exec,
                 KeyIt keys_first, KeyIt keys_last, ValIt values_first);
} // namespace thrust
