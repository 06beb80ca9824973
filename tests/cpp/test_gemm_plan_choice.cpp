// The GEMM plan's choice of kernel (op::Gemm without running anything: selection compiles and
// launches nothing, so no GPU is needed): the family and alignment a problem gets, refusals with
// their reasons, tile descriptions, decompositions and defaults. fp8 and TF32: test_precision_choice.cpp;
// the order of kernels estimated alike: test_tie_order.cpp; plans refused or unusable: test_gemm_plan_refusals.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cuforge/library/catalog.hpp"
#include "cuforge/op/gemm.hpp"
#include "cuforge/op/gemm_check.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/select/gemm_choice.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "gemm_plan_support.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using library::GemmConfig;
using namespace test;

TEST(GemmPlan, WithoutAGpuThePlanTargetsSm90) {
  if (runtime::device_count() != 0) GTEST_SKIP() << "this machine has a GPU";
  GemmOptions o = plan_of(DataType::f16, R, R, R);
  o.cc = 0;
  Gemm g(o);
  EXPECT_EQ(g.cc(), 90);
  EXPECT_EQ(g.kernel_cc(), 90);
}

TEST(GemmPlan, OddLeadingDimensionFallsBackToAnSm80KernelOfLowerAlignment) {
  Gemm g(plan_of(DataType::bf16, R, R, R));
  EXPECT_EQ(g.kernel_cc(), 90);
  const GemmConfig& c = pick(g, 197, 262, 136);  // ldb = ldd = 262: 4-byte aligned rows
  EXPECT_TRUE(in_catalog(c));
  EXPECT_EQ(c.arch, 80) << c.name();
  EXPECT_EQ(c.alignment_b, 2) << c.name();
  EXPECT_EQ(c.alignment_c, 2) << c.name();
  EXPECT_LE(c.alignment_a, 8) << c.name();
  EXPECT_EQ(c.element_a, DataType::bf16);
  EXPECT_EQ(c.layout_a, R);
  EXPECT_EQ(c.layout_b, R);
}

// A kernel that runs the problem with wider operand alignment outranks its narrower twins (the same tile in
// the same slices loading narrower vectors): they leave the ranking, whose first few autotuning and
// profile() time. SM80 rows come in alignments down to 1; f32 plans weigh them beside SM90's copies.
TEST(GemmPlan, NoCandidateHasAWiderTwinInTheRanking) {
  GemmOptions f32 = plan_of(DataType::f32, R, R, R);
  f32.element_accumulator = DataType::f32;
  for (const GemmOptions& o : {f32, plan_of(DataType::bf16, R, R, R)}) {
    Gemm g(o);
    for (auto [m, n, k] : {std::tuple{1024, 1024, 1024}, {16, 4096, 4096}, {197, 262, 136}, {128, 14336, 4096}}) {
      const auto ranked = g.rank(g.shape(m, n, k)).ranked;
      ASSERT_FALSE(ranked.empty());
      std::set<std::pair<std::string, int>> seen;  // name less its alignments, slices
      for (const auto& c : ranked) {
        GemmConfig unaligned = c.config;
        unaligned.alignment_a = unaligned.alignment_b = unaligned.alignment_c = 1;
        EXPECT_TRUE(seen.emplace(unaligned.name(), c.splits).second)
            << m << "x" << n << "x" << k << ": " << c.config.name() << " x" << c.splits << " beside a twin";
      }
    }
  }
  // Where only a narrow twin can run the problem, it stays (ldb = 262 bf16: 4-byte rows).
  Gemm bf16(plan_of(DataType::bf16, R, R, R));
  EXPECT_EQ(pick(bf16, 197, 262, 136).alignment_b, 2);
  // The two-stage kernels loading one element at a time rank only where no other kernel can copy or store an
  // operand's rows (SM80 plans too, whose parallel split-K could cut 4104 into 8 slices of such kernels' odd 513):
  // not beside their cp.async twins of one f32 element in C/D (an odd N of an f16 x f16 -> f32 plan).
  Gemm sm80(plan_of(DataType::f16, R, R, R, 80));
  GemmOptions to_f32 = plan_of(DataType::f16, R, C, R);
  to_f32.element_c = to_f32.element_d = DataType::f32;
  Gemm f16_f32(to_f32);
  for (const Gemm* g : {&bf16, &sm80, &f16_f32})
    for (auto [m, n, k] : {std::tuple{1024, 1024, 1024}, {197, 262, 136}, {4096, 50258, 768}, {128, 128, 4104},
                           {4096, 4095, 4096}, {4096, 50257, 768}}) {
      if (g != &f16_f32 && n % 2) continue;  // a 16-bit D of odd N is one element: theirs (OddLeadingDimensions...)
      const auto ranked = g->rank(g->shape(m, n, k)).ranked;
      EXPECT_FALSE(ranked.empty()) << m << "x" << n << "x" << k;
      for (const auto& c : ranked) EXPECT_FALSE(library::pipelined(c.config)) << c.config.name();
    }
}

