#include "cuforge/core/tensor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <cstdint>
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

bool overlaps(const TensorRef& x, const TensorRef& y) {
  const auto [xb, xe] = x.byte_span();
  const auto [yb, ye] = y.byte_span();
  return xb < xe && yb < ye && xb < ye && yb < xe;
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
  t.strides = {h * w * c, w * c, c, 1};
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
