// emit/: templates with named holes, and the translation unit of each catalog configuration.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>

#include "cuforge/emit/gemm.hpp"
#include "cuforge/emit/pytorch.hpp"
#include "cuforge/emit/template.hpp"
#include "cuforge/library/catalog.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using test::contains;

using library::GemmConfig;

// The catalog entry with this exact name (the test fails if it is gone).
const GemmConfig& by_name(const std::string& name) {
  for (Arch arch : library::kArchs)
    for (const auto& c : library::gemm_catalog(arch))
      if (c.name() == name) return c;
  throw std::runtime_error("not in the catalog: " + name);
}

TEST(EmitTemplate, FillsEveryHole) {
  EXPECT_EQ(emit::render("a ${x} b ${y}${x}", {{"x", "1"}, {"y", "two"}}), "a 1 b two1");
  EXPECT_EQ(emit::render("no holes here", {}), "no holes here");
  EXPECT_EQ(emit::render("", {}), "");
  EXPECT_EQ(emit::render("${x}", {{"x", ""}}), "");
  // A value is inserted as is: a "${" inside it is not a hole.
  EXPECT_EQ(emit::render("<${x}>", {{"x", "${y}"}}), "<${y}>");
  EXPECT_EQ(emit::render("$x {x} $", {}), "$x {x} $");
}

TEST(EmitTemplate, MissingHoleOrUnusedValueThrows) {
  try {
    emit::render("a ${missing} b", {});
    FAIL() << "a hole with no value was filled";
  } catch (const std::logic_error& e) {
    EXPECT_TRUE(contains(e.what(), "missing")) << e.what();
  }
  try {
    emit::render("a ${x} b", {{"x", "1"}, {"unused", "2"}});
    FAIL() << "a value with no hole was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_TRUE(contains(e.what(), "unused")) << e.what();
  }
  EXPECT_THROW(emit::render("a ${x b", {{"x", "1"}}), std::logic_error);
}

TEST(EmitGemm, Sm90StreamKBf16) {
  const std::string name =
      "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rcr_128x128x64_c2x1x1_s0_coop_tmacoop_streamk_a8x8x8";
  std::string src = emit::gemm_source(by_name(name));
  for (const char* part : {
           "cutlass::bfloat16_t",
           "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
           "cutlass::epilogue::TmaWarpSpecializedCooperative",
           "cutlass::gemm::StreamKScheduler",
           "cutlass::arch::Sm90",
           "Shape<_128, _128, _64>",
           "Shape<_2, _1, _1>",
           "StageCountAutoCarveout",
           "using LayoutA = cutlass::layout::RowMajor;",
           "using LayoutB = cutlass::layout::ColumnMajor;",
           "constexpr int AlignmentA = 8;",
           "#include \"cuforge/abi.h\"",
           "int cuforge_gemm_run(",
           "int cuforge_gemm_can_implement(",
           "int cuforge_gemm_workspace_size(",
           "int cuforge_abi_version(",
           "int cuforge_last_cuda_error(",
       })
    EXPECT_TRUE(contains(src, part)) << "missing: " << part;
  EXPECT_TRUE(contains(src, "// cuforge kernel " + name));
  EXPECT_TRUE(contains(src, "return \"" + name + "\";")) << "cuforge_kernel_name must return the name";
  EXPECT_FALSE(contains(src, "${")) << "an unfilled hole";
  EXPECT_FALSE(contains(src, "Pingpong"));
}

TEST(EmitGemm, Sm90PingpongColumnMajorA) {
  const std::string name =
      "cuforge_sm90_gemm_tensorop_mma_f16_f16_f32_f16_f16_crr_64x128x64_c1x1x1_s0_pingpong_tma_default_a8x8x8";
  std::string src = emit::gemm_source(by_name(name));
  EXPECT_TRUE(contains(src, "cutlass::half_t"));
  EXPECT_TRUE(contains(src, "cutlass::gemm::KernelTmaWarpSpecializedPingpong"));
  EXPECT_TRUE(contains(src, "cutlass::epilogue::TmaWarpSpecialized,"));
  EXPECT_FALSE(contains(src, "StreamKScheduler"));
  EXPECT_TRUE(contains(src, "CollectiveEpilogue, void>")) << "data-parallel tiles use the default scheduler";
  // Column-major A: unit stride along M; row-major B (N x K in CUTLASS 3.x): unit stride along N.
  EXPECT_TRUE(contains(src, "args.mainloop.dA = cute::make_stride(cute::Int<1>{}, p.lda, p.batch_stride_a);"));
  EXPECT_TRUE(contains(src, "args.mainloop.dB = cute::make_stride(cute::Int<1>{}, p.ldb, p.batch_stride_b);"));
  EXPECT_TRUE(contains(src, "args.epilogue.dD = cute::make_stride(p.ldd, cute::Int<1>{}, p.batch_stride_d);"));
}

