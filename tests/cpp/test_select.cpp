// select/'s cost model on the catalog (no plan, no GPU): every estimate finite and positive, larger
// problems longer, small M on smaller tiles, the model passed in the one used. The plan's choice of
// kernel: test_gemm_plan_choice.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "cuforge/library/catalog.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "gemm_plan_support.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using library::GemmConfig;
using namespace test;

const std::vector<GemmShape> kProblems = {
    {8192, 8192, 8192, 1}, {4096, 4096, 4096, 1}, {16, 4096, 4096, 1}, {128, 14336, 4096, 1},
    {8192, 1024, 8192, 1}, {1, 1, 1, 1},          {197, 262, 136, 1},  {64, 64, 8, 16},
    {1, 256, 512, 1},      {4096, 16, 4096, 1},   {100, 100, 0, 1},
};

std::vector<const GemmConfig*> all_of(Arch arch) {
  std::vector<const GemmConfig*> out;
  for (const auto& c : library::gemm_catalog(arch)) out.push_back(&c);
  return out;
}

// The catalog row of a family the cost model ranks first for a problem (no split-K).
const GemmConfig* best_of(Arch arch, const GemmShape& p) {
  auto rows = all_of(arch);
  return *std::min_element(rows.begin(), rows.end(),
                           [&](const GemmConfig* a, const GemmConfig* b) { return estimate(*a, p) < estimate(*b, p); });
}

TEST(Select, EstimatesArePositiveAndFinite) {
  for (Arch arch : library::kArchs)
    for (const auto* c : all_of(arch))
      for (const auto& p : kProblems)
        for (int sms : {132, 108, 1}) {
          if (p.empty_output()) continue;
          double t = estimate(*c, p, sms);
          ASSERT_TRUE(std::isfinite(t) && t > 0) << c->name() << " on " << p.m << "x" << p.n << "x" << p.k << ": " << t;
        }
}

TEST(Select, LargerProblemsTakeLonger) {
  const auto& c = library::gemm_catalog(90).front();
  EXPECT_LT(estimate(c, {1024, 1024, 1024, 1}), estimate(c, {8192, 8192, 8192, 1}));
  EXPECT_LT(estimate(c, {4096, 4096, 4096, 1}), estimate(c, {4096, 4096, 4096, 4}));
  EXPECT_LT(estimate(c, {8192, 8192, 8192, 1}), estimate(c, {8192, 8192, 8192, 1}, 66));
}

// The estimates hold at the edges of what a run may ask: every extent at the 32-bit limit, with
// batches, on any number of SMs (they once divided by a zero tile count and overflowed int64).
TEST(Select, EstimatesAreFiniteAtTheLimits) {
  const int64_t big = INT32_MAX;
  for (Arch arch : library::kArchs)
    for (const GemmShape& p : {GemmShape{big, big, big, big}, GemmShape{1, big, big, 1}, GemmShape{big, 1, 1, big}})
      for (int splits : {1, 128})
        for (int sms : {0, 1, 132}) {
          double t = select::estimated_time_us(library::gemm_catalog(arch).front(), p, splits, true, sms);
          ASSERT_TRUE(std::isfinite(t) && t > 0) << arch << " " << p.m << "x" << p.n << "x" << p.k << ": " << t;
        }
}

TEST(Select, SmallMGetsASmallerTileThanLargeProblems) {
  auto area = [](const GemmConfig* c) { return c->tile.threadblock_shape[0] * c->tile.threadblock_shape[1]; };
  const GemmConfig* big = best_of(90, {8192, 8192, 8192, 1});
  EXPECT_GE(area(big), 128 * 128) << big->name();
  for (const GemmShape& p : {GemmShape{16, 4096, 4096, 1}, GemmShape{1, 4096, 4096, 1}}) {
    const GemmConfig* best = best_of(90, p);
    EXPECT_LT(area(best), area(big)) << best->name();
    EXPECT_LE(best->tile.threadblock_shape[0], 128) << best->name();
  }
}

