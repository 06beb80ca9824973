// The GEMM plan's choice of kernel for fp8 and TF32 (no GPU needed): fp8's tiles, clusters and
// accumulation modes; TF32's K-major copies on SM90 against SM80's mma.sync and the swapped kernels that
// read B through registers, and 3xTF32's pieces.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "cuforge/emit/gemm.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/op/gemm.hpp"
#include "cuforge/select/gemm_choice.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "gemm_plan_support.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using library::GemmConfig;
using namespace test;

// fp8 (e4m3 -> bf16, promoted accumulation): the large problems of issue 18 take tiles whose two
// accumulators fit in registers. The 256x128 cooperative kernel the plan picked before spilled and
// ran at a third of the 128x128 cooperative one on the H200. The 128x128 and 128x192 tiles run cuforge's
// overlapped promotion (CostModel::overlapped_promotion_edge) in the cluster of two that shares the larger
// operand's tiles where that cluster pads no tile, among kernels estimated alike (select::tie_rank): 1x2 where A
// is the larger, else 2x1 (bench/results/h100-2026-12-06-fp8-*).
TEST(GemmPlan, Fp8LargeProblemsTakeTilesThatDoNotSpill) {
  GemmOptions o = plan_of(DataType::e4m3, R, C, R);
  o.element_c = o.element_d = DataType::bf16;
  Gemm g(o);
  const std::vector<std::tuple<std::array<int64_t, 3>, std::array<int, 3>, std::array<int, 3>>> expected = {
      {{8192, 8192, 8192}, {128, 192, 128}, {2, 1, 1}},
      {{4096, 4096, 4096}, {128, 128, 128}, {2, 1, 1}},
      {{4096, 14336, 4096}, {128, 192, 128}, {2, 1, 1}},
      {{8192, 1024, 8192}, {128, 128, 128}, {1, 2, 1}},
  };
  for (const auto& [mnk, tile, cluster] : expected) {
    auto [m, n, k] = mnk;
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    const auto choice = g.select(g.shape(m, n, k, 1, false));
    const GemmConfig& c = choice.config;
    EXPECT_TRUE(in_catalog(c)) << c.name();
    EXPECT_EQ(c.arch, 90) << c.name();
    EXPECT_EQ(c.tile.threadblock_shape, tile) << c.name();
    EXPECT_EQ(c.tile.cluster_shape, cluster) << c.name();
    EXPECT_TRUE(library::overlaps_fp8_promotion(c)) << c.name();
    EXPECT_EQ(c.tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedCooperative) << c.name();
    EXPECT_EQ(c.tile.tile_scheduler, TileScheduler::Default) << c.name();
    EXPECT_EQ(choice.splits, 1) << c.name();
    EXPECT_FALSE(c.parallel_split_k) << c.name();
  }
  // No promoted fp8 kernel of the catalog holds more than 2 x 96 accumulator registers per thread.
  library::GemmFilter f;
  f.arch = 90;
  f.math = MathOperation::MultiplyAdd;
  for (DataType t : {DataType::e4m3, DataType::e5m2}) {
    f.element_a = t;
    for (const GemmConfig* c : library::find_gemms(f)) {
      const auto& s = c->tile.threadblock_shape;
      const bool coop = c->tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative;
      EXPECT_LE((coop ? s[0] / 2 : s[0]) * s[1] / 128, 96) << c->name();
    }
  }
}