TEST(EmitGemm, Sm80) {
  const std::string name =
      "cuforge_sm80_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x128x32_w2x2x1_s4_multistage_default_default_a2x2x2";
  std::string src = emit::gemm_source(by_name(name));
  for (const char* part : {
           "cutlass::gemm::device::GemmUniversal<",
           "cutlass::arch::Sm80",
           "cutlass::gemm::GemmShape<128, 128, 32>",
           "cutlass::gemm::GemmShape<64, 64, 32>",  // warp tile
           "cutlass::gemm::GemmShape<16, 8, 16>",   // mma.sync instruction for 16-bit inputs
           "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>",
           "cutlass::arch::OpMultiplyAdd>",
           "cutlass::half_t",
           "cutlass::epilogue::thread::LinearCombinationGeneric<\n    cutlass::epilogue::thread::Identity, ElementC, 2,",
           "int cuforge_gemm_run(",
       })
    EXPECT_TRUE(contains(src, part)) << "missing: " << part;
  EXPECT_TRUE(contains(src, ", 4, 2, 2, cutlass::arch::OpMultiplyAdd>")) << "stages and alignments";
  EXPECT_FALSE(contains(src, "Sm90"));
  EXPECT_FALSE(contains(src, "${"));
}

TEST(EmitGemm, Sm80FastF32) {
  library::GemmFilter f;
  f.arch = 80;
  f.math = MathOperation::MultiplyAddFastF32;
  auto found = library::find_gemms(f);
  ASSERT_FALSE(found.empty());
  std::string src = emit::gemm_source(*found.front());
  EXPECT_TRUE(contains(src, "cutlass::arch::OpMultiplyAddFastF32"));
  EXPECT_TRUE(contains(src, "3xTF32"));
  EXPECT_TRUE(contains(src, "cutlass::gemm::GemmShape<16, 8, 8>")) << "tf32 mma.sync is 16x8x8";
}

TEST(EmitGemm, Sm90Tf32CopiesOperandsKMajorFirstAnd3xTf32AsPiecesAlongK) {
  // wgmma reads 32-bit operands only K-major: a row-major B is copied K-major into the workspace and
  // the kernel is built for the copy. CUTLASS 4.2 has no SM90 3xTF32 mainloop: both operands are
  // copied as big and small TF32 pieces along a tripled K, and the kernel is the plain TF32 one.
  const std::string tile = "_128x128x32_c1x1x1_s0_coop_tmacoop_default_a4x4x4";
  const auto copy = library::parse_gemm_name("cuforge_sm90_gemm_tensorop_mma_f32_f32_f32_f32_f32_rrr" + tile);
  const auto pieces = library::parse_gemm_name("cuforge_sm90_gemm_tensorop_3xtf32_f32_f32_f32_f32_f32_rcr" + tile);
  ASSERT_FALSE(library::why_invalid(pieces)) << *library::why_invalid(pieces);
  const std::vector<std::pair<library::GemmConfig, std::vector<std::string>>> cases = {
      {copy,
       {"kStageA = false, kStageB = true", "kAKMajor = true, kBKMajor = false", "kPieces = 1",
        "using LayoutB = cutlass::layout::ColumnMajor;"}},
      {pieces,
       {"kStageA = true, kStageB = true", "kAKMajor = true, kBKMajor = true", "kPieces = 3", "cvt.rna.tf32.f32",
        "3xTF32: each element", "if (kPieces > 1) q.k = staged_ld(p);"}}};
  for (const auto& [config, parts] : cases) {
    const std::string src = emit::gemm_source(config);
    for (const auto& part : parts) EXPECT_TRUE(contains(src, part)) << config.name() << ": " << part;
    EXPECT_FALSE(contains(src, "OpMultiplyAddFastF32")) << "SM90 builds the plain TF32 kernel";
  }
  EXPECT_FALSE(contains(emit::gemm_source(copy), "3xTF32: each element")) << "one piece: a plain copy";
  // Parallel split-K does not stage operands, so it offers no 3xTF32 (nor do swapped kernels).
  library::GemmConfig split = pieces;
  split.parallel_split_k = true;
  EXPECT_TRUE(library::why_invalid(split));
}