// CUTLASS's non-persistent kernel against the cooperative kernel of the same tile: per_tile_setup_saving_us
// under it in one wave, per_tile_wave_us more for each further wave; 64-wide tiles at
// per_tile_narrow_fraction of the rate; convolutions' own non-persistent kernels keep their terms.
// 16-bit GEMMs of three waves or more hand out their tiles along N in groups of four, where the grid CUTLASS pads to
// whole groups takes no further wave; the rest as CUTLASS does.
TEST(Select, LargeSixteenBitGemmsTakeTheirTilesAlongNInGroupsOfFour) {
  const std::string tile = "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_256x128x64_c";
  const GemmConfig coop = library::parse_gemm_name(tile + "1x1x1_s0_coop_tmacoop_default_a8x8x8");
  const GemmConfig stream_k = library::parse_gemm_name(tile + "1x1x1_s0_coop_tmacoop_streamk_a8x8x8");
  const GemmConfig pair = library::parse_gemm_name(tile + "2x1x1_s0_coop_tmacoop_default_a8x8x8");
  const GemmConfig fp8 = library::parse_gemm_name(
      "cuforge_sm90_gemm_tensorop_mma_e4m3_e4m3_f32_bf16_bf16_rcr_128x128x128_c2x1x1_s0_coop_tmacoop_default_a16x16x8");
  const GemmConfig per_tile = library::parse_gemm_name(
      "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_128x128x64_c1x1x1_s0_tmaws_tma_default_a8x8x8");
  ASSERT_TRUE(in_catalog(coop) && in_catalog(stream_k) && in_catalog(pair) && in_catalog(fp8) && in_catalog(per_tile));
  auto order = [](const GemmConfig& c, const GemmShape& p) {
    const select::Rasterization r = select::rasterization(c, p, 132);
    return std::pair{r.raster, r.swizzle};
  };
  const auto along_n = std::pair{RasterOrder::AlongN, 4}, cutlass = std::pair{RasterOrder::Heuristic, 1};
  // 12 x 36 = 432 tiles: 3.3 waves; 12 x 32 = 384: 2.9; 12 x 33 = 396, three waves, padded to 12 x 36 in groups of
  // four: a fourth wave.
  const GemmShape large{8192, 8192, 8192, 1}, over_three{3072, 4608, 1024, 1}, under_three{3072, 4096, 1024, 1};
  for (const GemmConfig& c : {coop, stream_k}) {
    EXPECT_EQ(order(c, large), along_n) << c.name();
    EXPECT_EQ(order(c, over_three), along_n) << c.name();
    EXPECT_EQ(order(c, under_three), cutlass) << c.name();
    EXPECT_EQ(order(c, GemmShape{3072, 4224, 1024, 1}), cutlass) << c.name();
    EXPECT_EQ(order(c, GemmShape{8192, 1024, 8192, 1}), cutlass) << c.name();  // 256 tiles
    EXPECT_EQ(order(c, GemmShape{512, 65536, 1024, 1}), cutlass) << c.name();  // 2 tiles of M: no group of four
  }
  // 17 x 32 tiles in 2x1 clusters: 18 x 32 = 576, 4.4 waves; in groups of four clusters 24 x 32 = 768, 5.8.
  EXPECT_EQ(order(pair, GemmShape{4352, 4096, 1024, 1}), cutlass);
  EXPECT_EQ(order(pair, GemmShape{4096, 4096, 1024, 1}), along_n);  // 16 x 32: no padding
  for (const GemmConfig& c : {fp8, per_tile}) EXPECT_EQ(order(c, large), cutlass) << c.name();  // unmeasured; none
}

TEST(Select, TheNonPersistentKernelSavesItsSetupInOneWaveAndPaysEachFurtherWave) {
  const std::string tile = "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_128x128x64_c1x1x1_s0_";
  const GemmConfig per_tile = library::parse_gemm_name(tile + "tmaws_tma_default_a8x8x8");
  const GemmConfig coop = library::parse_gemm_name(tile + "coop_tmacoop_default_a8x8x8");
  ASSERT_TRUE(in_catalog(per_tile) && in_catalog(coop));
  ASSERT_TRUE(select::per_tile_gemm(per_tile));
  EXPECT_FALSE(select::per_tile_gemm(coop));
  const select::CostModel m;
  const GemmShape one_wave{1024, 2048, 1024, 1}, two_waves{2048, 2048, 1024, 1};  // 128 and 256 tiles
  EXPECT_NEAR(estimate(per_tile, one_wave), estimate(coop, one_wave) - m.per_tile_setup_saving_us, 1e-9);
  EXPECT_NEAR(estimate(per_tile, two_waves),
              estimate(coop, two_waves) + m.per_tile_wave_us - m.per_tile_setup_saving_us, 1e-9);

  select::CostModel wide_only;
  wide_only.per_tile_narrow_fraction = 0.5;
  const GemmConfig narrow = library::parse_gemm_name(
      "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_128x64x64_c1x1x1_s0_tmaws_tma_default_a8x8x8");
  EXPECT_GT(select::estimated_time_us(narrow, one_wave, 1, true, 132, wide_only), estimate(narrow, one_wave));
  EXPECT_EQ(select::estimated_time_us(per_tile, one_wave, 1, true, 132, wide_only), estimate(per_tile, one_wave));

  GemmConfig conv = library::parse_gemm_name(
      "cuforge_sm90_fprop_tensorop_mma_bf16_bf16_f32_bf16_bf16_rcr_128x128x64_c1x1x1_s0_tmaws_tma_default_a8x8x8");
  EXPECT_FALSE(select::per_tile_gemm(conv));
  conv.pointwise = true;  // a 1x1 convolution run on the GEMM kernel
  EXPECT_TRUE(select::per_tile_gemm(conv));
}

