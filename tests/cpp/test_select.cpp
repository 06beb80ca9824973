// select/ and the plan's choice of kernel (op::Gemm without running anything): ranking is a
// permutation ordered by a finite positive estimate, and the chosen kernel fits the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cuforge/library/catalog.hpp"
#include "cuforge/op/gemm.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/select/gemm_heuristic.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using library::GemmConfig;
using select::GemmProblem;

const std::vector<GemmProblem> kProblems = {
    {8192, 8192, 8192, 1}, {4096, 4096, 4096, 1}, {16, 4096, 4096, 1}, {128, 14336, 4096, 1},
    {8192, 1024, 8192, 1}, {1, 1, 1, 1},          {197, 262, 136, 1},  {64, 64, 8, 16},
    {1, 256, 512, 1},      {4096, 16, 4096, 1},   {100, 100, 0, 1},
};

std::vector<const GemmConfig*> all_of(Arch arch) {
  std::vector<const GemmConfig*> out;
  for (const auto& c : library::gemm_catalog(arch)) out.push_back(&c);
  return out;
}

TEST(Select, EstimatesArePositiveAndFinite) {
  for (Arch arch : library::kArchs)
    for (const auto* c : all_of(arch))
      for (const auto& p : kProblems)
        for (int sms : {132, 108, 1}) {
          double t = select::estimated_time_us(*c, p, sms);
          ASSERT_TRUE(std::isfinite(t) && t > 0) << c->name() << " on " << p.m << "x" << p.n << "x" << p.k << ": " << t;
        }
}

TEST(Select, LargerProblemsTakeLonger) {
  const auto& c = library::gemm_catalog(90).front();
  EXPECT_LT(select::estimated_time_us(c, {1024, 1024, 1024, 1}, 132),
            select::estimated_time_us(c, {8192, 8192, 8192, 1}, 132));
  EXPECT_LT(select::estimated_time_us(c, {4096, 4096, 4096, 1}, 132),
            select::estimated_time_us(c, {4096, 4096, 4096, 4}, 132));
  EXPECT_LT(select::estimated_time_us(c, {8192, 8192, 8192, 1}, 132),
            select::estimated_time_us(c, {8192, 8192, 8192, 1}, 66));
}

TEST(Select, RankIsAStablePermutationOrderedByEstimate) {
  for (Arch arch : library::kArchs)
    for (const auto& p : kProblems) {
      auto candidates = all_of(arch);
      auto ranked = select::rank(candidates, p, 132);
      ASSERT_EQ(ranked.size(), candidates.size());
      EXPECT_EQ(std::set<const GemmConfig*>(ranked.begin(), ranked.end()),
                std::set<const GemmConfig*>(candidates.begin(), candidates.end()));
      std::map<const GemmConfig*, size_t> position;
      for (size_t i = 0; i < candidates.size(); ++i) position[candidates[i]] = i;
      for (size_t i = 1; i < ranked.size(); ++i) {
        double before = select::estimated_time_us(*ranked[i - 1], p, 132);
        double after = select::estimated_time_us(*ranked[i], p, 132);
        ASSERT_LE(before, after) << "not ordered at " << i;
        if (before == after) {
          ASSERT_LT(position[ranked[i - 1]], position[ranked[i]]) << "not stable at " << i;
        }
      }
    }
  EXPECT_TRUE(select::rank(std::vector<const GemmConfig*>{}, {64, 64, 64, 1}, 132).empty());
}

TEST(Select, SmallMGetsASmallerTileThanLargeProblems) {
  auto area = [](const GemmConfig* c) { return c->tile.threadblock_shape[0] * c->tile.threadblock_shape[1]; };
  const GemmConfig* big = select::rank(all_of(90), {8192, 8192, 8192, 1}, 132).front();
  EXPECT_GE(area(big), 128 * 128) << big->name();
  for (const GemmProblem& p : {GemmProblem{16, 4096, 4096, 1}, GemmProblem{1, 4096, 4096, 1}}) {
    const GemmConfig* best = select::rank(all_of(90), p, 132).front();
    EXPECT_LT(area(best), area(big)) << best->name();
    EXPECT_LE(best->tile.threadblock_shape[0], 128) << best->name();
  }
}

