// A 2-D convolution as it flows through the pipeline: its geometry, the implicit GEMM it is
// computed as (the problem class selection sees), and the NHWC tensors a kernel is launched on.
//
// x is the activation (n, h, w, c), w the filter (k, r, s, c) and y the output (n, p, q, k), with
// p = (h + 2 pad_h - dilation_h (r - 1) - 1) / stride_h + 1 (q likewise). Forward propagation
// (fprop) computes y from x and w; dgrad the gradient of x from dy and w; wgrad the gradient of w
// from dy and x. As an implicit GEMM, D (M x N) = A (M x K) B (K x N):
//   fprop: M = n·p·q, N = k, K = c·r·s    (A = x, B = w, D = y)
//   dgrad: M = n·h·w, N = c, K = k·r·s    (A = dy, B = w, D = dx)
//   wgrad: M = k, N = c·r·s, K = n·p·q    (A = dy, B = x, D = dw)
#pragma once

#include <array>
#include <cstdint>

#include "cuforge/core/gemm_problem.hpp"

namespace cuforge {

struct Conv2dSize {
  int64_t n = 1, h = 1, w = 1, c = 1;  // the activation
  int64_t k = 1, r = 1, s = 1;         // filters: k of r x s x c
  int64_t p = 1, q = 1;                // the output's height and width
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;

  // The output extent the geometry gives along one axis; meaningless (0 or less, or 1 where the
  // division rounds toward zero) for a filter wider than the padded input, which callers check.
  static int64_t output_extent(int64_t input, int64_t filter, int64_t pad, int64_t stride, int64_t dilation) {
    return (input + 2 * pad - dilation * (filter - 1) - 1) / stride + 1;
  }
};

// The implicit GEMM's M, N and K for a convolution kind (the kind must be a Conv2d one). Each is a
// product of up to three extents; one whose product passes int64's range is kExtentOverflow.
std::array<int64_t, 3> implicit_gemm_extents(KernelKind kind, const Conv2dSize& size);
inline constexpr int64_t kExtentOverflow = INT64_MAX;

// A run's own split-K (the seed's split_k=(mode, slices)): K (the implicit GEMM's) cut into `slices`
// slices summed in the kernel (serial), or written as f32 partial products and summed by a reduction
// kernel after it (parallel). 0 slices: the plan's settings decide.
struct ConvSplitK {
  int slices = 0;
  bool parallel = false;
};

// A convolution ready to launch. Strides count elements between neighbours along W, H and N (the
// channels are contiguous); C of strides 0 is one value per output channel (a bias).
struct ConvProblem {
  KernelKind kind = KernelKind::Conv2dFprop;
  GemmShape shape;  // the implicit GEMM's class
  Conv2dSize size;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;  // D when the user gave no C (then beta == 0 and C is never read)
  void* d = nullptr;
  std::array<int64_t, 3> stride_a{}, stride_b{}, stride_c{}, stride_d{};
};

}  // namespace cuforge