// An odd leading dimension of a 16-bit operand (K = 4095 for a row-major A, N = 50257 for a row-major B and
// D) runs on SM80's tensor-op kernels of two stages loading that operand one element at a time.
TEST(GemmPlan, OddLeadingDimensionsOf16BitOperandsRunOnTwoStageKernels) {
  for (DataType t : {DataType::f16, DataType::bf16}) {
    Gemm g(plan_of(t, R, R, R));
    for (auto [m, n, k] : {std::tuple{4096, 4096, 4095}, {4096, 50257, 768}, {129, 257, 135}}) {
      const GemmConfig c = pick(g, m, n, k);
      EXPECT_TRUE(in_catalog(c)) << c.name();
      EXPECT_TRUE(library::pipelined(c) && c.opclass == OpcodeClass::TensorOp && c.tile.stages == 2) << c.name();
      EXPECT_EQ(std::min(c.alignment_a, c.alignment_b), 1) << c.name();
    }
    // So does a C/D of one element beside A and B of whole vectors (D one element into its allocation:
    // refused as no kernel's, tests/gpu/test_bad_inputs_gpu.py on an H100, 2026-12-06).
    const GemmConfig d1 = g.select(g.shape(72, 40, 56, 1, false, {0, 0, 1})).config;
    EXPECT_TRUE(library::pipelined(d1) && d1.alignment_c == 1) << d1.name();
  }
}

TEST(GemmPlan, AlignedProblemsGetAnSm90Kernel) {
  for (auto [m, n, k] : {std::tuple{4096, 4096, 4096}, {264, 200, 136}, {16, 4096, 4096}, {8192, 1024, 8192}}) {
    for (auto [la, lb] : {std::pair{R, C}, {R, R}, {C, R}, {C, C}}) {
      Gemm g(plan_of(DataType::f16, la, lb, R));
      const GemmConfig& c = pick(g, m, n, k);
      EXPECT_TRUE(in_catalog(c));
      EXPECT_EQ(c.arch, 90) << c.name();
      EXPECT_EQ(c.alignment_a, 8);
      EXPECT_EQ(c.layout_a, la);
      EXPECT_EQ(c.layout_b, lb);
      EXPECT_EQ(c.element_d, DataType::f16);
    }
  }
}

// 16-bit problems whose 128-wide tiles leave the last wave nearly empty (1536³: 144 tiles of 128x128 on
// 132 SMs) and whose 256-wide ones fill too few SMs (72) take the 128x192 cooperative tile (96 tiles,
// one wave): on the H200 it ran 1536³ in 14.5 us where the plan's previous pick (128x128 with stream-K)
// took 21.7 and cuBLAS 13.3; at 3072³ 76.6 against 89.2 and 75.1 (bench/NOTES.md, "192-wide tiles").
TEST(GemmPlan, WaveQuantizedProblemsTakeThe192WideTile) {
  for (DataType t : {DataType::bf16, DataType::f16}) {
    GemmOptions o = plan_of(t, R, R, R);
    o.element_accumulator = DataType::f32;
    Gemm g(o);
    for (int64_t n : {1536, 3072}) {
      SCOPED_TRACE(std::string(to_string(t)) + " " + std::to_string(n) + " cubed");
      const auto choice = g.select(g.shape(n, n, n, 1, false));
      const GemmConfig& c = choice.config;
      EXPECT_TRUE(in_catalog(c)) << c.name();
      EXPECT_EQ(c.tile.threadblock_shape, (std::array<int, 3>{128, 192, 64})) << c.name();
      EXPECT_EQ(c.tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedCooperative) << c.name();
      EXPECT_EQ(c.tile.tile_scheduler, TileScheduler::Default) << c.name();
      EXPECT_EQ(choice.splits, 1) << c.name();
    }
    // Powers of two keep the 256-wide tile.
    EXPECT_EQ(g.select(g.shape(4096, 4096, 4096, 1, false)).config.tile.threadblock_shape,
              (std::array<int, 3>{256, 128, 64}));
  }
}