// --- The plan's choice (no GPU needed: selection compiles and launches nothing). ---

GemmOptions plan_of(DataType t, Layout a, Layout b, Layout c, int kernel_cc = 0) {
  GemmOptions o;
  o.element_a = o.element_b = o.element_c = o.element_d = t;
  o.element_accumulator = DataType::f32;
  o.layout_a = a;
  o.layout_b = b;
  o.layout_c = c;
  o.kernel_cc = kernel_cc;
  o.cc = 90;  // the H200's, whether or not this machine has a GPU
  return o;
}

bool in_catalog(const GemmConfig& c) {
  const auto& catalog = library::gemm_catalog(c.arch);
  return std::find(catalog.begin(), catalog.end(), c) != catalog.end();
}

constexpr Layout R = Layout::RowMajor, C = Layout::ColumnMajor;

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
  const GemmConfig& c = g.select(197, 262, 136);  // ldb = ldd = 262: 4-byte aligned rows
  EXPECT_TRUE(in_catalog(c));
  EXPECT_EQ(c.arch, 80) << c.name();
  EXPECT_EQ(c.alignment_b, 2) << c.name();
  EXPECT_EQ(c.alignment_c, 2) << c.name();
  EXPECT_LE(c.alignment_a, 8) << c.name();
  EXPECT_EQ(c.element_a, DataType::bf16);
  EXPECT_EQ(c.layout_a, R);
  EXPECT_EQ(c.layout_b, R);
}

TEST(GemmPlan, AlignedProblemsGetAnSm90Kernel) {
  for (auto [m, n, k] : {std::tuple{4096, 4096, 4096}, {264, 200, 136}, {16, 4096, 4096}, {8192, 1024, 8192}}) {
    for (auto [la, lb] : {std::pair{R, C}, {R, R}, {C, R}, {C, C}}) {
      Gemm g(plan_of(DataType::f16, la, lb, R));
      const GemmConfig& c = g.select(m, n, k);
      EXPECT_TRUE(in_catalog(c));
      EXPECT_EQ(c.arch, 90) << c.name();
      EXPECT_EQ(c.alignment_a, 8);
      EXPECT_EQ(c.layout_a, la);
      EXPECT_EQ(c.layout_b, lb);
      EXPECT_EQ(c.element_d, DataType::f16);
    }
  }
}

TEST(GemmPlan, ColumnMajorDSelectsTheTransposedKernel) {
  Gemm g(plan_of(DataType::bf16, R, C, C));
  const GemmConfig& c = g.select(4096, 1024, 512);
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
    const GemmConfig& c = g.select(m, n, k);
    EXPECT_EQ(c.arch, 80) << c.name();
    EXPECT_TRUE(in_catalog(c));
  }
  EXPECT_EQ(g.select(197, 262, 136).alignment_b, 2);
  EXPECT_EQ(g.select(4096, 4096, 4096).alignment_b, 8);
}

TEST(GemmPlan, Tf32WithRowMajorBRunsOnSm80) {
  Gemm g(plan_of(DataType::f32, R, R, R));
  EXPECT_EQ(g.kernel_cc(), 80) << "SM90 TF32 kernels read K-major operands only";
  EXPECT_EQ(g.select(1024, 1024, 1024).arch, 80);
  Gemm k_major(plan_of(DataType::f32, R, C, R));
  EXPECT_EQ(k_major.kernel_cc(), 90);
  EXPECT_EQ(k_major.select(1024, 1024, 1024).alignment_a, 4);
}

