// The boundary check of a GEMM run: user-level operands in, the kernel's canonical problem out.
//
// Every check happens here, once, before anything is launched: presence, element type, device,
// rank, shape (C: D's or a bias row; inputs with one batch broadcast across D's), strides
// against the plan's layouts, pointer and leading-dimension alignment,
// 32-bit limits, overlap of D with the inputs. A column-major D is turned into the transposed
// row-major problem (D^T = B^T A^T), so kernels only ever write row-major D.
#pragma once

#include <cstdint>

#include "cuforge/core/tensor.hpp"
#include "cuforge/core/types.hpp"

namespace cuforge::op {

// The element types and layouts a plan binds at construction.
struct GemmTypes {
  DataType element_a = DataType::f16, element_b = DataType::f16;
  DataType element_c = DataType::f16, element_d = DataType::f16;
  DataType element_accumulator = DataType::f32;
  Layout layout_a = Layout::RowMajor, layout_b = Layout::RowMajor, layout_c = Layout::RowMajor;

  // The types and layouts the kernel sees (A and B swapped and transposed for a column-major D).
  GemmTypes canonical() const;
};

struct CanonicalGemm {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;  // D when the user gave no C (then beta == 0)
  void* d = nullptr;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_c = 0, batch_stride_d = 0;  // 0: broadcast
  bool bias = false;  // C is one row of N broadcast over the rows of D (then ldc == 0)
  // Largest power-of-two alignment, in elements, that pointers, leading dimensions and batch
  // strides all satisfy (capped at 16 bytes): kernels with this alignment or less can run.
  int align_a = 1, align_b = 1, align_c = 1;

  bool empty_output() const { return m == 0 || n == 0 || batch == 0; }
};

// The largest power-of-two alignment, in elements and at most 16 bytes, that an operand's address,
// contiguous extent (kernels load whole vectors along it), leading dimension and batch stride all allow.
int operand_alignment(DataType dtype, uintptr_t address, int64_t contiguous_extent, int64_t ld, int64_t batch_stride);

// Throws InvalidArgumentError or DataTypeError naming the operand, what was expected and what was
// given. `c` may be empty (rank 0, null data) when beta == 0.
CanonicalGemm check_gemm(const GemmTypes& plan, int device, const TensorRef& a, const TensorRef& b,
                         const TensorRef& c, const TensorRef& d, double beta);

}  // namespace cuforge::op