TEST(GemmPlan, ColumnMajorDSelectsTheTransposedKernel) {
  Gemm g(plan_of(DataType::bf16, R, C, C));
  const GemmConfig& c = pick(g, 4096, 1024, 512);
  EXPECT_TRUE(in_catalog(c));
  // D^T = B^T A^T: A' = B^T (row-major), B' = A^T (column-major), D' row-major.
  EXPECT_EQ(c.layout_a, R) << c.name();
  EXPECT_EQ(c.layout_b, C) << c.name();
  EXPECT_EQ(c.layout_c, R) << c.name();
}

TEST(GemmPlan, Sm80FamilyOnRequest) {
  Gemm g(plan_of(DataType::f16, R, C, R, 80));
  EXPECT_EQ(g.kernel_cc(), 80);
  for (auto [m, n, k] : {std::tuple{4096, 4096, 4096}, {1, 256, 512}, {197, 262, 136}}) {
    const GemmConfig& c = pick(g, m, n, k);
    EXPECT_EQ(c.arch, 80) << c.name();
    EXPECT_TRUE(in_catalog(c));
  }
  EXPECT_EQ(pick(g, 197, 262, 136).alignment_b, 2);
  EXPECT_EQ(pick(g, 4096, 4096, 4096).alignment_b, 8);
}

TEST(GemmPlan, TileDescriptions) {
  Gemm g(plan_of(DataType::bf16, R, C, R));
  auto tiles = g.tile_descriptions();
  ASSERT_FALSE(tiles.empty());
  for (size_t i = 0; i < tiles.size(); ++i)
    for (size_t j = i + 1; j < tiles.size(); ++j) ASSERT_FALSE(tiles[i] == tiles[j]) << "listed twice";
  EXPECT_EQ(g.settings().tile, std::nullopt);

  // Pinning a listed description: every selection uses it. SM90's listed automatic schedules are
  // CUTLASS's builder's: ping-pong for a tile of 64 rows, cooperative otherwise.
  const TileDescription pinned = tiles.back();
  ASSERT_EQ(pinned.kernel_schedule, KernelSchedule::Auto) << pinned.describe();
  TileDescription resolved = pinned;
  resolved.kernel_schedule = pinned.threadblock_shape[0] == 64 ? KernelSchedule::TmaWarpSpecializedPingpong
                                                               : KernelSchedule::TmaWarpSpecializedCooperative;
  resolved.epilogue_schedule = resolved.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong
                                   ? EpilogueSchedule::TmaWarpSpecialized
                                   : EpilogueSchedule::TmaWarpSpecializedCooperative;
  EXPECT_TRUE(std::find(tiles.begin(), tiles.end(), resolved) == tiles.end()) << "listed as automatic and not";
  change(g, [&](auto& s) { s.tile = pinned; });
  ASSERT_TRUE(g.settings().tile.has_value());
  EXPECT_TRUE(*g.settings().tile == pinned);
  for (auto [m, n, k] : {std::tuple{4096, 4096, 4096}, {16, 4096, 4096}})
    EXPECT_TRUE(pick(g, m, n, k).tile == resolved) << pick(g, m, n, k).name();
  change(g, [](auto& s) { s.tile.reset(); });
  EXPECT_EQ(g.settings().tile, std::nullopt);

  // The first listed description with a tile of 64 rows (the CUTLASS Python interface's tests change the
  // first one's shape so): ping-pong, which cooperative kernels cannot run.
  TileDescription rows64 = tiles.front();
  ASSERT_EQ(rows64.kernel_schedule, KernelSchedule::Auto) << rows64.describe();
  rows64.threadblock_shape = {64, 128, 64};
  change(g, [&](auto& s) { s.tile = rows64; });
  EXPECT_EQ(pick(g, 4096, 4096, 4096).tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedPingpong);
  change(g, [](auto& s) { s.tile.reset(); });

  // Descriptions no kernel can have: refused, saying why, and the plan is unchanged.
  const auto pingpong = [&](std::array<int, 3> shape, TileScheduler scheduler) {
    TileDescription d = tiles.front();
    d.threadblock_shape = shape;
    d.kernel_schedule = KernelSchedule::TmaWarpSpecializedPingpong;
    d.epilogue_schedule = EpilogueSchedule::TmaWarpSpecialized;
    d.tile_scheduler = scheduler;
    return d;
  };
  const TileDescription bad = pingpong({64, 128, 64}, TileScheduler::StreamK);
  try {
    change(g, [&](auto& s) { s.tile = bad; });
    FAIL() << "pingpong with stream-K was pinned";
  } catch (const InvalidArgumentError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("stream-K"), std::string::npos) << m;
    EXPECT_NE(m.find("tile_descriptions()"), std::string::npos) << m;
  }
  EXPECT_EQ(g.settings().tile, std::nullopt);

  const TileDescription huge = pingpong({256, 256, 64}, TileScheduler::Default);
  EXPECT_THROW(change(g, [&](auto& s) { s.tile = huge; }), InvalidArgumentError);
}