TEST(EmitGemm, Sm90Epilogues) {
  const std::string base =
      "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rcr_128x128x64_c1x1x1_s0_coop_tmacoop_streamk_a8x8x8";
  std::string leaky = emit::gemm_source(library::parse_gemm_name(base + "_leaky_relu"));
  EXPECT_TRUE(contains(leaky, "fusion::LinCombEltAct<\n    cutlass::epilogue::thread::LeakyReLU"));
  EXPECT_TRUE(contains(leaky, "args.epilogue.thread.activation.leaky_alpha = ElementCompute(p.activation_argument);"));
  EXPECT_TRUE(contains(leaky, "args.scheduler.decomposition_mode = static_cast<DecompositionMode>(p.decomposition);"));
  EXPECT_TRUE(contains(leaky, "  set_tile_order(args.scheduler, p, 0);\n  return args;")) << "the run's tile order";
  EXPECT_TRUE(contains(leaky, "D = leaky_relu(alpha * A @ B + beta * C)"));

  std::string bias = emit::gemm_source(library::parse_gemm_name(base + "_gelu_bias"));
  EXPECT_TRUE(contains(bias, "using ElementSource = void;")) << "a bias kernel loads no C tile";
  EXPECT_TRUE(contains(bias, "fusion::Sm90RowBroadcast<0, TileShape, ElementC, ElementCompute"));
  EXPECT_TRUE(contains(bias, "fusion::Sm90Compute<cutlass::epilogue::thread::GELU"));
  EXPECT_FALSE(contains(bias, "leaky_alpha"));
  EXPECT_FALSE(contains(bias, "${"));
}

TEST(EmitGemm, Sm80EpiloguesAndSwizzles) {
  const std::string base =
      "cuforge_sm80_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x128x32_w2x2x1_s4_multistage_default_identity1_a8x8x8";
  std::string src = emit::gemm_source(library::parse_gemm_name(base + "_leaky_relu_bias"));
  EXPECT_TRUE(contains(src, "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>"));
  EXPECT_TRUE(contains(src, "cutlass::epilogue::thread::LeakyReLU, ElementC, 8"));
  EXPECT_TRUE(contains(src, "epilogue.leaky_alpha = ElementCompute(p.activation_argument);"));
  EXPECT_FALSE(contains(src, "avail_sms")) << "only the stream-K swizzle balances across SMs";
  std::string streamk = emit::gemm_source(library::parse_gemm_name(
      "cuforge_sm80_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x128x32_w2x2x1_s4_multistage_default_streamk_a8x8x8"));
  EXPECT_TRUE(contains(streamk, "cutlass::gemm::threadblock::ThreadblockSwizzleStreamK"));
  EXPECT_TRUE(contains(streamk, "args.avail_sms = p.decomposition == CUFORGE_DECOMPOSITION_DATA_PARALLEL ? 1 : -1;"));
}

void expect_parts(const std::string& src, std::initializer_list<const char*> parts) {
  for (const char* part : parts) EXPECT_TRUE(contains(src, part)) << "missing: " << part;
  EXPECT_FALSE(contains(src, "${")) << "an unfilled hole";
}

TEST(EmitGemm, ParallelSplitKWritesPartialsThenReduces) {
  const std::string base =
      "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_128x64x64_c1x1x1_s0_pingpong_tma_default_a8x8x8";
  const std::string name = base + "_splitk_leaky_relu_bias";
  std::string src = emit::gemm_source(library::parse_gemm_name(name));
  // The GEMM writes unscaled f32 partial products: no C, no activation, no bias row.
  EXPECT_TRUE(contains(src, "using ElementD = float;"));
  EXPECT_TRUE(contains(src, "constexpr int AlignmentC = 4;"));
  EXPECT_TRUE(contains(src, "fusion::LinearCombination<"));
  EXPECT_FALSE(contains(src, "Sm90RowBroadcast"));
  // The reduction applies the kernel's own epilogue to bf16 C and D, four elements (one 16-byte
  // load of partials) per thread.
  expect_parts(src, {"using ElementOut = cutlass::bfloat16_t;", "constexpr int kVector = 4;",
                     "cutlass::epilogue::thread::LeakyReLU, ElementOut, kVector, ElementPartial, float>",
                     "epilogue.leaky_alpha = float(p.activation_argument);", "__global__ void",
                     "s.batch_stride_a = 1 * k;", "s.batch_stride_b = p.ldb * k;"});
  EXPECT_TRUE(contains(src, "const char* cuforge_kernel_name(void) { return \"" + name + "\"; }"));
  EXPECT_EQ(src.find("// cuforge kernel " + name), 0u);

  // SM80: column-major A and B step along K by their leading dimension and by one element.
  std::string sm80 = emit::gemm_source(library::parse_gemm_name(
      "cuforge_sm80_gemm_tensorop_mma_f16_f16_f32_f16_f16_ccr_128x128x32_w2x2x1_s4_multistage_default_default_a8x8x8"
      "_splitk"));
  expect_parts(sm80, {"LinearCombinationGeneric<\n    cutlass::epilogue::thread::Identity, ElementC, 4, ",
                      "s.batch_stride_a = p.lda * k;", "s.batch_stride_b = 1 * k;", "using ElementOut = cutlass::half_t;"});

  // SIMT epilogues store one element at a time: the partials and the reduction go element by element.
  std::string simt = emit::gemm_source(library::parse_gemm_name(
      "cuforge_sm80_gemm_simt_mma_f32_f32_f32_f32_f32_rcr_128x128x8_w4x2x1_s5_multistage_default_default_a1x1x1"
      "_splitk"));
  expect_parts(simt, {"LinearCombinationGeneric<\n    cutlass::epilogue::thread::Identity, ElementC, 1, ",
                      "constexpr int kVector = 1;"});
}