// fp8 fast accumulation is opt-in: a plan naming no math never runs it; one asking for it runs only
// it, on the 16-bit families' tiles (one accumulator: 256x128 fits).
TEST(GemmPlan, Fp8FastAccumulationOnlyOnRequest) {
  GemmOptions o = plan_of(DataType::e4m3, R, C, R);
  o.element_c = o.element_d = DataType::bf16;
  Gemm promoted(o);
  Gemm fast(o);
  auto s = fast.settings();
  s.math = MathOperation::MultiplyAddFastAccum;
  fast.set_settings(s);
  for (int64_t m : {16, 1024, 8192}) {
    EXPECT_EQ(pick(promoted, m, 8192, 8192).math, MathOperation::MultiplyAdd);
    EXPECT_EQ(pick(fast, m, 8192, 8192).math, MathOperation::MultiplyAddFastAccum);
  }
  const GemmConfig& big = pick(fast, 8192, 8192, 8192);
  const auto& t = big.tile.threadblock_shape;
  EXPECT_EQ(t[0] * t[1] / (big.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative ? 256 : 128), 128)
      << "a 128-register tile: " << big.name();
  // Fast accumulation's persistent kernels take 1x2 clusters among ties (select::tie_rank), as CUTLASS's
  // promotion loop does; the overlapped promotion's tiles take the cluster sharing the larger operand's tiles.
  EXPECT_EQ(big.tile.cluster_shape, (std::array<int, 3>{1, 2, 1})) << big.name();
  // A 16-bit plan has no fast-accumulation kernels: a clear error.
  Gemm bf16(plan_of(DataType::bf16, R, R, R));
  auto b = bf16.settings();
  b.math = MathOperation::MultiplyAddFastAccum;
  EXPECT_THROW(bf16.set_settings(b), InvalidArgumentError);
}

// fp8 in layouts the tensor cores do not read runs SIMT kernels (as int8's do), of one type for A and B; those
// read no device scales (SM90's epilogues do): a run giving some is refused before anything launches.
TEST(GemmPlan, Fp8OnTheCudaCoresTakesNoDeviceScales) {
  GemmOptions o = plan_of(DataType::e4m3, R, R, R);
  o.element_c = o.element_d = DataType::bf16;
  Gemm simt(o);
  const GemmConfig c = pick(simt, 197, 131, 61);
  EXPECT_EQ(c.opclass, OpcodeClass::Simt) << c.name();
  EXPECT_EQ(c.arch, 80) << c.name();
  alignas(16) static uint8_t a[197 * 64], b[64 * 136];
  alignas(16) static uint16_t d[197 * 136];
  alignas(16) static float scale[1];
  const TensorRef A = TensorRef::matrix(a, DataType::e4m3, 197, 61, R), B = TensorRef::matrix(b, DataType::e4m3, 61, 131, R);
  const TensorRef D = TensorRef::matrix(d, DataType::bf16, 197, 131, R);
  EXPECT_NE(test::message_of<InvalidArgumentError>([&] {
              simt.run(A, B, {}, D, 1.0, 0.0, nullptr, {}, {TensorRef::vector(scale, DataType::f32, 1), {}});
            }).find("scale_a, scale_b: this plan's SIMT kernels read no scales"),
            std::string::npos);
  EXPECT_THROW(simt.check(A, B, {}, D, 1.0, 0.0, {{}, TensorRef::vector(scale, DataType::f32, 1)}),
               InvalidArgumentError)
      << "check(), which callers run before copying operands to the GPU, refuses them too";
  EXPECT_NO_THROW(simt.check(A, B, {}, D, 1.0, 0.0));
  GemmOptions mixed = o;
  mixed.element_b = DataType::e5m2;
  EXPECT_THROW(Gemm{mixed}, InvalidArgumentError) << "no SIMT kernel of two fp8 types";
}