TEST(GemmPlan, APinnedSm90TileCannotRunUnalignedProblems) {
  Gemm g(plan_of(DataType::bf16, R, R, R));
  change(g, [&](auto& s) { s.tile = g.tile_descriptions().front(); });
  EXPECT_THROW(pick(g, 197, 262, 136), InvalidArgumentError);
  EXPECT_NO_THROW(pick(g, 256, 256, 256));
}

TEST(GemmPlan, KernelSourceTargetsThePlan) {
  Gemm g(plan_of(DataType::f16, R, C, R));
  const GemmConfig& c = pick(g, 4096, 4096, 4096);
  auto src = g.kernel_source(c);
  EXPECT_EQ(src.name, c.name());
  EXPECT_EQ(src.family, 90);
  EXPECT_EQ(src.target_cc, 90);
  EXPECT_NE(src.source.find(c.name()), std::string::npos);

  GemmOptions ada = plan_of(DataType::f16, R, C, R);
  ada.cc = 89;
  Gemm g80(ada);
  auto src80 = g80.kernel_source(pick(g80, 4096, 4096, 4096));
  EXPECT_EQ(src80.family, 80);
  EXPECT_EQ(src80.target_cc, 89) << "SM80 kernels are built into the target's own SASS";
}

TEST(GemmPlan, TheEpilogueIsPartOfTheKernel) {
  Gemm g(plan_of(DataType::bf16, R, R, R));
  EXPECT_EQ(g.activations().size(), 8u);
  change(g, [](auto& s) { s.set_activation(Activation::leaky_relu, 0.5); });
  EXPECT_EQ(g.settings().activation_argument, 0.5);
  change(g, [](auto& s) { s.set_activation(Activation::leaky_relu); });
  EXPECT_EQ(g.settings().activation_argument, 0.2) << "the CUTLASS Python interface's default slope, decided in C++";
  EXPECT_THROW(change(g, [](auto& s) { s.set_activation(Activation::relu, 0.5); }), InvalidArgumentError);
  EXPECT_THROW(change(g, [](auto& s) { s.set_activation(Activation::leaky_relu, 1e39); }), InvalidArgumentError)
      << "past f32: inf in the epilogue";
  change(g, [](auto& s) { s.set_activation(Activation::leaky_relu, 0.2); });
  auto c = pick(g, 4096, 4096, 4096);
  EXPECT_EQ(c.activation, Activation::leaky_relu);
  EXPECT_FALSE(c.bias);
  EXPECT_TRUE(c.name().find("_leaky_relu") != std::string::npos) << c.name();
  EXPECT_EQ(library::parse_gemm_name(c.name()), c);
  auto biased = pick(g, 4096, 4096, 4096, 1, /*bias=*/true);
  EXPECT_TRUE(biased.bias);
  EXPECT_EQ(biased.name().substr(biased.name().size() - 16), "_leaky_relu_bias");
}