TEST(GemmPlan, ImpossiblePlansAreRefused) {
  GemmOptions mixed = plan_of(DataType::f16, R, R, R);
  mixed.element_d = DataType::bf16;
  EXPECT_THROW(Gemm{mixed}, InvalidArgumentError);
  try {
    Gemm{mixed};
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("cuforge list"), std::string::npos) << e.what();
  }
  GemmOptions s8 = plan_of(DataType::s8, R, C, R);
  EXPECT_THROW(Gemm{s8}, InvalidArgumentError);
  EXPECT_THROW(Gemm(plan_of(DataType::f16, R, R, R, 70)), InvalidArgumentError);
  GemmOptions old = plan_of(DataType::f16, R, R, R);
  old.cc = 75;
  EXPECT_THROW(Gemm{old}, DeviceError);
  GemmOptions ampere = plan_of(DataType::f16, R, R, R, 90);
  ampere.cc = 80;
  EXPECT_THROW(Gemm{ampere}, InvalidArgumentError) << "sm_90a kernels do not run on 8.0";
  GemmOptions ada = plan_of(DataType::f16, R, R, R);
  ada.cc = 89;
  EXPECT_EQ(Gemm(ada).kernel_cc(), 80);
}

TEST(GemmPlan, TileDescriptions) {
  Gemm g(plan_of(DataType::bf16, R, C, R));
  auto tiles = g.tile_descriptions();
  ASSERT_FALSE(tiles.empty());
  for (size_t i = 0; i < tiles.size(); ++i)
    for (size_t j = i + 1; j < tiles.size(); ++j) ASSERT_FALSE(tiles[i] == tiles[j]) << "listed twice";
  EXPECT_EQ(g.tile_description(), std::nullopt);

  // Pinning a listed description: every selection uses it.
  const TileDescription pinned = tiles.back();
  g.set_tile_description(pinned);
  ASSERT_TRUE(g.tile_description().has_value());
  EXPECT_TRUE(*g.tile_description() == pinned);
  for (auto [m, n, k] : {std::tuple{4096, 4096, 4096}, {16, 4096, 4096}})
    EXPECT_TRUE(g.select(m, n, k).tile == pinned) << g.select(m, n, k).name();
  g.clear_tile_description();
  EXPECT_EQ(g.tile_description(), std::nullopt);

  // A description no kernel can have: refused, saying why, and the plan is unchanged.
  TileDescription bad = tiles.front();
  bad.threadblock_shape = {64, 128, 64};
  bad.kernel_schedule = KernelSchedule::TmaWarpSpecializedPingpong;
  bad.epilogue_schedule = EpilogueSchedule::TmaWarpSpecialized;
  bad.tile_scheduler = TileScheduler::StreamK;
  try {
    g.set_tile_description(bad);
    FAIL() << "pingpong with stream-K was pinned";
  } catch (const InvalidArgumentError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("stream-K"), std::string::npos) << m;
    EXPECT_NE(m.find("tile_descriptions()"), std::string::npos) << m;
  }
  EXPECT_EQ(g.tile_description(), std::nullopt);

  TileDescription huge = tiles.front();
  huge.threadblock_shape = {256, 256, 64};
  huge.kernel_schedule = KernelSchedule::TmaWarpSpecializedPingpong;
  huge.epilogue_schedule = EpilogueSchedule::TmaWarpSpecialized;
  huge.tile_scheduler = TileScheduler::Default;
  EXPECT_THROW(g.set_tile_description(huge), InvalidArgumentError);
}

TEST(GemmPlan, APinnedSm90TileCannotRunUnalignedProblems) {
  Gemm g(plan_of(DataType::bf16, R, R, R));
  g.set_tile_description(g.tile_descriptions().front());
  EXPECT_THROW(g.select(197, 262, 136), InvalidArgumentError);
  EXPECT_NO_THROW(g.select(256, 256, 256));
}

