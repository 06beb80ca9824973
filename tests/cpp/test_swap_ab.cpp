// Swapped kernels for small M (TileDescription::swap_ab): the catalog's rows and their rules, the
// kernel they instantiate (D^T = B^T A^T over the same arguments), the cost model's view of them,
// and where the plan chooses them.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "cuforge/emit/gemm.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/select/gemm_choice.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "gemm_plan_support.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using library::GemmConfig;
using namespace test;

std::vector<const GemmConfig*> swapped_rows() {
  std::vector<const GemmConfig*> out;
  for (const auto& c : library::gemm_catalog(90))
    if (c.tile.swap_ab) out.push_back(&c);
  return out;
}

// The swapped bf16 row of these layouts, tile, tile scheduler and cluster.
const GemmConfig& swapped(std::string_view layouts, int tile_m, int tile_n,
                          TileScheduler scheduler = TileScheduler::Default,
                          std::array<int, 3> cluster = {1, 1, 1}) {
  for (const GemmConfig* c : swapped_rows())
    if (c->element_a == DataType::bf16 && c->element_d == DataType::bf16 &&
        c->element_accumulator == DataType::f32 && c->tile.threadblock_shape[0] == tile_m &&
        c->tile.threadblock_shape[1] == tile_n && c->tile.tile_scheduler == scheduler &&
        c->tile.cluster_shape == cluster &&
        c->name().find(std::string("_") + std::string(layouts) + "_") != std::string::npos)
      return *c;
  throw std::runtime_error("no swapped row " + std::string(layouts));
}

TEST(SwapAb, RowsAreSm90GemmsOfNarrowTilesWhoseNamesRoundTrip) {
  const auto rows = swapped_rows();
  ASSERT_EQ(rows.size(), 1123u);  // test_catalog.cpp's per-family table counts them too
  for (const GemmConfig* c : rows) {
    EXPECT_EQ(c->kind, KernelKind::Gemm);
    // TF32's rows read a row-major B through registers (test_precision_choice.cpp): wide tiles, for an M past half.
    const bool tf32 = c->element_a == DataType::f32;
    EXPECT_EQ(tf32, library::register_sourced(library::swapped_kernel(*c))) << c->name();
    EXPECT_LE(c->tile.threadblock_shape[1], tf32 ? 256 : 64) << c->name();
    // One CTA, or two along the problem's M (the kernel's N) sharing each B^T tile; TF32's two along the
    // problem's N, sharing each A^T tile (or four, on its 128x128 tile).
    const auto& cluster = c->tile.cluster_shape;
    EXPECT_TRUE(cluster == (std::array<int, 3>{1, 1, 1}) ||
                cluster == (tf32 ? std::array<int, 3>{2, 1, 1} : std::array<int, 3>{1, 2, 1}) ||
                (tf32 && c->tile.threadblock_shape[1] == 128 && cluster == std::array<int, 3>{4, 1, 1}))
        << c->name();
    EXPECT_EQ(c->layout_c, Layout::RowMajor) << "the problem's D";
    EXPECT_TRUE(contains(c->name(), "_swapab")) << c->name();
    EXPECT_TRUE(library::parse_gemm_name(c->name()) == *c) << c->name();
  }
  GemmConfig unswapped = *rows.front();
  unswapped.tile.swap_ab = false;
  EXPECT_FALSE(unswapped == *rows.front());
}

TEST(SwapAb, TheKernelComputesTheTransposedProblem) {
  GemmConfig c = swapped("rcr", 128, 16);
  c.alignment_c = 4;  // distinct alignments, to see which one goes where
  const GemmConfig k = library::swapped_kernel(c);
  EXPECT_FALSE(k.tile.swap_ab);
  EXPECT_EQ(k.tile.threadblock_shape, c.tile.threadblock_shape);
  // A' = B^T: the column-major B read row-major; B' = A^T: the row-major A read column-major.
  EXPECT_EQ(k.layout_a, R);
  EXPECT_EQ(k.layout_b, C);
  EXPECT_EQ(k.layout_c, C) << "D^T, column-major";
  EXPECT_EQ(k.alignment_a, c.alignment_b);
  EXPECT_EQ(k.alignment_b, c.alignment_a);
  EXPECT_EQ(k.alignment_c, 4);
}

