// Conv2d on the CPU: the implicit GEMM of each kind, the catalog's rules for convolution rows, the
// emitted source, the plan's choice, and the boundary checks, each refusal naming the operand.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "cuforge/emit/gemm.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/op/conv2d.hpp"
#include "cuforge/op/gemm.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

constexpr uintptr_t kBase = 0x10000000;  // fake device addresses: nothing is dereferenced
constexpr KernelKind kFprop = KernelKind::Conv2dFprop, kDgrad = KernelKind::Conv2dDgrad,
                     kWgrad = KernelKind::Conv2dWgrad;

GemmOptions options(DataType t) {
  GemmOptions o;
  o.element_a = o.element_b = o.element_c = o.element_d = t;
  o.layout_a = o.layout_b = o.layout_c = Layout::TensorNHWC;
  o.cc = 90;
  return o;
}

// A dense NHWC tensor at `slot` (each 256 MiB apart) on cuda:0.
TensorRef nhwc(int slot, int64_t n, int64_t h, int64_t w, int64_t c, DataType t = DataType::f16) {
  return TensorRef::nhwc(reinterpret_cast<const void*>(kBase + (uintptr_t(slot) << 28)), t, n, h, w, c);
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

#define EXPECT_REFUSED(call, words) \
  EXPECT_NE(refusal([&] { call; }).find(words), std::string::npos) << refusal([&] { call; })

TEST(ConvProblem, ImplicitGemmExtentsOfEachKind) {
  Conv2dSize z;
  z.n = 2, z.h = 9, z.w = 7, z.c = 16, z.k = 32, z.r = 3, z.s = 3, z.p = 5, z.q = 4;
  EXPECT_EQ(implicit_gemm_extents(kFprop, z), (std::array<int64_t, 3>{2 * 5 * 4, 32, 16 * 9}));
  EXPECT_EQ(implicit_gemm_extents(kDgrad, z), (std::array<int64_t, 3>{2 * 9 * 7, 16, 32 * 9}));
  EXPECT_EQ(implicit_gemm_extents(kWgrad, z), (std::array<int64_t, 3>{32, 16 * 9, 2 * 5 * 4}));
  EXPECT_EQ(Conv2dSize::output_extent(224, 7, 3, 2, 1), 112);
  EXPECT_EQ(Conv2dSize::output_extent(9, 3, 0, 2, 2), 3);
}

TEST(ConvCatalog, RowsFollowTheConvolutionRules) {
  library::GemmFilter f;
  f.kind = kDgrad;
  auto rows = library::find_gemms(f);
  ASSERT_FALSE(rows.empty());
  for (const auto* c : rows) {
    EXPECT_EQ(c->arch, 80);
    EXPECT_EQ(library::parse_gemm_name(c->name()), *c);
  }
  library::GemmConfig c = *rows.front();
  c.tile.tile_scheduler = TileScheduler::Identity2;
  EXPECT_NE(library::why_invalid(c).value_or("").find("strided-dgrad swizzle"), std::string::npos);
  c = *rows.front();
  c.kind = kFprop;  // dgrad's layouts are not fprop's
  EXPECT_NE(library::why_invalid(c).value_or("").find("implicit GEMM rcr"), std::string::npos);
  c.layout_b = Layout::ColumnMajor;
  EXPECT_FALSE(library::why_invalid(c));
  c.tile.tile_scheduler = TileScheduler::StreamK;
  EXPECT_TRUE(library::why_invalid(c));
  c.tile.tile_scheduler = TileScheduler::Default;
  c.parallel_split_k = true;
  EXPECT_NE(library::why_invalid(c).value_or("").find("serially"), std::string::npos);
  c.parallel_split_k = false;
  c.element_a = c.element_b = DataType::s8;
  c.element_accumulator = c.element_c = c.element_d = DataType::s32;
  EXPECT_TRUE(library::why_invalid(c));
  f.arch = 90;
  EXPECT_TRUE(library::find_gemms(f).empty());
}

TEST(ConvEmit, EachKindInstantiatesItsCutlassKernel) {
  for (auto [kind, kernel, swizzle] :
       {std::tuple{kFprop, "DefaultConv2dFprop", "GemmIdentityThreadblockSwizzle<8>"},
        {kDgrad, "DefaultConv2dDgrad", "StridedDgradIdentityThreadblockSwizzle<1>"},
        {kWgrad, "DefaultConv2dWgrad", "GemmIdentityThreadblockSwizzle<8>"}}) {
    library::GemmFilter f;
    f.kind = kind;
    f.element_a = DataType::bf16;
    const auto* c = library::find_gemms(f).front();
    std::string source = emit::gemm_source(*c);
    EXPECT_NE(source.find(kernel), std::string::npos) << to_string(kind);
    EXPECT_NE(source.find(swizzle), std::string::npos) << to_string(kind);
    EXPECT_NE(source.find("IteratorAlgorithm::kOptimized"), std::string::npos);
    EXPECT_NE(source.find("cuforge_conv2d_run"), std::string::npos);
    EXPECT_EQ(source.find("${"), std::string::npos) << "an unfilled hole";
  }
}

TEST(ConvPlan, ChoosesSm80ImplicitGemmsOfItsKind) {
  Conv2d plan(kWgrad, options(DataType::f16));
  EXPECT_EQ(plan.kernel_cc(), 80) << "convolutions run on SM80 kernels, on Hopper too";
  Conv2dSize z;
  z.n = 32, z.h = z.w = 56, z.c = 64, z.k = 64, z.r = z.s = 3, z.pad_h = z.pad_w = 1, z.p = z.q = 56;
  GemmShape s = plan.shape(z);
  EXPECT_EQ(s.m, 64);
  EXPECT_EQ(s.n, 64 * 9);
  EXPECT_EQ(s.k, 32 * 56 * 56);
  EXPECT_EQ(s.align_a, 8);
  const std::string name = plan.select(s).config.name();
  EXPECT_EQ(name.rfind("cuforge_sm80_wgrad_", 0), 0u) << name;
  // 64 x 576 outputs over K = 100352: a few tiles, each cut into serial slices to fill the GPU when
  // dw is f32; a 16-bit dw would round every slice's partial sum, so it is not split unasked.
  EXPECT_EQ(plan.select(s).splits, 1);
  GemmOptions f32_dw = options(DataType::f16);
  f32_dw.element_c = f32_dw.element_d = DataType::f32;
  Conv2d wgrad32(kWgrad, f32_dw);
  EXPECT_GT(wgrad32.select(wgrad32.shape(z)).splits, 1);
  Conv2d fprop(kFprop, f32_dw);
  EXPECT_EQ(fprop.select(fprop.shape(z)).splits, 1) << "fprop splits only over C: never unasked";
  Conv2d dgrad(kDgrad, options(DataType::f16));
  EXPECT_EQ(dgrad.select(dgrad.shape(z)).splits, 1) << "strided dgrad cannot split K: dgrad never does";
  auto settings = plan.settings();
  settings.set_activation(Activation::relu);
  plan.set_settings(settings);
  EXPECT_EQ(plan.select(s).config.activation, Activation::relu);
  settings.set_decomposition(Decomposition::StreamK);
  EXPECT_THROW(plan.set_settings(settings), InvalidArgumentError);
  EXPECT_THROW(Conv2d(KernelKind::Gemm, options(DataType::f16)), InvalidArgumentError);
  EXPECT_THROW(Conv2d(kFprop, options(DataType::s8)), InvalidArgumentError) << "no int8 convolutions";
  GemmOptions gemm = options(DataType::f16);
  EXPECT_REFUSED(Gemm g(gemm), "TensorNHWC is the layout of convolution tensors");
}

class ConvCheck : public ::testing::Test {
 protected:
  op::ConvGeometry same{{1, 1}, {1, 1}, {1, 1}};  // 3x3, padding 1: P = H
  GemmTypes types = options(DataType::f16);
  ConvProblem fprop(const TensorRef& x, const TensorRef& w, const TensorRef& c, const TensorRef& y,
                    const op::ConvGeometry& g, double beta = 0.0, int splits = 1) {
    return op::check_conv(kFprop, types, 0, x, w, c, y, g, beta, splits);
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
  // dgrad: A = dy, B = w, D = dx; wgrad: A = dy, B = x, D = dw.
  ConvProblem d = op::check_conv(kDgrad, types, 0, y, w, {}, x, same, 0.0, 1);
  EXPECT_EQ(d.shape.m, 2 * 9 * 7);
  EXPECT_EQ(d.shape.n, 16);
  ConvProblem g = op::check_conv(kWgrad, types, 0, y, x, {}, w, same, 0.0, 4);
  EXPECT_EQ(g.shape.m, 32);
  EXPECT_EQ(g.shape.k, 2 * 9 * 7);
  // A bias: one value per channel of D, read with strides of 0.
  TensorRef bias = TensorRef::vector(reinterpret_cast<const void*>(kBase + (3u << 28)), DataType::f16, 32);
  ConvProblem b = fprop(x, w, bias, y, same, 1.0);
  EXPECT_TRUE(b.shape.bias);
  EXPECT_EQ(b.stride_c, (std::array<int64_t, 3>{0, 0, 0}));
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
  EXPECT_NO_THROW(op::check_conv(kDgrad, types, 0, dy, w, {}, x, strided2, 0.0, 1));
  EXPECT_REFUSED(op::check_conv(kDgrad, types, 0, dy, w, {}, x, strided2, 0.0, 2), "does not split K");
  EXPECT_REFUSED(op::check_conv(kDgrad, types, 0, nhwc(2, 2, 4, 3, 32), w, {}, x, {{2, 2}, {1, 1}, {2, 2}}, 0.0, 1),
                 "take no dilation");
  EXPECT_REFUSED(op::check_conv(kDgrad, types, 0, nhwc(2, 2, 7, 5, 32), w, {}, x, {{1, 1}, {1, 1}, {2, 2}}, 0.0, 1),
                 "take no dilation");  // at stride 1 too: the kernels are the strided ones
  TensorRef bias32 = TensorRef::vector(reinterpret_cast<const void*>(kBase + (3u << 28)), DataType::f16, 16);
  EXPECT_REFUSED(op::check_conv(kWgrad, types, 0, y, x, bias32, w, same, 1.0, 1), "wgrad's C has dw's shape");
  EXPECT_REFUSED(fprop(x, w, nhwc(3, 2, 9, 7, 16), y, same, 1.0), "expected D's shape");
}

}  // namespace
}  // namespace cuforge
