// A non-owning view of an operand: where it lives, its element type, its shape and strides.
// Strides are in elements, as in PyTorch; rank is 1 (a bias vector), 2 (a matrix), 3 (a batch of
// matrices) or 4 (an NHWC tensor of a convolution).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "cuforge/core/types.hpp"

namespace cuforge {

struct TensorRef {
  static constexpr int kMaxRank = 4;
  static constexpr int kHost = -1;  // device value of host memory

  const void* data = nullptr;
  DataType dtype = DataType::f32;
  int rank = 0;
  std::array<int64_t, kMaxRank> shape{};
  std::array<int64_t, kMaxRank> strides{};
  int device = kHost;

  bool empty() const { return data == nullptr && rank == 0; }
  // A rank within 0..kMaxRank. The functions below read no extent of a tensor of another rank (a C++
  // caller's): numel() and byte_span() then say "beyond any size", which every check refuses.
  bool valid_rank() const { return rank >= 0 && rank <= kMaxRank; }
  int64_t numel() const;  // INT64_MAX where the product of the extents would pass it
  // The bytes its elements span, [begin, end), its strides as they are (the checks refuse negative ones);
  // begin == end without elements. An end past the address space is the address space's end, so that a span
  // is never smaller than the tensor's (beyond_address_space() says so: no allocation is such a tensor).
  std::pair<uintptr_t, uintptr_t> byte_span() const;
  bool beyond_address_space() const { return byte_span().second == UINTPTR_MAX; }
  // "(128, 64) bf16 with strides (64, 1) on cuda:0", for messages.
  std::string describe() const;

  // Packed operands on a device, for C++ callers holding raw pointers: a matrix, a dense NHWC
  // tensor (n, h, w, c; a convolution's filters are k, r, s, c), a vector (a bias).
  static TensorRef matrix(const void* data, DataType dtype, int64_t rows, int64_t cols, Layout layout,
                          int device = 0);
  static TensorRef nhwc(const void* data, DataType dtype, int64_t n, int64_t h, int64_t w, int64_t c, int device = 0);
  static TensorRef vector(const void* data, DataType dtype, int64_t size, int device = 0);
};

// Whether two tensors may share a byte (tensors without elements share none): their spans meet, unless they are
// views that interleave without meeting (column blocks of one matrix, a batch's matrices taken apart), as their
// bytes' offsets modulo the gcd of their outer strides tell.
bool overlaps(const TensorRef& x, const TensorRef& y);

}  // namespace cuforge