TEST(EmitGemm, SigmoidAndSiluUseTanhForSixteenBitOutputsOnly) {
  const std::string f16 =
      "cuforge_sm90_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x128x64_c1x1x1_s0_coop_tmacoop_default_a8x8x8";
  const std::string f32 =
      "cuforge_sm90_gemm_tensorop_mma_f16_f16_f32_f32_f32_rcr_128x128x64_c1x1x1_s0_coop_tmacoop_default_a8x8x4";
  const std::string define = "#define CUTLASS_USE_TANH_FOR_SIGMOID 1";
  EXPECT_TRUE(contains(emit::gemm_source(library::parse_gemm_name(f16 + "_silu")), define));
  EXPECT_TRUE(contains(emit::gemm_source(library::parse_gemm_name(f16 + "_sigmoid_bias")), define));
  EXPECT_FALSE(contains(emit::gemm_source(library::parse_gemm_name(f16 + "_gelu")), define));
  EXPECT_FALSE(contains(emit::gemm_source(library::parse_gemm_name(f32 + "_silu")), define)) << "f32 keeps 1/(1+exp(-x))";
}

// --- One kernel per data-type family added in issue 4. ---

TEST(EmitGemm, Sm90Int8IntoS32ComputesInInt32) {
  const std::string name =
      "cuforge_sm90_gemm_tensorop_mma_s8_s8_s32_s32_s32_rcr_128x128x128_c1x1x1_s0_coop_tmacoop_default_a16x16x4";
  std::string src = emit::gemm_source(by_name(name));
  expect_parts(src, {
                        "using ElementA = int8_t;",
                        "using ElementB = int8_t;",
                        "using ElementC = int32_t;",
                        "using ElementAccumulator = int32_t;",
                        "using ElementCompute = int32_t;",  // exact alpha * acc + beta * C, as CUTLASS's own
                        "constexpr int AlignmentA = 16;",
                        "constexpr int AlignmentC = 4;",
                        "Shape<_128, _128, _128>",
                        "#include \"cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp\"",
                        "fusion::LinearCombination<ElementD, ElementCompute, ElementC, ElementCompute>",
                    });
  // relu and a bias row are the integer epilogues there are; the others are refused by name.
  std::string bias = emit::gemm_source(library::parse_gemm_name(name + "_relu_bias"));
  expect_parts(bias, {"fusion::Sm90Compute<cutlass::epilogue::thread::ReLu, ElementD, ElementCompute",
                      "fusion::Sm90RowBroadcast<0, TileShape, ElementC, ElementCompute"});
  try {
    library::parse_gemm_name(name + "_gelu");
    FAIL() << "gelu on an int32 epilogue was named";
  } catch (const InvalidArgumentError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot be built")) << e.what();
    EXPECT_TRUE(contains(e.what(), "computed in s32")) << e.what();
  }
}

TEST(EmitGemm, Sm80MixedInputsConvertTheS8Operand) {
  for (const std::string& name :
       {std::string("cuforge_sm80_gemm_tensorop_mixed_s8_f16_f32_f16_f16_rcr_128x128x64_w2x2x1_s4_multistage_default_"
                    "default_a16x8x8"),
        std::string("cuforge_sm80_gemm_tensorop_mixed_bf16_s8_f32_f32_f32_rcr_128x128x64_w2x2x1_s4_multistage_default_"
                    "default_a8x16x4")}) {
    SCOPED_TRACE(name);
    std::string src = emit::gemm_source(by_name(name));
    expect_parts(src, {"cutlass::arch::OpMultiplyAddMixedInputUpcast>", "cutlass::gemm::GemmShape<16, 8, 16>",
                       "cutlass::gemm::GemmShape<128, 128, 64>", "converted in registers"});
  }
  expect_parts(emit::gemm_source(by_name("cuforge_sm80_gemm_tensorop_mixed_s8_f16_f32_f16_f16_rcr_128x128x64_w2x2x1_s4_"
                                         "multistage_default_default_a16x8x8")),
               {"using ElementA = int8_t;", "using ElementB = cutlass::half_t;", ", 4, 16, 8,"});
}

TEST(EmitGemm, Sm90Int8IntoS8ComputesInFloat) {
  const std::string name =
      "cuforge_sm90_gemm_tensorop_mma_s8_s8_s32_s8_s8_rcr_64x128x128_c1x1x1_s0_pingpong_tma_default_a16x16x16";
  std::string src = emit::gemm_source(by_name(name) );
  expect_parts(src, {"using ElementC = int8_t;", "using ElementD = int8_t;", "using ElementCompute = float;",
                     "constexpr int AlignmentC = 16;", "cutlass::gemm::KernelTmaWarpSpecializedPingpong"});
  std::string gelu = emit::gemm_source(library::parse_gemm_name(name + "_gelu"));
  expect_parts(gelu, {"fusion::LinCombEltAct<\n    cutlass::epilogue::thread::GELU, ElementD, ElementCompute"});
}

