#include "cuforge/op/gemm_problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "cuforge/core/error.hpp"

namespace cuforge::op {
namespace {

constexpr int64_t kMaxExtent = INT32_MAX;  // CUTLASS problem sizes are 32-bit

// One matrix operand as the checks see it: rows x cols, in a batch of `batch`.
struct Matrix {
  const char* name;
  const TensorRef* t;
  int64_t rows = 0, cols = 0, batch = 1;
  int64_t ld = 0, batch_stride = 0;
  int64_t contiguous = 0;  // the extent along the unit-stride dimension
  int align = 1;

  int64_t row_stride() const { return t->rank >= 2 ? t->strides[t->rank - 2] : 0; }
  int64_t col_stride() const { return t->strides[t->rank - 1]; }
};

[[noreturn]] void fail(const char* operand, const std::string& what) {
  throw InvalidArgumentError(fmt::format("{}: {}", operand, what));
}

std::string layout_words(Layout l) { return l == Layout::RowMajor ? "row-major" : "column-major"; }

// `vector_ok`: a rank-1 operand is read as one row (C as a bias vector).
Matrix describe_matrix(const char* name, const TensorRef& t, DataType dtype, const char* dtype_role, int device,
                       bool vector_ok = false) {
  if (t.data == nullptr && t.numel() != 0) fail(name, "no tensor was given");
  if (t.dtype != dtype)
    throw DataTypeError(fmt::format("{}: expected element type {} (the plan's {}), got {}", name, to_string(dtype),
                                    dtype_role, to_string(t.dtype)));
  if (t.rank != 2 && t.rank != 3 && !(vector_ok && t.rank == 1))
    fail(name, fmt::format("expected {}a matrix (rank 2) or a batch of matrices (rank 3), got rank {}: {}",
                           vector_ok ? "a bias vector (rank 1), " : "", t.rank, t.describe()));
  if (t.device == TensorRef::kHost)
    fail(name, fmt::format("expected a tensor on cuda:{}, got one in host memory (a CPU torch tensor? move it with "
                           ".cuda(); NumPy arrays are copied to the GPU automatically)", device));
  if (t.device != device)
    fail(name, fmt::format("expected a tensor on cuda:{} (the plan's device), got one on cuda:{}", device, t.device));
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] < 0) fail(name, fmt::format("negative extent in {}", t.describe()));
    if (t.strides[i] < 0) fail(name, fmt::format("negative strides are not supported: {}", t.describe()));
  }
  Matrix m{name, &t};
  m.rows = t.rank >= 2 ? t.shape[t.rank - 2] : 1;
  m.cols = t.shape[t.rank - 1];
  m.batch = t.rank == 3 ? t.shape[0] : 1;
  m.batch_stride = t.rank == 3 && m.batch > 1 ? t.strides[0] : 0;
  for (auto [extent, what] : {std::pair{m.rows, "rows"}, {m.cols, "columns"}, {m.batch, "batches"}})
    if (extent > kMaxExtent)
      fail(name, fmt::format("{} {} exceed the 32-bit range the kernels index ({} at most)", extent, what, kMaxExtent));
  return m;
}

// Checks that the strides describe `layout` with no overlap and fills in the leading dimension.
void check_layout(Matrix& m, Layout layout, const char* layout_role) {
  const bool row = layout == Layout::RowMajor;
  int64_t contiguous_stride = row ? m.col_stride() : m.row_stride();
  int64_t contiguous_extent = row ? m.cols : m.rows;
  int64_t outer_stride = row ? m.row_stride() : m.col_stride();
  int64_t outer_extent = row ? m.rows : m.cols;
  bool contiguous_ok = contiguous_stride == 1 || contiguous_extent <= 1;
  bool outer_ok = outer_stride >= contiguous_extent || outer_extent <= 1;
  if (!contiguous_ok || !outer_ok)
    fail(m.name, fmt::format("expected a {} matrix (the plan's {}): unit stride along the {} and a leading dimension "
                             "of at least {}, got {} (build the plan with the layout your tensors have, or pass a "
                             ".contiguous() copy)",
                             layout_words(layout), layout_role, row ? "columns" : "rows", contiguous_extent,
                             m.t->describe()));
  m.contiguous = contiguous_extent;
  // With a single row (column), the leading dimension is never used to address: keep it tidy.
  m.ld = outer_extent <= 1 ? std::max<int64_t>(contiguous_extent, 1) : outer_stride;
  if (m.batch > 1 && m.batch_stride < m.ld * outer_extent && m.batch_stride != 0)
    fail(m.name, fmt::format("batches overlap: a batch stride of {} is less than one matrix ({} elements) in {}",
                             m.batch_stride, m.ld * outer_extent, m.t->describe()));
}

int alignment_of(const Matrix& m) {
  const int bytes = size_bytes(m.t->dtype);
  auto address = reinterpret_cast<uintptr_t>(m.t->data);
  if (address % bytes != 0)
    fail(m.name, fmt::format("the data pointer {:#x} is not aligned to its {}-byte elements", address, bytes));
  return operand_alignment(m.t->dtype, address, m.contiguous, m.ld, m.batch > 1 ? m.batch_stride : 0);
}

std::pair<uintptr_t, uintptr_t> byte_range(const Matrix& m) {
  auto begin = reinterpret_cast<uintptr_t>(m.t->data);
  int64_t last = 0;
  for (int i = 0; i < m.t->rank; ++i) last += (m.t->shape[i] - 1) * m.t->strides[i];
  return {begin, begin + uintptr_t(last + 1) * size_bytes(m.t->dtype)};
}

