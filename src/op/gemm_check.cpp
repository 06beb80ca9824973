#include "cuforge/op/gemm_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <tuple>

#include "cuforge/core/error.hpp"
#include "operand_check.hpp"

namespace cuforge::op {
namespace {

constexpr const char* kBiasNeedsRowMajorD = "a bias vector C needs a row-major D (the plan's layout_C is column-major)";

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

std::string layout_words(Layout l) { return l == Layout::RowMajor ? "row-major" : "column-major"; }

// `vector_ok`: a rank-1 operand is read as one row (C as a bias vector).
Matrix describe_matrix(const char* name, const TensorRef& t, DataType dtype, const char* dtype_role, int device,
                       bool vector_ok = false) {
  if (t.data == nullptr && t.numel() != 0)
    fail(name, t.empty() ? std::string("no tensor was given") : "its data pointer is null: " + t.describe());
  check_type_and_device(name, t, dtype, dtype_role, device);
  if (t.rank != 2 && t.rank != 3 && !(vector_ok && t.rank == 1))
    fail(name, fmt::format("expected {}a matrix (rank 2) or a batch of matrices (rank 3), got rank {}: {}",
                           vector_ok ? "a bias vector (rank 1), " : "", t.rank, t.describe()));
  for (int i = 0; i < t.rank; ++i)
    if (t.shape[i] < 0) fail(name, fmt::format("negative extent in {}", t.describe()));
  check_strides(name, t);
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
  // SM90's TMA descriptors take strides below 2^40 bytes; rows (or matrices) that far apart span more memory than
  // any GPU has, so such a view is refused rather than run on the SM80 kernels.
  const int64_t most = (int64_t(1) << 40) / size_bytes(m.t->dtype);
  for (auto [stride, what] : {std::pair{m.ld, "leading dimension"}, {m.batch_stride, "batch stride"}})
    if (stride >= most)
      fail(m.name, fmt::format("a {} of {} elements is 2^40 bytes or more, past what the kernels address: {}", what,
                               stride, m.t->describe()));
  int64_t matrix = 0;  // elements one matrix spans; past int64 (strides near 2^62) no batch stride steps over it
  const bool beyond = __builtin_mul_overflow(m.ld, outer_extent, &matrix);
  if (m.batch > 1 && m.batch_stride != 0 && (beyond || m.batch_stride < matrix))
    fail(m.name, fmt::format("batches overlap: a batch stride of {} is less than one matrix ({} elements) in {}",
                             m.batch_stride, beyond ? std::string("past 2^63") : std::to_string(matrix),
                             m.t->describe()));
}

int alignment_of(const Matrix& m) {
  const int bytes = size_bytes(m.t->dtype);
  auto address = reinterpret_cast<uintptr_t>(m.t->data);
  if (address % bytes != 0)
    fail(m.name, fmt::format("the data pointer {:#x} is not aligned to its {}-byte elements", address, bytes));
  return operand_alignment(m.t->dtype, address, m.contiguous, m.ld, m.batch > 1 ? m.batch_stride : 0);
}

// An alignment of D, in elements of the plan's C: the class's C/D alignment counts C's elements (the
// kernels' alignment_c), and an SM90 GEMM may read C of another type than D.
int as_c_elements(const GemmTypes& plan, int d_alignment) {
  return std::max(1, d_alignment * size_bits(plan.element_d) / size_bits(plan.element_c));
}

// A batch that multiplies every A by one B, run as a single GEMM of batch x M rows, as the CUTLASS Python interface
// runs it: the tiles then span the whole batch's rows (a batch of small matrices runs as one large one). Only where
// B is one matrix (broadcast: batch stride 0) and A, D and a batched C are row-major with each batch's rows right
// after the previous one's, or C is one row for every row of every batch (a bias row then), and the rows together
// stay within the kernels' extents. Returns whether it folded: A, C and D are then matrices of batch x M rows
// (`bias` set where C became a bias row), B one matrix.
bool fold_batch_into_rows(const GemmTypes& plan, Matrix& a, Matrix& b, Matrix* c, Matrix& d, bool& bias) {
  const int64_t batch = d.batch;
  // K = 0 is no product (D = beta C): its zero operands are sized by M, which the fold would multiply.
  if (batch < 2 || a.cols == 0 || b.batch_stride != 0 || plan.layout_a != Layout::RowMajor ||
      plan.layout_c != Layout::RowMajor)
    return false;
  int64_t rows = 0;
  if (__builtin_mul_overflow(batch, d.rows, &rows) || rows > kMaxExtent) return false;
  // A batch's rows right after the previous batch's: one row each is its batch stride apart.
  auto stacked = [&](const Matrix& x) {
    return x.batch == batch &&
           (x.rows == 1 ? x.batch_stride >= std::max<int64_t>(x.cols, 1) : x.batch_stride == x.rows * x.ld);
  };
  const bool one_row = c && c->rows == 1 && c->batch_stride == 0;  // the same row for every row of D
  // A C of D's shape stacked as D is; not a bias row per batch (one row of C for D's many).
  if (!stacked(a) || !stacked(d) || (c && !one_row && (c->rows != d.rows || !stacked(*c)))) return false;
  for (Matrix* x : {&a, &d, one_row ? nullptr : c}) {
    if (!x) continue;
    if (x->rows == 1) x->ld = x->batch_stride;
    x->rows = rows;
    x->batch = 1;
    x->batch_stride = 0;
  }
  if (one_row) {
    c->ld = 0;
    bias = true;
  }
  b.batch = 1;
  return true;
}

void check_extents(int64_t m, int64_t n, int64_t k, int64_t batch) {
  for (auto [name, v] : {std::pair{"M", m}, {"N", n}, {"K", k}, {"batch", batch}})
    if (auto why = why_invalid_extent(v)) fail(name, *why);
}

}  // namespace

void check_element_types(const GemmTypes& plan) {
  for (auto [name, type] : {std::pair{"element_A", plan.element_a}, {"element_B", plan.element_b},
                            {"element_C", plan.element_c}, {"element_D", plan.element_d}})
    if (size_bits(type) == 0)
      fail(name, fmt::format("{} has no size: an operand's element type is a number type (void means no tensor, and a "
                             "plan takes element_C = element_D then)", to_string(type)));
}

int operand_alignment(DataType dtype, uintptr_t address, int64_t contiguous_extent, int64_t ld, int64_t batch_stride) {
  const int bytes = size_bytes(dtype);
  if (bytes == 0) fail("dtype", fmt::format("{} has no size: no operand is of it", to_string(dtype)));
  int align = 16 / bytes;
  auto fits = [&](int a) {
    return address % (uintptr_t(a) * bytes) == 0 && contiguous_extent % a == 0 && ld % a == 0 && batch_stride % a == 0;
  };
  while (align > 1 && !fits(align)) align /= 2;
  return align;
}

GemmProblem check_gemm(const GemmTypes& plan, int device, const TensorRef& a, const TensorRef& b, const TensorRef& c,
                       const TensorRef& d, double alpha, double beta) {
  check_element_types(plan);
  check_scalars(plan, alpha, beta);
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
  // C is D-shaped, or one row of N broadcast over D's rows (a bias, as a vector or a 1 x N matrix; D of
  // one row reads it as a matrix, an empty D as either).
  bool bias = mc && mc->rows == 1 && m != 1;
  if (mc && ((mc->rows != m && !bias) || mc->cols != n))
    fail("C", fmt::format("expected shape (M, N) = ({}, {}) like D, or a bias of N = {} (shape ({},) or (1, {})), "
                          "got {}", m, n, n, n, n, c.describe()));
  if (bias && plan.layout_c != Layout::RowMajor)
    fail("C", kBiasNeedsRowMajorD);

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
  const bool folded = fold_batch_into_rows(plan, ma, mb, mc ? &*mc : nullptr, md, bias);

  GemmProblem g;
  GemmShape& shape = g.shape;
  shape.m = md.rows;
  shape.n = n;
  shape.k = k;
  shape.batch = folded ? 1 : batch;
  shape.bias = bias;
  if (shape.empty_output()) return g;

  for (const Matrix* x : {&ma, &mb}) check_output_apart(d, x->name, *x->t);
  // C may be D itself, each element read by the thread that writes it; not a bias row or a C broadcast across D's
  // batches that lies in D: other rows and batches would read it after it is written.
  if (mc && overlaps(d, c) &&
      (c.data != d.data || c.strides != d.strides || bias || mc->ld != md.ld || mc->batch_stride != md.batch_stride))
    fail("D", "the output partly overlaps C, or lies under a bias row or one C for every batch: C and D must be the "
              "same tensor or not overlap at all");

  const Matrix& out_c = mc ? *mc : md;  // with no C (beta == 0) the kernel is given D, never read
  shape.align_a = alignment_of(ma);
  shape.align_b = alignment_of(mb);
  const int d_alignment = as_c_elements(plan, alignment_of(md));
  shape.align_c = std::min(mc ? alignment_of(*mc) : d_alignment, d_alignment);
  // A column-major D: compute D^T (N x M, row-major) = B^T A^T.
  const bool transpose = plan.layout_c == Layout::ColumnMajor;
  if (transpose) shape = transposed_shape(shape);
  const Matrix& ka = transpose ? mb : ma;
  const Matrix& kb = transpose ? ma : mb;
  g.a = ka.t->data;
  g.b = kb.t->data;
  g.c = out_c.t->data;
  g.d = const_cast<void*>(d.data);
  g.lda = ka.ld;
  g.ldb = kb.ld;
  // D given as C (never read) where C is of another type: its strides in C's elements, the same bytes.
  const int64_t c_per_d = mc ? 1 : std::max(1, size_bits(plan.element_d) / size_bits(plan.element_c));
  g.ldc = out_c.ld * c_per_d;
  g.ldd = md.ld;
  g.batch_stride_a = ka.batch_stride;
  g.batch_stride_b = kb.batch_stride;
  g.batch_stride_c = out_c.batch_stride * c_per_d;
  g.batch_stride_d = md.batch_stride;
  return g;
}

std::pair<const float*, const float*> check_scales(const GemmTypes& plan, int device, const Fp8Scales& scales,
                                                   const TensorRef& d) {
  if (scales.a.empty() && scales.b.empty()) return {nullptr, nullptr};
  if (!is_fp8(plan.element_a) || !is_fp8(plan.element_b))
    throw InvalidArgumentError(fmt::format("scale_a, scale_b: per-tensor scales apply to fp8 (e4m3, e5m2) operands; "
                                           "this plan multiplies {} x {} (scale alpha instead)",
                                           to_string(plan.element_a), to_string(plan.element_b)));
  auto pointer = [&](const char* name, const TensorRef& t) -> const float* {
    if (t.empty()) return nullptr;
    if (t.dtype != DataType::f32)
      throw DataTypeError(fmt::format("{}: expected one f32 value on the device (as torch._scaled_mm takes it), got {}",
                                      name, t.describe()));
    // One value: every extent 1 (a product of 1 may be of two extents of -1, from a C++ caller).
    if (!t.valid_rank() || !std::all_of(t.shape.begin(), t.shape.begin() + t.rank, [](int64_t e) { return e == 1; }))
      fail(name, fmt::format("expected one f32 value on the device (per-tensor scaling), got {}", t.describe()));
    if (t.device != device)
      fail(name, fmt::format("expected a tensor on cuda:{} (the plan's device; the kernel reads it when it runs), "
                             "got {}", device, t.describe()));
    if (t.data == nullptr || reinterpret_cast<uintptr_t>(t.data) % alignof(float) != 0)
      fail(name, fmt::format("expected a 4-byte aligned f32 value, got address {}", t.data));
    if (overlaps(t, d)) fail(name, "the scale lies in D: the kernel would read it while writing D");
    return static_cast<const float*>(t.data);
  };
  return {pointer("scale_a", scales.a), pointer("scale_b", scales.b)};
}

void cap_alignments(GemmShape& s, const GemmTypes& plan, AlignmentCaps caps) {
  // alignment_C counts the output's elements, as the CUTLASS Python interface's epilogue alignment did.
  const std::tuple<const char*, DataType, int*> operands[] = {{"alignment_A", plan.element_a, &s.align_a},
                                                              {"alignment_B", plan.element_b, &s.align_b},
                                                              {"alignment_C", plan.element_d, &s.align_c}};
  for (int i = 0; i < 3; ++i) {
    auto [name, type, align] = operands[i];
    const int most = 16 / size_bytes(type);
    if (caps[i] != 0 && (caps[i] < 1 || caps[i] > most || (caps[i] & (caps[i] - 1))))
      fail(name, fmt::format("expected a power of two from 1 to {} elements of {} (16 bytes at most), got {}", most,
                             to_string(type), caps[i]));
    if (caps[i]) *align = std::min(*align, i == 2 ? as_c_elements(plan, caps[i]) : caps[i]);
  }
}

GemmShape packed_shape(const GemmTypes& plan, int64_t m, int64_t n, int64_t k, int64_t batch, bool bias,
                       AlignmentCaps caps) {
  check_element_types(plan);
  check_extents(m, n, k, batch);
  if (bias && m > 1 && plan.layout_c != Layout::RowMajor)  // as check_gemm refuses a run's
    fail("C", kBiasNeedsRowMajorD);
  auto ld = [](Layout l, int64_t rows, int64_t cols) { return l == Layout::RowMajor ? cols : rows; };
  auto align = [](DataType t, int64_t ld) { return operand_alignment(t, 0, ld, ld, 0); };
  GemmShape s{m, n, k, batch};
  s.align_a = align(plan.element_a, ld(plan.layout_a, m, k));
  s.align_b = align(plan.element_b, ld(plan.layout_b, k, n));
  const int64_t ld_c = ld(plan.layout_c, m, n);
  s.align_c = std::min(align(plan.element_c, ld_c), as_c_elements(plan, align(plan.element_d, ld_c)));
  cap_alignments(s, plan, caps);
  s.bias = bias && m > 1;
  return plan.layout_c == Layout::ColumnMajor ? transposed_shape(s) : s;
}

namespace {

// The zero operands of a K = 0 product: one 16-byte vector of the narrower operand's K (mixed inputs: 16 s8
// beside 16 f16), A as M x K and B as K x N in the kernel's layouts, leading dimensions padded to whole vectors.
struct Zeros {
  int64_t k, lda, ldb;
  size_t bytes;
  int align_a, align_b;
};

Zeros zeros_for(const GemmTypes& t, const GemmShape& s) {
  const int64_t k = 128 / std::min(size_bits(t.element_a), size_bits(t.element_b));
  auto padded = [&](int64_t extent) { return (extent + k - 1) / k * k; };
  const bool row_a = t.layout_a == Layout::RowMajor, row_b = t.layout_b == Layout::RowMajor;
  Zeros z;
  z.k = k;
  z.lda = row_a ? k : padded(s.m);
  z.ldb = row_b ? padded(s.n) : k;
  z.bytes = size_t(std::max(z.lda * (row_a ? s.m : k) * size_bytes(t.element_a),
                            z.ldb * (row_b ? k : s.n) * size_bytes(t.element_b)));
  constexpr uintptr_t kAligned = 256;  // scratch allocations are at least this aligned
  z.align_a = operand_alignment(t.element_a, kAligned, row_a ? k : s.m, z.lda, 0);
  z.align_b = operand_alignment(t.element_b, kAligned, row_b ? s.n : k, z.ldb, 0);
  return z;
}

}  // namespace

GemmShape over_zeros(const GemmTypes& kernel_types, GemmShape shape, size_t& zeros_bytes) {
  Zeros z = zeros_for(kernel_types, shape);
  zeros_bytes = z.bytes;
  shape.k = z.k;
  shape.align_a = z.align_a;
  shape.align_b = z.align_b;
  return shape;
}

GemmProblem over_zeros(const GemmTypes& kernel_types, const GemmProblem& problem, void* zeros) {
  Zeros z = zeros_for(kernel_types, problem.shape);
  GemmProblem p = problem;
  p.shape.k = z.k;
  p.shape.align_a = z.align_a;
  p.shape.align_b = z.align_b;
  p.a = p.b = zeros;  // both read-only
  p.lda = z.lda;
  p.ldb = z.ldb;
  p.batch_stride_a = p.batch_stride_b = 0;
  return p;
}

}  // namespace cuforge::op
