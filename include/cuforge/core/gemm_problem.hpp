// One GEMM problem as it flows through the pipeline: the types a plan binds, the problem class that
// selection and the plan's memory of choices see, and the operands a kernel is launched on.
//
// In the kernel's terms D (M x N) = A (M x K) B (K x N), D always row-major: a plan whose D is
// column-major runs the transposed problem D^T = B^T A^T (GemmTypes::canonical, transposed_shape).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cuforge/core/types.hpp"

namespace cuforge {

// The element types and layouts a GEMM plan binds at construction. The accumulator, when not
// given, is decided by default_accumulator (core/types.hpp).
struct GemmTypes {
  DataType element_a = DataType::f16, element_b = DataType::f16;
  DataType element_c = DataType::f16, element_d = DataType::f16;
  std::optional<DataType> element_accumulator;
  Layout layout_a = Layout::RowMajor, layout_b = Layout::RowMajor, layout_c = Layout::RowMajor;

  DataType accumulator() const { return element_accumulator.value_or(default_accumulator(element_a, element_b)); }
  // The types and layouts the kernel sees (A and B swapped and transposed for a column-major D).
  GemmTypes canonical() const;
};

// What a convolution adds to the class of the implicit GEMM it computes (op/conv_check.hpp).
struct ConvClass {
  // Only the SM80 kernels run it (strided dgrad, serial split-K, parallel split-K of fprop or dgrad
  // or of wgrad into more slices than it has images, or padding and dilation beyond SM90's TMA
  // im2col loads).
  bool sm80_only = false;
  // fprop and dgrad: the implicit GEMM's K is R·S runs of this many channels, and the kernels (SM80
  // and SM90 alike) start each run in a fresh K tile, so a run shorter than the tile's K leaves the
  // rest of the tile empty (the 3-channel stem layer). 0: K is one run (a GEMM).
  int64_t k_run = 0;
  // How many times the implicit GEMM reads each element of its im2col operand (A of fprop and
  // dgrad, B of wgrad): about the filter's taps over the stride's area, R·S / (stride_h·stride_w), at
  // least 1. The re-reads come from L2; the model's DRAM floor counts the tensor once.
  int64_t im2col_reuse = 1;
  // A 1x1 filter of unit stride and no padding, a GEMM over the NHWC tensors' rows that the GEMM
  // kernels can run (GemmConfig::pointwise).
  bool pointwise = false;
  // The run's own split-K (the seed's split_k=(mode, slices)): K in `splits` slices, summed in the
  // kernel (serial) or by a reduction after it (parallel_splits). 0: the plan's settings decide.
  int splits = 0;
  bool parallel_splits = false;
  // Strided dgrad: CUTLASS's strided-dgrad kernels do not split K, whatever the settings ask.
  bool unsplittable = false;
  // wgrad: the images (N) its K (N·P·Q) runs over. SM90 kernels split K in parallel between the
  // images, at least one image a slice. 0 for the other kinds.
  int64_t images = 0;
  // wgrad: its N (C·S·R) is S·R runs of this many channels, and SM90's im2col loads start each run in
  // a fresh N tile (a 128-wide tile over 64 channels is half empty; over the stem's 8, 1/16). 0: fprop
  // and dgrad (see k_run).
  int64_t n_run = 0;

  bool operator==(const ConvClass& o) const {
    return sm80_only == o.sm80_only && k_run == o.k_run && im2col_reuse == o.im2col_reuse &&
           pointwise == o.pointwise && splits == o.splits && parallel_splits == o.parallel_splits &&
           unsplittable == o.unsplittable && images == o.images && n_run == o.n_run;
  }
};

// The problem class: extents, and the largest power-of-two alignment (in elements, at most 16
// bytes) that the operands' pointers, contiguous extents, leading dimensions and batch strides all
// allow. Kernels of that alignment or less can run it. Selection depends on nothing else.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int align_a = 1, align_b = 1, align_c = 1;
  bool bias = false;  // C is one row of N broadcast over the rows of D
  // Grouped GEMM: the groups' M differ (or are unknown on the host: the offsets form), so each group's
  // last tile along M is on average half empty; `m` is then their mean.
  bool ragged = false;
  // Conv2d: what the convolution adds to its implicit GEMM's class (defaults for GEMMs).
  ConvClass conv = {};

  bool empty_output() const { return m == 0 || n == 0 || batch == 0; }
  bool operator==(const GemmShape& o) const {
    return m == o.m && n == o.n && k == o.k && batch == o.batch && align_a == o.align_a && align_b == o.align_b &&
           align_c == o.align_c && bias == o.bias && ragged == o.ragged && conv == o.conv;
  }
};

// CUTLASS problem extents are 32-bit.
inline constexpr int64_t kMaxExtent = INT32_MAX;
// The most slices of K a split-K run cuts (a plan's setting, or a convolution run's own).
inline constexpr int kMaxSplits = 1024;

// Why a GEMM extent (M, N, K or a batch count) is one no kernel takes (negative, or past kMaxExtent), or
// nullopt: the one check behind a run's arguments and a class a C++ caller built.
std::optional<std::string> why_invalid_extent(int64_t extent);

// Why a problem class cannot be a kernel's (extents outside 0..kMaxExtent, an empty output, alignments that are not a
// power of two from 1 to 16 elements, a convolution's fields out of their ranges), or nullopt: selection's
// check of a class a C++ caller built.
std::optional<std::string> why_invalid(const GemmShape& shape);

struct GemmShapeHash {
  size_t operator()(const GemmShape& s) const;
};

// The shape of the transposed problem D^T = B^T A^T (M and N, and A's and B's alignments, swap).
GemmShape transposed_shape(GemmShape shape);

// A problem ready to launch: its class and where its operands are. Leading dimensions and batch
// strides count elements; a batch stride of 0 broadcasts the operand across the batch; a bias C
// has ldc == 0.
struct GemmProblem {
  GemmShape shape;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;  // D when the user gave no C (then beta == 0 and C is never read)
  void* d = nullptr;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_c = 0, batch_stride_d = 0;
};

// How one launch runs its problem: the epilogue's scalars, how K is divided, and the device.
struct GemmLaunch {
  double alpha = 1.0, beta = 0.0;
  double activation_argument = 0.0;  // leaky_relu's negative slope
  int splits = 1;                    // K slices (split-K, parallel split-K)
  Decomposition decomposition = Decomposition::Heuristic;
  bool deterministic = true;  // stream-K and split-K partial tiles summed in K order
  int device = 0;
  int sm_count = 0;
  // SM90 GEMMs' tile order (select::rasterization), tiles grouped by `swizzle` (1, 2, 4 or 8) across it.
  RasterOrder raster = RasterOrder::Heuristic;
  int swizzle = 1;
  // fp8 kernels: per-tensor scales of A and B on the device, multiplying alpha (null: 1).
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
};

}  // namespace cuforge