// f16 accumulation into an f32 D computes its epilogue in f32 (C read whole); into f16 it stays in f16. SIMT
// int8 runs the SM60 pipelined kernel, integer multiply-adds, and an f32 epilogue into s8.
TEST(EmitGemm, Sm80EpiloguesComputeInTheWiderOfAccumulatorAndD) {
  expect_parts(emit::gemm_source(by_name("cuforge_sm80_gemm_tensorop_mma_f16_f16_f16_f32_f32_rcr_128x128x32_w2x2x1_s4_"
                                         "multistage_default_default_a8x8x4")),
               {"using ElementAccumulator = cutlass::half_t;", "using ElementC = float;", "using ElementCompute = float;"});
  expect_parts(emit::gemm_source(by_name("cuforge_sm80_gemm_tensorop_mma_f16_f16_f16_f16_f16_rcr_128x128x32_w2x2x1_s4_"
                                         "multistage_default_default_a8x8x8")),
               {"using ElementAccumulator = cutlass::half_t;", "using ElementCompute = cutlass::half_t;"});
  expect_parts(emit::gemm_source(by_name("cuforge_sm80_gemm_simt_mma_s8_s8_s32_s8_s8_rrr_256x128x16_w4x2x1_s2_"
                                         "multistage_default_default_a1x1x1")),
               {"using ElementAccumulator = int32_t;", "using ElementC = int8_t;", "using ElementCompute = float;",
                "cutlass::arch::OpClassSimt, cutlass::arch::Sm60", "cutlass::gemm::GemmShape<1, 1, 1>"});
}

TEST(EmitGemm, Sm90Fp8TakesTheFp8Mainloop) {
  const std::string name =
      "cuforge_sm90_gemm_tensorop_mma_e4m3_e5m2_f32_f16_f16_rcr_64x128x128_c1x1x1_s0_pingpong_tma_default_a16x16x8";
  std::string src = emit::gemm_source(by_name(name));
  expect_parts(src, {
                        "using ElementA = cutlass::float_e4m3_t;",
                        "using ElementB = cutlass::float_e5m2_t;",
                        "using ElementC = cutlass::half_t;",
                        "using ElementAccumulator = float;",
                        "using ElementCompute = float;",
                        "#include \"cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized_fp8.hpp\"",
                        "Shape<_64, _128, _128>",
                        "constexpr int AlignmentB = 16;",
                        "constexpr int AlignmentC = 8;",
                    });
  EXPECT_FALSE(contains(src, "sm90_mma_tma_gmma_ss_warpspecialized.hpp")) << "the 16-bit mainloop is not needed";
  // fp8 outputs (C and D e4m3 or e5m2): the f32 epilogue's result converted, C read in 16-byte vectors.
  expect_parts(emit::gemm_source(by_name("cuforge_sm90_gemm_tensorop_mma_e4m3_e4m3_f32_e4m3_e4m3_rcr_128x128x128_"
                                         "c2x1x1_s0_coop_tmacoop_default_a16x16x16")),
               {"using ElementC = cutlass::float_e4m3_t;", "using ElementD = cutlass::float_e4m3_t;",
                "using ElementCompute = float;", "constexpr int AlignmentC = 16;"});
  // alpha times the per-tensor scales of A and B, read on the device; with a bias row too.
  for (const std::string& kernel : {name, name + "_relu_bias"}) {
    SCOPED_TRACE(kernel);
    expect_parts(emit::gemm_source(library::parse_gemm_name(kernel)),
                 {"fusion::Sm90ScalarBroadcast<ElementCompute, cute::Stride<cute::_0, cute::_0, cute::_0>, 3>",
                  "{nullptr, p.scale_a, p.scale_b}"});
  }
  EXPECT_FALSE(contains(emit::gemm_source(by_name("cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rcr_128x128x64_"
                                                  "c1x1x1_s0_coop_tmacoop_default_a8x8x8")),
                        "scale_a"))
      << "16-bit kernels take no scales";
}