bool overlaps(const Matrix& x, const Matrix& y) {
  auto [xb, xe] = byte_range(x);
  auto [yb, ye] = byte_range(y);
  return xb < ye && yb < xe;
}

}  // namespace

int operand_alignment(DataType dtype, uintptr_t address, int64_t contiguous_extent, int64_t ld, int64_t batch_stride) {
  const int bytes = size_bytes(dtype);
  int align = 16 / bytes;
  auto fits = [&](int a) {
    return address % (uintptr_t(a) * bytes) == 0 && contiguous_extent % a == 0 && ld % a == 0 && batch_stride % a == 0;
  };
  while (align > 1 && !fits(align)) align /= 2;
  return align;
}

GemmTypes GemmTypes::canonical() const {
  if (layout_c == Layout::RowMajor) return *this;
  GemmTypes t = *this;
  t.element_a = element_b;
  t.element_b = element_a;
  t.layout_a = transposed(layout_b);
  t.layout_b = transposed(layout_a);
  t.layout_c = Layout::RowMajor;
  return t;
}

CanonicalGemm check_gemm(const GemmTypes& plan, int device, const TensorRef& a, const TensorRef& b,
                         const TensorRef& c, const TensorRef& d, double beta) {
  if (d.empty()) fail("D", "no output tensor was given");
  if (a.empty()) fail("A", "no tensor was given");
  if (b.empty()) fail("B", "no tensor was given");
  Matrix ma = describe_matrix("A", a, plan.element_a, "element_A", device);
  Matrix mb = describe_matrix("B", b, plan.element_b, "element_B", device);
  Matrix md = describe_matrix("D", d, plan.element_d, "element_D", device);
  std::optional<Matrix> mc;
  if (!c.empty()) {
    mc = describe_matrix("C", c, plan.element_c, "element_C", device, /*vector_ok=*/true);
  } else if (beta != 0.0) {
    fail("C", fmt::format("beta is {} but no C was given (pass C, or beta=0)", beta));
  }

  const int64_t m = ma.rows, k = ma.cols, n = mb.cols;
  if (mb.rows != k) fail("B", fmt::format("expected {} rows (K, the columns of A), got {}: {}", k, mb.rows, b.describe()));
  if (md.rows != m || md.cols != n)
    fail("D", fmt::format("expected shape (M, N) = ({}, {}) from A and B, got ({}, {})", m, n, md.rows, md.cols));
  // C is D-shaped, or one row of N broadcast over D's rows (a bias, as a vector or a 1 x N matrix).
  const bool bias = mc && mc->rows == 1 && m > 1;
  if (mc && ((mc->rows != m && !bias) || mc->cols != n))
    fail("C", fmt::format("expected shape (M, N) = ({}, {}) like D, or a bias of N = {} (shape ({},) or (1, {})), "
                          "got {}", m, n, n, n, n, c.describe()));
  if (bias && plan.layout_c != Layout::RowMajor)
    fail("C", "a bias vector C needs a row-major D (the plan's layout_C is column-major)");

  // Batches: D sets the count; an input with a batch of one (or a matrix) is broadcast across it.
  const int64_t batch = md.batch;
  if (batch > 1 && md.batch_stride == 0)
    fail("D", fmt::format("a batch stride of 0 would write every batch to the same memory: {}", d.describe()));
  for (Matrix* x : {&ma, &mb, mc ? &*mc : nullptr}) {
    if (!x || x->batch == batch) continue;
    if (x->batch != 1)
      fail(x->name, fmt::format("expected a batch of {} like D (or one matrix, broadcast), got {}", batch,
                                x->t->describe()));
    x->batch_stride = 0;  // the same matrix for every batch
  }

  check_layout(ma, plan.layout_a, "layout_A");
  check_layout(mb, plan.layout_b, "layout_B");
  check_layout(md, plan.layout_c, "layout_C (D shares C's layout)");
  if (mc) check_layout(*mc, bias ? Layout::RowMajor : plan.layout_c, "layout_C");
  if (bias) mc->ld = 0;  // every row of D reads the same row of C

  CanonicalGemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  if (g.empty_output()) return g;

  for (const Matrix* x : {&ma, &mb}) {
    if (overlaps(md, *x))
      fail("D", fmt::format("the output overlaps input {}: the kernel would read what it has written", x->name));
  }
  if (mc && overlaps(md, *mc) && (c.data != d.data || c.strides != d.strides))
    fail("D", "the output partly overlaps C: C and D must be the same tensor or not overlap at all");

  ma.align = alignment_of(ma);
  mb.align = alignment_of(mb);
  md.align = alignment_of(md);
  if (mc) mc->align = alignment_of(*mc);
  const Matrix& out_c = mc ? *mc : md;  // with no C (beta == 0) the kernel is given D, never read

  // A column-major D: compute D^T (N x M, row-major) = B^T A^T.
  const bool transpose = plan.layout_c == Layout::ColumnMajor;
  const Matrix& ka = transpose ? mb : ma;
  const Matrix& kb = transpose ? ma : mb;
  if (transpose) std::swap(g.m, g.n);
  g.a = ka.t->data;
  g.b = kb.t->data;
  g.c = out_c.t->data;
  g.d = const_cast<void*>(d.data);
  g.lda = ka.ld;
  g.ldb = kb.ld;
  g.ldc = out_c.ld;
  g.bias = bias;
  g.ldd = md.ld;
  g.batch_stride_a = ka.batch_stride;
  g.batch_stride_b = kb.batch_stride;
  g.batch_stride_c = out_c.batch_stride;
  g.batch_stride_d = md.batch_stride;
  g.align_a = ka.align;
  g.align_b = kb.align;
  g.align_c = std::min(out_c.align, md.align);
  return g;
}

}  // namespace cuforge::op