// Promoted fp8 kernels on cuforge's overlapped consumer loop (the 128x128 and 128x192 cooperative tiles) run at
// overlapped_promotion_edge of the rate the tile's intensity gives; those on CUTLASS's loop, and fast accumulation,
// do not.
TEST(Select, TheOverlappedFp8PromotionRunsAtItsEdge) {
  const std::string fp8 = "cuforge_sm90_gemm_tensorop_mma_e4m3_e4m3_f32_bf16_bf16_rcr_";
  const GemmConfig square = library::parse_gemm_name(fp8 + "128x128x128_c1x2x1_s0_coop_tmacoop_default_a16x16x8");
  const GemmConfig wide = library::parse_gemm_name(fp8 + "128x192x128_c1x2x1_s0_coop_tmacoop_default_a16x16x8");
  const GemmConfig cutlass_loop = library::parse_gemm_name(fp8 + "256x96x128_c1x2x1_s0_coop_tmacoop_default_a16x16x8");
  const GemmConfig fast = library::parse_gemm_name(
      "cuforge_sm90_gemm_tensorop_fastaccum_e4m3_e4m3_f32_bf16_bf16_rcr_128x128x128_c1x2x1_s0_coop_tmacoop_default_"
      "a16x16x8");
  for (const GemmConfig* c : {&square, &wide, &cutlass_loop, &fast}) ASSERT_TRUE(in_catalog(*c)) << c->name();
  select::CostModel none;
  none.overlapped_promotion_edge = 1.0;
  const GemmShape p{4096, 14336, 4096, 1};
  auto with = [&](const GemmConfig& c, const select::CostModel& m) {
    return select::estimated_time_us(c, p, 1, true, 132, m);
  };
  for (const GemmConfig* c : {&square, &wide}) {
    EXPECT_TRUE(library::overlaps_fp8_promotion(*c)) << c->name();
    EXPECT_LT(with(*c, select::CostModel{}), with(*c, none)) << c->name();
  }
  for (const GemmConfig* c : {&cutlass_loop, &fast}) {
    EXPECT_FALSE(library::overlaps_fp8_promotion(*c)) << c->name();
    EXPECT_EQ(with(*c, select::CostModel{}), with(*c, none)) << c->name();
  }
  // CUTLASS's 256x96 loop ranks behind both.
  EXPECT_LT(with(wide, select::CostModel{}), with(cutlass_loop, select::CostModel{}));
  EXPECT_LT(with(square, select::CostModel{}), with(cutlass_loop, select::CostModel{}));
}

