#include "cuforge/op/grouped_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <vector>

#include "cuforge/core/error.hpp"
#include "cuforge/op/gemm_check.hpp"
#include "operand_check.hpp"

namespace cuforge::op {
namespace {

// Groups of similar sizes share a class: mean extents rounded up to a power of two (at least 16,
// at most the kernels' 32-bit range), so that the kernel chosen for one call serves the next calls
// of the same kind of mix.
int64_t bucket(int64_t extent) {
  int64_t b = 16;
  while (b < extent && b < (int64_t(1) << 31)) b *= 2;
  return std::min(b, kMaxExtent);
}

// The class of `groups` groups of mean extents m, n, k (M differing between groups where
// `ragged`), with the alignments all allow; `bias`: C is a bias row per group.
GemmShape summary(int64_t groups, double m, double n, double k, int align_a, int align_b, int align_c,
                  bool ragged, bool bias) {
  GemmShape s;
  s.ragged = ragged;
  s.bias = bias;
  s.batch = groups;
  s.m = m > 0 ? bucket(int64_t(m + 0.999)) : 0;  // no group has rows (or columns): no kernel runs them
  s.n = n > 0 ? bucket(int64_t(n + 0.999)) : 0;
  s.k = bucket(int64_t(k + 0.999));
  s.align_a = align_a;
  s.align_b = align_b;
  s.align_c = align_c;
  return s;
}

// Runs a check with its errors prefixed by the group they concern.
template <class F>
auto in_group(size_t g, F&& check) {
  try {
    return check();
  } catch (const DataTypeError& e) {
    throw DataTypeError(fmt::format("group {}: {}", g, e.what()));
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(fmt::format("group {}: {}", g, e.what()));
  }
}

// One launch runs every group: a group's output that overlaps another group's output or operands races with
// it (each group's own were checked with it, C and D one tensor allowed). The outputs sorted by address, so
// that each operand is looked up among them (many groups are checked in G log G).
void check_groups_apart(const std::vector<TensorRef>& a, const std::vector<TensorRef>& b,
                        const std::vector<TensorRef>& c, const std::vector<TensorRef>& d) {
  struct Span {
    uintptr_t begin, end;
    size_t group;
  };
  std::vector<Span> outputs;
  for (size_t g = 0; g < d.size(); ++g)
    if (const auto [begin, end] = d[g].byte_span(); begin < end) outputs.push_back({begin, end, g});
  std::sort(outputs.begin(), outputs.end(), [](const Span& x, const Span& y) { return x.begin < y.begin; });
  for (size_t i = 1; i < outputs.size(); ++i)
    if (outputs[i - 1].end > outputs[i].begin)
      fail("D", fmt::format("group {}'s output overlaps group {}'s: one launch writes both", outputs[i - 1].group,
                       outputs[i].group));
  // Disjoint and sorted by their starts, the outputs are sorted by their ends too.
  for (auto [name, list] : {std::pair{"A", &a}, {"B", &b}, {"C", &c}})
    for (size_t g = 0; g < list->size(); ++g) {
      const auto [begin, end] = (*list)[g].byte_span();
      if (begin == end) continue;
      auto o = std::upper_bound(outputs.begin(), outputs.end(), begin,
                                [](uintptr_t at, const Span& out) { return at < out.end; });
      for (; o != outputs.end() && o->begin < end; ++o)
        if (o->group != g)
          fail("D", fmt::format("group {}'s output overlaps group {}'s {}: one launch reads it while writing the "
                           "other", o->group, g, name));
    }
}

}  // namespace

GroupedProblem check_grouped(const GemmTypes& plan, int device, const std::vector<TensorRef>& a,
                             const std::vector<TensorRef>& b, const std::vector<TensorRef>& c,
                             const std::vector<TensorRef>& d, double alpha, double beta) {
  if (d.empty()) fail("D", "expected a list of one output per group, got an empty list");
  // One tensor per group in each list (C's may be empty): the list whose length differs from the most common one
  // is named (D's where the counts tie), with every list's length.
  std::vector<std::pair<const char*, size_t>> lists = {{"A", a.size()}, {"B", b.size()}};
  if (!c.empty()) lists.emplace_back("C", c.size());
  lists.emplace_back("D", d.size());
  auto count = [&](size_t n) { return std::count_if(lists.begin(), lists.end(), [&](auto& l) { return l.second == n; }); };
  size_t groups = d.size();
  for (const auto& l : lists)
    if (count(l.second) > count(groups)) groups = l.second;
  for (const auto& [name, size] : lists)
    if (size != groups) {
      std::string lengths, holding;  // "A, C and D hold 3"
      int held = 0;
      for (const auto& [other, n] : lists) {
        lengths += fmt::format("{}{} {}", lengths.empty() ? "" : ", ", other, n);
        if (n == groups)
          holding += fmt::format("{}{}", held++ == 0 ? "" : held == count(groups) ? " and " : ", ", other);
      }
      fail(name, fmt::format("{} tensor{} where {} hold{} {}: one tensor per group in each list ({})", size,
                             size == 1 ? "" : "s", holding, held == 1 ? "s" : "", groups, lengths));
    }
  if (d.size() > size_t(INT32_MAX)) fail("D", fmt::format("{} groups exceed the kernels' 32-bit count", d.size()));
  GroupedProblem p;
  p.groups = int64_t(d.size());
  double m = 0, n = 0, k = 0;
  int align_a = 16, align_b = 16, align_c = 16;
  int64_t first_m = -1;  // of the first group with an output
  bool ragged = false;
  int64_t bias_group = -1;  // the first group whose C says whether C is a bias row
  bool bias = false;
  static const TensorRef kNone;
  for (size_t g = 0; g < d.size(); ++g) {
    GemmProblem problem =
        in_group(g, [&] { return check_gemm(plan, device, a[g], b[g], c.empty() ? kNone : c[g], d[g], alpha, beta); });
    if (d[g].rank != 2 || a[g].rank != 2 || b[g].rank != 2)
      fail(fmt::format("group {}", g), fmt::format("expected matrices (rank 2), got A of rank {}, B {}, D {}", a[g].rank,
                                                  b[g].rank, d[g].rank));
    // One kernel runs every group: C is a matrix like D in all of them, or a bias row (N) in all. A
    // group of one row reads its one row of C either way.
    if (!c.empty() && !c[g].empty() && problem.shape.m > 1) {
      if (bias_group < 0) {
        bias_group = int64_t(g);
        bias = problem.shape.bias;
      }
      if (problem.shape.bias != bias)
        fail(fmt::format("group {}: C", g),
             fmt::format("expected {} like group {}'s, got {}",
                         bias ? "a bias row" : fmt::format("a matrix like D ({} x {})", d[g].shape[0], d[g].shape[1]),
                         bias_group, c[g].describe()));
    }
    // A group with K = 0 reads zeros instead of its A and B (GroupedGemm::run): theirs are unread.
    size_t zeros_bytes = 0;
    const GemmShape s =
        takes_zeros(problem.shape) ? over_zeros(plan.canonical(), problem.shape, zeros_bytes) : problem.shape;
    m += double(s.m) / double(d.size());
    n += double(s.n) / double(d.size());
    k += double(s.k) / double(d.size());
    if (!s.empty_output()) {
      if (first_m < 0) first_m = s.m;
      ragged = ragged || s.m != first_m;
      align_a = std::min(align_a, s.align_a);
      align_b = std::min(align_b, s.align_b);
      align_c = std::min(align_c, s.align_c);
    }
    p.list.push_back(problem);
  }
  check_groups_apart(a, b, c, d);
  auto most = [](DataType t) { return 16 / size_bytes(t); };
  GemmTypes t = plan.canonical();
  p.shape = summary(p.groups, m, n, k, std::min(align_a, most(t.element_a)), std::min(align_b, most(t.element_b)),
                    std::min(align_c, most(t.element_d)), ragged, bias);
  return p;
}

GroupedProblem check_grouped_offsets(const GemmTypes& plan, int device, const TensorRef& a, const TensorRef& b,
                                     const TensorRef& c, const TensorRef& d, const TensorRef& offsets, double alpha,
                                     double beta) {
  if (plan.layout_a != Layout::RowMajor || plan.layout_c != Layout::RowMajor)
    fail("offsets", "the offsets form cuts A and D into groups of rows: it needs a row-major A and D (layout_A and "
         "layout_C RowMajor)");
  if (offsets.empty() || offsets.rank != 1)
    fail("offsets", fmt::format("expected a vector of one int32 row offset per group, got {}",
                     offsets.empty() ? "none" : offsets.describe()));
  if (offsets.dtype != DataType::s32)
    throw DataTypeError(fmt::format("offsets: expected int32, got {}", to_string(offsets.dtype)));
  if (offsets.device != device)
    fail("offsets", fmt::format("expected a tensor on cuda:{} (the group sizes stay on the device, so that a run needs "
                     "no host synchronisation), got one {}",
                     device, offsets.device == TensorRef::kHost ? "in host memory" : fmt::format("on cuda:{}", offsets.device)));
  const int64_t groups = offsets.shape[0];
  if (groups < 1 || groups > INT32_MAX) fail("offsets", fmt::format("expected 1 to {} groups, got {}", INT32_MAX, groups));
  if (offsets.strides[0] != 1 && groups > 1) fail("offsets", fmt::format("expected a contiguous vector, got {}", offsets.describe()));
  if (offsets.data == nullptr || reinterpret_cast<uintptr_t>(offsets.data) % sizeof(int32_t) != 0)
    fail("offsets", fmt::format("expected 4-byte aligned int32 values, got address {}", offsets.data));
  if (b.empty() || b.rank != 3 || b.shape[0] != groups)
    fail("B", fmt::format("expected one matrix per group, a tensor of shape ({}, K, N), got {}", groups,
                     b.empty() ? "none" : b.describe()));
  // A as the offsets cut it: one matrix of every group's rows (check_gemm would read a rank-3 A as a batch).
  if (!a.empty() && a.rank != 2)
    fail("A", fmt::format("expected the groups' rows as one matrix (total_M, K), got {}", a.describe()));
  if (d.empty()) fail("D", "no output tensor was given");
  if (d.rank != 2) fail("D", fmt::format("expected the groups' rows as one matrix (total_M, N), got {}", d.describe()));
  if (!c.empty() && c.rank != 2 && c.rank != 1)
    fail("C", fmt::format("expected the groups' rows as one matrix like D (total_M, N), or one bias row (N) for every "
                     "group, got {}", c.describe()));
  // B whole: check_gemm sees its first matrix only (a batch stride past the address space wrapped onto D).
  check_strides("B", b);
  // B's first matrix stands for all: the same shape, layout and alignment, a batch stride apart.
  TensorRef b0 = b;
  b0.rank = 2;
  b0.shape = {b.shape[1], b.shape[2], 0};
  b0.strides = {b.strides[1], b.strides[2], 0};
  GroupedProblem p;
  p.groups = groups;
  GroupOffsets o;
  o.offsets = static_cast<const int32_t*>(offsets.data);
  o.whole = check_gemm(plan, device, a, b0, c, d, alpha, beta);
  o.batch_stride_b = b.strides[0];
  const GemmShape& w = o.whole.shape;
  const auto [b0_begin, b0_end] = b0.byte_span();  // within the address space (B's is)
  const int64_t span = int64_t((b0_end - b0_begin) / size_bytes(b.dtype));
  if (groups > 1 && o.batch_stride_b < span && w.k > 0 && w.n > 0)
    fail("B", fmt::format("the groups' matrices overlap: a stride of {} between them is less than one matrix ({} "
                     "elements) in {}", o.batch_stride_b, span, b.describe()));
  // The kernel reads the offsets while it writes D.
  if (overlaps(offsets, d)) fail("D", "the output overlaps the offsets: the kernel would read group sizes it has overwritten");
  // check_gemm saw the first group's B: D against all of them.
  if (w.k > 0) check_output_apart(d, "B (a group's matrix)", b);
  // Every group's B starts a batch stride further: that stride bounds B's alignment too.
  const int most_b = 16 / size_bytes(plan.element_b);
  const int align_b = operand_alignment(plan.element_b, reinterpret_cast<uintptr_t>(b.data), most_b, most_b,
                                        groups > 1 ? o.batch_stride_b : 0);
  // The group sizes stay on the device: the class is ragged, whatever they are.
  p.shape = summary(groups, double(w.m) / double(groups), double(w.n), double(w.k), w.align_a,
                    std::min(w.align_b, align_b), w.align_c, true, w.bias);
  p.offsets = o;
  return p;
}

GemmShape grouped_shape(const GemmTypes& plan, int64_t groups, int64_t m, int64_t n, int64_t k,
                        std::array<int, 3> alignment_caps, bool ragged, bool bias) {
  if (groups < 1 || groups > INT32_MAX) fail("groups", fmt::format("expected 1 to {}, got {}", INT32_MAX, groups));
  // The groups' own extents are unknown: packed operands of whole 16-byte vectors, capped as given.
  GemmShape one = packed_shape(plan, m, n, k, 1, bias, alignment_caps);
  GemmShape aligned = packed_shape(plan, 16, 16, 16, 1, false, alignment_caps);
  return summary(groups, double(one.m), double(one.n), double(one.k), aligned.align_a, aligned.align_b,
                 aligned.align_c, ragged, bias);
}

}  // namespace cuforge::op
