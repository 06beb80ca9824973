// Conv2d on the CPU: the implicit GEMM of each kind, the catalog's rules for convolution rows and the
// emitted source (test_conv_plan.cpp: the plan's choice and the boundary checks).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "conv_support.hpp"
#include "cuforge/emit/gemm.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/op/conv_check.hpp"
#include "cuforge/select/gemm_cost.hpp"

namespace cuforge {
namespace {

using namespace test;

TEST(ConvProblem, ImplicitGemmExtentsOfEachKind) {
  Conv2dSize z;
  z.n = 2, z.h = 9, z.w = 7, z.c = 16, z.k = 32, z.r = 3, z.s = 3, z.p = 5, z.q = 4;
  EXPECT_EQ(implicit_gemm_extents(kFprop, z), (std::array<int64_t, 3>{2 * 5 * 4, 32, 16 * 9}));
  EXPECT_EQ(implicit_gemm_extents(kDgrad, z), (std::array<int64_t, 3>{2 * 9 * 7, 16, 32 * 9}));
  EXPECT_EQ(implicit_gemm_extents(kWgrad, z), (std::array<int64_t, 3>{32, 16 * 9, 2 * 5 * 4}));
  EXPECT_EQ(Conv2dSize::output_extent(224, 7, 3, 2, 1), 112);
  EXPECT_EQ(Conv2dSize::output_extent(9, 3, 0, 2, 2), 3);
}

// run(problem) takes a checked problem: one of another kind's plan (an fprop problem on a dgrad plan would run
// dgrad's kernel on fprop's tensors), or scalars its check never saw (1e39 for an f32 epilogue), are refused.
TEST(ConvRun, AnotherKindsProblemOrOddScalarsAreRefused) {
  const TensorRef x = nhwc(0, 2, 16, 16, 16), w = nhwc(1, 16, 3, 3, 16), y = nhwc(2, 2, 16, 16, 16);
  const op::ConvGeometry same{{1, 1}, {1, 1}, {1, 1}};
  Conv2d fprop(kFprop, options(DataType::f16));
  const ConvProblem p = fprop.check(x, w, {}, y, same);
  Conv2d dgrad(kDgrad, options(DataType::f16));
  EXPECT_REFUSED(dgrad.run(p), "problem: a fprop problem (another plan's check()), and this plan runs dgrad");
  EXPECT_REFUSED(fprop.run(p, 1e39), "alpha: ");
}

TEST(ConvCatalog, RowsFollowTheConvolutionRules) {
  library::GemmFilter f;
  f.kind = kDgrad;
  f.arch = 80;
  auto rows = library::find_gemms(f);
  ASSERT_FALSE(rows.empty());
  for (const auto* c : rows) EXPECT_EQ(library::parse_gemm_name(c->name()), *c);
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
  // The CUDA cores' convolutions multiply f16, f32 or f64: not the 8-bit types their GEMMs take.
  for (DataType t : {DataType::s8, DataType::e4m3}) {
    library::GemmFilter simt_gemm;
    simt_gemm.arch = 80, simt_gemm.opclass = OpcodeClass::Simt, simt_gemm.element_a = t;
    const auto gemms = library::find_gemms(simt_gemm);
    ASSERT_FALSE(gemms.empty()) << to_string(t);
    library::GemmConfig simt = *gemms.front();
    simt.kind = kFprop;
    simt.layout_c = Layout::RowMajor;
    EXPECT_NE(library::why_invalid(simt).value_or("").find("f16, f32 and f64 on the CUDA cores"), std::string::npos)
        << simt.name();
  }
  // Parallel split-K: every kind on SM80 kernels (CUTLASS 2.x's kParallel); on SM90 wgrad, between
  // its images.
  for (KernelKind kind : {kFprop, kDgrad, kWgrad}) {
    f.kind = kind;
    for (Arch arch : {80, 90}) {
      f.arch = arch;
      library::GemmConfig split = *library::find_gemms(f).front();
      split.parallel_split_k = true;
      const bool valid = arch == 80 || kind == kWgrad;
      EXPECT_EQ(library::why_invalid(split).has_value(), !valid) << split.name();
      if (valid) {
        EXPECT_EQ(library::parse_gemm_name(split.name()), split);
      }
    }
  }
  c.element_a = c.element_b = DataType::s8;
  c.element_accumulator = c.element_c = c.element_d = DataType::s32;
  EXPECT_TRUE(library::why_invalid(c));
}

// SM90: CUTLASS 3.x's implicit GEMM, 16-bit operands with f32 accumulation, a CTA per tile on one
// consumer warpgroup (9 tiles x 3 clusters), 16-byte channel vectors (TMA).
TEST(ConvCatalog, Sm90RowsAreTheImplicitGemmTmaWarpSpecializedKernels) {
  for (KernelKind kind : {kFprop, kDgrad, kWgrad}) {
    library::GemmFilter f;
    f.kind = kind;
    f.arch = 90;
    auto rows = library::find_gemms(f);
    EXPECT_EQ(rows.size(), 108u) << to_string(kind);
    for (const auto* c : rows) {
      EXPECT_EQ(library::parse_gemm_name(c->name()), *c);
      EXPECT_EQ(c->tile.kernel_schedule, KernelSchedule::TmaWarpSpecialized) << c->name();
      EXPECT_EQ(c->tile.tile_scheduler, TileScheduler::Default) << c->name();
      EXPECT_EQ(c->element_accumulator, DataType::f32) << c->name();
      EXPECT_EQ(c->alignment_a * size_bits(c->element_a), 128) << c->name();
      EXPECT_EQ(std::make_pair(c->layout_a, c->layout_b), library::conv_layouts(kind));
    }
  }
  const std::string name =
      "cuforge_sm90_fprop_tensorop_mma_bf16_bf16_f32_bf16_bf16_rcr_128x128x64_c2x1x1_s0_tmaws_tma_default_a8x8x8";
  library::GemmConfig c = library::parse_gemm_name(name);
  EXPECT_EQ(c.name(), name);
  c.tile.tile_scheduler = TileScheduler::StreamK;
  EXPECT_NE(library::why_invalid(c).value_or("").find("no split-K in the kernel"), std::string::npos);
  c = library::parse_gemm_name(name);
  c.parallel_split_k = true;
  EXPECT_NE(library::why_invalid(c).value_or("").find("for wgrad only"), std::string::npos);
  c = library::parse_gemm_name(name);
  c.tile.kernel_schedule = KernelSchedule::TmaWarpSpecializedCooperative;
  c.tile.epilogue_schedule = EpilogueSchedule::TmaWarpSpecializedCooperative;
  EXPECT_NE(library::why_invalid(c).value_or("").find("persistent schedules take no convolutions"), std::string::npos);
  c = library::parse_gemm_name(name);
  c.tile.threadblock_shape = {128, 256, 64};  // 256 accumulators per thread of the one warpgroup
  EXPECT_NE(library::why_invalid(c).value_or("").find("accumulator registers"), std::string::npos);
  c = library::parse_gemm_name(name);
  c.element_a = c.element_b = c.element_c = c.element_d = DataType::f32;
  EXPECT_NE(library::why_invalid(c).value_or("").find("TF32 and f16 accumulation run on SM80"), std::string::npos);
  c = library::parse_gemm_name(name);
  c.tile.kernel_schedule = KernelSchedule::TmaWarpSpecialized;
  c.kind = KernelKind::Gemm;
  EXPECT_FALSE(library::why_invalid(c)) << "GEMMs also run on the non-persistent kernel";
  c.kind = KernelKind::Grouped;
  EXPECT_TRUE(library::why_invalid(c)) << "grouped GEMMs keep the persistent schedules";
}

// CUTLASS's SM90 conv kernel runs a tile per CTA: a fewer-stage one shares its SM with others, as
// its shared memory (228 KB an SM, 1 KB reserved per CTA) and registers (its accumulators and 26
// more a thread, by 8s, 256 threads) allow. Persistent GEMM kernels launch one CTA per SM.
TEST(ConvCatalog, Sm90CtasShareAnSmAsSharedMemoryAndRegistersAllow) {
  const auto ctas = [](const std::string& tile) {
    return library::ctas_per_sm(library::parse_gemm_name("cuforge_sm90_fprop_tensorop_mma_f16_f16_f32_f16_f16_rcr_" +
                                                         tile + "_tmaws_tma_default_a8x8x8"));
  };
  EXPECT_EQ(ctas("64x64x64_c1x1x1_s3"), 3);   // 3 x 16 KB + a 16 KB epilogue
  EXPECT_EQ(ctas("64x64x64_c1x1x1_s4"), 2);   // 80 KB
  EXPECT_EQ(ctas("128x64x64_c1x2x1_s4"), 2);  // 112 KB; 96 registers
  EXPECT_EQ(ctas("64x128x64_c1x1x1_s4"), 2);
  EXPECT_EQ(ctas("128x64x64_c1x1x1_s0"), 1);  // as many stages as fit
  EXPECT_EQ(ctas("128x128x64_c1x1x1_s2"), 1);  // 160 registers
  EXPECT_EQ(library::ctas_per_sm(library::parse_gemm_name(
                "cuforge_sm90_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_64x64x64_c1x1x1_s3_pingpong_tma_default_a8x8x8")),
            1);
  // Shared, a tile's fill and epilogue hide behind the other CTAs' mainloops: on a ResNet layer of short
  // K the model prefers 128x64 sharing an SM to the same tile alone.
  const select::CostModel model;
  const GemmTypes f16{DataType::f16, DataType::f16, DataType::f16, DataType::f16, DataType::f32};
  const GemmShape layer = op::conv_shape(kFprop, f16, resnet_layer());
  const auto estimate = [&](const std::string& tile) {
    return select::estimated_time_us(
        library::parse_gemm_name("cuforge_sm90_fprop_tensorop_mma_f16_f16_f32_f16_f16_rcr_" + tile +
                                 "_tmaws_tma_default_a8x8x8"),
        layer, 1, true, 132, model);
  };
  EXPECT_LT(estimate("128x64x64_c1x1x1_s4"), estimate("128x64x64_c1x1x1_s0"));
  // And to 256x64 alone, whose three waves each expose a fill and an epilogue (H200: 26.5 against
  // 28.9 us, bench/conv_stages.py).
  EXPECT_LT(estimate("128x64x64_c1x1x1_s4"), estimate("256x64x64_c1x1x1_s0"));
  // A cluster along M would multicast the filter, which saves nothing (H200: 2x1 6% slower at the median).
  EXPECT_DOUBLE_EQ(estimate("128x64x64_c2x1x1_s4"), estimate("128x64x64_c1x1x1_s4"));
}

TEST(ConvEmit, EachKindInstantiatesItsCutlassKernel) {
  for (auto [kind, kernel, swizzle] :
       {std::tuple{kFprop, "DefaultConv2dFprop", "GemmIdentityThreadblockSwizzle<8>"},
        {kDgrad, "DefaultConv2dDgrad", "StridedDgradIdentityThreadblockSwizzle<1>"},
        {kWgrad, "DefaultConv2dWgrad", "GemmIdentityThreadblockSwizzle<8>"}}) {
    library::GemmFilter f;
    f.kind = kind;
    f.arch = 80;
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

TEST(ConvCatalog, PointwiseKernelsAreSm90GemmKernelsOfTheKindsLayouts) {
  library::GemmFilter f;
  f.kind = KernelKind::Gemm;
  f.arch = 90;
  f.element_a = DataType::f16;
  f.layout_a = Layout::ColumnMajor;
  f.layout_b = Layout::RowMajor;
  library::GemmConfig c = *library::find_gemms(f).front();  // a crr GEMM: wgrad's layouts
  c.kind = kWgrad;
  c.pointwise = true;
  EXPECT_FALSE(library::why_invalid(c)) << c.name();
  EXPECT_NE(c.name().find("_pointwise"), std::string::npos);
  EXPECT_EQ(library::parse_gemm_name(c.name()), c);
  c.parallel_split_k = true;
  EXPECT_EQ(library::parse_gemm_name(c.name()), c) << "SM90 GEMM kernels split K in parallel for 1x1 wgrad";
  c.kind = kFprop;  // fprop's GEMM is rcr
  EXPECT_NE(library::why_invalid(c).value_or("").find("GEMM rcr"), std::string::npos);
  c.kind = kWgrad;
  c.arch = 80;
  c.tile.kernel_schedule = KernelSchedule::Multistage;
  EXPECT_NE(library::why_invalid(c).value_or("").find("on SM90"), std::string::npos);
}

TEST(ConvEmit, PointwiseKernelsCallTheirGemmThroughTheConvolutionAbi) {
  for (auto [kind, layouts, ldd] : {std::tuple{kFprop, "rcr", "g.ldd = p.stride_d[0];"},
                                    {kDgrad, "rrr", "g.ldd = p.stride_d[0];"},
                                    {kWgrad, "crr", "g.ldd = p.stride_d[2];"}}) {
    library::GemmFilter f;
    f.kind = KernelKind::Gemm;
    f.arch = 90;
    f.element_a = DataType::bf16;
    f.layout_a = layouts[0] == 'r' ? Layout::RowMajor : Layout::ColumnMajor;
    f.layout_b = layouts[1] == 'r' ? Layout::RowMajor : Layout::ColumnMajor;
    library::GemmConfig c = *library::find_gemms(f).front();
    c.kind = kind;
    c.pointwise = true;
    const std::string source = emit::gemm_source(c);
    EXPECT_NE(source.find("cutlass::gemm::collective::CollectiveBuilder"), std::string::npos) << to_string(kind);
    EXPECT_NE(source.find("cuforge_gemm_run(&g, workspace"), std::string::npos);
    EXPECT_NE(source.find("int cuforge_conv2d_run("), std::string::npos);
    EXPECT_NE(source.find(ldd), std::string::npos) << to_string(kind);
    EXPECT_NE(source.find("return \"" + c.name() + "\""), std::string::npos) << "named for the convolution";
    EXPECT_EQ(source.find("${"), std::string::npos) << "an unfilled hole";
  }
}

TEST(ConvEmit, ParallelSplitKWgradWritesF32PartialsThenReduces) {
  library::GemmFilter f;
  f.kind = kWgrad;
  f.arch = 80;
  f.element_a = DataType::bf16;
  library::GemmConfig c = *library::find_gemms(f).front();
  c.activation = Activation::relu;
  const std::string serial = emit::gemm_source(c);
  EXPECT_NE(serial.find("SplitKMode::kSerial"), std::string::npos);
  EXPECT_EQ(serial.find("reduce_slices"), std::string::npos);
  c.parallel_split_k = true;
  const std::string source = emit::gemm_source(c);
  EXPECT_NE(source.find("SplitKMode::kParallel"), std::string::npos);
  // The convolution's epilogue writes f32 partials unchanged; the reduction applies the plan's.
  EXPECT_NE(source.find("LinearCombinationGeneric<\n    cutlass::epilogue::thread::Identity, ElementC"), std::string::npos);
  EXPECT_NE(source.find("using ElementC = float;"), std::string::npos);
  EXPECT_NE(source.find("cutlass::epilogue::thread::ReLu, ElementOut"), std::string::npos);
  EXPECT_NE(source.find("using ElementOut = cutlass::bfloat16_t;"), std::string::npos);
  EXPECT_NE(source.find("reduce_slices"), std::string::npos);
  EXPECT_NE(source.find("cuforge_conv2d_run"), std::string::npos);
  EXPECT_NE(source.find(c.name()), std::string::npos);
  EXPECT_EQ(source.find("${"), std::string::npos) << "an unfilled hole";
}

TEST(ConvEmit, Sm90KindsInstantiateConvUniversalWithTheGemmEpilogues) {
  const std::string fprop =
      "cuforge_sm90_fprop_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x64x64_c1x1x1_s0_tmaws_tma_default_a8x8x8";
  for (auto [name, words] :
       {std::pair{fprop, std::vector<std::string>{"Operator::kFprop", "nhwc_stride(p.stride_a), Extent",
                                                  "using LayoutC = LayoutTensor;", "fusion::LinearCombination<",
                                                  "args.epilogue.dC = output_stride(p.stride_c);"}},
        {std::string("cuforge_sm90_dgrad_tensorop_mma_bf16_bf16_f32_f32_f32_rrr_64x128x64_c2x1x1_s0_tmaws_tma_default_"
                     "a8x8x4_leaky_relu"),
         {"Operator::kDgrad", "nhwc_stride(p.stride_d), Extent", "LinCombEltAct<",
          "activation.leaky_alpha = ElementCompute(p.activation_argument)", "using ElementD = float;"}},
        {std::string("cuforge_sm90_wgrad_tensorop_mma_f16_f16_f32_f16_f16_crr_64x64x64_c1x2x1_s0_tmaws_tma_default_"
                     "a8x8x8"),
         {"Operator::kWgrad", "nhwc_stride(p.stride_b), Extent", "cutlass::layout::TensorKCSR",
          "cute::make_stride(s[2], cute::make_stride(cute::Int<1>{}, s[0], s[1]), cute::Int<0>{})"}},
        // A bias: an epilogue visitor tree reads one value per channel, no C tile.
        {fprop + "_gelu_bias",
         {"fusion::Sm90RowBroadcast<0, TileShape, ElementC", "cutlass::epilogue::thread::GELU",
          "static_cast<const ElementC*>(p.ptr_c), ElementC(0)", "using ElementSource = void;"}}}) {
    SCOPED_TRACE(name);
    const std::string source = emit::gemm_source(library::parse_gemm_name(name));
    for (const std::string& w : words) EXPECT_NE(source.find(w), std::string::npos) << w;
    for (const char* w : {"cutlass::conv::kernel::ConvUniversal<ProblemShape", "KernelImplicitTmaWarpSpecializedSm90",
                          "cutlass::conv::device::ConvUniversalAdapter", "cutlass::epilogue::TmaWarpSpecialized,",
                          "cutlass::conv::collective::StageCountAutoCarveout", "launch_kernel(",
                          "bool supports(const cuforge_conv2d_arguments& p)", "cuforge_conv2d_can_implement",
                          "cuforge_conv2d_run"})
      EXPECT_NE(source.find(w), std::string::npos) << w;
    EXPECT_EQ(source.find("${"), std::string::npos) << "an unfilled hole";
    EXPECT_EQ(source.find("args.epilogue.ptr_C") == std::string::npos, name.find("_bias") != std::string::npos);
  }
}

}  // namespace
}  // namespace cuforge