// fp8 stream-K kernels as CUTLASS's heuristic decomposition runs them (H100, bench/results/
// h100-2026-12-06-fp8-wave-profile.txt): data-parallel, at the stream-K kernel's overhead, where the last wave is
// at least half full; shared where it is under half, more slowly where units span tiles.
TEST(Select, Fp8StreamKKernelsDecomposeAsCutlassDoes) {
  const std::string fp8 = "cuforge_sm90_gemm_tensorop_mma_e4m3_e4m3_f32_bf16_bf16_rcr_";
  auto kernel = [&](const std::string& tile, const std::string& scheduler) {
    GemmConfig c = library::parse_gemm_name(fp8 + tile + "x128_c2x1x1_s0_coop_tmacoop_" + scheduler + "_a16x16x8");
    EXPECT_TRUE(in_catalog(c)) << c.name();
    return c;
  };
  const select::CostModel m;
  auto us = [&](const GemmConfig& c, const GemmShape& p) { return select::estimated_time_us(c, p, 1, true, 132, m); };
  // 96 tiles of 128x192 (at least half of 132): the stream-K kernel runs them data-parallel, a little slower.
  const GemmShape one_wave{1536, 1536, 4096, 1};
  const GemmConfig dp = kernel("128x192", "default"), sk = kernel("128x192", "streamk");
  EXPECT_NEAR(us(sk, one_wave) - m.launch_us, (us(dp, one_wave) - m.launch_us) * m.stream_k_overhead,
              0.05 * us(dp, one_wave));
  // 144 tiles of 128x128 (a ragged wave of 12): every unit spans tiles; the model's pick is the 128x192 wave
  // (20.1 us on the H100, the 128x128 stream-K 26.3).
  const GemmConfig spanning = kernel("128x128", "streamk");
  EXPECT_GT(us(spanning, one_wave), us(dp, one_wave));
  select::CostModel no_waits = m;
  no_waits.spanning_stream_k_turns = 0;
  EXPECT_GT(us(spanning, one_wave), select::estimated_time_us(spanning, one_wave, 1, true, 132, no_waits));
  // A few tiles (16 of 128x192): shared among the SMs, eight peers a tile, not run data-parallel.
  const GemmShape few{256, 1536, 8192, 1};
  EXPECT_GT(std::abs((us(sk, few) - m.launch_us) - (us(dp, few) - m.launch_us) * m.stream_k_overhead), 1.0);
  // 16-bit kernels keep the model's older terms (gemm_cost.cpp says why).
  const GemmConfig bf16 = library::parse_gemm_name(
      "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_128x128x64_c1x1x1_s0_coop_tmacoop_streamk_a8x8x8");
  ASSERT_TRUE(in_catalog(bf16));
  EXPECT_EQ(select::estimated_time_us(bf16, {384, 4096, 4096, 1}, 1, true, 132, no_waits),
            select::estimated_time_us(bf16, {384, 4096, 4096, 1}, 1, true, 132, m));
}

// SM90's TF32 GEMMs put a wide tile first where 16-bit ones put the tall one (H200, cuforge profile of f32
// GEMMs: 128x256 ahead of 256x128 by 4-10% at 4096^3, 8192^3, 4096x14336x4096, 8192x1024x8192).
TEST(Select, Tf32GemmsTakeTheWideTileWhere16BitOnesTakeTheTallOne) {
  const select::GemmSettings s;
  for (const GemmShape& p : {GemmShape{4096, 4096, 4096, 1, 8, 8, 8}, GemmShape{8192, 8192, 8192, 1, 8, 8, 8},
                             GemmShape{4096, 14336, 4096, 1, 8, 8, 8}, GemmShape{8192, 1024, 8192, 1, 8, 8, 8}}) {
    auto first = [&](DataType type) {
      GemmTypes t;
      t.element_a = t.element_b = t.element_c = t.element_d = type;
      return select::choose(select::gemm_kernels(t.canonical(), 90, s), s, p, 132).ranked.front().config;
    };
    const auto tile = [](const GemmConfig& c) { return c.tile.threadblock_shape; };
    const GemmConfig tf32 = first(DataType::f32), bf16 = first(DataType::bf16);
    EXPECT_EQ(tile(tf32)[0], 128) << p.m << "x" << p.n << "x" << p.k << ": " << tf32.name();
    EXPECT_EQ(tile(tf32)[1], 256) << p.m << "x" << p.n << "x" << p.k << ": " << tf32.name();
    EXPECT_GT(tile(bf16)[0], tile(bf16)[1]) << p.m << "x" << p.n << "x" << p.k << ": " << bf16.name();
  }
}

// The constants passed in are the ones the estimate and the ranking use (bench/refit.py tries others).
TEST(Select, TheCostModelPassedInIsTheOneUsed) {
  GemmTypes t;
  t.element_a = t.element_b = t.element_c = t.element_d = DataType::bf16;
  const select::GemmSettings s;
  const auto kernels = select::gemm_kernels(t.canonical(), 90, s);
  const GemmShape p{8192, 8192, 8192, 1, 8, 8, 8};
  const auto builtin = select::choose(kernels, s, p, 132);

  const GemmConfig& best = builtin.ranked.front().config;
  select::CostModel slow_launch;
  slow_launch.launch_us += 47.0;
  EXPECT_DOUBLE_EQ(select::estimated_time_us(best, p, 1, true, 132, slow_launch), estimate(best, p) + 47.0);

  // The built-in model puts a tall tile first at 8192^3 (256x128, measured ahead of 128x256); a model
  // that handicaps tall tiles puts a wide or square one first.
  const auto tall = [](const GemmConfig& c) { return c.tile.threadblock_shape[0] > c.tile.threadblock_shape[1]; };
  ASSERT_TRUE(tall(best)) << best.name();
  select::CostModel tall_last;
  tall_last.tall_tile_edge = 0.5;
  const GemmConfig& other = select::choose(kernels, s, p, 132, tall_last).ranked.front().config;
  EXPECT_FALSE(tall(other)) << other.name();
}