TEST(GemmPlan, Tf32OfEveryLayoutRunsOnSm90ThroughKMajorCopies) {
  // wgmma reads 32-bit operands only K-major: a row-major B (or column-major A) is copied K-major
  // into the workspace first, which the model counts, and large problems still take SM90 kernels.
  for (auto [la, lb] : {std::pair{R, R}, std::pair{C, C}, std::pair{C, R}}) {
    Gemm g(plan_of(DataType::f32, la, lb, R));
    EXPECT_EQ(g.kernel_cc(), 90);
    const auto picked = pick(g, 4096, 4096, 4096);
    EXPECT_EQ(picked.arch, 90) << picked.name();
    const auto staged = library::staged_k_major(picked);
    EXPECT_EQ(staged.a, la == C);
    EXPECT_EQ(staged.b, lb == R);
  }
  // A small M reads B once: copying it first costs more than the GEMM (H200: the copying SM90 kernel
  // ran 128x14336x4096 at 0.30x of cuBLAS). There the swapped kernel reads B through registers (CUTLASS's,
  // timed at 200 TFLOP/s where SM80's 128x128x32 ran 156); at 16 rows SM80's mma.sync in parallel slices.
  Gemm rr(plan_of(DataType::f32, R, R, R));
  const auto narrow = pick(rr, 128, 14336, 4096);
  EXPECT_TRUE(narrow.tile.swap_ab && library::register_sourced(library::swapped_kernel(narrow))) << narrow.name();
  EXPECT_EQ(pick(rr, 16, 4096, 4096).arch, 80);
  // SM80's stream-K CTAs, one to an SM, run alone as parallel split-K's slices do: on the H200 the stream-K
  // pick ran 16x4096x4096 in 30.2 µs where 4 parallel slices of 64x64x32 took 24.1 (cuBLAS 25.2), and
  // 128x14336x4096 alike with and without stream-K (96.9 and 96.2 µs).
  EXPECT_TRUE(pick(rr, 16, 4096, 4096).parallel_split_k) << pick(rr, 16, 4096, 4096).name();
  EXPECT_EQ(pick(rr, 128, 14336, 4096).tile.tile_scheduler, TileScheduler::Default);
  EXPECT_EQ(pick(rr, 8192, 8192, 8192).arch, 90);
  // One wave at 1024³: SM80's TF32 kernels run slower than the 16-bit terms say
  // (CostModel::sm80_tf32_time_factor), the copying SM90 kernel ran it as fast as cuBLAS on the H200.
  EXPECT_EQ(pick(rr, 1024, 1024, 1024).arch, 90);
  select::CostModel as_16_bit;
  as_16_bit.sm80_tf32_time_factor = 1.0;
  const auto ranked = rr.rank(rr.shape(1024, 1024, 1024)).ranked;
  const auto sm80 = std::find_if(ranked.begin(), ranked.end(), [](const auto& c) { return c.config.arch == 80; });
  ASSERT_NE(sm80, ranked.end());
  EXPECT_NEAR(select::estimated_time_us(sm80->config, rr.shape(1024, 1024, 1024), 1, true, 132, as_16_bit) *
                  select::CostModel{}.sm80_tf32_time_factor,
              sm80->estimated_us, 1e-9);
  EXPECT_LT(select::estimated_time_us(sm80->config, rr.shape(1024, 1024, 1024), 1, true, 132, as_16_bit),
            ranked.front().estimated_us);
  // K of whole vectors: the copies are read along K.
  EXPECT_EQ(pick(rr, 264, 136, 130).arch, 80);
  Gemm k_major(plan_of(DataType::f32, R, C, R));
  EXPECT_FALSE(library::staged_k_major(pick(k_major, 1024, 1024, 1024)).any());
  EXPECT_EQ(pick(k_major, 1024, 1024, 1024).alignment_a, 4);
  // The copy is counted: the same kernel costs more when it must stage B.
  GemmConfig copying = pick(k_major, 4096, 4096, 4096);
  copying.layout_b = R;
  const GemmShape shape{4096, 4096, 4096, 1, 4, 4, 4};
  EXPECT_GT(select::estimated_time_us(copying, shape, 1, true, 132),
            select::estimated_time_us(pick(k_major, 4096, 4096, 4096), shape, 1, true, 132));
}