TEST(SwapAb, RefusedConfigurationsSayWhy) {
  const GemmConfig base = swapped("rrr", 128, 16);
  auto why = [](GemmConfig c) { return library::why_invalid(c).value_or(""); };
  EXPECT_TRUE(contains(why(changed(base, [](auto& c) { c.parallel_split_k = true; })), "stream-K"));
  EXPECT_TRUE(contains(why(changed(base, [](auto& c) { c.kind = KernelKind::Grouped; })), "SM90 GEMMs"));
  EXPECT_TRUE(contains(why(changed(base, [](auto& c) { c.layout_c = C; })), "row-major"));
  // TF32: the register-sourced tiles of a row-major A only (test_precision_choice.cpp).
  const GemmConfig tf32 = changed(base, [](auto& c) { c.element_a = c.element_b = c.element_c = c.element_d = DataType::f32; });
  EXPECT_TRUE(contains(why(tf32), "N of 128 or 256"));
  EXPECT_TRUE(contains(why(changed(tf32, [](auto& c) { c.layout_a = C; })), "row-major A"));
  // The transposed kernel's own rules: 8-bit operands only K-major (B^T row-major: B column-major).
  GemmConfig fp8 = base;
  fp8.element_a = fp8.element_b = DataType::e4m3;
  fp8.tile.threadblock_shape[2] = 128;
  fp8.alignment_a = fp8.alignment_b = 16;
  EXPECT_TRUE(contains(why(fp8), "its kernel on the transposed problem: wgmma reads 8-bit operands only K-major"));
  fp8.layout_b = C;
  EXPECT_EQ(why(fp8), "");
}

// A 1x2 cluster is the kernel's, along its N: the problem's M, whose two tiles share each tile of the
// kernel's A (B^T) by multicast.
TEST(SwapAb, AClusterOfTwoSpansTheProblemsM) {
  const GemmConfig& c = swapped("rrr", 64, 32, TileScheduler::Default, {1, 2, 1});
  EXPECT_TRUE(contains(c.name(), "_64x32x128_c1x2x1_")) << c.name();
  EXPECT_EQ(library::swapped_kernel(c).tile.cluster_shape, (std::array<int, 3>{1, 2, 1}));
  const std::string src = emit::gemm_source(c);
  EXPECT_TRUE(contains(src, "using ClusterShape = Shape<_1, _2, _1>;"));
  EXPECT_TRUE(contains(src, "args.problem_shape = {int(p.n), int(p.m), int(p.k), int(p.batch)};"));
}

TEST(SwapAb, TheSourceRunsTheSameArgumentsTransposed) {
  const std::string src = emit::gemm_source(swapped("rrr", 64, 16));
  EXPECT_TRUE(contains(src, "D^T = B^T A^T"));
  EXPECT_TRUE(contains(src, "using LayoutA = cutlass::layout::ColumnMajor;"));  // B^T of a row-major B
  EXPECT_TRUE(contains(src, "using LayoutB = cutlass::layout::ColumnMajor;"));  // A^T of a row-major A
  EXPECT_TRUE(contains(src, "using LayoutC = cutlass::layout::ColumnMajor;"));
  EXPECT_TRUE(contains(src, "args.problem_shape = {int(p.n), int(p.m), int(p.k), int(p.batch)};"));
  EXPECT_TRUE(contains(src, "ptr_A = static_cast<const ElementA*>(p.b);"));
  EXPECT_TRUE(contains(src, "ptr_B = static_cast<const ElementB*>(p.a);"));
  // A' (N x K) is B's memory, unit stride along N; B' (M x K) is A's, unit stride along K.
  EXPECT_TRUE(contains(src, "args.mainloop.dA = cute::make_stride(cute::Int<1>{}, p.ldb, p.batch_stride_b);"));
  EXPECT_TRUE(contains(src, "args.mainloop.dB = cute::make_stride(p.lda, cute::Int<1>{}, p.batch_stride_a);"));
  EXPECT_TRUE(contains(src, "args.epilogue.dD = cute::make_stride(cute::Int<1>{}, p.ldd, p.batch_stride_d);"));
  EXPECT_TRUE(contains(src, "args.epilogue.dC = cute::make_stride(cute::Int<1>{}, p.ldc, p.batch_stride_c);"));

  // The problem's bias row is a column of D^T.
  GemmConfig bias = swapped("rrr", 64, 16);
  bias.bias = true;
  const std::string with_bias = emit::gemm_source(bias);
  EXPECT_TRUE(contains(with_bias, "fusion::Sm90ColBroadcast<0, TileShape, ElementC"));
  EXPECT_TRUE(contains(with_bias, "cute::make_stride(cute::Int<1>{}, cute::Int<0>{}, p.batch_stride_c)"));
  EXPECT_FALSE(contains(with_bias, "Sm90RowBroadcast"));
}

