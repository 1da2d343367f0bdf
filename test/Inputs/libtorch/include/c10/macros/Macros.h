// Stand-in for c10/macros/Macros.h: export macros, branch hints and the
// namespace re-exports that make c10 names visible from at:: and at::cuda::.
#pragma once

#define C10_API
#define C10_CUDA_API
#define TORCH_API
#define TORCH_CUDA_CPP_API
#define TORCH_CUDA_CU_API

#define C10_LIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 1))
#define C10_UNLIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 0))
#define C10_UNUSED __attribute__((__unused__))
#define C10_CONCATENATE_IMPL(s1, s2) s1##s2
#define C10_CONCATENATE(s1, s2) C10_CONCATENATE_IMPL(s1, s2)
#define C10_UID __COUNTER__
#define C10_ANONYMOUS_VARIABLE(str) C10_CONCATENATE(str, __LINE__)

namespace c10 {}
namespace c10 {
namespace cuda {}
} // namespace c10

namespace at {
using namespace c10;
}
namespace at {
namespace cuda {
using namespace c10::cuda;
}
} // namespace at