// TF32 of a row-major A and B also runs swapped (D^T = B^T A^T): B^T, N-major, is the kernel's A, which
// CUTLASS's register-sourced mainloop reads through registers, so nothing is copied. Two cooperative
// tiles, alone or in 2x1 clusters (128x128 also in 4x1), data-parallel (and the 128x256 stream-K), for an M past half the tile's
// N; A^T is the kernel's K-major B (a column-major A would have CUTLASS swap back inside, behind its
// transposed epilogue).
TEST(GemmPlan, SwappedTf32ReadsARowMajorBThroughRegisters) {
  std::vector<GemmConfig> rows;
  for (const auto& c : library::gemm_catalog(90))
    if (c.tile.swap_ab && c.element_a == DataType::f32) rows.push_back(c);
  ASSERT_EQ(rows.size(), 7u);
  for (const auto& c : rows) {
    EXPECT_TRUE(c.layout_a == R && c.layout_b == R && c.math == MathOperation::MultiplyAdd) << c.name();
    EXPECT_EQ(c.tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedCooperative);
    EXPECT_FALSE(library::staged_k_major(c).any()) << "nothing copied K-major";
    const GemmConfig kernel = library::swapped_kernel(c);
    EXPECT_TRUE(kernel.layout_a == C && kernel.layout_b == C) << "B^T N-major, A^T K-major";
    EXPECT_TRUE(library::register_sourced(kernel));
  }
  const GemmConfig& rs = rows.front();
  EXPECT_FALSE(library::register_sourced(rs)) << "a plan's configuration; its kernel is";
  const std::string src = emit::gemm_source(rs);
  EXPECT_TRUE(contains(src, "sm90_mma_tma_gmma_rs_warpspecialized.hpp"));
  EXPECT_FALSE(contains(src, "sm90_mma_tma_gmma_ss_warpspecialized.hpp"));
  EXPECT_TRUE(contains(src, "using LayoutC = cutlass::layout::ColumnMajor;")) << "D^T, D's own memory";
  EXPECT_TRUE(contains(src, "Swapped to read the row-major B as it is"));
  // The model: the swapped kernel on the transposed problem, its math at register_sourced_fraction, no copy.
  const GemmShape compute_bound{4096, 4096, 4096, 1, 4, 4, 4};
  select::CostModel as_shared;
  as_shared.register_sourced_fraction = 1.0;
  EXPECT_GT(estimate(rs, compute_bound), 1.3 * select::estimated_time_us(rs, compute_bound, 1, true, 132, as_shared));
  // Large problems keep the copy; an M past half the tile's N may run swapped (M = 512); a pinned tile runs it.
  Gemm rr(plan_of(DataType::f32, R, R, R));
  EXPECT_FALSE(pick(rr, 4096, 4096, 4096).tile.swap_ab);
  EXPECT_TRUE(pick(rr, 512, 4096, 4096).tile.swap_ab) << pick(rr, 512, 4096, 4096).name();
  const TileDescription pinned = rs.tile;
  change(rr, [&](select::GemmSettings& s) { s.tile = pinned; });
  EXPECT_EQ(pick(rr, 4096, 4096, 4096).name(), rs.name());
  // Column-major A: no swapped TF32 kernel (the copy of A, or SM80).
  Gemm cr(plan_of(DataType::f32, C, R, R));
  EXPECT_FALSE(pick(cr, 128, 14336, 4096).tile.swap_ab);
}

