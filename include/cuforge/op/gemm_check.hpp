// The boundary check of a GEMM run: user-level operands in, the kernel's problem out.
//
// Every check happens here, once, before anything is launched: presence, element type, device,
// rank, shape (C: D's or a bias row; inputs with one batch broadcast across D's), strides
// against the plan's layouts, pointer and leading-dimension alignment, 32-bit limits, overlap of
// D with the inputs, the epilogue's scalars. A column-major D is turned into the transposed
// row-major problem (D^T = B^T A^T), so kernels only ever write row-major D.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/core/tensor.hpp"

namespace cuforge::op {

// Throws InvalidArgumentError where A's, B's, C's or D's element type has no size (void, or a value past the
// enum): a C++ caller's GemmTypes, before the checks below divide by it (plans hold canonical types).
void check_element_types(const GemmTypes& plan);

// The largest power-of-two alignment, in elements and at most 16 bytes, that an operand's address,
// contiguous extent (kernels load whole vectors along it), leading dimension and batch stride all allow.
int operand_alignment(DataType dtype, uintptr_t address, int64_t contiguous_extent, int64_t ld, int64_t batch_stride);

// Throws InvalidArgumentError or DataTypeError naming the operand, what was expected and what was
// given. `c` may be empty (rank 0, null data) when beta == 0. A batch of row-major A times one B, each batch's
// rows right after the previous one's in A, D and a D-shaped C (or C one bias row for all), is returned as one
// GEMM of batch x M rows (batch 1), as the CUTLASS Python interface ran it: its class is that GEMM's.
GemmProblem check_gemm(const GemmTypes& plan, int device, const TensorRef& a, const TensorRef& b, const TensorRef& c,
                       const TensorRef& d, double alpha, double beta);

// fp8 plans: per-tensor scales of A and B, as torch._scaled_mm takes them: one f32 value each on
// the plan's device, read by the kernel when it runs, so D = activation(alpha * scale_a * scale_b *
// A @ B + beta * C). An empty reference counts as 1.
struct Fp8Scales {
  TensorRef a, b;
};

// The scales' device pointers (null for an empty reference). Throws InvalidArgumentError for
// scales given to a plan whose operands are not fp8 or that lie in D (the kernel reads them while it
// writes D), DataTypeError for a scale that is not one f32 value on the plan's device (naming it).
std::pair<const float*, const float*> check_scales(const GemmTypes& plan, int device, const Fp8Scales& scales,
                                                   const TensorRef& d);

// Largest alignments (in elements) of A, B and C/D to assume, where the caller knows its operands
// allow less than their sizes do; 0 leaves one unbounded.
using AlignmentCaps = std::array<int, 3>;

// The problem class of packed operands on 16-byte aligned allocations (the leading dimensions set
// the alignment, capped by `caps`), in the kernel's terms; C a bias row when `bias`. Throws
// InvalidArgumentError naming an extent that is negative or beyond the 32-bit range, or a cap that
// is not a power of two of at most 16 bytes.
GemmShape packed_shape(const GemmTypes& plan, int64_t m, int64_t n, int64_t k, int64_t batch = 1, bool bias = false,
                       AlignmentCaps caps = {});

// Lowers the shape's alignments of A, B and C/D (s.align_a/b/c, the plan's operands in that order) to
// `caps`. Throws InvalidArgumentError naming a cap (alignment_A/B/C) that is not a power of two of at
// most 16 bytes of its operand's type.
void cap_alignments(GemmShape& s, const GemmTypes& plan, AlignmentCaps caps);

// The problem a K = 0 run with beta != 0 becomes: its product taken over one zero-filled vector of
// K (A and B read from a scratch buffer of zeros, 256-byte aligned), so that a kernel's epilogue
// writes activation(beta * C). `zeros_bytes` is the size of that buffer.
inline bool takes_zeros(const GemmShape& s) { return s.k == 0 && !s.empty_output(); }
GemmShape over_zeros(const GemmTypes& kernel_types, GemmShape shape, size_t& zeros_bytes);
GemmProblem over_zeros(const GemmTypes& kernel_types, const GemmProblem& problem, void* zeros);

}  // namespace cuforge::op
