#include "cuforge/core/gemm_problem.hpp"

#include <fmt/format.h>

#include <functional>
#include <utility>

namespace cuforge {

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

GemmShape transposed_shape(GemmShape s) {
  std::swap(s.m, s.n);
  std::swap(s.align_a, s.align_b);
  return s;
}

std::optional<std::string> why_invalid_extent(int64_t v) {
  if (v < 0) return fmt::format("expected a size of 0 or more, got {}", v);
  if (v > kMaxExtent) return fmt::format("{} exceeds the 32-bit range the kernels index ({} at most)", v, kMaxExtent);
  return std::nullopt;
}

std::optional<std::string> why_invalid(const GemmShape& s) {
  for (auto [name, v] : {std::pair{"M", s.m}, {"N", s.n}, {"K", s.k}, {"batch", s.batch}})
    if (auto why = why_invalid_extent(v)) return fmt::format("{}: {}", name, *why);
  if (s.empty_output())
    return fmt::format("{}x{}x{} in a batch of {} has an empty output: a run of it launches nothing, so no kernel is "
                       "chosen for it", s.m, s.n, s.k, s.batch);
  for (auto [name, v] : {std::pair{"A", s.align_a}, {"B", s.align_b}, {"C", s.align_c}})
    if (v < 1 || v > 16 || (v & (v - 1)))
      return fmt::format("{}'s alignment is {}: expected a power of two from 1 to 16 elements", name, v);
  const ConvClass& c = s.conv;
  if (c.splits < 0 || c.splits > kMaxSplits)
    return fmt::format("conv.splits: expected 0 (the plan's settings) to {} slices of K, got {}", kMaxSplits, c.splits);
  for (auto [name, v] : {std::pair{"conv.k_run", c.k_run}, {"conv.images", c.images}, {"conv.n_run", c.n_run}})
    if (auto why = why_invalid_extent(v)) return fmt::format("{}: {}", name, *why);
  if (c.im2col_reuse < 1 || c.im2col_reuse > kMaxExtent)
    return fmt::format("conv.im2col_reuse: expected 1 to {} reads of each element, got {}", kMaxExtent, c.im2col_reuse);
  return std::nullopt;
}

size_t GemmShapeHash::operator()(const GemmShape& s) const {
  size_t h = std::hash<int64_t>()(s.m);
  const ConvClass& c = s.conv;
  // Unsigned shifts: a class is hashed before it is checked (a C++ caller's negative alignment, say).
  for (uint64_t v : {uint64_t(s.n), uint64_t(s.k), uint64_t(s.batch), uint64_t(c.k_run), uint64_t(c.im2col_reuse),
                     uint64_t(c.images), uint64_t(c.n_run), uint64_t(uint32_t(c.splits)) << 1 | c.parallel_splits,
                     uint64_t(c.unsplittable) << 28 | uint64_t(c.pointwise) << 27 | uint64_t(c.sm80_only) << 26 |
                         uint64_t(s.ragged) << 25 | uint64_t(s.bias) << 24 | uint64_t(uint8_t(s.align_a)) << 16 |
                         uint64_t(uint8_t(s.align_b)) << 8 | uint8_t(s.align_c)})
    h = h * 1000003u ^ std::hash<uint64_t>()(v);
  return h;
}

}  // namespace cuforge