TEST(EmitGemm, Sm90Fp8CooperativeTilesOverlapThePromotion) {
  const std::string coop = "cuforge_sm90_gemm_tensorop_mma_e4m3_e4m3_f32_bf16_bf16_rcr_128x128x128_c2x1x1_s0_coop_tmacoop_";
  const std::string wide = "cuforge_sm90_gemm_tensorop_mma_e4m3_e4m3_f32_bf16_bf16_rcr_128x192x128_c1x2x1_s0_coop_tmacoop_";
  const char* loop = "using CollectiveMainloop = typename cuforge_fp8::OverlappedPromotion<BuiltMainloop>::type;";
  for (const std::string& name : {coop + "streamk_a16x16x8", coop + "streamk_a16x16x8_relu_bias",
                                  coop + "default_a16x16x8_splitk", wide + "default_a16x16x8"}) {
    SCOPED_TRACE(name);
    const KernelSource k = emit::gemm_kernel(library::parse_gemm_name(name), 90);
    expect_parts(k.source, {"#include \"cuforge/sm90_fp8_promotion.hpp\"", loop,
                            "sm90_mma_tma_gmma_ss_warpspecialized_fp8.hpp"});
    ASSERT_GE(k.headers.size(), 3u);
    EXPECT_EQ(k.headers.back().first, "cuforge/sm90_fp8_promotion.hpp");
    EXPECT_TRUE(contains(k.headers.back().second, "CollectiveMma<cuforge_fp8::OverlappedPromotionPolicy<Policy, KTilesPerTurn>"));
  }
  // CUTLASS's own loop elsewhere: other tiles, ping-pong, fast accumulation, grouped, 16-bit.
  for (const std::string& name :
       {std::string("cuforge_sm90_gemm_tensorop_mma_e4m3_e4m3_f32_bf16_bf16_rcr_256x96x128_c1x1x1_s0_coop_tmacoop_default_"
                    "a16x16x8"),
        std::string("cuforge_sm90_gemm_tensorop_mma_e4m3_e4m3_f32_bf16_bf16_rcr_64x128x128_c1x1x1_s0_pingpong_tma_default_"
                    "a16x16x8"),
        std::string("cuforge_sm90_grouped_tensorop_mma_e4m3_e4m3_f32_f32_f32_rcr_128x192x128_c1x2x1_s0_coop_tmacoop_default_"
                    "a16x16x4"),
        std::string("cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rcr_128x192x64_c1x2x1_s0_coop_tmacoop_default_"
                    "a8x8x8"),
        std::string("cuforge_sm90_gemm_tensorop_fastaccum_e4m3_e4m3_f32_bf16_bf16_rcr_128x128x128_c1x1x1_s0_coop_tmacoop_"
                    "default_a16x16x8"),
        std::string("cuforge_sm90_grouped_tensorop_mma_e4m3_e4m3_f32_bf16_bf16_rcr_128x128x128_c1x1x1_s0_coop_tmacoop_"
                    "default_a16x16x8"),
        std::string("cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rcr_128x128x64_c1x1x1_s0_coop_tmacoop_default_"
                    "a8x8x8")}) {
    SCOPED_TRACE(name);
    const KernelSource k = emit::gemm_kernel(library::parse_gemm_name(name), 90);
    EXPECT_FALSE(contains(k.source, "cuforge_fp8")) << "CUTLASS's loop";
    EXPECT_EQ(k.headers.size(), 3u) << "abi.h, kept_run.hpp and launch.hpp only";
  }
}

TEST(EmitGemm, Sm90Fp8FastAccumulationTakesThePlainMainloop) {
  const std::string name =
      "cuforge_sm90_gemm_tensorop_fastaccum_e4m3_e4m3_f32_bf16_bf16_rcr_256x128x128_c1x1x1_s0_coop_tmacoop_default_"
      "a16x16x8";
  std::string src = emit::gemm_source(by_name(name));
  expect_parts(src, {"#include \"cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp\"",
                     "cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum", "{nullptr, p.scale_a, p.scale_b}"});
  EXPECT_FALSE(contains(src, "_fp8.hpp")) << "the promoting fp8 mainloop is not needed";
  const std::string grouped =
      "cuforge_sm90_grouped_tensorop_fastaccum_e4m3_e4m3_f32_bf16_bf16_rcr_128x256x128_c1x1x1_s0_coop_tmacoop_default_"
      "a16x16x8";
  expect_parts(emit::gemm_source(by_name(grouped)),
               {"cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperativeFP8FastAccum"});
}

TEST(EmitGemm, Sm80F64TensorOp) {
  const std::string name =
      "cuforge_sm80_gemm_tensorop_mma_f64_f64_f64_f64_f64_rcr_64x64x16_w2x2x1_s4_multistage_default_default_a1x1x1";
  std::string src = emit::gemm_source(by_name(name));
  expect_parts(src, {
                        "using ElementA = double;",
                        "using ElementAccumulator = double;",
                        "cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80",
                        "cutlass::gemm::GemmShape<64, 64, 16>",
                        "cutlass::gemm::GemmShape<32, 32, 16>",  // warp tile
                        "cutlass::gemm::GemmShape<8, 8, 4>",     // DMMA
                        ", 4, 1, 1, cutlass::arch::OpMultiplyAdd>",
                        "cutlass::epilogue::thread::Identity, ElementC, 1,",
                        "mma.sync f64",
                    });
}

