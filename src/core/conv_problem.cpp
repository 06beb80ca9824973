#include "cuforge/core/conv_problem.hpp"

namespace cuforge {

std::array<int64_t, 3> implicit_gemm_extents(KernelKind kind, const Conv2dSize& z) {
  switch (kind) {
    case KernelKind::Conv2dDgrad: return {z.n * z.h * z.w, z.c, z.k * z.r * z.s};
    case KernelKind::Conv2dWgrad: return {z.k, z.c * z.r * z.s, z.n * z.p * z.q};
    default: return {z.n * z.p * z.q, z.k, z.c * z.r * z.s};
  }
}

}  // namespace cuforge