// Where the register-sourced kernels run, as an H100 timed them (cuforge profile, f32, rrr): the 128x256
// tile's math at register_sourced_wide_fraction, ahead of the copying kernel at 2048³ (55.3 µs against
// 61.0) but not from 4096³ on (402.8 against 394.3); its stream-K over a few tiles of long K (512x4096x4096
// 68.4 µs, 256x8192x8192 136.9, where the data-parallel swapped picks ran 88.7 and 182.3); nothing swapped
// up to 64 rows (SM80's kernels 1.2-1.4x as fast there); on ties 2x1 clusters ahead of 1x1 (0-14%), and
// the 128x128 tile's 4x1 ahead of 2x1 (128x14336x4096: 91.4 µs against 95.4). An H200 ran 512x2048x2048 on
// the 128x128 in 4x1 in 23.8 µs, where the 128x256's split-K x4 (the pick before
// register_sourced_stream_k_overhead) took 31.0-31.4.
TEST(GemmPlan, RegisterSourcedTf32RunsWhereItWasTimedAhead) {
  Gemm rr(plan_of(DataType::f32, R, R, R));
  auto is = [&](int64_t m, int64_t n, int64_t k, int tile_n, TileScheduler scheduler) {
    const GemmConfig c = pick(rr, m, n, k);
    return c.tile.swap_ab && c.tile.threadblock_shape[1] == tile_n && c.tile.tile_scheduler == scheduler &&
           c.tile.cluster_shape == (tile_n == 128 ? std::array<int, 3>{4, 1, 1} : std::array<int, 3>{2, 1, 1});
  };
  EXPECT_TRUE(is(2048, 2048, 2048, 256, TileScheduler::Default)) << pick(rr, 2048, 2048, 2048).name();
  EXPECT_TRUE(is(512, 4096, 4096, 256, TileScheduler::StreamK)) << pick(rr, 512, 4096, 4096).name();
  EXPECT_TRUE(is(256, 8192, 8192, 256, TileScheduler::StreamK)) << pick(rr, 256, 8192, 8192).name();
  EXPECT_TRUE(is(128, 14336, 4096, 128, TileScheduler::Default)) << pick(rr, 128, 14336, 4096).name();
  EXPECT_TRUE(is(512, 2048, 2048, 128, TileScheduler::Default)) << pick(rr, 512, 2048, 2048).name();
  for (auto [m, n, k] : {std::array<int64_t, 3>{4096, 4096, 4096}, {8192, 8192, 8192}, {1024, 1024, 1024}})
    EXPECT_FALSE(pick(rr, m, n, k).tile.swap_ab) << m << "x" << n << "x" << k;
  for (int64_t m : {16, 32, 64}) EXPECT_EQ(pick(rr, m, 14336, 4096).arch, 80) << m;
  EXPECT_TRUE(pick(rr, 96, 14336, 4096).tile.swap_ab);
}

// The 128x128 register-sourced kernel runs faster where its tiles leave SMs idle (1024³: 64 tiles on 132 SMs),
// up to CostModel::register_sourced_lone_fraction of the shared-memory rate; with every SM busy (2048³) it
// stays at register_sourced_fraction. The 128x256 one is priced alike everywhere.
TEST(GemmPlan, RegisterSourcedTf32RunsFasterOnFewerSms) {
  Gemm rr(plan_of(DataType::f32, R, R, R));
  const auto swapped = [&](int tile_n) {
    for (const auto& c : rr.rank(rr.shape(2048, 2048, 2048)).ranked)
      if (c.config.tile.swap_ab && c.config.tile.threadblock_shape[1] == tile_n &&
          c.config.tile.tile_scheduler == TileScheduler::Default)
        return c.config;
    ADD_FAILURE() << "no data-parallel swapped kernel of tile N " << tile_n;
    return GemmConfig{};
  };
  const select::CostModel model;
  select::CostModel all_busy;
  all_busy.register_sourced_lone_fraction = all_busy.register_sourced_fraction;
  const auto estimate_with = [&](const GemmConfig& c, int64_t size, const select::CostModel& m) {
    return select::estimated_time_us(c, rr.shape(size, size, size), 1, true, 132, m);
  };
  const GemmConfig narrow = swapped(128), wide = swapped(256);
  EXPECT_LT(estimate_with(narrow, 1024, model), 0.85 * estimate_with(narrow, 1024, all_busy));
  EXPECT_DOUBLE_EQ(estimate_with(narrow, 2048, model), estimate_with(narrow, 2048, all_busy));
  EXPECT_DOUBLE_EQ(estimate_with(wide, 1024, model), estimate_with(wide, 1024, all_busy));
  select::CostModel below;  // a lone fraction under the all-busy one never slows the kernel
  below.register_sourced_lone_fraction = 0.5 * below.register_sourced_fraction;
  EXPECT_DOUBLE_EQ(estimate_with(narrow, 1024, below), estimate_with(narrow, 1024, all_busy));
}