TEST(EmitGemm, Sm80Int8Saturates) {
  const std::string name =
      "cuforge_sm80_gemm_tensorop_sat_s8_s8_s32_s32_s32_rcr_128x128x64_w2x2x1_s4_multistage_default_default_a16x16x4";
  std::string src = emit::gemm_source(by_name(name));
  expect_parts(src, {
                        "using ElementA = int8_t;",
                        "using ElementC = int32_t;",
                        "using ElementAccumulator = int32_t;",
                        "cutlass::gemm::GemmShape<16, 8, 32>",
                        ", 4, 16, 16, cutlass::arch::OpMultiplyAddSaturate>",
                        "using ElementCompute = int32_t;",
                        "cutlass::epilogue::thread::Identity, ElementC, 4, ElementAccumulator, ElementCompute>",
                        "mma.sync saturating integer",
                    });
  // s8 outputs are computed in f32 and converted with saturation (CUTLASS's LinearCombinationClamp's way),
  // as the SM90 kernels compute them.
  std::string s8 = emit::gemm_source(by_name(
      "cuforge_sm80_gemm_tensorop_sat_s8_s8_s32_s8_s8_rcr_128x128x64_w2x2x1_s4_multistage_default_default_a16x16x8"));
  expect_parts(s8, {"using ElementC = int8_t;", "using ElementCompute = float;",
                    "cutlass::epilogue::thread::Identity, ElementC, 8, ElementAccumulator, ElementCompute>",
                    "epilogue(ElementCompute(p.alpha), ElementCompute(p.beta))"});
}

TEST(EmitGemm, Sm80SimtF32AndF64) {
  const std::string f32 =
      "cuforge_sm80_gemm_simt_mma_f32_f32_f32_f32_f32_rcr_128x128x8_w4x2x1_s5_multistage_default_default_a1x1x1";
  std::string src = emit::gemm_source(by_name(f32));
  expect_parts(src, {
                        "cutlass::arch::OpClassSimt, cutlass::arch::Sm80",
                        "cutlass::gemm::GemmShape<128, 128, 8>",
                        "cutlass::gemm::GemmShape<32, 64, 8>",  // warp tile
                        "cutlass::gemm::GemmShape<1, 1, 1>",    // one FMA
                        ", 5, 1, 1, cutlass::arch::OpMultiplyAdd>",
                        "SIMT f32 fused multiply-adds",
                    });
  EXPECT_FALSE(contains(src, "TF32")) << "SIMT f32 is full f32";
  EXPECT_FALSE(contains(src, "OpClassTensorOp"));
  const std::string f64 =
      "cuforge_sm80_gemm_simt_mma_f64_f64_f64_f64_f64_ccr_128x128x8_w4x2x1_s3_multistage_default_streamk_a1x1x1";
  std::string leaky = emit::gemm_source(library::parse_gemm_name(f64 + "_leaky_relu_bias"));
  expect_parts(leaky, {"using ElementA = double;", "cutlass::arch::OpClassSimt", "cutlass::layout::ColumnMajor",
                       "cutlass::gemm::threadblock::ThreadblockSwizzleStreamK",
                       "using ElementCompute = double;",
                       "epilogue.leaky_alpha = ElementCompute(p.activation_argument);"});
}

TEST(EmitGemm, EveryCatalogEntryEmitsDistinctDeterministicSources) {
  auto start = std::chrono::steady_clock::now();
  std::set<size_t> hashes;
  size_t n = 0;
  for (Arch arch : library::kArchs)
    for (const auto& c : library::gemm_catalog(arch)) {
      std::string src = emit::gemm_source(c);
      ASSERT_FALSE(contains(src, "${")) << c.name();
      ASSERT_TRUE(contains(src, c.name())) << c.name();
      const char* entry = c.kind == KernelKind::Grouped ? "cuforge_grouped_run"
                          : is_conv(c.kind)             ? "cuforge_conv2d_run"
                                                        : "cuforge_gemm_run";
      ASSERT_TRUE(contains(src, entry)) << c.name();
      hashes.insert(std::hash<std::string>()(src));
      ++n;
    }
  EXPECT_EQ(hashes.size(), n) << "two configurations emitted the same source";
  const auto& first = library::gemm_catalog(90).front();
  EXPECT_EQ(emit::gemm_source(first), emit::gemm_source(first)) << "emission must be deterministic (cache keys)";
  EXPECT_LT(test::ms_since(start), 2000.0) << "emitting the whole catalog should take well under a second";
}

// A configuration is checked where it enters (the catalog, the selection, a name); emission trusts it.
TEST(EmitGemm, AnInvalidNameIsRefusedWhereItEnters) {
  GemmConfig c = library::gemm_catalog(90).front();
  c.tile.cluster_shape = {1, 1, 2};
  try {
    library::parse_gemm_name(c.name());
    FAIL() << "parsed the name of an invalid configuration";
  } catch (const InvalidArgumentError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot be built")) << e.what();
    EXPECT_TRUE(contains(e.what(), c.name())) << e.what();
    EXPECT_TRUE(contains(e.what(), "cluster")) << e.what();
  }
}

