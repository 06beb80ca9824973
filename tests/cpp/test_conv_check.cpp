// op/conv_check on the CPU with fake device pointers: the problem each kind's tensors make, and every bad input
// refused by name.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "conv_support.hpp"
#include "cuforge/op/gemm.hpp"

namespace cuforge {
namespace {

using namespace test;

class ConvCheck : public ::testing::Test {
 protected:
  op::ConvGeometry same{{1, 1}, {1, 1}, {1, 1}};  // 3x3, padding 1: P = H
  GemmTypes types = options(DataType::f16);
  ConvProblem fprop(const TensorRef& x, const TensorRef& w, const TensorRef& c, const TensorRef& y,
                    const op::ConvGeometry& g, double beta = 0.0, ConvSplitK split = {}) {
    return op::check_conv(kFprop, types, 0, x, w, c, y, g, beta, split);
  }
};

TEST_F(ConvCheck, AValidProblemOfEachKind) {
  TensorRef x = nhwc(0, 2, 9, 7, 16), w = nhwc(1, 32, 3, 3, 16), y = nhwc(2, 2, 9, 7, 32);
  ConvProblem p = fprop(x, w, {}, y, same);
  EXPECT_EQ(p.size.p, 9);
  EXPECT_EQ(p.size.q, 7);
  EXPECT_EQ(p.shape.m, 2 * 9 * 7);
  EXPECT_EQ(p.shape.n, 32);
  EXPECT_EQ(p.shape.k, 16 * 9);
  EXPECT_EQ(p.shape.align_a, 8);
  EXPECT_EQ(p.c, p.d) << "no C: the kernel is given D, never read";
  EXPECT_EQ(p.stride_a, (std::array<int64_t, 3>{16, 7 * 16, 9 * 7 * 16}));
  EXPECT_EQ(p.shape.conv.k_run, 16);
  EXPECT_TRUE(p.shape == Conv2d(kFprop, options(DataType::f16)).shape(p.size)) << "a run's class is the one plan.select() names";
  // dgrad: A = dy, B = w, D = dx; wgrad: A = dy, B = x, D = dw.
  ConvProblem d = op::check_conv(kDgrad, types, 0, y, w, {}, x, same, 0.0, {1});
  EXPECT_EQ(d.shape.m, 2 * 9 * 7);
  EXPECT_EQ(d.shape.n, 16);
  ConvProblem g = op::check_conv(kWgrad, types, 0, y, x, {}, w, same, 0.0, {4});
  EXPECT_EQ(g.shape.m, 32);
  EXPECT_EQ(g.shape.k, 2 * 9 * 7);
  // A run's own split-K is part of its class: the plan chooses among the kernels that split so.
  EXPECT_EQ(g.shape.conv.splits, 4);
  EXPECT_FALSE(g.shape.conv.parallel_splits);
  EXPECT_FALSE(g.shape == Conv2d(kWgrad, options(DataType::f16)).shape(g.size));
  ConvProblem pg = op::check_conv(kWgrad, types, 0, y, x, {}, w, same, 0.0, {4, true});
  EXPECT_TRUE(pg.shape.conv.parallel_splits);
  GemmOptions sm80 = options(DataType::f16);
  sm80.kernel_cc = 80;
  Conv2d wgrad(kWgrad, sm80);
  for (const ConvProblem* run : {&g, &pg}) {
    const select::GemmCandidate chosen = wgrad.select(run->shape);
    EXPECT_EQ(chosen.splits, 4);
    EXPECT_EQ(chosen.config.parallel_split_k, run->shape.conv.parallel_splits) << chosen.config.name();
  }
  // On Hopper, SM90 wgrad kernels split K in parallel between the images, one at least a slice: 2 of
  // these 2 images, not 4 (SM80 kernels run that).
  EXPECT_TRUE(pg.shape.conv.sm80_only);
  ConvProblem two = op::check_conv(kWgrad, types, 0, y, x, {}, w, same, 0.0, {2, true});
  EXPECT_FALSE(two.shape.conv.sm80_only);
  EXPECT_EQ(two.shape.conv.images, 2);
  Conv2d hopper_wgrad(kWgrad, options(DataType::f16));
  const select::GemmCandidate sm90 = hopper_wgrad.select(two.shape);
  EXPECT_TRUE(sm90.config.parallel_split_k && sm90.splits == 2) << sm90.config.name();
  EXPECT_EQ(hopper_wgrad.select(pg.shape).config.arch, 80);
  auto pinned = hopper_wgrad.settings();
  pinned.tile = sm90.config.tile;
  pinned.splits = 4;
  pinned.decomposition = Decomposition::ParallelSplitK;
  hopper_wgrad.set_settings(pinned);
  EXPECT_REFUSED(hopper_wgrad.select(hopper_wgrad.shape(g.size)), "at most 2 slices here, got 4");
  // fprop and dgrad split in parallel too (dgrad on CUTLASS's unit-stride kernel): when asked.
  for (KernelKind kind : {kFprop, kDgrad}) {
    const bool f = kind == kFprop;
    ConvProblem pp = op::check_conv(kind, types, 0, f ? x : y, w, {}, f ? y : x, same, 0.0, {4, true});
    EXPECT_TRUE(pp.shape.conv.parallel_splits && pp.shape.conv.sm80_only);
    const select::GemmCandidate chosen = Conv2d(kind, sm80).select(pp.shape);
    EXPECT_TRUE(chosen.config.parallel_split_k && chosen.splits == 4) << chosen.config.name();
    EXPECT_TRUE(library::parse_gemm_name(chosen.config.name()) == chosen.config) << chosen.config.name();
    EXPECT_FALSE(Conv2d(kind, sm80).select(op::check_conv(kind, types, 0, f ? x : y, w, {}, f ? y : x, same, 0.0)
                                               .shape).config.parallel_split_k)
        << "fprop and dgrad split in parallel only when asked";
  }
  const op::ConvGeometry strided{{2, 2}, {1, 1}, {1, 1}};
  EXPECT_REFUSED(op::check_conv(kDgrad, types, 0, nhwc(2, 2, 5, 4, 32), w, {}, x, strided, 0.0, {4, true}),
                 "strided dgrad (stride (2, 2)) does not split K");
  // select() and compile() take sizes, not runs: a plan whose settings split refuses strided dgrad too.
  Conv2d split_dgrad(kDgrad, sm80);
  auto settings = split_dgrad.settings();
  settings.splits = 2;
  settings.decomposition = Decomposition::ParallelSplitK;
  split_dgrad.set_settings(settings);
  Conv2dSize strided_size = op::conv_size({2, 9, 7, 16, 32, 3, 3}, strided);
  EXPECT_REFUSED(split_dgrad.select(split_dgrad.shape(strided_size)), "strided dgrad does not split K");
  // The partial dw is stored in vectors of 4 f32: channels that are not a multiple of 4 run unsplit
  // by default, and a run asking for parallel slices is refused saying why.
  TensorRef x6 = nhwc(0, 2, 9, 7, 6), w6 = nhwc(1, 32, 3, 3, 6);
  ConvProblem six = op::check_conv(kWgrad, types, 0, y, x6, {}, w6, same, 0.0);
  EXPECT_EQ(six.shape.align_c, 2);
  Conv2dSize z6 = six.size;
  z6.n = 32, z6.h = z6.w = z6.p = z6.q = 56;  // a long K, which 8 channels would split
  EXPECT_FALSE(wgrad.select(wgrad.shape(z6)).config.parallel_split_k);
  ConvProblem asked = op::check_conv(kWgrad, types, 0, y, x6, {}, w6, same, 0.0, {4, true});
  EXPECT_REFUSED(wgrad.select(asked.shape), "channels must be a multiple of 4");
  // A bias: one value per channel of D, read with strides of 0.
  TensorRef bias = TensorRef::vector(reinterpret_cast<const void*>(kBase + (3u << 28)), DataType::f16, 32);
  ConvProblem b = fprop(x, w, bias, y, same, 1.0);
  EXPECT_TRUE(b.shape.bias);
  EXPECT_EQ(b.stride_c, (std::array<int64_t, 3>{0, 0, 0}));
}

// One 16-bit channel (a grayscale stem; the CUTLASS Python interface's few-channel fprop of 1): fprop's
// fixed-channel kernels read x and the filters an element at a time, in CUTLASS's two-stage pipelined
// mainloop. dgrad and wgrad have no such kernels: one channel of dx or x is refused, saying to pad.
TEST_F(ConvCheck, OneChannelFpropRunsTheFixedChannelKernelsOfOneElement) {
  TensorRef x = nhwc(0, 2, 16, 16, 1), w = nhwc(1, 16, 3, 3, 1), y = nhwc(2, 2, 16, 16, 16);
  ConvProblem p = fprop(x, w, {}, y, same);
  EXPECT_EQ(p.shape.align_a, 1);
  EXPECT_EQ(p.shape.align_b, 1);
  EXPECT_EQ(p.shape.align_c, 8);
  Conv2d plan(kFprop, options(DataType::f16));
  const library::GemmConfig c = plan.select(p.shape).config;
  EXPECT_TRUE(c.fixed_channels && c.alignment_a == 1 && c.alignment_b == 1 && c.tile.stages == 2) << c.name();
  EXPECT_TRUE(library::parse_gemm_name(c.name()) == c) << c.name();
  EXPECT_REFUSED(plan.select(fprop(x, w, {}, y, same, 0.0, {2}).shape),
                 "1 channel of f16: fprop's fixed-channel kernels read it, an element at a time and unsplit");
  auto optimized = plan.settings();
  optimized.iterator_algorithm = IteratorAlgorithm::Optimized;
  plan.set_settings(optimized);
  EXPECT_REFUSED(plan.select(p.shape), "settings (iterator_algorithm optimized, decomposition");
  EXPECT_REFUSED(op::check_conv(kDgrad, types, 0, y, w, {}, x, same, 0.0, {1}), "B: 1 channels");
  // A dgrad plan's kernels of one-element alignment (its construct(alignment_A=1)): refused as dgrad's, not fprop's.
  Conv2d dgrad(kDgrad, options(DataType::f16));
  EXPECT_REFUSED(dgrad.select(p.shape), "1 channel of f16: dgrad's kernels read channels in vectors of at least");
  EXPECT_REFUSED(op::check_conv(kWgrad, types, 0, y, x, {}, w, same, 0.0, {1}), "B: 1 channels");
  EXPECT_REFUSED(fprop(nhwc(0, 2, 16, 16, 3), nhwc(1, 16, 3, 3, 3), {}, y, same), "pad the channels with zeros to 8");
  // Chosen for a class (construct(problem=...)): three channels are no fixed-channel kernel's to read (the message
  // said the plan's settings left none of them), and 32 channels read an element at a time are the operand's
  // alignment (the message blamed the channels, or said no kernel fit the settings).
  auto z = p.shape;
  z.conv.k_run = 3;
  EXPECT_REFUSED(plan.select(z), "3 channels of f16: fprop's kernels read channels in vectors of at least 4 bytes "
                                 "(pad the channels with zeros to 8)");
  Conv2d fresh(kFprop, options(DataType::f16));
  for (int operand = 0; operand < 3; ++operand) {
    z = fprop(nhwc(0, 2, 16, 16, 32), nhwc(1, 16, 3, 3, 32), {}, y, same).shape;
    (operand == 0 ? z.align_a : operand == 1 ? z.align_b : z.align_c) = 1;
    EXPECT_REFUSED(fresh.select(z), "no kernel of this plan accepts the operands' alignment");
  }
}

TEST_F(ConvCheck, ExtentsOfOneGetDenseStridesWhateverTheTensorSays) {
  // torch gives a (64, 32, 1, 1) filter strides (32, 1, 1, 1); SM90 kernels build TMA descriptors
  // from these strides, which must be 16-byte multiples even where the extent never steps.
  TensorRef x = nhwc(0, 1, 8, 8, 32), w = nhwc(1, 64, 1, 1, 32), y = nhwc(2, 1, 8, 8, 64);
  w.strides[1] = w.strides[2] = 1;
  x.strides[0] = 7;
  ConvProblem p = fprop(x, w, {}, y, {{1, 1}, {0, 0}, {1, 1}});
  EXPECT_EQ(p.stride_b, (std::array<int64_t, 3>{32, 32, 32}));
  EXPECT_EQ(p.stride_a, (std::array<int64_t, 3>{32, 8 * 32, 8 * 8 * 32}));
}

TEST_F(ConvCheck, EveryBadInputIsRefusedByName) {
  TensorRef x = nhwc(0, 2, 9, 7, 16), w = nhwc(1, 32, 3, 3, 16), y = nhwc(2, 2, 9, 7, 32);
  EXPECT_REFUSED(fprop(x, w, {}, nhwc(2, 2, 8, 7, 32), same), "P (height)");
  EXPECT_REFUSED(fprop(x, w, {}, nhwc(2, 2, 9, 7, 16), same), "K (channels)");
  EXPECT_REFUSED(fprop(x, nhwc(1, 32, 3, 3, 8), {}, y, same), "C (channels)");
  EXPECT_REFUSED(fprop(x, w, {}, nhwc(2, 3, 9, 7, 32), same), "N (batch)");
  EXPECT_REFUSED(fprop(x, w, {}, y, {{0, 1}, {1, 1}, {1, 1}}), "stride");
  EXPECT_REFUSED(fprop(x, w, {}, y, {{1, 1}, {-1, 1}, {1, 1}}), "padding");
  EXPECT_REFUSED(fprop(x, w, {}, y, {{1, 1}, {1, 1}, {1, 0}}), "dilation");
  EXPECT_REFUSED(fprop(x, w, {}, y, same, 1.0), "beta is 1 but no C");
  EXPECT_REFUSED(fprop(x, nhwc(1, 32, 13, 13, 16), {}, nhwc(2, 2, 1, 1, 32), {{1, 1}, {0, 0}, {1, 1}}),
                 "more than the padded input");
  TensorRef matrix = TensorRef::matrix(x.data, DataType::f16, 126, 16, Layout::RowMajor);
  EXPECT_REFUSED(fprop(matrix, w, {}, y, same), "rank-4");
  TensorRef host = x;
  host.device = TensorRef::kHost;
  EXPECT_REFUSED(fprop(host, w, {}, y, same), "host memory");
  TensorRef wrong_type = nhwc(0, 2, 9, 7, 16, DataType::bf16);
  EXPECT_THROW(fprop(wrong_type, w, {}, y, same), DataTypeError);
  TensorRef strided = x;
  strided.strides[0] *= 2;
  EXPECT_REFUSED(fprop(strided, w, {}, y, same), "dense NHWC");
  // Three channels of f16: the alignment answer is to pad them.
  EXPECT_REFUSED(fprop(nhwc(0, 2, 9, 7, 3), nhwc(1, 32, 3, 3, 3), {}, y, same), "pad the channels with zeros to 8");
  EXPECT_REFUSED(fprop(x, w, {}, nhwc(0, 2, 9, 7, 32), same), "overlaps input A");
  EXPECT_REFUSED(fprop(x, nhwc(1, 32, 33, 1, 16), {}, nhwc(2, 2, 9, 7, 32), {{1, 1}, {16, 0}, {1, 1}}),
                 "at most 32 x 32");
  // Strided dgrad: no dilation, no split-K in CUTLASS's kernels.
  TensorRef dy = nhwc(2, 2, 5, 4, 32);
  op::ConvGeometry strided2{{2, 2}, {1, 1}, {1, 1}};
  EXPECT_NO_THROW(op::check_conv(kDgrad, types, 0, dy, w, {}, x, strided2, 0.0, {1}));
  EXPECT_REFUSED(op::check_conv(kDgrad, types, 0, dy, w, {}, x, strided2, 0.0, {2}), "does not split K");
  EXPECT_REFUSED(op::check_conv(kDgrad, types, 0, nhwc(2, 2, 4, 3, 32), w, {}, x, {{2, 2}, {1, 1}, {2, 2}}, 0.0, {1}),
                 "take no dilation");
  EXPECT_REFUSED(op::check_conv(kDgrad, types, 0, nhwc(2, 2, 7, 5, 32), w, {}, x, {{1, 1}, {1, 1}, {2, 2}}, 0.0, {1}),
                 "take no dilation");  // at stride 1 too: the kernels are the strided ones
  TensorRef bias32 = TensorRef::vector(reinterpret_cast<const void*>(kBase + (3u << 28)), DataType::f16, 16);
  EXPECT_REFUSED(op::check_conv(kWgrad, types, 0, y, x, bias32, w, same, 1.0, {1}), "wgrad's C has dw's shape");
  // The selection's entry (a size, not tensors) refuses what runs refuse, before any arithmetic on it
  // (a stride of 0 divided; strides of 2^32 multiplied to 0, then divided: SIGFPE, found by the fuzz).
  EXPECT_REFUSED(op::conv_size({2, 9, 7, 16, 32, 3, 3}, {{0, 1}, {1, 1}, {1, 1}}), "stride: expected 1 or more");
  EXPECT_REFUSED(op::conv_size({2, 9, 7, 16, 32, 3, 3}, {{int64_t(1) << 32, int64_t(1) << 32}, {1, 1}, {1, 1}}),
                 "stride: 4294967296 exceeds the 32-bit range");
  EXPECT_REFUSED(op::conv_size({2, int64_t(1) << 62, 7, 16, 32, 3, 3}, same), "H: expected 1 to 2147483647");
  // A filter wider than the padded input: P and Q of -2 multiply to a positive M.
  EXPECT_REFUSED(op::conv_size({1, 4, 4, 8, 8, 7, 7}, {}), "R: the filter spans 7 rows");
  Conv2dSize zero_stride = op::conv_size({2, 9, 7, 16, 32, 3, 3}, same);
  zero_stride.stride_w = 0;
  EXPECT_REFUSED(op::conv_shape(kFprop, types, zero_stride), "stride: expected 1 or more");
  EXPECT_REFUSED(fprop(x, w, nhwc(3, 2, 9, 7, 16), y, same, 1.0), "expected D's shape");
  // A null pointer, and a bias not on whole elements (the kernels load it in vectors of them).
  TensorRef null_x = x;
  null_x.data = nullptr;
  EXPECT_REFUSED(fprop(null_x, w, {}, y, same), "A: its data pointer is null (x, the activation)");
  EXPECT_REFUSED(fprop(TensorRef{}, w, {}, y, same), "A: no tensor was given (x, the activation)");
  // A view read backwards along W (NumPy's x[:, :, ::-1]) is named as such, not as a tensor past 2 GiB.
  TensorRef reversed = x;
  reversed.strides[2] = -reversed.strides[2];
  EXPECT_REFUSED(fprop(reversed, w, {}, y, same), "A: negative strides are not supported");
  TensorRef odd_bias = TensorRef::vector(reinterpret_cast<const void*>(kBase + (3u << 28) + 1), DataType::f16, 32);
  EXPECT_REFUSED(fprop(x, w, odd_bias, y, same, 1.0), "the bias's data pointer");
  // A bias whose bytes would wrap past the end of the address space, and a C of rank 2 (neither bias nor NHWC).
  TensorRef wrapping = TensorRef::vector(reinterpret_cast<const void*>(~uintptr_t(0) - 7), DataType::f16, 32);
  EXPECT_REFUSED(fprop(x, w, wrapping, y, same, 1.0), "C: its extents and strides reach past the end of the address");
  TensorRef matrix_c = TensorRef::matrix(reinterpret_cast<const void*>(kBase + (3u << 28)), DataType::f16, 8, 32,
                                         Layout::RowMajor);
  EXPECT_REFUSED(fprop(x, w, matrix_c, y, same, 1.0), "C: expected a rank-4 tensor (the tensor added to the output)");
}

}  // namespace
}  // namespace cuforge
