#include "cuforge/library/catalog.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <deque>
#include <iterator>
#include <map>
#include <mutex>

#include "cuforge/library/math_instruction.hpp"

namespace cuforge::library {
namespace {

// CTA tiles: M and N in elements, K in bytes of the A/B type (so one table serves every width).
struct Sm90Tile {
  int m, n;
  KernelSchedule schedule;
  int stages = 0;  // 0: as many as fit
};
constexpr int kSm90TileKBytes = 128;
const std::vector<Sm90Tile> kSm90Tiles = {
    {128, 64, KernelSchedule::TmaWarpSpecializedCooperative},
    {128, 128, KernelSchedule::TmaWarpSpecializedCooperative},
    {128, 256, KernelSchedule::TmaWarpSpecializedCooperative},
    {256, 64, KernelSchedule::TmaWarpSpecializedCooperative},
    {256, 128, KernelSchedule::TmaWarpSpecializedCooperative},
    {64, 64, KernelSchedule::TmaWarpSpecializedPingpong},
    {64, 128, KernelSchedule::TmaWarpSpecializedPingpong},
    {64, 256, KernelSchedule::TmaWarpSpecializedPingpong},
    {128, 64, KernelSchedule::TmaWarpSpecializedPingpong},
    {128, 128, KernelSchedule::TmaWarpSpecializedPingpong},
};
// fp8's promoted accumulation holds two accumulators, which rules out the 128-register tiles above
// (256x128, 128x256, ...): these fill the gap with 96 registers each.
const std::vector<Sm90Tile> kSm90PromotedTiles = {
    {128, 192, KernelSchedule::TmaWarpSpecializedCooperative},
    {256, 96, KernelSchedule::TmaWarpSpecializedCooperative},
    {64, 192, KernelSchedule::TmaWarpSpecializedPingpong},
};
bool promoted_fp8(const MathInstruction& mi) {
  return is_fp8(mi.a) && mi.math == MathOperation::MultiplyAdd;
}
const std::vector<Sm90Tile>& sm90_tiles(const MathInstruction& mi) {
  static const std::vector<Sm90Tile> promoted = [] {
    std::vector<Sm90Tile> all = kSm90Tiles;
    all.insert(all.end(), kSm90PromotedTiles.begin(), kSm90PromotedTiles.end());
    return all;
  }();
  return promoted_fp8(mi) ? promoted : kSm90Tiles;
}
// The other families' GEMMs (not grouped: not measured there) also take the promoted families'
// 128x192, data-parallel: where 128-wide tiles leave the last wave short (1536 and 3072 square: 144
// and 576 tiles of 128x128 on 132 SMs) and 256-wide ones fill too few, as cuBLAS's 192-wide tiles do
// there. Its stream-K kernel ran 0.73-0.88x of 128x128's (bench/NOTES.md, "192-wide tiles").
const Sm90Tile kSm90WideTile = {128, 192, KernelSchedule::TmaWarpSpecializedCooperative};
// CUTLASS's non-persistent kernel (KernelTmaWarpSpecialized: one consumer warpgroup, the CTA's tile
// from blockIdx, so no tile scheduler, no register reallocation), for problems of about one wave,
// whose run a persistent kernel's longer setup dominates (bench/NOTES.md, "Where a one-wave
// kernel's time goes, alone"). GEMMs only, data-parallel.
const std::vector<Sm90Tile> kSm90PerTileTiles = {
    {64, 64, KernelSchedule::TmaWarpSpecialized},   {64, 128, KernelSchedule::TmaWarpSpecialized},
    {64, 256, KernelSchedule::TmaWarpSpecialized},  {128, 64, KernelSchedule::TmaWarpSpecialized},
    {128, 128, KernelSchedule::TmaWarpSpecialized},
};
// Swapped kernels (TileDescription::swap_ab) for small M: the problem's M on the tile's N, 16 to 64 wide;
// the tile's M (128 cooperative, 64 ping-pong) along the problem's N; K 128 elements deep (16-bit: 256
// bytes, which ran 64x16 ping-pong 1.04x cuBLAS at 16x4096x4096 on the H200 where 128 bytes ran
// 0.99x, bench/small_m.py). Clusters of one CTA, or of two along the problem's M, which share each
// B^T tile by multicast (cuBLAS runs 64x4096x4096 so: a 64x32 tile in 1x2 clusters).
constexpr int kSwappedTileK = 128;
const std::vector<std::array<int, 3>> kSm90SwappedClusters = {{1, 1, 1}, {1, 2, 1}};
const std::vector<Sm90Tile> kSm90SwappedTiles = {
    {128, 16, KernelSchedule::TmaWarpSpecializedCooperative}, {128, 32, KernelSchedule::TmaWarpSpecializedCooperative},
    {128, 64, KernelSchedule::TmaWarpSpecializedCooperative}, {64, 16, KernelSchedule::TmaWarpSpecializedPingpong},
    {64, 32, KernelSchedule::TmaWarpSpecializedPingpong},     {64, 64, KernelSchedule::TmaWarpSpecializedPingpong},
};
// TF32's swapped kernels of a row-major A and B: Bᵀ, N-major, is the kernel's A, which CUTLASS's
// register-sourced mainloop reads through registers (library::register_sourced), where the other SM90
// TF32 kernels copy B K-major first. The tiles CUTLASS's mainloop was timed with on the H200 (cooperative,
// the tile's M along the problem's N; bench/tf32_mainloops.cu: 128x128 ran 128x14336x4096 at 200 TFLOP/s
// where the catalog's SM80 pick ran 156), for an M past half the tile's N (select::swap_fits), alone or in 2x1 clusters
// (two tiles along the problem's N sharing each Aᵀ tile; the 128x128 tile also in 4x1, below). On an H100
// (cuforge profile, f32): 2x1 ran 0-14% ahead of 1x1 on every shape, 1x2 (sharing the register operand)
// 3-90% behind, so it is left out.
// The 128x128 tile also in 4x1 clusters, which take the ties where they pad no tile (select::tie_rank; the
// model prices clusters alike): on an H100 (cuforge profile, bench/results/h100-2026-12-05-tf32-register-
// sourced-4x1-probe.txt and h100-2026-12-06-tf32-clusters-profile.txt) it ran 128x14336x4096 in 91.3-91.4 µs
// against 95.4-95.6 in 2x1 and 1024³ in 14.6-14.7 against 14.8-15.1, 512x2048x2048 in 24.93 against 24.85;
// 128x256 ran 2048³ 1.7x slower in 4x1 than in 2x1. A cluster stays within one GPC, so fewer clusters of four run
// at once than the SMs would hold (select::CostModel::cluster_of_four_sm_fraction: an H100 ran 128 tiles in 4x1 as
// two waves).
// Stream-K on the 128x256 tile only: it ran 512x4096x4096 and 256x8192x8192 (64 tiles each) 1.3x as fast
// as the data-parallel pick. On the 128x128 tile it lost wherever its rival was timed: 1.4x slower at 1024³ and
// 3% at 128x14336x4096 (H100, 2026-12-05); on an H100 again, in µs
// (bench/results/h100-2026-12-06-tf32-rs-streamk-profile.txt), 92.2 at 128x14336x4096 against 91.5, and where
// the model, which knows no such loss, picked it: 30.3 at 512x2048x2048 against the data-parallel 128x128's
// 24.9, 16.0 at 768³ against 10.7, 80.9 at 384x2048x8192 against the shipped pick's 79.5 (the 128x256's
// stream-K x4 in 2x1; 71.0 in 1x1). At 512x1024x4096, the fourth, it was the fastest register-sourced kernel
// (33.1 in 4x1; the model's 2x1 split-K x4 34.8; cuBLAS 29.3), beside a shipped pick (the copying 128x64's
// stream-K) not timed there.
const std::vector<Sm90Tile> kSm90RegisterSourcedTiles = {
    {128, 128, KernelSchedule::TmaWarpSpecializedCooperative},
    {128, 256, KernelSchedule::TmaWarpSpecializedCooperative},
};
constexpr int kRegisterSourcedStreamKTileN = 256;
std::vector<std::array<int, 3>> register_sourced_clusters(const Sm90Tile& t) {
  if (t.n == kRegisterSourcedStreamKTileN) return {{2, 1, 1}, {1, 1, 1}};
  return {{2, 1, 1}, {1, 1, 1}, {4, 1, 1}};
}
const std::vector<std::array<int, 3>> kSm90Clusters = {{1, 1, 1}, {2, 1, 1}, {1, 2, 1}};
// SM90 convolutions run one consumer warpgroup per CTA (CUTLASS has no persistent conv schedule):
// tiles whose accumulators fit its registers, with as many stages as fit, and the small tiles also
// with few enough that two or three CTAs share an SM (library::ctas_per_sm: 64x64 with 3 stages,
// 128x64 and 64x128 with 4; on the H200 1.0-1.3x faster than one CTA of the same tile on 56x56
// layers, bench/NOTES.md).
constexpr KernelSchedule kConvSchedule = KernelSchedule::TmaWarpSpecialized;
const std::vector<Sm90Tile> kSm90ConvTiles = {
    {64, 64, kConvSchedule},    {64, 128, kConvSchedule},    {64, 256, kConvSchedule}, {128, 64, kConvSchedule},
    {128, 128, kConvSchedule},  {256, 64, kConvSchedule},    {64, 64, kConvSchedule, 3},
    {128, 64, kConvSchedule, 4}, {64, 128, kConvSchedule, 4},
};
constexpr KernelKind kConvKinds[] = {KernelKind::Conv2dFprop, KernelKind::Conv2dDgrad, KernelKind::Conv2dWgrad};

// SM80 tiles per instruction family, as CUTLASS's generator has them; K in bytes of the narrower of A and B.
struct Sm80Tile {
  int m, n, k_bytes;
  std::array<int, 3> warps;
  int stages;
};
// 16-bit, TF32 and int8 mma.sync.
const std::vector<Sm80Tile> kSm80Tiles = {
    {256, 128, 64, {4, 2, 1}, 3}, {128, 256, 64, {2, 4, 1}, 3}, {256, 64, 64, {4, 1, 1}, 4},
    {64, 256, 64, {1, 4, 1}, 4},  {128, 128, 64, {2, 2, 1}, 4}, {128, 128, 128, {2, 2, 1}, 3},
    {128, 64, 64, {2, 2, 1}, 5},  {64, 128, 64, {2, 2, 1}, 5},  {64, 64, 64, {2, 2, 1}, 6},
    {64, 64, 128, {2, 2, 1}, 4},
};
// dgrad's N is the input's channels, few at a network's first layer (the stem's 3, padded to 8):
// 32-wide tiles waste less of the tensor cores there than 64-wide ones (16-bit families; CUTLASS's
// congruous shared-memory layout of a row-major B takes min(64, N) elements per row).
const std::vector<Sm80Tile> kSm80NarrowDgradTiles = {
    {128, 32, 64, {4, 1, 1}, 6},
    {256, 32, 64, {4, 1, 1}, 4},
};
// f64 DMMA: 16 doubles of K, warp tiles of at most 64 doubles of accumulator per thread.
const std::vector<Sm80Tile> kSm80F64Tiles = {
    {128, 128, 128, {4, 2, 1}, 3}, {256, 64, 128, {4, 2, 1}, 3}, {64, 256, 128, {2, 4, 1}, 3},
    {256, 32, 128, {4, 1, 1}, 3},  {32, 256, 128, {1, 4, 1}, 3}, {128, 64, 128, {2, 2, 1}, 3},
    {64, 128, 128, {2, 2, 1}, 3},  {64, 64, 128, {2, 2, 1}, 4},  {64, 32, 128, {2, 2, 1}, 4},
    {32, 64, 128, {2, 2, 1}, 4},   {32, 32, 128, {2, 2, 1}, 5},  {16, 32, 128, {1, 2, 1}, 5},
    {32, 16, 128, {2, 1, 1}, 5},
};
// SIMT: 8 elements of K (CUTLASS's SIMT cores pad their transposed tiles by that); 16- and 8-bit ones
// in two stages (library::pipelined_simt), 16 bytes of K (8 f16, 16 s8).
const std::vector<Sm80Tile> kSm80SimtTiles = {
    {256, 128, 32, {4, 2, 1}, 5}, {128, 256, 32, {2, 4, 1}, 5}, {128, 128, 32, {4, 2, 1}, 5},
    {256, 128, 32, {4, 2, 1}, 4}, {128, 256, 32, {2, 4, 1}, 4}, {128, 128, 32, {4, 2, 1}, 4},
    {128, 64, 32, {2, 2, 1}, 5},  {64, 128, 32, {2, 2, 1}, 5},  {64, 64, 32, {2, 1, 1}, 5},
    {128, 32, 32, {2, 1, 1}, 5},  {32, 128, 32, {1, 2, 1}, 5},
};
const std::vector<Sm80Tile> kSm80SimtF64Tiles = {
    {128, 128, 64, {4, 2, 1}, 3}, {128, 64, 64, {2, 2, 1}, 4}, {64, 128, 64, {2, 2, 1}, 4},
    {64, 64, 64, {2, 1, 1}, 5},   {128, 32, 64, {2, 1, 1}, 5}, {32, 128, 64, {1, 2, 1}, 5},
};

const std::vector<Sm80Tile> kSm80PipelinedSimtTiles = {
    {256, 128, 16, {4, 2, 1}, 2}, {128, 256, 16, {2, 4, 1}, 2}, {128, 128, 16, {4, 2, 1}, 2},
    {128, 64, 16, {2, 2, 1}, 2},  {64, 128, 16, {2, 2, 1}, 2},  {64, 64, 16, {2, 1, 1}, 2},
    {128, 32, 16, {2, 1, 1}, 2},  {32, 128, 16, {1, 2, 1}, 2},
};

const std::vector<Sm80Tile>& sm80_tiles(const MathInstruction& mi) {
  if (mi.opclass == OpcodeClass::Simt)
    return mi.a == DataType::f64 ? kSm80SimtF64Tiles : size_bits(mi.a) < 32 ? kSm80PipelinedSimtTiles : kSm80SimtTiles;
  return mi.a == DataType::f64 ? kSm80F64Tiles : kSm80Tiles;
}

// Operand alignments (bits) per family: cp.async copies of 16, 8 or 4 bytes; SIMT and f64 kernels
// load one element at a time, as CUTLASS's generator builds them, and so do 16-bit tensor-op GEMM
// kernels of two stages (library::pipelined), for odd leading dimensions.
std::vector<int> sm80_alignment_bits(const MathInstruction& mi) {
  if (mi.opclass == OpcodeClass::Simt || mi.a == DataType::f64) return {size_bits(mi.a)};
  if (mi.math == MathOperation::MultiplyAddMixedInputUpcast) return {128};  // 16-byte vectors, as CUTLASS's tests
  if (size_bits(mi.a) == 16) return {128, 64, 32, 16};
  return {128, 64, 32};
}

const std::vector<std::pair<Layout, Layout>> kOperandLayouts = {
    {Layout::RowMajor, Layout::ColumnMajor},
    {Layout::RowMajor, Layout::RowMajor},
    {Layout::ColumnMajor, Layout::ColumnMajor},
    {Layout::ColumnMajor, Layout::RowMajor},
};

void add_if_valid(std::vector<GemmConfig>& out, const GemmConfig& c) {
  if (!why_invalid(c) && !spills_registers(c)) out.push_back(c);
}

GemmConfig base_config(const MathInstruction& mi, DataType out, Layout la, Layout lb) {
  GemmConfig c;
  c.arch = mi.arch;
  c.opclass = mi.opclass;
  c.element_a = mi.a;
  c.element_b = mi.b;
  c.element_accumulator = mi.accumulator;
  c.element_c = c.element_d = out;
  c.layout_a = la;
  c.layout_b = lb;
  c.layout_c = Layout::RowMajor;
  c.math = mi.math;
  return c;
}

// An SM80 multistage kernel of `kind` over one tile, its operands read in vectors of `align_bits`
// (C and D in vectors of at most library::sm80_output_vector_bits, at least one element).
GemmConfig sm80_config(const MathInstruction& mi, DataType out, Layout la, Layout lb, KernelKind kind,
                       const Sm80Tile& t, int align_bits, TileScheduler scheduler) {
  GemmConfig c = base_config(mi, out, la, lb);
  c.kind = kind;
  // K in bytes of the narrower operand (mixed inputs: K = 64 s8 beside f16).
  c.tile.threadblock_shape = {t.m, t.n, t.k_bytes * 8 / std::min(size_bits(mi.a), size_bits(mi.b))};
  c.tile.warp_count = t.warps;
  c.tile.stages = align_bits < 32 ? 2 : t.stages;  // loads through registers (library::pipelined)
  c.tile.kernel_schedule = KernelSchedule::Multistage;
  c.tile.epilogue_schedule = epilogue_for(KernelSchedule::Multistage);
  c.tile.tile_scheduler = scheduler;
  c.alignment_a = align_bits / size_bits(mi.a);
  c.alignment_b = align_bits / size_bits(mi.b);
  // SIMT epilogues store one element of C and D at a time.
  c.alignment_c = mi.opclass == OpcodeClass::Simt
                      ? 1
                      : std::max(1, std::min(align_bits, sm80_output_vector_bits(out)) / size_bits(out));
  return c;
}

// An SM90 kernel of `kind` over one tile and cluster, stages as many as fit, every operand read
// in 16-byte vectors (TMA).
GemmConfig sm90_config(const MathInstruction& mi, DataType out, Layout la, Layout lb, KernelKind kind,
                       const Sm90Tile& t, const std::array<int, 3>& cluster, TileScheduler scheduler) {
  GemmConfig c = base_config(mi, out, la, lb);
  c.kind = kind;
  c.tile.threadblock_shape = {t.m, t.n, kSm90TileKBytes * 8 / size_bits(mi.a)};
  c.tile.cluster_shape = cluster;
  c.tile.stages = t.stages;
  c.tile.kernel_schedule = t.schedule;
  c.tile.epilogue_schedule = epilogue_for(t.schedule);
  c.tile.tile_scheduler = scheduler;
  c.alignment_a = 128 / size_bits(mi.a);
  c.alignment_b = 128 / size_bits(mi.b);
  c.alignment_c = 128 / size_bits(out);
  return c;
}

std::vector<GemmConfig> enumerate_sm90() {
  std::vector<GemmConfig> out;
  for (const auto& mi : math_instructions()) {
    if (mi.arch != 90) continue;
    for (KernelKind kind : {KernelKind::Gemm, KernelKind::Grouped})
    for (DataType o : mi.outputs)
      for (auto [la, lb] : kOperandLayouts)
        for (const auto& t : sm90_tiles(mi))
          for (const auto& cluster : kSm90Clusters)
            for (TileScheduler sched : {TileScheduler::Default, TileScheduler::StreamK})
              add_if_valid(out, sm90_config(mi, o, la, lb, kind, t, cluster, sched));
    if (!promoted_fp8(mi))
      for (DataType o : mi.outputs)
        for (auto [la, lb] : kOperandLayouts)
          for (const auto& cluster : kSm90Clusters)
            add_if_valid(out, sm90_config(mi, o, la, lb, KernelKind::Gemm, kSm90WideTile, cluster,
                                          TileScheduler::Default));
    for (DataType o : mi.outputs)
      for (auto [la, lb] : kOperandLayouts)
        for (const auto& t : kSm90PerTileTiles)
          for (const auto& cluster : kSm90Clusters)
            add_if_valid(out, sm90_config(mi, o, la, lb, KernelKind::Gemm, t, cluster, TileScheduler::Default));
    if (size_bits(mi.a) == 32)
      for (DataType o : mi.outputs)
        for (const auto& t : kSm90RegisterSourcedTiles)
          for (const auto& cluster : register_sourced_clusters(t))
            for (TileScheduler sched : {TileScheduler::Default, TileScheduler::StreamK}) {
              if (sched == TileScheduler::StreamK && t.n != kRegisterSourcedStreamKTileN) continue;
              GemmConfig c =
                  sm90_config(mi, o, Layout::RowMajor, Layout::RowMajor, KernelKind::Gemm, t, cluster, sched);
              c.tile.swap_ab = true;
              add_if_valid(out, c);
            }
    for (DataType o : mi.outputs)
      for (auto [la, lb] : kOperandLayouts)
        for (const auto& t : kSm90SwappedTiles)
          for (const auto& cluster : kSm90SwappedClusters)
          for (TileScheduler sched : {TileScheduler::Default, TileScheduler::StreamK}) {
            GemmConfig c = sm90_config(mi, o, la, lb, KernelKind::Gemm, t, cluster, sched);
            c.tile.threadblock_shape[2] = kSwappedTileK;
            c.tile.swap_ab = true;
            add_if_valid(out, c);
          }
  }
  return out;
}

// SM90 implicit-GEMM convolutions (CUTLASS 3.x ConvUniversal: im2col TMA loads, wgmma): 16-bit
// operands with f32 accumulation, as CUTLASS's generator builds them.
std::vector<GemmConfig> enumerate_sm90_conv() {
  std::vector<GemmConfig> out;
  for (const auto& mi : math_instructions()) {
    if (mi.arch != 90 || size_bits(mi.a) != 16 || mi.accumulator != DataType::f32) continue;
    for (KernelKind kind : kConvKinds)
      for (DataType o : mi.outputs)
        for (const auto& t : kSm90ConvTiles)
          for (const auto& cluster : kSm90Clusters) {
            auto [la, lb] = conv_layouts(kind);
            add_if_valid(out, sm90_config(mi, o, la, lb, kind, t, cluster, TileScheduler::Default));
          }
  }
  return out;
}

std::vector<GemmConfig> enumerate_sm80() {
  std::vector<GemmConfig> out;
  for (const auto& mi : math_instructions()) {
    if (mi.arch != 80) continue;
    for (KernelKind kind : {KernelKind::Gemm, KernelKind::Grouped})
    for (DataType o : mi.outputs)
      for (auto [la, lb] : kOperandLayouts)
        for (const auto& t : sm80_tiles(mi))
          for (int align_bits : sm80_alignment_bits(mi))
            for (TileScheduler sched : {TileScheduler::Default, TileScheduler::StreamK}) {
            add_if_valid(out, sm80_config(mi, o, la, lb, kind, t, align_bits, sched));
          }
  }
  return out;
}

std::vector<Sm80Tile> sm80_conv_tiles(const MathInstruction& mi, KernelKind kind) {
  std::vector<Sm80Tile> tiles = kSm80Tiles;
  if (kind == KernelKind::Conv2dDgrad && size_bits(mi.a) == 16)
    tiles.insert(tiles.end(), kSm80NarrowDgradTiles.begin(), kSm80NarrowDgradTiles.end());
  return tiles;
}

// SM80 implicit-GEMM convolutions (CUTLASS 2.x ImplicitGemmConvolution, optimized iterators): the
// 16-bit and TF32 tensor-core families over the GEMM tiles (16-bit dgrad also over narrow ones),
// channels in 16-, 8- or 4-byte vectors; fprop also with fixed-channel iterators, for inputs of
// exactly one vector of channels (one 16-bit channel too, loaded through registers in two stages). The
// SIMT families of floating-point types (f32, f64, f16) over their GEMM tiles, one element at a time, as
// the CUTLASS Python interface's Conv2d built them with opclass Simt.
std::vector<GemmConfig> enumerate_sm80_conv() {
  std::vector<GemmConfig> out;
  for (const auto& mi : math_instructions()) {
    if (mi.arch != 80) continue;
    const bool simt = mi.opclass == OpcodeClass::Simt;
    if (!simt && size_bits(mi.a) > 32) continue;
    for (KernelKind kind : kConvKinds)
      for (DataType o : mi.outputs)
        for (const auto& t : simt ? sm80_tiles(mi) : sm80_conv_tiles(mi, kind))
          for (int align_bits : simt ? sm80_alignment_bits(mi) : std::vector<int>{128, 64, 32, 16}) {
            auto [la, lb] = conv_layouts(kind);
            GemmConfig c = sm80_config(mi, o, la, lb, kind, t, align_bits, TileScheduler::Default);
            add_if_valid(out, c);
            c.fixed_channels = true;
            if (kind == KernelKind::Conv2dFprop && !simt) add_if_valid(out, c);
          }
  }
  return out;
}

}  // namespace

const std::vector<GemmConfig>& gemm_catalog(Arch arch) {
  static std::once_flag once80, once90;
  static std::vector<GemmConfig> sm80, sm90;
  if (arch == 90) {
    std::call_once(once90, [] {
      sm90 = enumerate_sm90();
      auto conv = enumerate_sm90_conv();
      sm90.insert(sm90.end(), conv.begin(), conv.end());
    });
    return sm90;
  }
  if (arch == 80) {
    std::call_once(once80, [] {
      sm80 = enumerate_sm80();
      auto conv = enumerate_sm80_conv();
      sm80.insert(sm80.end(), conv.begin(), conv.end());
    });
    return sm80;
  }
  throw InvalidArgumentError("no kernel catalog for sm" + std::to_string(arch) + " (cuforge has sm80 and sm90)");
}

const GemmConfig* reading_c_as(const GemmConfig& row, DataType element_c) {
  GemmConfig c = row;
  c.element_c = element_c;
  c.alignment_c = 128 / size_bits(element_c);  // SM90's: 16 bytes of each operand
  if (why_invalid(c)) return nullptr;
  static std::mutex mutex;
  static std::deque<GemmConfig> rows;  // never moved: the pointers handed out stay valid
  static std::map<std::string, const GemmConfig*> by_name;
  std::lock_guard lock(mutex);
  auto [it, added] = by_name.try_emplace(c.name(), nullptr);
  if (added) it->second = &rows.emplace_back(std::move(c));
  return it->second;
}

bool GemmFilter::matches(const GemmConfig& c) const {
  auto ok = [](const auto& want, const auto& have) { return !want || *want == have; };
  return ok(kind, c.kind) && ok(arch, c.arch) && ok(element_a, c.element_a) && ok(element_b, c.element_b) &&
         ok(element_accumulator, c.element_accumulator) && ok(element_c, c.element_c) &&
         ok(element_d, c.element_d) && ok(layout_a, c.layout_a) && ok(layout_b, c.layout_b) &&
         ok(layout_c, c.layout_c) && ok(opclass, c.opclass) && ok(math, c.math) &&
         (name_glob.empty() || fnmatch(name_glob.c_str(), c.name().c_str(), 0) == 0);
}

void check_glob(const std::string& glob) {
  if (glob.find('\0') != std::string::npos)
    throw InvalidArgumentError("filter: a shell pattern on kernel names holds no NUL character");
  const size_t size = glob.size();
  auto refuse = [&](const std::string& why) { throw InvalidArgumentError("filter '" + glob + "': " + why); };
  for (size_t i = 0; i < size; ++i) {
    if (glob[i] == '\\') {
      if (++i == size) refuse("it ends in a '\\' that escapes nothing");
    } else if (glob[i] == '[') {
      // The class's members as fnmatch reads them: a first ']' is one, '\' escapes the next, and [:alpha:],
      // [=a=] and [.a.] are one each (whose ']' closes nothing); a '[' of any other form is itself a member.
      size_t j = i + 1;
      if (j < size && (glob[j] == '!' || glob[j] == '^')) ++j;
      if (j < size && glob[j] == ']') ++j;
      while (j < size && glob[j] != ']') {
        const char kind = j + 1 < size && glob[j] == '[' ? glob[j + 1] : '\0';
        if (glob[j] == '\\') {
          j += 2;
        } else if (kind == ':') {
          const size_t end = glob.find(":]", j + 2);
          const std::string name = end == std::string::npos ? "" : glob.substr(j + 2, end - j - 2);
          const bool letters = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; });
          static const std::string kClasses[] = {"alnum", "alpha", "blank", "cntrl", "digit", "graph",
                                                 "lower", "print", "punct", "space", "upper", "xdigit"};
          if (letters && std::find(std::begin(kClasses), std::end(kClasses), name) == std::end(kClasses))
            refuse("[:" + name + ":] is no character class (alpha, digit, upper, ...)");
          j = letters ? end + 2 : j + 1;
        } else if ((kind == '=' || kind == '.') && j + 4 < size && glob[j + 3] == kind && glob[j + 4] == ']') {
          j += 5;
        } else {
          ++j;
        }
      }
      if (j >= size)
        refuse("'[' at position " + std::to_string(i) + " opens a character class that is never closed with ']'");
      i = j;
    }
  }
}

std::vector<const GemmConfig*> find_gemms(const GemmFilter& filter) {
  if (filter.arch && std::find(std::begin(kArchs), std::end(kArchs), *filter.arch) == std::end(kArchs))
    throw InvalidArgumentError("no kernel catalog for sm" + std::to_string(*filter.arch) +
                               ": cuforge's kernel families are sm80 (CUTLASS 2.x, runs on 8.0 and later) and sm90");
  check_glob(filter.name_glob);
  std::vector<const GemmConfig*> out;
  for (Arch arch : kArchs) {
    if (filter.arch && *filter.arch != arch) continue;
    for (const auto& c : gemm_catalog(arch))
      if (filter.matches(c)) out.push_back(&c);
  }
  return out;
}

}  // namespace cuforge::library
