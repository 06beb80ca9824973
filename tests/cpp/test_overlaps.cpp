// core/tensor: whether an output may overlap an input (op::check_output_apart refuses those that may), on fake
// addresses: views apart by their spans or interleaved without a shared byte, against their bytes listed.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "cuforge/core/tensor.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

// Fake device addresses, 1 MiB apart: nothing is dereferenced.
constexpr uintptr_t kBuffer = 0x10000000, kApart = 0x10100000;

using test::tensor;

// Views that interleave without sharing an element are apart: column blocks of one matrix (D written into
// columns 64.. of a buffer whose columns ..63 are A), the matrices of a batch taken every other; those that
// share one, or might, are not.
TEST(Overlaps, InterleavedViewsApartAreNotOverlaps) {
  const uintptr_t buffer = kBuffer;
  const TensorRef left = tensor(buffer, {64, 64}, {128, 1}), right = tensor(buffer + 128, {64, 64}, {128, 1});
  EXPECT_FALSE(overlaps(left, right));
  EXPECT_FALSE(overlaps(right, left));
  EXPECT_TRUE(overlaps(left, tensor(buffer + 126, {64, 64}, {128, 1})));  // shares each row's last column
  EXPECT_TRUE(overlaps(left, tensor(buffer + 8, {64, 64}, {128, 1})));
  EXPECT_TRUE(overlaps(left, left));
  // Elements of other sizes: an f32 view of the bytes in columns 64.. of f16 rows of 128.
  EXPECT_FALSE(overlaps(left, tensor(buffer + 128, {64, 32}, {64, 1}, DataType::f32)));
  EXPECT_TRUE(overlaps(left, tensor(buffer + 124, {64, 32}, {64, 1}, DataType::f32)));
  // The even and odd matrices of a batch.
  EXPECT_FALSE(overlaps(tensor(buffer, {4, 32, 32}, {2048, 32, 1}), tensor(buffer + 2048, {4, 32, 32}, {2048, 32, 1})));
  EXPECT_TRUE(overlaps(tensor(buffer, {4, 32, 32}, {2048, 32, 1}), tensor(buffer + 2046, {4, 32, 32}, {2048, 32, 1})));
  // Column-major views one element apart share all but a column's end; a matrix's odd and even columns nothing.
  EXPECT_TRUE(overlaps(tensor(buffer, {64, 64}, {1, 128}), tensor(buffer + 2, {64, 64}, {1, 128})));
  EXPECT_FALSE(overlaps(tensor(buffer, {64, 32}, {64, 2}), tensor(buffer + 2, {64, 32}, {64, 2})));
  // A matrix and its transpose's view share the diagonal.
  EXPECT_TRUE(overlaps(tensor(buffer, {64, 64}, {64, 1}), tensor(buffer, {64, 64}, {1, 64})));
  // Apart by their spans, whatever their strides.
  EXPECT_FALSE(overlaps(left, tensor(kApart, {64, 64}, {128, 1})));
}

// Never "apart" where two views share a byte: random small views of one buffer against their bytes listed.
TEST(Overlaps, NeverWrongAboutSharedBytes) {
  std::mt19937 random(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(random); };
  auto view = [&] {
    const int rank = pick(1, 3);
    std::vector<int64_t> shape, strides;
    for (int i = 0; i < rank; ++i) {
      shape.push_back(pick(1, 5));
      strides.push_back(pick(0, 3) == 0 ? 1 : pick(1, 24));
    }
    const DataType dtype = pick(0, 1) ? DataType::f16 : DataType::f32;
    return tensor(kBuffer + 2 * pick(0, 40), shape, strides, dtype);
  };
  auto bytes = [](const TensorRef& t) {
    std::set<uintptr_t> out;
    std::array<int64_t, 3> i{};
    const int64_t n = t.numel();
    for (int64_t e = 0; e < n; ++e) {
      int64_t rest = e, offset = 0;
      for (int d = t.rank - 1; d >= 0; --d) {
        i[d] = rest % t.shape[d];
        rest /= t.shape[d];
        offset += i[d] * t.strides[d];
      }
      for (int b = 0; b < size_bytes(t.dtype); ++b)
        out.insert(reinterpret_cast<uintptr_t>(t.data) + uintptr_t(offset * size_bytes(t.dtype) + b));
    }
    return out;
  };
  int interleaved = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const TensorRef x = view(), y = view();
    const std::set<uintptr_t> bx = bytes(x), by = bytes(y);
    const bool shared = std::any_of(bx.begin(), bx.end(), [&](uintptr_t b) { return by.count(b) > 0; });
    if (shared) {
      ASSERT_TRUE(overlaps(x, y)) << x.describe() << " at " << x.data << ", " << y.describe() << " at " << y.data;
    }
    const auto [xb, xe] = x.byte_span();
    const auto [yb, ye] = y.byte_span();
    interleaved += xb < ye && yb < xe && !overlaps(x, y);
  }
  EXPECT_GT(interleaved, 200);  // and the rule tells apart views whose spans meet
}

}  // namespace
}  // namespace cuforge