TEST(SwapAb, TheModelEstimatesTheTransposedKernelOnTheTransposedProblem) {
  const GemmConfig& c = swapped("rcr", 128, 32, TileScheduler::StreamK);
  const GemmShape p{16, 14336, 4096, 1};
  for (int splits : {1, 4})
    EXPECT_DOUBLE_EQ(select::estimated_time_us(c, p, splits, true, 132),
                     select::estimated_time_us(library::swapped_kernel(c), transposed_shape(p), splits, true, 132));
}

// Up to 64 rows (H200, bench/clusters.py: at 64x4096x4096 the swapped 64x32 tile in 1x2 clusters ran
// 8.50 us where the unswapped 64x64 pick ran 10.14, cuBLAS 8.99).
TEST(SwapAb, SmallMPicksASwappedKernelWhoseClusterHoldsM) {
  for (Layout b : {R, C}) {
    Gemm g(plan_of(DataType::bf16, R, b, R));
    for (int64_t m : {1, 16, 32, 64}) {
      const GemmConfig c = pick(g, m, 4096, 4096);
      EXPECT_TRUE(c.tile.swap_ab) << m << ": " << c.name();
      EXPECT_LE(m, c.tile.threadblock_shape[1] * c.tile.cluster_shape[1]) << c.name();
    }
    for (int64_t m : {128, 4096}) EXPECT_FALSE(pick(g, m, 4096, 4096).tile.swap_ab) << m;
    // With a bias row too (a column of D^T).
    const GemmConfig biased = pick(g, 16, 4096, 4096, 1, true);
    EXPECT_TRUE(biased.tile.swap_ab && biased.bias) << biased.name();
  }
  // M past every swapped cluster's tiles along N (two 64-wide tiles): the swapped rows are refused, saying why.
  Gemm g(plan_of(DataType::bf16, R, R, R));
  const auto ranking = g.rank(g.shape(136, 4096, 4096));
  bool said = false;
  for (const auto& [name, why] : ranking.refused)
    if (contains(name, "_swapab")) {
      EXPECT_TRUE(contains(why, "fits its cluster's tiles along N")) << why;
      said = true;
    }
  EXPECT_TRUE(said);
  for (const auto& c : ranking.ranked) EXPECT_FALSE(c.config.tile.swap_ab) << c.config.name();
}

// One wave of 128-row swapped tiles over two of 64-row ones (CostModel::wave_latency_us): the H200
// ran 16x14336x4096 on 128x16 cooperative at 1.00-1.01x cuBLAS, on 64x16 ping-pong at 0.94-0.97x
// (bench/small_m.py, three sweeps); at 16x4096x4096, one wave either way, 64x16 stays (1.04-1.07x).
TEST(SwapAb, OneWaveOfTallerSwappedTilesWinsOverTwoOfShorterOnes) {
  for (DataType t : {DataType::bf16, DataType::f16}) {
    Gemm g(plan_of(t, R, R, R));
    const GemmConfig wide = pick(g, 16, 14336, 4096);
    EXPECT_TRUE(wide.tile.swap_ab) << wide.name();
    EXPECT_EQ(wide.tile.threadblock_shape[0], 128) << wide.name();
    const GemmConfig narrow = pick(g, 16, 4096, 4096);
    EXPECT_EQ(narrow.tile.threadblock_shape[0], 64) << narrow.name();
  }
}

TEST(SwapAb, APinnedSwappedTileRunsAnyM) {
  Gemm g(plan_of(DataType::f16, R, C, R));
  TileDescription t = swapped("rcr", 128, 16).tile;
  change(g, [&](auto& s) { s.tile = t; });
  for (int64_t m : {1, 4096}) {
    const GemmConfig c = pick(g, m, 4096, 4096);
    EXPECT_TRUE(c.tile == t) << c.name();
    EXPECT_TRUE(in_catalog(c)) << c.name();
  }
  // The same tile unswapped is a different description, and not the swapped kernel.
  t.swap_ab = false;
  change(g, [&](auto& s) { s.tile = t; });
  EXPECT_FALSE(pick(g, 16, 4096, 4096).tile.swap_ab);
}

}  // namespace
}  // namespace cuforge
