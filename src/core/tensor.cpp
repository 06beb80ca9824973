#include "cuforge/core/tensor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

namespace cuforge {

int64_t TensorRef::numel() const {
  if (!valid_rank()) return INT64_MAX;
  int64_t n = 1;
  for (int i = 0; i < rank; ++i)
    if (__builtin_mul_overflow(n, shape[i], &n)) return INT64_MAX;
  return n;
}

std::pair<uintptr_t, uintptr_t> TensorRef::byte_span() const {
  const auto begin = reinterpret_cast<uintptr_t>(data);
  if (!valid_rank()) return {begin, UINTPTR_MAX};
  uint64_t last = 0;  // the last element's offset, in elements
  for (int i = 0; i < rank; ++i) {
    if (shape[i] <= 0) return {begin, begin};
    uint64_t step = 0;
    if (__builtin_mul_overflow(uint64_t(shape[i] - 1), uint64_t(strides[i]), &step) ||
        __builtin_add_overflow(last, step, &last))
      return {begin, UINTPTR_MAX};
  }
  uint64_t bytes = 0;
  uintptr_t end = 0;
  if (__builtin_mul_overflow(last + 1, uint64_t(size_bytes(dtype)), &bytes) ||
      __builtin_add_overflow(begin, uintptr_t(bytes), &end))
    return {begin, UINTPTR_MAX};
  return {begin, end};
}

namespace {

// A tensor's bytes as a block of `width` bytes from `start`, repeated at multiples of `period` bytes: the block is
// the dimensions that are dense together from the one of unit stride (a batch's whole matrix, a matrix's row);
// the strides of the others (of extents past 1) are folded into the period by their gcd with `period`. None for
// negative strides or sizes past 64 bits.
struct Rows {
  uintptr_t start;
  uint64_t width, period;
};

std::optional<Rows> rows_of(const TensorRef& t, uint64_t period) {
  if (!t.valid_rank()) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, extent) of the extents past 1, innermost first
  for (int i = 0; i < t.rank; ++i) {
    if (t.strides[i] < 0) return std::nullopt;
    if (t.shape[i] > 1) dims.emplace_back(t.strides[i], t.shape[i]);
  }
  std::sort(dims.begin(), dims.end());
  uint64_t dense = 1;  // elements in the block
  size_t outer = 0;
  while (outer < dims.size() && uint64_t(dims[outer].first) == dense)
    if (__builtin_mul_overflow(dense, uint64_t(dims[outer++].second), &dense)) return std::nullopt;
  const uint64_t bytes = size_bytes(t.dtype);
  uint64_t width = 0;
  if (__builtin_mul_overflow(dense, bytes, &width)) return std::nullopt;
  for (; outer < dims.size(); ++outer) {
    uint64_t stride = 0;
    if (__builtin_mul_overflow(uint64_t(dims[outer].first), bytes, &stride)) return std::nullopt;
    period = std::gcd(period, stride);
  }
  return Rows{reinterpret_cast<uintptr_t>(t.data), width, period};
}

}  // namespace

bool overlaps(const TensorRef& x, const TensorRef& y) {
  const auto [xb, xe] = x.byte_span();
  const auto [yb, ye] = y.byte_span();
  if (!(xb < xe && yb < ye && xb < ye && yb < xe)) return false;
  // Every byte of x lies at (x's start + [0, x's block width)) modulo the gcd of both tensors' outer strides, and
  // likewise y's: where those two arcs of the circle of that period do not meet, neither do the tensors.
  const auto rx = rows_of(x, 0), ry = rows_of(y, 0);
  if (!rx || !ry) return true;
  const uint64_t period = std::gcd(rx->period, ry->period);
  if (period == 0 || rx->width > period || ry->width > period) return true;
  const uint64_t apart = (ry->start % period + period - rx->start % period) % period;  // y's arc from x's start
  return !(rx->width <= apart && apart + ry->width <= period);
}

std::string TensorRef::describe() const {
  std::string where = device == kHost ? "host memory" : fmt::format("cuda:{}", device);
  if (!valid_rank())
    return fmt::format("a tensor of rank {} (ranks go to {}), {} in {}", rank, kMaxRank, to_string(dtype), where);
  std::vector<int64_t> s(shape.begin(), shape.begin() + rank), st(strides.begin(), strides.begin() + rank);
  return fmt::format("({}) {} with strides ({}) in {}", fmt::join(s, ", "), to_string(dtype),
                     fmt::join(st, ", "), where);
}

TensorRef TensorRef::matrix(const void* data, DataType dtype, int64_t rows, int64_t cols, Layout layout,
                            int device) {
  TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.rank = 2;
  t.shape = {rows, cols};
  t.strides = layout == Layout::RowMajor ? std::array<int64_t, kMaxRank>{cols, 1}
                                         : std::array<int64_t, kMaxRank>{1, rows};
  t.device = device;
  return t;
}

TensorRef TensorRef::nhwc(const void* data, DataType dtype, int64_t n, int64_t h, int64_t w, int64_t c, int device) {
  TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.rank = 4;
  t.shape = {n, h, w, c};
  int64_t row = 0, image = 0;  // extents past int64's product are refused by the checks: strides saturate, no wrap
  if (__builtin_mul_overflow(w, c, &row)) row = INT64_MAX;
  if (__builtin_mul_overflow(h, row, &image)) image = INT64_MAX;
  t.strides = {image, row, c, 1};
  t.device = device;
  return t;
}

TensorRef TensorRef::vector(const void* data, DataType dtype, int64_t size, int device) {
  TensorRef t;
  t.data = data;
  t.dtype = dtype;
  t.rank = 1;
  t.shape = {size};
  t.strides = {1};
  t.device = device;
  return t;
}

}  // namespace cuforge
