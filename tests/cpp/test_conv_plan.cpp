// Conv2d plans on the CPU: the kernel each kind and problem chooses (SM90 implicit GEMMs, SM80 ones
// for what they cannot run, parallel split-K, fixed-channel and pointwise kernels). The boundary checks:
// test_conv_check.cpp.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "conv_support.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/op/gemm.hpp"

namespace cuforge {
namespace {

using namespace test;

TEST(ConvPlan, ChoosesSm80ImplicitGemmsOfItsKind) {
  GemmOptions sm80 = options(DataType::f16);
  sm80.kernel_cc = 80;
  Conv2d plan(kWgrad, sm80);
  EXPECT_EQ(plan.kernel_cc(), 80);
  Conv2dSize z = resnet_layer();
  GemmShape s = plan.shape(z);
  EXPECT_EQ(s.m, 64);
  EXPECT_EQ(s.n, 64 * 9);
  EXPECT_EQ(s.k, 32 * 56 * 56);
  EXPECT_EQ(s.align_a, 8);
  const std::string name = plan.select(s).config.name();
  EXPECT_EQ(name.rfind("cuforge_sm80_wgrad_", 0), 0u) << name;
  // 64 x 576 outputs over K = 100352: a few tiles, each cut into slices to fill the GPU: f32 partial
  // products summed after the kernel (parallel) for a 16-bit dw, whose own precision would round
  // every serial slice's partial sum; serial or parallel slices for an f32 dw.
  const select::GemmCandidate parallel = plan.select(s);
  EXPECT_TRUE(parallel.config.parallel_split_k) << parallel.config.name();
  EXPECT_GE(parallel.splits, 8);
  GemmOptions f32_dw = sm80;
  f32_dw.element_c = f32_dw.element_d = DataType::f32;
  Conv2d wgrad32(kWgrad, f32_dw);
  EXPECT_GT(wgrad32.select(wgrad32.shape(z)).splits, 1);
  Conv2d fprop(kFprop, f32_dw);
  EXPECT_EQ(fprop.select(fprop.shape(z)).splits, 1) << "fprop splits only over C: never unasked";
  Conv2d dgrad(kDgrad, sm80);
  EXPECT_EQ(dgrad.select(dgrad.shape(z)).splits, 1) << "strided dgrad cannot split K: dgrad never does";
  auto settings = plan.settings();
  settings.set_activation(Activation::relu);
  plan.set_settings(settings);
  EXPECT_EQ(plan.select(s).config.activation, Activation::relu);
  settings.set_decomposition(Decomposition::StreamK);
  EXPECT_THROW(plan.set_settings(settings), InvalidArgumentError);
  EXPECT_THROW(Conv2d(KernelKind::Gemm, options(DataType::f16)), InvalidArgumentError);
  EXPECT_REFUSED(Conv2d c(static_cast<KernelKind>(9), options(DataType::f16)), "must be fprop, dgrad or wgrad, got 9");
  EXPECT_THROW(Conv2d(kFprop, options(DataType::s8)), InvalidArgumentError) << "no int8 convolutions";
  GemmOptions gemm = options(DataType::f16);
  EXPECT_REFUSED(Gemm g(gemm), "TensorNHWC is the layout of convolution tensors");
}

// On Hopper the plans of 16-bit types with f32 accumulation run SM90 kernels, SM80 ones beside them
// for what SM90's implicit GEMM cannot run; TF32 and f16 accumulation stay on SM80.
TEST(ConvPlan, ShortChannelRunsWasteTheRestOfTheKTile) {
  // The stem layer: each of the 49 filter taps starts a fresh K tile, 8 channels in it: SM90's
  // 64-deep tiles carry 56 empty columns, SM80's 32-deep ones 24 (H200, bench/conv.py: SM90 9.6
  // TFLOP/s, SM80 36.5).
  const Conv2dSize stem = stem_layer();
  Conv2d fprop(kFprop, options(DataType::f16));
  const GemmShape s = fprop.shape(stem);
  EXPECT_EQ(s.k, 8 * 49);
  EXPECT_EQ(s.conv.k_run, 8);
  EXPECT_EQ(fprop.select(s).config.arch, 80);
  GemmShape gemm = s;
  gemm.conv.k_run = 0;  // the same extents as one GEMM K
  const auto ranked = fprop.rank(s).ranked;
  const auto sm90 = std::find_if(ranked.begin(), ranked.end(), [](const auto& c) { return c.config.arch == 90; });
  ASSERT_NE(sm90, ranked.end());
  EXPECT_GT(select::estimated_time_us(sm90->config, s, 1, true, 132),
            4 * select::estimated_time_us(sm90->config, gemm, 1, true, 132))
      << "a 64-deep K tile holding 8 channels computes 1/8 of its work";
  EXPECT_EQ(Conv2d(kDgrad, options(DataType::f16)).shape(stem).conv.k_run, 64) << "dgrad's K runs over fprop's K";
  EXPECT_EQ(Conv2d(kWgrad, options(DataType::f16)).shape(stem).conv.k_run, 0) << "wgrad's K is N·P·Q";
}

// SM90 wgrad splits K in parallel between the images (H200, bench/conv.py --profile 10 --passes wgrad,
// N = 32): 64x64 tiles x 8 slices ran 56²x64->64 at 1.00x cuDNN and x 16 the 1x1 layer at 1.00x, where
// x 32 (two launches of 16 slices) ran 0.56-0.85x, 64x128 tiles (two runs of 64 channels each) 0.46-0.51x,
// and SM80's best 0.57-0.79x.
TEST(ConvPlan, Sm90WgradSplitsBetweenTheImagesInFullChannelRuns) {
  Conv2d wgrad(kWgrad, options(DataType::f16));
  const GemmShape s = wgrad.shape(resnet_layer());
  EXPECT_EQ(s.conv.images, 32);
  EXPECT_EQ(s.conv.n_run, 64);
  const select::GemmCandidate chosen = wgrad.select(s);
  SCOPED_TRACE(chosen.config.name());
  EXPECT_EQ(chosen.config.arch, 90);
  EXPECT_TRUE(chosen.config.parallel_split_k);
  EXPECT_EQ(chosen.splits, 8);
  EXPECT_EQ(chosen.config.tile.threadblock_shape[1], 64) << "a 128-wide tile over 64-channel runs is half empty";
  library::GemmConfig wide = chosen.config;
  wide.tile.threadblock_shape[1] = 128;
  EXPECT_GT(select::estimated_time_us(wide, s, 8, true, 132), 1.5 * select::estimated_time_us(chosen.config, s, 8, true, 132));
  // 32 slices take two launches of 16, one after the other.
  EXPECT_GT(select::estimated_time_us(chosen.config, s, 32, true, 132),
            select::estimated_time_us(chosen.config, s, 16, true, 132));
  // A slice holds whole images: 4 slices of 7 images run 2 at most, as of 8 (compute-bound here, the
  // DRAM floor's share left out).
  select::CostModel compute_only;
  compute_only.unhidden_fraction = 0;
  Conv2dSize seven = resnet_layer(), eight = resnet_layer();
  seven.n = 7, eight.n = 8;
  EXPECT_DOUBLE_EQ(select::estimated_time_us(chosen.config, wgrad.shape(seven), 4, true, 132, compute_only),
                   select::estimated_time_us(chosen.config, wgrad.shape(eight), 4, true, 132, compute_only));
  // The stem's 8 channels leave SM90's 64-wide N tiles 1/8 full: SM80 (1.23x cuDNN in --sweep-wgrad).
  Conv2d stem(kWgrad, options(DataType::f16));
  EXPECT_EQ(stem.select(stem.shape(stem_layer())).config.arch, 80);
}

// dgrad's N is the input's channels: the stem's 8 fill an eighth of a 64-wide tile, a quarter of
// the 32-wide ones that 16-bit SM80 dgrad also has.
TEST(ConvPlan, FewChannelsTakeANarrowDgradTile) {
  Conv2d dgrad(kDgrad, options(DataType::f16));
  const select::GemmCandidate chosen = dgrad.select(dgrad.shape(stem_layer()));
  EXPECT_EQ(chosen.config.tile.threadblock_shape[1], 32) << chosen.config.name();
  EXPECT_EQ(dgrad.select(dgrad.shape(resnet_layer())).config.arch, 90) << "64 channels keep SM90's tiles";
}

// CUTLASS's fixed-channel iterators pack the taps of an input of exactly one vector of channels
// into each K tile: the stem's 49 taps of 8 channels fill 13 32-deep tiles instead of 49.
TEST(ConvPlan, FixedChannelKernelsPackTheStemsTaps) {
  const Conv2dSize stem = stem_layer();
  Conv2d fprop(kFprop, options(DataType::f16));
  const select::GemmCandidate chosen = fprop.select(fprop.shape(stem));
  EXPECT_TRUE(chosen.config.fixed_channels && chosen.config.alignment_a == 8) << chosen.config.name();
  EXPECT_EQ(library::parse_gemm_name(chosen.config.name()), chosen.config);
  library::GemmConfig optimized = chosen.config;
  optimized.fixed_channels = false;
  const GemmShape s = fprop.shape(stem);
  EXPECT_LT(2 * select::estimated_time_us(chosen.config, s, 1, true, 132),
            select::estimated_time_us(optimized, s, 1, true, 132));
  // Only for exactly the vector's channels, and never split.
  Conv2dSize wide = resnet_layer();
  const auto ranked = fprop.rank(fprop.shape(wide)).ranked;
  EXPECT_TRUE(std::none_of(ranked.begin(), ranked.end(), [](const auto& c) { return c.config.fixed_channels; }));
  TensorRef x = nhwc(0, 2, 15, 13, 8), w = nhwc(1, 16, 7, 7, 8), y = nhwc(2, 2, 8, 7, 16);
  const op::ConvGeometry g{{2, 2}, {3, 3}, {1, 1}};
  const GemmTypes types = options(DataType::f16);
  EXPECT_TRUE(fprop.select(op::check_conv(kFprop, types, 0, x, w, {}, y, g, 0.0).shape).config.fixed_channels);
  EXPECT_FALSE(fprop.select(op::check_conv(kFprop, types, 0, x, w, {}, y, g, 0.0, {2}).shape).config.fixed_channels)
      << "a run's split-K takes the optimized iterators";
  // SM80 fprop only, A and B in equal vectors, no parallel split-K.
  library::GemmConfig c = chosen.config;
  c.parallel_split_k = true;
  EXPECT_NE(library::why_invalid(c).value_or("").find("not offered split"), std::string::npos);
  c = chosen.config;
  c.kind = kDgrad;
  c.layout_b = Layout::RowMajor;
  EXPECT_NE(library::why_invalid(c).value_or("").find("SM80 tensor-core fprop kernels"), std::string::npos);
}

// SIMT plans read channels one element at a time: 3 f16 channels in and 5 out run there (SM80's CUDA-core
// implicit GEMM), where tensor-op plans ask for the channels padded to whole 4-byte vectors.
TEST(ConvPlan, SimtPlansTakeAnyChannelCount) {
  TensorRef x = nhwc(0, 2, 11, 9, 3), w = nhwc(1, 5, 3, 3, 3), y = nhwc(2, 2, 11, 9, 5);
  const op::ConvGeometry same{{1, 1}, {1, 1}, {1, 1}};
  const GemmTypes types = options(DataType::f16);
  const auto refused = test::message_of<InvalidArgumentError>(
      [&] { op::check_conv(kFprop, types, 0, x, w, {}, y, same, 0.0); });
  EXPECT_NE(refused.find("3 channels: convolution kernels read channels in vectors of at least 2 f16"),
            std::string::npos) << refused;
  Conv2d simt(kFprop, options(DataType::f16));
  auto settings = simt.settings();
  settings.opclass = OpcodeClass::Simt;
  simt.set_settings(settings);
  const ConvProblem p = simt.check(x, w, {}, y, same, 1.0, 0.0, {});
  EXPECT_EQ(p.shape.align_a, 1);
  EXPECT_EQ(p.shape.align_c, 1);
  const library::GemmConfig c = simt.select(p.shape).config;
  EXPECT_TRUE(c.opclass == OpcodeClass::Simt && c.arch == 80) << c.name();
  // Their parallel split-K stores its partial products one element at a time too: any channel count splits.
  Conv2d wgrad(kWgrad, options(DataType::f16));
  wgrad.set_settings(settings);
  const library::GemmConfig split = wgrad.select(wgrad.check(y, x, {}, w, same, 1.0, 0.0, {2, true}).shape).config;
  EXPECT_TRUE(split.parallel_split_k && split.opclass == OpcodeClass::Simt) << split.name();
  // Fixed-channel iterators are tensor-op kernels', and the refusal says so.
  settings.iterator_algorithm = IteratorAlgorithm::FixedChannels;
  const auto fixed = test::message_of<InvalidArgumentError>([&] { simt.set_settings(settings); });
  EXPECT_NE(fixed.find("on the CUDA cores (fixed-channel kernels are tensor-op kernels)"), std::string::npos) << fixed;
}

// The implicit GEMM's extents are products of three 31-bit extents: one past int64's range is refused as
// such, where it once wrapped around into range (M = 2^30 for this one).
TEST(ConvPlan, ExtentProductsPastInt64AreRefused) {
  Conv2d fprop(kFprop, options(DataType::f16));
  EXPECT_REFUSED(fprop.shape(op::conv_size({int64_t(1) << 30, 2147483629, 1469330917, 16, 16, 1, 1}, {})),
                 "M: the implicit GEMM's M = a product past 2^63 is outside 1 to 2147483647");
  Conv2d dgrad(kDgrad, options(DataType::f16));
  EXPECT_REFUSED(dgrad.shape(op::conv_size({8, 8, 8, 16, 2147483647, 2147483647, 2147483647}, {{1, 1}, {1073741824, 1073741824}, {1, 1}})),
                 "the implicit GEMM's");
}

// A C++ caller's Conv2dSize and split are checked as a run's: the output's extents the geometry's, the filter
// within the padded input, the slices in range (each was accepted, p = q = 1000 as an implicit GEMM of 32 M rows).
TEST(ConvPlan, AHandBuiltSizeOrSplitIsCheckedAsARunsWouldBe) {
  Conv2d fprop(kFprop, options(DataType::f16));
  Conv2dSize wide = Conv2d::default_problem();
  wide.p = wide.q = 1000;
  EXPECT_REFUSED(fprop.shape(wide), "P, Q: the output's extents are the geometry's");
  Conv2dSize small = Conv2d::default_problem();
  small.h = small.w = 2;
  small.r = small.s = 9;
  small.p = small.q = 1;
  EXPECT_REFUSED(fprop.shape(small), "R: the filter spans 9 rows");
  for (int slices : {-3, 2000, INT_MAX})
    EXPECT_REFUSED(fprop.shape(Conv2d::default_problem(), false, {}, ConvSplitK{slices, false}), "split_k: expected 1 to");
  // What the kernels take, as check_conv says it: filters up to 32 x 32, dgrad without dilation.
  EXPECT_REFUSED(fprop.shape(op::conv_size({1, 64, 64, 16, 16, 33, 33}, {})), "33 x 33 filters");
  Conv2d dgrad(kDgrad, options(DataType::f16));
  EXPECT_REFUSED(dgrad.shape(op::conv_size({1, 16, 16, 16, 16, 3, 3}, {{1, 1}, {2, 2}, {2, 2}})),
                 "dilation: dgrad runs on CUTLASS's strided-dgrad kernels");
}

// A size whose tensors a run refuses (2 GiB or more: CUTLASS's convolution kernels address 32-bit offsets) has no
// kernel to select either (the selection, and a compile(), once took 65536 images of 64 x 64 x 8 halves).
TEST(ConvPlan, TensorsOf2GiBOrMoreAreRefusedBeforeAnyKernelIsChosen) {
  Conv2d fprop(kFprop, options(DataType::f16));
  EXPECT_REFUSED(fprop.shape(op::conv_size({32768, 64, 64, 8, 8, 1, 1}, {})),
                 "A: 1073741824 elements of 2 bytes: CUTLASS's convolution kernels address tensors below 2 GiB");
  EXPECT_NO_THROW(fprop.shape(op::conv_size({32767, 64, 64, 8, 8, 1, 1}, {})));
  Conv2d wgrad(kWgrad, options(DataType::f16));  // stride 2: dy (A) a quarter of x (B), the one refused
  EXPECT_REFUSED(wgrad.shape(op::conv_size({32768, 64, 64, 8, 8, 1, 1}, {{2, 2}, {0, 0}, {1, 1}})),
                 "B: 1073741824 elements");
}

// iterator_algorithm pins the iterators: the stem's fixed-channel kernel or an optimized one, a
// problem the pinned ones cannot run refused with why, and only where such kernels exist.
TEST(ConvPlan, IteratorAlgorithmPinsTheIterators) {
  const Conv2dSize stem = stem_layer();
  Conv2d fprop(kFprop, options(DataType::f16));
  auto settings = fprop.settings();
  settings.iterator_algorithm = IteratorAlgorithm::Optimized;
  fprop.set_settings(settings);
  const auto optimized = fprop.rank(fprop.shape(stem)).ranked;
  ASSERT_FALSE(optimized.empty());
  EXPECT_TRUE(std::none_of(optimized.begin(), optimized.end(), [](const auto& c) { return c.config.fixed_channels; }));
  settings.iterator_algorithm = IteratorAlgorithm::FixedChannels;
  fprop.set_settings(settings);
  const auto fixed = fprop.rank(fprop.shape(stem)).ranked;
  ASSERT_FALSE(fixed.empty());
  EXPECT_TRUE(std::all_of(fixed.begin(), fixed.end(), [](const auto& c) { return c.config.fixed_channels; }));
  EXPECT_REFUSED(fprop.select(fprop.shape(resnet_layer())),
                 "iterator_algorithm is fixed_channels: its kernels take inputs of exactly one vector of channels "
                 "(8, 4, 2, 1 here); this convolution's input has 64");
  // The stem's 8 channels are one vector: what refuses a split stem is the split, not the channels.
  auto split = settings;
  split.set_split_k_slices(2);
  fprop.set_settings(split);
  const std::string why = REFUSAL(fprop.select(fprop.shape(stem)));
  EXPECT_NE(why.find("decomposition split_k"), std::string::npos) << why;
  // A pinned SM90 tile leaves no SM80 kernel, and so no fixed-channel one: refused when set.
  Conv2d sm90(kFprop, options(DataType::f16));
  auto pinned = settings;
  pinned.tile = sm90.tile_descriptions().front();
  EXPECT_REFUSED(sm90.set_settings(pinned), "no fixed-channel kernel of this plan computes A f16 x B f16 into D f16 "
                                            "with its pinned tile");

  Conv2d dgrad(kDgrad, options(DataType::f16));
  EXPECT_REFUSED(dgrad.set_settings(settings), "iterator_algorithm fixed_channels: fprop's iterators");
  GemmOptions matrices = options(DataType::f16);
  matrices.layout_a = matrices.layout_b = matrices.layout_c = Layout::RowMajor;
  Gemm gemm(matrices);
  settings.iterator_algorithm = IteratorAlgorithm::Optimized;
  EXPECT_REFUSED(gemm.set_settings(settings), "iterator_algorithm optimized: a convolution's setting");
}

TEST(ConvPlan, ChoosesSm90ImplicitGemmsOnHopperAndSm80ForWhatTheyCannotRun) {
  const Conv2dSize z = resnet_layer();
  for (KernelKind kind : {kFprop, kDgrad, kWgrad})
    for (DataType t : {DataType::f16, DataType::bf16}) {
      Conv2d plan(kind, options(t));
      EXPECT_EQ(plan.kernel_cc(), 90);
      for (bool bias : {false, true}) {
        if (bias && kind == kWgrad) {  // as a run's check refuses a bias C for wgrad
          EXPECT_REFUSED(plan.shape(z, bias), "bias: a bias is one value per output channel of fprop or dgrad");
          continue;
        }
        const select::GemmCandidate chosen = plan.select(plan.shape(z, bias));
        SCOPED_TRACE(chosen.config.name());
        EXPECT_EQ(chosen.config.bias, bias);
        if (kind == kWgrad) {  // 9 tiles of 64 x 64 over K = 100352: parallel split-K between the 32 images
          EXPECT_TRUE(chosen.config.parallel_split_k);
          EXPECT_EQ(chosen.config.arch, 90);
          EXPECT_GT(chosen.splits, 1);
          EXPECT_LE(chosen.splits, z.n);
          continue;
        }
        EXPECT_EQ(chosen.config.name().rfind(fmt::format("cuforge_sm90_{}_", to_string(kind)), 0), 0u);
        EXPECT_EQ(chosen.splits, 1);
      }
    }
  GemmOptions tf32 = options(DataType::f32);
  EXPECT_EQ(Conv2d(kFprop, tf32).kernel_cc(), 80);
  GemmOptions f16_acc = options(DataType::f16);
  f16_acc.element_accumulator = DataType::f16;
  EXPECT_EQ(Conv2d(kFprop, f16_acc).kernel_cc(), 80);

  // What only SM80 runs: strided dgrad, serial split-K, padding beyond the im2col box's reach.
  Conv2d dgrad(kDgrad, options(DataType::f16));
  // The pointwise GEMM kernels split K in parallel as GEMMs do, where that pays (a 7x7 layer, K = 2048).
  Conv2dSize deep;
  deep.n = 1, deep.h = deep.w = deep.p = deep.q = 7, deep.c = 2048, deep.k = 512, deep.r = deep.s = 1;
  Conv2d deep_fprop(kFprop, options(DataType::f16));
  const auto deep_ranked = deep_fprop.rank(deep_fprop.shape(deep)).ranked;
  EXPECT_TRUE(std::any_of(deep_ranked.begin(), deep_ranked.end(),
                          [](const auto& c) { return c.config.pointwise && c.config.parallel_split_k; }));
  Conv2dSize strided = z;
  strided.stride_h = strided.stride_w = 2;
  strided.p = strided.q = 28;
  GemmShape s = dgrad.shape(strided);
  EXPECT_TRUE(s.conv.sm80_only);
  EXPECT_EQ(dgrad.select(s).config.arch, 80);
  Conv2d fprop(kFprop, options(DataType::f16));
  EXPECT_FALSE(fprop.shape(strided).conv.sm80_only) << "strided fprop runs on SM90";
  const auto strided_fprop = fprop.rank(fprop.shape(strided)).ranked;
  EXPECT_TRUE(std::any_of(strided_fprop.begin(), strided_fprop.end(),
                          [](const auto& c) { return c.config.arch == 90; }));
  Conv2dSize padded = z;
  padded.pad_h = 130;
  padded.p = 56 + 2 * 130 - 2;
  EXPECT_TRUE(fprop.shape(padded).conv.sm80_only);
  EXPECT_EQ(fprop.select(fprop.shape(padded)).config.arch, 80);
  Conv2dSize dilated = z;
  dilated.dilation_h = dilated.dilation_w = 128;  // a reach of 256 rows
  dilated.h = dilated.w = 300;
  dilated.p = dilated.q = 300 + 2 - 256;
  EXPECT_TRUE(fprop.shape(dilated).conv.sm80_only);
  TensorRef x = nhwc(0, 2, 9, 7, 16), w = nhwc(1, 32, 3, 3, 16), y = nhwc(2, 2, 9, 7, 32);
  op::ConvGeometry same{{1, 1}, {1, 1}, {1, 1}};
  EXPECT_FALSE(op::check_conv(kFprop, options(DataType::f16), 0, x, w, {}, y, same, 0.0, {1}).shape.conv.sm80_only);
  EXPECT_TRUE(op::check_conv(kWgrad, options(DataType::f16), 0, y, x, {}, w, same, 0.0, {3}).shape.conv.sm80_only)
      << "serial split-K";
  // The plan's own split-K decomposition takes SM80's serial kernels too.
  auto settings = fprop.settings();
  settings.set_split_k_slices(4);
  fprop.set_settings(settings);
  EXPECT_EQ(fprop.select(fprop.shape(z)).config.arch, 80);
  EXPECT_EQ(fprop.select(fprop.shape(z)).splits, 4);
  // A pinned SM90 tile has no SM80 kernels to leave strided dgrad to.
  settings = dgrad.settings();
  settings.tile = library::parse_gemm_name(dgrad.select(dgrad.shape(z)).config.name()).tile;
  dgrad.set_settings(settings);
  EXPECT_REFUSED(dgrad.select(dgrad.shape(strided)), "only SM80 kernels run this convolution");
  // kernel_cc=80 plans never take SM90 kernels.
  GemmOptions sm80 = options(DataType::f16);
  sm80.kernel_cc = 80;
  Conv2d old(kFprop, sm80);
  for (const auto& c : old.rank(old.shape(z)).ranked) ASSERT_EQ(c.config.arch, 80) << c.config.name();
}

TEST(ConvPlan, OneByOneConvolutionsWeighTheGemmKernels) {
  Conv2dSize z;  // ResNet-50's 56 x 56 x 256 -> 64 1x1 layer, N = 32
  z.n = 32, z.h = z.w = z.p = z.q = 56, z.c = 256, z.k = 64, z.r = z.s = 1;
  for (KernelKind kind : {kFprop, kDgrad, kWgrad}) {
    Conv2d plan(kind, options(DataType::f16));
    const GemmShape s = plan.shape(z);
    EXPECT_TRUE(s.conv.pointwise);
    const auto ranked = plan.rank(s).ranked;
    // wgrad's GEMM split in parallel on SM90 measured slower than SM80's convolution kernels.
    EXPECT_EQ(std::any_of(ranked.begin(), ranked.end(), [](const auto& c) { return c.config.pointwise; }),
              kind != kWgrad);
    // A pinned tile keeps to the convolution kernels.
    auto settings = plan.settings();
    Conv2d fprop(kFprop, options(DataType::f16));
    settings.tile = fprop.select(fprop.shape(resnet_layer())).config.tile;  // an SM90 convolution tile
    plan.set_settings(settings);
    EXPECT_FALSE(plan.select(s).config.pointwise) << plan.select(s).config.name();
  }
  Conv2dSize strided = z;
  strided.stride_h = strided.stride_w = 2;
  strided.p = strided.q = 28;
  EXPECT_FALSE(Conv2d(kFprop, options(DataType::f16)).shape(strided).conv.pointwise);
  GemmOptions sm80 = options(DataType::f16);
  sm80.kernel_cc = 80;
  EXPECT_FALSE(Conv2d(kFprop, sm80).select(Conv2d(kFprop, sm80).shape(z)).config.pointwise);
  // A pointwise kernel serves 1x1 classes only (say, compiled for one, then asked for a 3x3 layer).
  Conv2d dgrad(kDgrad, options(DataType::f16));
  const select::GemmCandidate pointwise = dgrad.select(dgrad.shape(z));
  ASSERT_TRUE(pointwise.config.pointwise);
  EXPECT_TRUE(select::serves(pointwise, dgrad.settings(), dgrad.shape(z)));
  EXPECT_FALSE(select::serves(pointwise, dgrad.settings(), dgrad.shape(resnet_layer())));
}

}  // namespace
}  // namespace cuforge
