#include "cuforge/op/conv_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "cuforge/core/error.hpp"
#include "operand_check.hpp"
#include "cuforge/op/gemm_check.hpp"
#include "cuforge/select/gemm_settings.hpp"

namespace cuforge::op {
namespace {

// CUTLASS's convolution kernels address each tensor with 32-bit byte offsets.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 31;
// The optimized iterators of fprop and dgrad precompute masks for filters of at most 32 x 32.
constexpr int64_t kMaxFilter = 32;
// The narrowest channel vector a convolution kernel loads with cp.async (4 bytes; kernels loading through
// registers, SIMT and fprop's fixed-channel kernels of one channel, read one element).
constexpr int kMinVectorBytes = 4;

// One NHWC operand as the checks see it.
struct Nhwc {
  const char* name;  // "A (x, the activation)"
  const TensorRef* t;
  int64_t n() const { return t->shape[0]; }
  int64_t h() const { return t->shape[1]; }
  int64_t w() const { return t->shape[2]; }
  int64_t c() const { return t->shape[3]; }
  // W, H, N of dense NHWC storage (checked below), whatever the tensor says for extents of 1: TMA
  // descriptors need 16-byte strides even where an extent of 1 never steps.
  std::array<int64_t, 3> strides() const { return {c(), w() * c(), h() * w() * c()}; }
};

Nhwc describe_nhwc(const char* name, const char* what, const TensorRef& t, DataType dtype, const char* role,
                   int device) {
  if (t.empty()) fail(name, fmt::format("no tensor was given ({})", what));
  if (t.data == nullptr) fail(name, fmt::format("its data pointer is null ({}): {}", what, t.describe()));
  check_type_and_device(name, t, dtype, role, device, fmt::format("{} ({})", name, what));
  if (t.rank != 4)
    fail(name, fmt::format("expected a rank-4 tensor ({}): N, C, H, W in channels_last memory, or N, H, W, C; got "
                           "rank {}: {}", what, t.rank, t.describe()));
  for (int i = 0; i < 4; ++i)
    if (t.shape[i] < 1) fail(name, fmt::format("expected every extent to be 1 or more, got {}", t.describe()));
  check_strides(name, t);
  if (t.numel() >= kMaxTensorBytes / size_bytes(dtype))  // numel() saturates
    fail(name, fmt::format("{} elements of {} bytes: CUTLASS's convolution kernels address tensors below 2 GiB ({} "
                           "bytes)", t.numel(), size_bytes(dtype), kMaxTensorBytes));
  // Dense NHWC: the kernels address D (and C) as a row-major N·H·W x C matrix (the extents' products are below
  // 2**31, checked above).
  const int64_t dense[4] = {t.shape[1] * t.shape[2] * t.shape[3], t.shape[2] * t.shape[3], t.shape[3], 1};
  for (int i = 0; i < 4; ++i)
    if (t.strides[i] != dense[i] && t.shape[i] > 1)
      fail(name, fmt::format("expected dense NHWC storage (a channels_last torch tensor, or a contiguous NHWC array: "
                             "strides ({}, {}, {}, 1) in N, H, W, C), got {} (pass "
                             ".contiguous(memory_format=torch.channels_last))",
                             dense[0], dense[1], dense[2], t.describe()));
  auto address = reinterpret_cast<uintptr_t>(t.data);
  if (address % size_bytes(dtype) != 0)
    fail(name, fmt::format("the data pointer {:#x} is not aligned to its {}-byte elements", address,
                           size_bytes(dtype)));
  return {name, &t};
}

void expect(const Nhwc& x, const char* extent, int64_t have, int64_t want, const std::string& from) {
  if (have != want)
    fail(x.name, fmt::format("expected {} = {} ({}), got {}: {}", extent, want, from, have, x.t->describe()));
}

// The channels an operand's kernels load as vectors: at least 4 bytes (`element_wise`, SIMT kernels and
// fprop's fixed-channel kernels of one channel: one element), and a multiple of 8 elements (16 bytes of
// 16-bit types) for the fastest.
int channel_alignment(const Nhwc& x, bool element_wise) {
  const int bytes = size_bytes(x.t->dtype);
  const int least = element_wise ? 1 : std::max(1, kMinVectorBytes / bytes), best = 16 / bytes;
  const int64_t c = x.c();
  if (c % least != 0) {
    const int64_t padded = (c + best - 1) / best * best;
    fail(x.name, fmt::format("{} channels: convolution kernels read channels in vectors of at least {} {} ({} "
                             "bytes); pad the channels with zeros to {} (a multiple of {} runs the fastest kernels), "
                             "e.g. torch.nn.functional.pad(t, (0, 0, 0, 0, 0, {})) on an N, C, H, W tensor",
                             c, least, to_string(x.t->dtype), kMinVectorBytes, padded, best, padded - c));
  }
  return operand_alignment(x.t->dtype, reinterpret_cast<uintptr_t>(x.t->data), c, c, 0);
}

void check_geometry(const ConvGeometry& g) {
  for (int i = 0; i < 2; ++i) {
    if (g.stride[i] < 1) fail("stride", fmt::format("expected 1 or more, got ({}, {})", g.stride[0], g.stride[1]));
    if (g.dilation[i] < 1)
      fail("dilation", fmt::format("expected 1 or more, got ({}, {})", g.dilation[0], g.dilation[1]));
    if (g.padding[i] < 0)
      fail("padding", fmt::format("expected 0 or more, got ({}, {})", g.padding[0], g.padding[1]));
    for (auto [name, v] : {std::pair{"stride", g.stride[i]}, {"padding", g.padding[i]}, {"dilation", g.dilation[i]}})
      if (v > kMaxExtent) fail(name, fmt::format("{} exceeds the 32-bit range the kernels index", v));
  }
}

// A size's extents (N, H, W, C, K, R, S) and geometry, before any arithmetic on them.
void check_size(const std::array<int64_t, 7>& e, const ConvGeometry& g) {
  check_geometry(g);
  constexpr const char* kExtents[] = {"N", "H", "W", "C", "K", "R", "S"};
  for (int i = 0; i < 7; ++i)
    if (e[i] < 1 || e[i] > kMaxExtent) fail(kExtents[i], fmt::format("expected 1 to {}, got {}", kMaxExtent, e[i]));
}

// An implicit GEMM's extent as a message gives it.
std::string extent_words(int64_t v) { return v == kExtentOverflow ? "a product past 2^63" : std::to_string(v); }

// The output extent the geometry gives, checked to be at least 1 (the filter's extent, R or S, refused
// where it spans more than the padded input).
int64_t output_extent(const char* axis, int64_t input, int64_t filter, int64_t pad, int64_t stride, int64_t dilation) {
  const int64_t out = Conv2dSize::output_extent(input, filter, pad, stride, dilation);
  if (input + 2 * pad < dilation * (filter - 1) + 1)
    fail(std::string_view(axis) == "rows" ? "R" : "S", fmt::format("the filter spans {} {} (dilation {} x ({} - 1) + 1), more than the padded input's {} + 2 x {}",
                          dilation * (filter - 1) + 1, axis, dilation, filter, input, pad));
  if (out > kMaxExtent)  // padding can make the output larger than any input
    fail("padding", fmt::format("the output's {} number {}, past the 32-bit range the kernels index", axis, out));
  return out;
}

// Strided dgrad runs on CUTLASS's strided-dgrad kernels (SM80 only, K never split).
bool strided_dgrad(KernelKind kind, const Conv2dSize& z) {
  return kind == KernelKind::Conv2dDgrad && (z.stride_h > 1 || z.stride_w > 1);
}

// Whether only the SM80 kernels run the convolution: SM90's implicit GEMM (CUTLASS 3.x) has no
// split-K of its own (cuforge's SM90 wgrad kernels split in parallel between the images) and no
// strided dgrad, and its TMA im2col loads reach box corners in [-128, 127] and filter offsets below
// 255 along each axis (can_implement of cutlass/conv/collective/sm90_implicit_gemm_gmma_ss_warpspecialized.hpp).
bool sm80_only(KernelKind kind, const Conv2dSize& z, ConvSplitK split) {
  const bool dgrad = kind == KernelKind::Conv2dDgrad;
  const bool image_slices = kind == KernelKind::Conv2dWgrad && split.parallel && split.slices <= z.n;
  if ((split.slices > 1 && !image_slices) || strided_dgrad(kind, z)) return true;
  constexpr int64_t kCornerLimit = 128, kOffsetLimit = 255;
  for (auto [pad, filter, dilation, input, output] : {std::array{z.pad_h, z.r, z.dilation_h, z.h, z.p},
                                                      std::array{z.pad_w, z.s, z.dilation_w, z.w, z.q}}) {
    const int64_t reach = (filter - 1) * dilation;
    // dgrad reads dy (the output) through the flipped filter: its corners shift by the filter's reach.
    const int64_t lower = dgrad ? pad - reach : -pad;
    const int64_t upper = dgrad ? pad - reach + input - output : pad - reach;
    for (int64_t corner : {lower, upper})
      if (corner < -kCornerLimit || corner >= kCornerLimit) return true;
    if (reach >= kOffsetLimit) return true;
  }
  return false;
}

// The implicit GEMM's class, less the alignments (which the operands or the plan's types give).
GemmShape implicit_gemm_shape(KernelKind kind, const Conv2dSize& z, bool bias, ConvSplitK split) {
  auto [m, n, k] = implicit_gemm_extents(kind, z);
  GemmShape s;
  s.m = m, s.n = n, s.k = k;
  s.bias = bias;
  s.conv.sm80_only = sm80_only(kind, z, split);
  s.conv.splits = split.slices;
  s.conv.parallel_splits = split.slices > 1 && split.parallel;
  s.conv.unsplittable = strided_dgrad(kind, z);
  // fprop's K runs over x's channels, dgrad's over dy's; wgrad's K is N·P·Q.
  if (kind != KernelKind::Conv2dWgrad) {
    s.conv.k_run = kind == KernelKind::Conv2dFprop ? z.c : z.k;
  } else {
    s.conv.images = z.n;
    s.conv.n_run = z.c;
  }
  // In doubles: no product of extents or strides can overflow.
  s.conv.im2col_reuse = int64_t(std::clamp(double(z.r) * z.s / (double(z.stride_h) * z.stride_w), 1.0, 1e9));
  s.conv.pointwise = z.r == 1 && z.s == 1 && z.stride_h == 1 && z.stride_w == 1 && z.pad_h == 0 && z.pad_w == 0;
  return s;
}

// What CUTLASS's implicit-GEMM kernels support, of a size whose output extents are known.
void check_kernels_take(KernelKind kind, const Conv2dSize& z, int splits) {
  if (kind != KernelKind::Conv2dWgrad && (z.r > kMaxFilter || z.s > kMaxFilter))
    fail("B", fmt::format("{} x {} filters: the {} kernels' optimized iterators take filters of at most {} x {}", z.r,
                          z.s, to_string(kind), kMaxFilter, kMaxFilter));
  if (kind == KernelKind::Conv2dDgrad && (z.dilation_h > 1 || z.dilation_w > 1))
    fail("dilation", fmt::format("dgrad runs on CUTLASS's strided-dgrad kernels, which take no dilation; got ({}, {})",
                                 z.dilation_h, z.dilation_w));
  if (strided_dgrad(kind, z) && splits > 1)
    fail("split_k_slices", fmt::format("strided dgrad (stride ({}, {})) does not split K in CUTLASS's kernels; "
                                       "got {} slices", z.stride_h, z.stride_w, splits));
}

void check_slices(ConvSplitK split) {
  if (split.slices < 0 || split.slices > select::GemmSettings::kMaxSplits)
    fail("split_k", fmt::format("expected 1 to {} slices (0: the plan's own), got {}", select::GemmSettings::kMaxSplits,
                                split.slices));
}

}  // namespace

ConvProblem check_conv(KernelKind kind, const GemmTypes& plan, int device, const TensorRef& a, const TensorRef& b,
                       const TensorRef& c, const TensorRef& d, const ConvGeometry& g, double beta, ConvSplitK split,
                       int plan_splits, bool element_wise) {
  check_element_types(plan);
  check_geometry(g);
  check_slices(split);
  const int splits = split.slices > 0 ? split.slices : plan_splits;
  const bool fprop = kind == KernelKind::Conv2dFprop, dgrad = kind == KernelKind::Conv2dDgrad;
  // What each operand is, per kind.
  const char* what_a = fprop ? "x, the activation" : "dy, the output's gradient";
  const char* what_b = kind == KernelKind::Conv2dWgrad ? "x, the activation" : "w, the filters";
  const char* what_d = fprop ? "y, the output" : dgrad ? "dx, the input's gradient" : "dw, the filters' gradient";
  Nhwc xa = describe_nhwc("A", what_a, a, plan.element_a, "element_A", device);
  Nhwc xb = describe_nhwc("B", what_b, b, plan.element_b, "element_B", device);
  Nhwc xd = describe_nhwc("D", what_d, d, plan.element_d, "element_D", device);

  // The geometry: x (n, h, w, c), filters (k, r, s, c), y (n, p, q, k).
  Conv2dSize z = with_geometry(g);
  const Nhwc& x = fprop ? xa : dgrad ? xd : xb;   // the activation (or its gradient)
  const Nhwc& w = fprop || dgrad ? xb : xd;       // the filters (or their gradient)
  const Nhwc& y = fprop ? xd : xa;                // the output (or its gradient)
  z.n = x.n();
  z.h = x.h();
  z.w = x.w();
  z.c = x.c();
  z.k = w.n();
  z.r = w.h();
  z.s = w.w();
  expect(w, "C (channels)", w.c(), z.c, fmt::format("the channels of {}", x.name));
  z.p = output_extent("rows", z.h, z.r, z.pad_h, z.stride_h, z.dilation_h);
  z.q = output_extent("columns", z.w, z.s, z.pad_w, z.stride_w, z.dilation_w);
  expect(y, "N (batch)", y.n(), z.n, fmt::format("the batch of {}", x.name));
  const std::string sizes = fmt::format("(H + 2 pad - dilation (R - 1) - 1) / stride + 1 of H = {}, R = {}", z.h, z.r);
  expect(y, "P (height)", y.h(), z.p, sizes);
  expect(y, "Q (width)", y.w(), z.q,
         fmt::format("(W + 2 pad - dilation (S - 1) - 1) / stride + 1 of W = {}, S = {}", z.w, z.s));
  expect(y, "K (channels)", y.c(), z.k, fmt::format("the filters of {}", w.name));

  check_kernels_take(kind, z, splits);

  // C: D's shape, or a bias of one value per channel of D.
  std::optional<Nhwc> xc;
  bool bias = false;
  if (!c.empty() && c.rank == 1) {
    if (kind == KernelKind::Conv2dWgrad)
      fail("C", "a bias is one value per output channel of fprop or dgrad; wgrad's C has dw's shape (K, R, S, C)");
    check_type_and_device("C", c, plan.element_c, "element_C", device, "C (the bias)");
    check_strides("C", c);
    if (c.shape[0] != xd.c() || (c.strides[0] != 1 && c.shape[0] > 1))
      fail("C", fmt::format("expected a bias of {} contiguous values (one per channel of D), got {}", xd.c(),
                            c.describe()));
    if (c.data == nullptr || reinterpret_cast<uintptr_t>(c.data) % size_bytes(c.dtype) != 0)
      fail("C", fmt::format("the bias's data pointer {} is not aligned to its {}-byte elements", c.data,
                            size_bytes(c.dtype)));
    bias = true;
  } else if (!c.empty()) {
    xc = describe_nhwc("C", "the tensor added to the output", c, plan.element_c, "element_C", device);
    for (int i = 0; i < 4; ++i)
      if (c.shape[i] != d.shape[i])
        fail("C", fmt::format("expected D's shape {} (or a bias of {} values), got {}", d.describe(), xd.c(),
                              c.describe()));
  } else if (beta != 0.0) {
    fail("C", fmt::format("beta is {} but no C was given (pass C, or beta=0)", beta));
  }
  for (const Nhwc* in : {&xa, &xb}) check_output_apart(d, in->name, *in->t);
  if (!c.empty() && overlaps(d, c) && (c.data != d.data || c.strides != d.strides || c.rank != 4))
    fail("D", "the output partly overlaps C: C and D must be the same tensor or not overlap at all");

  ConvProblem p;
  p.kind = kind;
  p.size = z;
  p.shape = implicit_gemm_shape(kind, z, bias, split);
  for (auto [name, v] : {std::pair{"M", p.shape.m}, {"N", p.shape.n}, {"K", p.shape.k}})
    if (v > kMaxExtent)
      fail("D", fmt::format("the implicit GEMM's {} = {} exceeds the 32-bit range the kernels index", name,
                            extent_words(v)));
  // fprop's fixed-channel kernels read one channel of a 16-bit x and filters an element at a time.
  const bool one_channel = fprop && z.c == 1;
  p.shape.align_a = channel_alignment(xa, element_wise || one_channel);
  p.shape.align_b = channel_alignment(xb, element_wise || one_channel);
  p.shape.align_c = channel_alignment(xd, element_wise);
  if (xc) p.shape.align_c = std::min(p.shape.align_c, channel_alignment(*xc, element_wise));
  if (bias)
    p.shape.align_c = std::min(p.shape.align_c, operand_alignment(c.dtype, reinterpret_cast<uintptr_t>(c.data),
                                                                  c.shape[0], c.shape[0], 0));
  p.a = a.data;
  p.b = b.data;
  p.d = const_cast<void*>(d.data);
  p.stride_a = xa.strides();
  p.stride_b = xb.strides();
  p.stride_d = xd.strides();
  p.c = c.empty() ? p.d : c.data;
  p.stride_c = bias ? std::array<int64_t, 3>{0, 0, 0} : xc ? xc->strides() : p.stride_d;
  return p;
}

Conv2dSize with_geometry(const ConvGeometry& g) {
  Conv2dSize z;
  z.pad_h = g.padding[0];
  z.pad_w = g.padding[1];
  z.stride_h = g.stride[0];
  z.stride_w = g.stride[1];
  z.dilation_h = g.dilation[0];
  z.dilation_w = g.dilation[1];
  return z;
}

Conv2dSize conv_size(const std::array<int64_t, 7>& e, const ConvGeometry& g) {
  check_size(e, g);
  Conv2dSize z = with_geometry(g);
  z.n = e[0];
  z.h = e[1];
  z.w = e[2];
  z.c = e[3];
  z.k = e[4];
  z.r = e[5];
  z.s = e[6];
  z.p = output_extent("rows", z.h, z.r, z.pad_h, z.stride_h, z.dilation_h);
  z.q = output_extent("columns", z.w, z.s, z.pad_w, z.stride_w, z.dilation_w);
  return z;
}

GemmShape conv_shape(KernelKind kind, const GemmTypes& plan, const Conv2dSize& size, bool bias, AlignmentCaps caps,
                     ConvSplitK split) {
  if (!is_conv(kind))
    fail("kind", fmt::format("{} is not a convolution (fprop, dgrad or wgrad)", to_string(kind)));
  check_element_types(plan);
  if (bias && kind == KernelKind::Conv2dWgrad)
    fail("bias", "a bias is one value per output channel of fprop or dgrad; wgrad's C has dw's shape (K, R, S, C)");
  // A C++ caller's size: checked as conv_size checks one, its output's extents the geometry's.
  const ConvGeometry g{{size.stride_h, size.stride_w}, {size.pad_h, size.pad_w}, {size.dilation_h, size.dilation_w}};
  const Conv2dSize z = conv_size({size.n, size.h, size.w, size.c, size.k, size.r, size.s}, g);
  if (z.p != size.p || z.q != size.q)
    fail("P, Q",
         fmt::format("the output's extents are the geometry's, ({}, {}); got ({}, {})", z.p, z.q, size.p, size.q));
  check_slices(split);
  GemmShape s = implicit_gemm_shape(kind, size, bias, split);
  for (auto [name, v] : {std::pair{"M", s.m}, {"N", s.n}, {"K", s.k}})
    if (v < 1 || v > kMaxExtent)
      fail(name, fmt::format("the implicit GEMM's {} = {} is outside 1 to {}", name, extent_words(v), kMaxExtent));
  check_kernels_take(kind, z, split.slices);
  // Each tensor below 2 GiB, as a run finds its operands (describe_nhwc): a size no run takes selects nothing.
  const bool wgrad = kind == KernelKind::Conv2dWgrad, dgrad = kind == KernelKind::Conv2dDgrad;
  const double x = double(z.n) * z.h * z.w * z.c, w = double(z.k) * z.r * z.s * z.c, y = double(z.n) * z.p * z.q * z.k;
  const struct {
    const char* name;
    double elements;
    DataType dtype;
  } tensors[] = {{"A", dgrad || wgrad ? y : x, plan.element_a},
                 {"B", wgrad ? x : w, plan.element_b},
                 {"D", wgrad ? w : dgrad ? x : y, plan.element_d}};  // C, which a run may omit, when given
  for (const auto& t : tensors)
    if (t.elements * size_bytes(t.dtype) >= double(kMaxTensorBytes))
      fail(t.name, fmt::format("{:.0f} elements of {} bytes: CUTLASS's convolution kernels address tensors below 2 GiB "
                               "({} bytes)", t.elements, size_bytes(t.dtype), kMaxTensorBytes));
  // Channels of each operand: fprop reads x (c) and w (c), writes y (k); dgrad reads dy (k) and w
  // (c), writes dx (c); wgrad reads dy (k) and x (c), writes dw (c).
  const bool fprop = kind == KernelKind::Conv2dFprop;
  auto align = [](DataType t, int64_t channels) { return operand_alignment(t, 0, channels, channels, 0); };
  s.align_a = align(plan.element_a, fprop ? size.c : size.k);
  s.align_b = align(plan.element_b, size.c);
  s.align_c = align(plan.element_d, fprop ? size.k : size.c);
  cap_alignments(s, plan, caps);
  return s;
}

}  // namespace cuforge::op