TEST(GemmPlan, SwizzlesAreSm80TileSchedulers) {
  Gemm sm90(plan_of(DataType::f16, R, C, R));
  EXPECT_EQ(sm90.tile_schedulers(), (std::vector<TileScheduler>{TileScheduler::Default, TileScheduler::StreamK}));
  try {
    change(sm90, [](auto& s) { s.tile_scheduler = TileScheduler::Identity1; });
    ADD_FAILURE() << "an SM90 plan took a CUTLASS 2.x swizzle";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("SM80"), std::string::npos) << e.what();
  }
  Gemm sm80(plan_of(DataType::f16, R, C, R, 80));
  // CUTLASS's horizontal swizzle cannot drive GemmUniversal kernels (nvcc fails): not offered.
  EXPECT_EQ(sm80.tile_schedulers(), (std::vector<TileScheduler>{TileScheduler::Default, TileScheduler::StreamK,
                                                                TileScheduler::Identity1, TileScheduler::Identity2,
                                                                TileScheduler::Identity4}));
  auto horizontal =
      test::message_of<InvalidArgumentError>([&] { change(sm80, [](auto& s) { s.tile_scheduler = TileScheduler::Horizontal; }); });
  EXPECT_NE(horizontal.find("get_tile_offset"), std::string::npos) << horizontal;
  change(sm80, [](auto& s) { s.tile_scheduler = TileScheduler::Identity2; });
  EXPECT_EQ(pick(sm80, 4096, 4096, 4096).tile.tile_scheduler, TileScheduler::Identity2);
  change(sm80, [](auto& s) { s.tile_scheduler.reset(); });
  EXPECT_EQ(pick(sm80, 4096, 4096, 4096).tile.tile_scheduler, TileScheduler::Default);
}

TEST(GemmPlan, DecompositionsPickKernelsThatCanRunThem) {
  for (int family : {90, 80}) {
    SCOPED_TRACE(family);
    Gemm g(plan_of(DataType::bf16, R, C, R, family));
    EXPECT_THROW(change(g, [](auto& s) { s.set_decomposition(Decomposition::SplitK); }), InvalidArgumentError);
    EXPECT_THROW(change(g, [](auto& s) { s.decomposition = Decomposition::StreamK, s.splits = 4; }),
                 InvalidArgumentError);
    change(g, [](auto& s) { s.set_decomposition(Decomposition::StreamK); });
    EXPECT_EQ(pick(g, 256, 512, 32768).tile.tile_scheduler, TileScheduler::StreamK);
    change(g, [](auto& s) { s.set_decomposition(Decomposition::DataParallel); });
    EXPECT_NE(pick(g, 256, 512, 32768).tile.tile_scheduler, TileScheduler::StreamK);
    change(g, [](auto& s) { s.set_split_k_slices(8); });
    EXPECT_EQ(g.settings().splits, 8);
    EXPECT_EQ(g.settings().decomposition, Decomposition::SplitK);
    auto split = pick(g, 256, 512, 32768);
    if (family == 90) {
      EXPECT_EQ(split.tile.tile_scheduler, TileScheduler::StreamK) << "SM90 splits K on stream-K";
    }
  }
}

TEST(GemmPlan, SplitBatchesRunOnlyOnKernelsThatSplitThem) {
  // SM80's split-K kernels run one matrix: a batched problem split by the settings ranks SM90's stream-K
  // kernels (TF32 of a row-major B weighs SM80 kernels beside its copying ones), and an SM80 plan says why
  // it has none.
  Gemm tf32(plan_of(DataType::f32, R, R, R, 90));
  change(tf32, [](auto& s) { s.set_split_k_slices(4); });
  const auto ranked = tf32.candidates(tf32.shape(16, 4096, 4096, 3, false, {}));
  ASSERT_FALSE(ranked.empty());
  for (const auto& c : ranked) {
    EXPECT_EQ(c.config.arch, 90) << c.config.name();
    EXPECT_EQ(c.config.tile.tile_scheduler, TileScheduler::StreamK) << c.config.name();
  }
  EXPECT_GT(tf32.candidates(tf32.shape(16, 4096, 4096, 1, false, {})).size(), ranked.size()) << "one matrix: SM80 too";
  Gemm sm80(plan_of(DataType::bf16, R, C, R, 80));
  change(sm80, [](auto& s) { s.set_split_k_slices(4); });
  try {
    sm80.candidates(sm80.shape(16, 4096, 4096, 3, false, {}));
    ADD_FAILURE() << "an SM80 plan ranked split kernels for a batch";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("one matrix, not a batch (3 here)"), std::string::npos) << e.what();
  }
}