TEST(Select, AnActivationPastTheEnumIsRefusedWhereItIsSet) {
  select::GemmSettings s;  // its message said "? takes no argument", and check() refused it later
  EXPECT_THROW(s.set_activation(static_cast<Activation>(99), 0.5), InvalidArgumentError);
}

template <class Change>
GemmShape with_conv(Change change) {
  GemmShape p{64, 64, 64, 1, 8, 8, 8};
  change(p.conv);
  return p;
}

TEST(Select, AClassOutsideTheKernelsRangeIsRefused) {
  // A C++ caller's class: INT64_MAX rows were ranked (an estimate of -2.6e16 us), negative extents compiled.
  GemmTypes t;
  const select::GemmSettings s;
  const auto kernels = select::gemm_kernels(t.canonical(), 90, s);
  for (const auto& [p, says] : {std::pair{GemmShape{INT64_MAX, 64, 64, 1, 8, 8, 8}, "M: 9223372036854775807 exceeds the 32-bit range"},
                                {GemmShape{64, 64, -5, 1, 8, 8, 8}, "K: expected a size of 0 or more, got -5"},
                                {GemmShape{64, 64, 64, -1, 8, 8, 8}, "batch: expected a size of 0 or more, got -1"},
                                // Ranked before, though a run of it launches nothing (Gemm::select refused it).
                                {GemmShape{0, 64, 64, 1, 8, 8, 8}, "0x64x64 in a batch of 1 has an empty output"},
                                {GemmShape{64, 64, 64, 0, 8, 8, 8}, "64x64x64 in a batch of 0 has an empty output"},
                                {GemmShape{64, 64, 64, 1, 8, 1000, 8}, "B's alignment is 1000"},
                                {GemmShape{64, 64, 64, 1, 8, 8, 3}, "C's alignment is 3"},
                                // A convolution's own split-K of -3 slices was compiled and then served every class.
                                {with_conv([](ConvClass& c) { c.splits = -3; }), "conv.splits: expected 0 (the plan's "
                                                                                 "settings) to 1024 slices of K, got -3"},
                                {with_conv([](ConvClass& c) { c.splits = INT_MAX; }), "conv.splits"},
                                {with_conv([](ConvClass& c) { c.im2col_reuse = 0; }), "conv.im2col_reuse: expected 1"},
                                {with_conv([](ConvClass& c) { c.k_run = -1; }), "conv.k_run: expected a size of 0"}}) {
    try {
      select::choose(kernels, s, p, 132);
      ADD_FAILURE() << "ranked: " << says;
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
}

// A plan's own ranking, choice and tuning key of a class the C++ caller built are checked as choose()'s: an empty
// output is refused by name (a ranking was returned for it; the key asked for a device first).
TEST(Selection, PlansCheckTheClassesTheyAreGiven) {
  Gemm plan(plan_of(DataType::bf16, Layout::RowMajor, Layout::RowMajor, Layout::RowMajor, 90));
  const GemmShape empty{0, 64, 64, 1, 8, 8, 8}, negative{64, -64, 64, 1, 8, 8, 8};
  for (const GemmShape& p : {empty, negative}) {
    EXPECT_THROW(plan.rank(p), InvalidArgumentError);
    EXPECT_THROW(plan.choice(p), InvalidArgumentError);
    EXPECT_THROW(plan.tuning_key(p), InvalidArgumentError);
  }
}

// A type, layout or kind past its enum names no family (one chose SM80's, having no SM90 rows).
TEST(Selection, EnumeratorsPastTheirEnumsAreRefused) {
  GemmTypes type;
  type.element_a = static_cast<DataType>(99);
  GemmTypes layout;
  layout.layout_b = static_cast<Layout>(7);
  const select::GemmSettings s;
  EXPECT_TRUE(test::contains(test::message_of<InvalidArgumentError>([&] { select::gemm_family(type, 90, 0, s); }),
                             "element_A: 99 is not a value of enum DataType"));
  EXPECT_TRUE(test::contains(test::message_of<InvalidArgumentError>([&] { select::gemm_kernels(layout, 90, s); }),
                             "layout_B: 7 is not a value of enum Layout"));
  EXPECT_THROW(select::gemm_family(GemmTypes{}, 90, 0, s, static_cast<KernelKind>(9)), InvalidArgumentError);
}

}  // namespace
}  // namespace cuforge
