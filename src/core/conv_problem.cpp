#include "cuforge/core/conv_problem.hpp"

namespace cuforge {
namespace {

// x·y·z, or kExtentOverflow past int64's range (extents of 31 bits each can reach 2^93).
int64_t product(int64_t x, int64_t y, int64_t z) {
  int64_t xy = 0, xyz = 0;
  if (__builtin_mul_overflow(x, y, &xy) || __builtin_mul_overflow(xy, z, &xyz)) return kExtentOverflow;
  return xyz;
}

}  // namespace

std::array<int64_t, 3> implicit_gemm_extents(KernelKind kind, const Conv2dSize& z) {
  switch (kind) {
    case KernelKind::Conv2dDgrad: return {product(z.n, z.h, z.w), z.c, product(z.k, z.r, z.s)};
    case KernelKind::Conv2dWgrad: return {z.k, product(z.c, z.r, z.s), product(z.n, z.p, z.q)};
    default: return {product(z.n, z.p, z.q), z.k, product(z.c, z.r, z.s)};
  }
}

}  // namespace cuforge