TEST(EmitGemm, AnInvalidConfigurationIsRefusedNotEmitted) {
  // A C++ caller's configuration: a zero tile divided by (SIGFPE), an element type cuforge has no name for (SIGSEGV).
  GemmConfig zero = library::gemm_catalog(80).front();
  zero.tile.threadblock_shape = {0, 0, 0};
  GemmConfig unknown = library::gemm_catalog(90).front();
  unknown.element_a = DataType(99);
  for (const GemmConfig& c : {zero, unknown}) {
    SCOPED_TRACE(c.name());
    try {
      emit::gemm_source(c);
      ADD_FAILURE() << "emitted an invalid configuration";
    } catch (const InvalidArgumentError& e) {
      EXPECT_TRUE(contains(e.what(), "cannot be emitted")) << e.what();
    }
  }
}

TEST(EmitGemm, AnExportsLaunchIsCheckedBeforeItIsEmbedded) {
  // A C++ caller's launch: a NaN slope was written into the binding (failing only when it compiled), -7 slices too.
  emit::TorchExport e{"m", library::gemm_catalog(90).front(), false, GemmLaunch{}};
  EXPECT_NO_THROW(emit::pytorch_binding(e));
  emit::TorchExport nan_slope = e;
  nan_slope.launch.activation_argument = std::nan("");
  EXPECT_THROW(emit::pytorch_binding(nan_slope), InvalidArgumentError);
  emit::TorchExport slices = e;
  slices.launch.splits = -7;
  EXPECT_THROW(emit::pytorch_binding(slices), InvalidArgumentError);
}

TEST(EmitGemm, TheKernelSourceCarriesItsAbiHeaderAndTarget) {
  const GemmConfig& sm90 = library::gemm_catalog(90).front();
  KernelSource k = emit::gemm_kernel(sm90, 90);
  EXPECT_EQ(k.name, sm90.name());
  EXPECT_EQ(k.family, 90);
  EXPECT_EQ(k.target_cc, 90);
  ASSERT_EQ(k.headers.size(), 3u);
  EXPECT_EQ(k.headers[0].first, "cuforge/abi.h");
  EXPECT_EQ(k.headers[0].second, std::string(emit::abi_header()));
  EXPECT_EQ(k.headers[1].first, "cuforge/kept_run.hpp");
  EXPECT_TRUE(contains(k.headers[1].second, "class KeptRun"));
  EXPECT_EQ(k.headers[2].first, "cuforge/launch.hpp");
  EXPECT_TRUE(contains(k.headers[2].second, "inline cudaError_t launch_kernel("));
  const GemmConfig& sm80 = library::gemm_catalog(80).front();
  const auto sm80_headers = emit::gemm_kernel(sm80, 80).headers;
  ASSERT_EQ(sm80_headers.size(), 3u) << "SM80's CUTLASS adapter launches, and launch.hpp keeps a failure's error";
  EXPECT_EQ(sm80_headers[2].first, "cuforge/launch.hpp");
  EXPECT_EQ(emit::gemm_kernel(sm80, 89).target_cc, 89) << "SM80 kernels are built into the target's own SASS";
  EXPECT_EQ(emit::gemm_kernel(sm90, 100).target_cc, 90) << "SM90 kernels target sm_90a whatever is asked";
}

TEST(EmitGemm, NoExceptionLeavesTheCAbi) {
  for (const GemmConfig* c : {&library::gemm_catalog(90).front(), &library::gemm_catalog(80).front()})
    for (bool split_k : {false, true}) {
      GemmConfig config = *c;
      config.parallel_split_k = split_k;
      std::string src = emit::gemm_source(config);
      for (const char* entry : {"int cuforge_gemm_can_implement(const cuforge_gemm_arguments* p) try {",
                                "int cuforge_gemm_workspace_size(const cuforge_gemm_arguments* p, size_t* bytes) try {",
                                "int cuforge_gemm_run(const cuforge_gemm_arguments* p, void* workspace, size_t "
                                "workspace_bytes, void* stream) try {"})
        EXPECT_TRUE(contains(src, entry)) << config.name() << ": " << entry;
      size_t catches = 0;
      for (size_t at = src.find("} catch (...) {"); at != std::string::npos; at = src.find("} catch (...) {", at + 1))
        ++catches;
      EXPECT_EQ(catches, 3u) << config.name();
    }
}

TEST(EmitGemm, AbiHeaderIsTheInstalledOne) {
  std::string header(emit::abi_header());
  EXPECT_EQ(header, test::read_file(std::filesystem::path(CUFORGE_TEST_SOURCE_DIR) / "include/cuforge/abi.h"));
  EXPECT_TRUE(contains(header, "CUFORGE_ABI_VERSION"));
}

}  // namespace
}  // namespace cuforge