TEST(GemmPlan, KernelSourceTargetsThePlan) {
  Gemm g(plan_of(DataType::f16, R, C, R));
  const GemmConfig& c = g.select(4096, 4096, 4096);
  auto src = g.kernel_source(c);
  EXPECT_EQ(src.name, c.name());
  EXPECT_EQ(src.family, 90);
  EXPECT_EQ(src.target_cc, 90);
  EXPECT_NE(src.source.find(c.name()), std::string::npos);

  GemmOptions ada = plan_of(DataType::f16, R, C, R);
  ada.cc = 89;
  Gemm g80(ada);
  auto src80 = g80.kernel_source(g80.select(4096, 4096, 4096));
  EXPECT_EQ(src80.family, 80);
  EXPECT_EQ(src80.target_cc, 89) << "SM80 kernels are built into the target's own SASS";
}

TEST(GemmPlan, TheEpilogueIsPartOfTheKernel) {
  Gemm g(plan_of(DataType::bf16, R, R, R));
  EXPECT_EQ(g.activations().size(), 8u);
  g.set_activation(Activation::leaky_relu, 0.2);
  EXPECT_EQ(g.activation_argument(), 0.2);
  auto c = g.select(4096, 4096, 4096);
  EXPECT_EQ(c.activation, Activation::leaky_relu);
  EXPECT_FALSE(c.bias);
  EXPECT_TRUE(c.name().find("_leaky_relu") != std::string::npos) << c.name();
  EXPECT_EQ(library::parse_gemm_name(c.name()), c);
  auto biased = g.select(4096, 4096, 4096, 1, /*bias=*/true);
  EXPECT_TRUE(biased.bias);
  EXPECT_EQ(biased.name().substr(biased.name().size() - 16), "_leaky_relu_bias");
}

TEST(GemmPlan, SwizzlesAreSm80TileSchedulers) {
  Gemm sm90(plan_of(DataType::f16, R, C, R));
  EXPECT_EQ(sm90.tile_schedulers(), (std::vector<TileScheduler>{TileScheduler::Default, TileScheduler::StreamK}));
  try {
    sm90.set_tile_scheduler(TileScheduler::Identity1);
    ADD_FAILURE() << "an SM90 plan took a CUTLASS 2.x swizzle";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("SM80"), std::string::npos) << e.what();
  }
  Gemm sm80(plan_of(DataType::f16, R, C, R, 80));
  EXPECT_EQ(sm80.tile_schedulers().size(), 6u);
  sm80.set_tile_scheduler(TileScheduler::Horizontal);
  EXPECT_EQ(sm80.select(4096, 4096, 4096).tile.tile_scheduler, TileScheduler::Horizontal);
  sm80.set_tile_scheduler(std::nullopt);
  EXPECT_EQ(sm80.select(4096, 4096, 4096).tile.tile_scheduler, TileScheduler::Default);
}

TEST(GemmPlan, DecompositionsPickKernelsThatCanRunThem) {
  for (int family : {90, 80}) {
    SCOPED_TRACE(family);
    Gemm g(plan_of(DataType::bf16, R, C, R, family));
    EXPECT_THROW(g.set_decomposition(Decomposition::SplitK, 1), InvalidArgumentError);
    EXPECT_THROW(g.set_decomposition(Decomposition::StreamK, 4), InvalidArgumentError);
    g.set_decomposition(Decomposition::StreamK);
    EXPECT_EQ(g.select(256, 512, 32768).tile.tile_scheduler, TileScheduler::StreamK);
    g.set_decomposition(Decomposition::DataParallel);
    EXPECT_NE(g.select(256, 512, 32768).tile.tile_scheduler, TileScheduler::StreamK);
    g.set_decomposition(Decomposition::SplitK, 8);
    EXPECT_EQ(g.splits(), 8);
    auto split = g.select(256, 512, 32768);
    if (family == 90) EXPECT_EQ(split.tile.tile_scheduler, TileScheduler::StreamK) << "SM90 splits K on stream-K";
  }
}

