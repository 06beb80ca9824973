// The boundary check of a convolution run: NHWC tensors in (op/conv2d.hpp says which tensor is
// which for each kind), the kernel's problem out.
//
// Every check happens here, before anything is launched: presence, element type, device, rank 4,
// dense NHWC storage, the geometry (channels of input and filter, the output size
// P = (H + 2 pad - dilation (R - 1) - 1) / stride + 1), stride, padding and dilation, what CUTLASS's
// implicit-GEMM kernels support (filters up to 32 x 32; dgrad without dilation, strided dgrad without
// split-K), channel alignment, 32-bit sizes and overlap of D with the inputs. The problem class records
// what only the SM80 kernels run (ConvClass::sm80_only: strided dgrad, serial split-K, parallel
// split-K but wgrad's into at most N slices, padding and dilation beyond SM90's TMA im2col loads), so that selection leaves it to them, and the run's own split-K
// (GemmShape::splits), which selection then takes as given.
#pragma once

#include <array>

#include "cuforge/core/conv_problem.hpp"
#include "cuforge/core/tensor.hpp"
#include "cuforge/op/gemm_check.hpp"

namespace cuforge::op {

// A convolution's stride, padding and dilation, (height, width) each.
struct ConvGeometry {
  std::array<int64_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
};

// A size of no extents yet with the geometry's padding, stride and dilation.
Conv2dSize with_geometry(const ConvGeometry& geometry);
// A convolution's size from its extents (N, H, W, C, K, R, S) and geometry, P and Q as the geometry
// gives them. Throws InvalidArgumentError naming an extent outside 1 to 2^31 - 1, a stride, padding
// or dilation check_conv would refuse, or a filter wider than the padded input (B, as check_conv).
Conv2dSize conv_size(const std::array<int64_t, 7>& nhwckrs, const ConvGeometry& geometry);

// Throws InvalidArgumentError or DataTypeError naming the operand (or stride/padding/dilation),
// what was expected and what was given. `c` may be empty when beta == 0, a tensor of D's shape, or
// (fprop, dgrad) a bias: one value per channel of D (rank 1). `split`: the run's own split-K;
// `plan_splits`: the slices the plan's settings cut K into when the run gives none; `element_wise`: the
// plan's kernels read channels one element at a time (SIMT), so any channel count, where tensor-op kernels
// read vectors of 4 bytes or more (but fprop's fixed-channel kernels of one 16-bit channel).
ConvProblem check_conv(KernelKind kind, const GemmTypes& plan, int device, const TensorRef& a, const TensorRef& b,
                       const TensorRef& c, const TensorRef& d, const ConvGeometry& geometry, double beta,
                       ConvSplitK split = {}, int plan_splits = 1, bool element_wise = false);

// The problem class of a convolution of this size on dense tensors in 16-byte aligned allocations
// (its extents and geometry checked as conv_size checks them; the channels set the alignments, capped
// by `caps` as packed_shape caps a GEMM's), with a run's own split-K where `split` has slices.
GemmShape conv_shape(KernelKind kind, const GemmTypes& plan, const Conv2dSize& size, bool bias = false,
                     AlignmentCaps caps = {}, ConvSplitK split = {});

}  // namespace cuforge::op