// Clusters of four take a GPC's SMs in fours (CostModel::cluster_of_four_sm_fraction): 128 tiles of the 128x128
// in 4x1 are two waves (an H100: 121 µs against 85 in 2x1 at 512x4096x4096), 112 one (128x14336x4096).
TEST(GemmPlan, ClustersOfFourHoldFewerSmsThanTheGpuHas) {
  Gemm rr(plan_of(DataType::f32, R, R, R));
  const auto cluster_time = [&](int64_t m, int64_t n, int64_t k, int cluster_m) {
    for (const auto& c : rr.rank(rr.shape(m, n, k)).ranked)
      if (c.config.tile.swap_ab && c.config.tile.threadblock_shape[1] == 128 && c.splits == 1 &&
          c.config.tile.tile_scheduler == TileScheduler::Default && c.config.tile.cluster_shape[0] == cluster_m)
        return select::estimated_time_us(c.config, rr.shape(m, n, k), 1, true, 132);  // an H100's or H200's SMs
    ADD_FAILURE() << "no swapped 128x128 kernel in " << cluster_m << "x1 clusters";
    return 0.0;
  };
  EXPECT_GT(cluster_time(512, 4096, 4096, 4), 1.5 * cluster_time(512, 4096, 4096, 2));
  EXPECT_DOUBLE_EQ(cluster_time(128, 14336, 4096, 4), cluster_time(128, 14336, 4096, 2));
  // In full waves the SMs a cluster of four leaves idle speed nothing up (4096³: 1024 tiles).
  EXPECT_GT(cluster_time(4096, 4096, 4096, 4), cluster_time(4096, 4096, 4096, 2));
}

TEST(GemmPlan, Sm90ThreeTf32RunsItsPiecesAlongATripledK) {
  // 3xTF32 on SM90 copies both operands as three pieces each along K: the model prices the TF32
  // kernel over 3 K (each piece's K padded to 16 bytes) plus the copies, which read each operand once
  // and write it three times.
  Gemm g(plan_of(DataType::f32, R, C, R));
  change(g, [](select::GemmSettings& s) { s.math = MathOperation::MultiplyAddFastF32; });
  const GemmConfig big = pick(g, 8192, 8192, 8192);
  EXPECT_EQ(big.arch, 90) << big.name();
  EXPECT_EQ(big.math, MathOperation::MultiplyAddFastF32);
  const library::StagedOperands staged = library::staged_k_major(big);
  EXPECT_TRUE(staged.a && staged.b) << "K-major operands are split too";
  EXPECT_EQ(staged.k_pieces, 3);
  EXPECT_EQ(staged.kernel_k(130), 3 * 132);
  const GemmConfig kernel = library::staged_kernel(big);
  EXPECT_EQ(kernel.math, MathOperation::MultiplyAdd) << "the pieces are plain TF32 products";
  const GemmShape shape{8192, 8192, 8192, 1, 4, 4, 4};
  const GemmShape tripled{8192, 8192, 3 * 8192, 1, 4, 4, 4};
  const double copies_us = estimate(big, shape) - estimate(kernel, tripled);
  const double bytes = 2.0 * 8192 * 8192 * 4 * (1 + 3);
  const select::CostModel model;
  EXPECT_NEAR(copies_us, 2 * model.launch_us + bytes / (4.0e12 * model.transpose_bandwidth_fraction) * 1e6, 1.0);
  // Any K: the pieces' padding is zeros, read by the kernel; SM80's 3xTF32 costs three products.
  EXPECT_EQ(pick(g, 4096, 4096, 4093).arch, 90);
  Gemm sm80(plan_of(DataType::f32, R, C, R, 80));
  change(sm80, [](select::GemmSettings& s) { s.math = MathOperation::MultiplyAddFastF32; });
  GemmConfig three = pick(sm80, 4096, 4096, 4096), one = three;
  one.math = MathOperation::MultiplyAdd;
  const GemmShape square{4096, 4096, 4096, 1, 4, 4, 4};
  select::CostModel products_only;  // without the factor SM80's TF32 kernels (one product a step) take
  products_only.sm80_tf32_time_factor = 1.0;
  auto with = [&](const GemmConfig& c) { return select::estimated_time_us(c, square, 1, true, 132, products_only); };
  EXPECT_GT(with(three), 2.5 * with(one));
  EXPECT_EQ(estimate(three, square), with(three)) << "3xTF32 keeps the 16-bit terms";
}

}  // namespace
}  // namespace cuforge