TEST(GemmPlan, KHeavyProblemsWithFewTilesSplitK) {
  Gemm g(plan_of(DataType::bf16, R, R, R));
  for (auto [m, n, k] : {std::tuple{128, 128, 65536}, {256, 512, 32768}}) {
    auto c = pick(g, m, n, k);
    EXPECT_TRUE(c.parallel_split_k) << m << "x" << n << "x" << k << ": " << c.name();
  }
  // The fastest parallel split-K measured there on the H200 (bench/k_heavy.py --sweep-parallel):
  // 128x64 ping-pong tiles (in 8 slices), ahead of 64x64 and of cooperative kernels; at
  // 1024x1024x16384 the 64 tiles of 128x128 stream K instead.
  auto mid = pick(g, 256, 512, 32768);
  EXPECT_EQ(mid.tile.threadblock_shape[0], 128) << mid.name();
  EXPECT_EQ(mid.tile.threadblock_shape[1], 64) << mid.name();
  EXPECT_EQ(mid.tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedPingpong) << mid.name();
  auto large = pick(g, 1024, 1024, 16384);
  EXPECT_FALSE(large.parallel_split_k) << large.name();
  EXPECT_EQ(large.tile.tile_scheduler, TileScheduler::StreamK) << large.name();
  // K = 8 x 8191 has no two equal slices of whole 8-element vectors: stream-K divides it instead.
  auto odd = pick(g, 128, 128, 8 * 8191);
  EXPECT_FALSE(odd.parallel_split_k) << odd.name();
  EXPECT_EQ(odd.tile.tile_scheduler, TileScheduler::StreamK) << odd.name();
  auto square = pick(g, 8192, 8192, 8192);
  EXPECT_FALSE(square.parallel_split_k) << square.name();
  EXPECT_EQ(square.tile.tile_scheduler, TileScheduler::Default) << square.name();
}

TEST(GemmPlan, ArrivalOrderReductionKeepsTheKOrderChoiceWhereFewPeersShareATile) {
  // Measured on the H200 (bench/k_heavy.py, bench/sweep.py): with deterministic = false the stream-K
  // kernels the selection used to take here ran 26.6, 61.6 and 33.6 µs (the last in K order) against
  // 24.9, 54.3 and 20.1 for the K-order choices.
  Gemm k_order(plan_of(DataType::bf16, R, R, R));
  Gemm arrival(plan_of(DataType::bf16, R, R, R));
  change(arrival, [](auto& s) { s.deterministic = false; });
  for (auto [m, n, k] : {std::tuple{256, 512, 32768}, {1024, 1024, 16384}, {16, 4096, 4096}})
    EXPECT_EQ(pick(arrival, m, n, k).name(), pick(k_order, m, n, k).name()) << m << "x" << n << "x" << k;
}

TEST(GemmPlan, ParallelSplitKIsForcedOnlyWhereKSlicesEvenly) {
  Gemm g(plan_of(DataType::bf16, R, R, R));
  change(g, [](auto& s) {
    s.set_split_k_slices(8);
    s.set_decomposition(Decomposition::ParallelSplitK);
  });
  auto c = pick(g, 256, 512, 32768);
  EXPECT_TRUE(c.parallel_split_k) << c.name();
  EXPECT_NE(c.tile.tile_scheduler, TileScheduler::StreamK) << c.name();
  // 8 slices of 125 elements: only the one-element kernels would load them, and those serve only operands
  // that cp.async cannot copy (library::pipelined).
  auto uneven = test::message_of<InvalidArgumentError>([&] { pick(g, 256, 512, 1000); });
  EXPECT_NE(uneven.find("K = 1000 cut into 8 equal slices"), std::string::npos) << uneven;
  auto batched = test::message_of<InvalidArgumentError>([&] { pick(g, 256, 512, 32768, 2); });
  EXPECT_NE(batched.find("not a batch (2 here)"), std::string::npos) << batched;
  EXPECT_THROW(change(g, [](auto& s) { s.splits = 1; }), InvalidArgumentError);
  EXPECT_THROW(change(g, [](auto& s) { s.set_split_k_slices(select::GemmSettings::kMaxSplits + 1); }),
               InvalidArgumentError);
}