TEST(GemmPlan, KHeavyProblemsWithFewTilesSplitK) {
  Gemm g(plan_of(DataType::bf16, R, R, R));
  for (auto [m, n, k] : {std::tuple{128, 128, 65536}, {256, 512, 32768}}) {
    auto c = g.select(m, n, k);
    EXPECT_TRUE(c.parallel_split_k) << m << "x" << n << "x" << k << ": " << c.name();
  }
  // The fastest parallel split-K measured there on the H200 (bench/k_heavy.py --sweep-parallel):
  // 128x64 ping-pong tiles (in 8 slices), ahead of 64x64 and of cooperative kernels; at
  // 1024x1024x16384 the 64 tiles of 128x128 stream K instead.
  auto mid = g.select(256, 512, 32768);
  EXPECT_EQ(mid.tile.threadblock_shape[0], 128) << mid.name();
  EXPECT_EQ(mid.tile.threadblock_shape[1], 64) << mid.name();
  EXPECT_EQ(mid.tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedPingpong) << mid.name();
  auto large = g.select(1024, 1024, 16384);
  EXPECT_FALSE(large.parallel_split_k) << large.name();
  EXPECT_EQ(large.tile.tile_scheduler, TileScheduler::StreamK) << large.name();
  // K = 8 x 8191 has no two equal slices of whole 8-element vectors: stream-K divides it instead.
  auto odd = g.select(128, 128, 8 * 8191);
  EXPECT_FALSE(odd.parallel_split_k) << odd.name();
  EXPECT_EQ(odd.tile.tile_scheduler, TileScheduler::StreamK) << odd.name();
  auto square = g.select(8192, 8192, 8192);
  EXPECT_FALSE(square.parallel_split_k) << square.name();
  EXPECT_EQ(square.tile.tile_scheduler, TileScheduler::Default) << square.name();
}

TEST(GemmPlan, ArrivalOrderReductionKeepsTheKOrderChoiceWhereFewPeersShareATile) {
  // Measured on the H200 (bench/k_heavy.py, bench/sweep.py): with deterministic = false the stream-K
  // kernels the selection used to take here ran 26.6, 61.6 and 33.6 µs (the last in K order) against
  // 24.9, 54.3 and 20.1 for the K-order choices.
  Gemm k_order(plan_of(DataType::bf16, R, R, R));
  Gemm arrival(plan_of(DataType::bf16, R, R, R));
  arrival.set_deterministic(false);
  for (auto [m, n, k] : {std::tuple{256, 512, 32768}, {1024, 1024, 16384}, {16, 4096, 4096}})
    EXPECT_EQ(arrival.select(m, n, k).name(), k_order.select(m, n, k).name()) << m << "x" << n << "x" << k;
}

TEST(GemmPlan, ParallelSplitKIsForcedOnlyWhereKSlicesEvenly) {
  Gemm g(plan_of(DataType::bf16, R, R, R));
  g.set_decomposition(Decomposition::ParallelSplitK, 8);
  auto c = g.select(256, 512, 32768);
  EXPECT_TRUE(c.parallel_split_k) << c.name();
  EXPECT_NE(c.tile.tile_scheduler, TileScheduler::StreamK) << c.name();
  auto uneven = test::message_of<InvalidArgumentError>([&] { g.select(256, 512, 1000); });
  EXPECT_NE(uneven.find("K = 1000 cut into 8 equal slices"), std::string::npos) << uneven;
  auto batched = test::message_of<InvalidArgumentError>([&] { g.select(256, 512, 32768, 2); });
  EXPECT_NE(batched.find("not a batch (2 here)"), std::string::npos) << batched;
  EXPECT_THROW(g.set_decomposition(Decomposition::ParallelSplitK, 1), InvalidArgumentError);
}

}  // namespace
}  // namespace cuforge