// Defaults are decided once, in C++: a C++ plan gets what a Python plan gets.
TEST(GemmPlan, DefaultsAreTheCoresOwn) {
  GemmOptions int8 = plan_of(DataType::s8, R, C, R);
  int8.element_c = int8.element_d = DataType::s32;
  int8.element_accumulator.reset();
  Gemm g(int8);
  EXPECT_EQ(g.options().accumulator(), DataType::s32);
  EXPECT_EQ(pick(g, 4096, 4096, 4096).element_accumulator, DataType::s32);
  GemmOptions f64 = plan_of(DataType::f64, R, R, R);
  f64.element_accumulator.reset();
  EXPECT_EQ(Gemm(f64).options().accumulator(), DataType::f64);
  GemmOptions f16 = plan_of(DataType::f16, R, R, R);
  f16.element_accumulator.reset();
  EXPECT_EQ(Gemm(f16).options().accumulator(), DataType::f32);
  // s8 beside a 16-bit type (weight-only int8): f32, on SM80's mixed-input kernels.
  GemmOptions mixed = plan_of(DataType::f16, R, C, R);
  mixed.element_b = DataType::s8;
  mixed.element_accumulator.reset();
  Gemm w8(mixed);
  EXPECT_EQ(w8.options().accumulator(), DataType::f32);
  EXPECT_EQ(pick(w8, 4096, 4096, 4096).math, MathOperation::MultiplyAddMixedInputUpcast);
  EXPECT_EQ(default_activation_argument(Activation::leaky_relu), 0.2);
}

// The opcode class is a setting like the others: switching it keeps the rest, and a class the
// types have no kernels of is refused with the plan left as it was.
TEST(GemmPlan, OpcodeClassIsASetting) {
  Gemm g(plan_of(DataType::f32, R, C, R));
  EXPECT_EQ(g.kernel_cc(), 90);
  change(g, [](auto& s) {
    s.set_activation(Activation::leaky_relu, 0.3);
    s.set_split_k_slices(4);
  });
  change(g, [](auto& s) { s.opclass = OpcodeClass::Simt; });
  EXPECT_EQ(g.kernel_cc(), 80) << "SIMT kernels are SM80's";
  EXPECT_EQ(g.settings().activation_argument, 0.3);
  EXPECT_EQ(g.settings().splits, 4);
  EXPECT_EQ(pick(g, 1024, 1024, 1024).opclass, OpcodeClass::Simt);
  // f16 has SIMT kernels too (the CUTLASS Python interface's opclass switch of an f16 plan); bf16 none.
  Gemm f16(plan_of(DataType::f16, R, C, R));
  change(f16, [](auto& s) { s.opclass = OpcodeClass::Simt; });
  EXPECT_EQ(f16.kernel_cc(), 80);
  EXPECT_EQ(pick(f16, 1024, 1024, 1024).opclass, OpcodeClass::Simt);
  Gemm bf16(plan_of(DataType::bf16, R, C, R));
  auto before = bf16.settings();
  EXPECT_THROW(change(bf16, [](auto& s) { s.opclass = OpcodeClass::Simt; }), InvalidArgumentError);
  EXPECT_EQ(bf16.settings().opclass, before.opclass);
  EXPECT_EQ(bf16.kernel_cc(), 90);
}

// SM80's serial split-K passes each slice's sum through D: an s8 D would saturate them, so its data-parallel
// kernels are refused there; its stream-K kernels reduce the slices in s32 in their workspace, and an s32 D
// takes either.
TEST(GemmPlan, Sm80SerialSplitKNeverRunsThroughAn8BitD) {
  for (DataType out : {DataType::s8, DataType::s32}) {
    GemmOptions o = plan_of(DataType::s8, R, C, R, 80);
    o.element_c = o.element_d = out;
    o.element_accumulator.reset();
    Gemm g(o);
    change(g, [](auto& s) { s.set_split_k_slices(4); });
    EXPECT_EQ(pick(g, 256, 256, 4096).element_d, out);
    change(g, [](auto& s) { s.tile_scheduler = TileScheduler::Default; });
    if (out == DataType::s8) {
      auto message = test::message_of<InvalidArgumentError>([&] { pick(g, 256, 256, 4096); });
      EXPECT_NE(message.find("an 8-bit D would saturate"), std::string::npos) << message;
    } else {
      EXPECT_EQ(pick(g, 256, 256, 4096).tile.tile_scheduler, TileScheduler::Default);
    }
  }
}

}  // namespace
}  // namespace cuforge
