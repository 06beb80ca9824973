// Ranks catalog configurations for one problem by an estimate of their run time on the device:
// tile quantization (padding M and N up to whole tiles), waves of tiles over the multiprocessors,
// the arithmetic intensity of each tile shape, and stream-K's (or split-K's) division of K.
#pragma once

#include <cstdint>

#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/library/gemm_config.hpp"

namespace cuforge::select {

// Split-K slice counts the selection weighs (stream-K kernels' split-K, parallel split-K).
inline constexpr int kSplitChoices[] = {2, 4, 8, 16, 32, 64, 128};

// The model's fitted constants, the defaults fitted to an H200's measurements (bench/sweep.py,
// bench/k_heavy.py). bench/refit.py refits them to the sweeps in bench/results and reports the pick
// against the measured best on held-out shapes (bench/NOTES.md).
struct CostModel {
  // Fraction of peak one CTA sustains with a tile: operand reuse grows with M*N/(M+N), to this power
  // (bench/refit.py proposes 0.6, which flips measured K-heavy choices: bench/NOTES.md).
  double tile_efficiency_exponent = 0.4;
  // The same for SM90's implicit-GEMM fprop and dgrad, which run one consumer warpgroup and one tile
  // per CTA (no persistent schedule to hide a tile's start and epilogue) over a short K (C·R·S): small
  // tiles lose far more (H200, bench/conv.py --profile: at 14²×256→256 a wave of 64x64 tiles took 9
  // µs, a wave of 128x128 ones, 4x the work, 15.5; the model at 0.4 ranked the 64x64 first; 0.8 to
  // 1.5 pick within 0.95 of the best on the four SM90 layers). wgrad, whose K (N·P·Q) is long, keeps
  // the GEMM exponent (its 128x64 tiles ran 14²×256→256 at 1.03x cuDNN).
  double implicit_gemm_tile_exponent = 1.2;
  // Ping-pong's edge: its epilogue overlaps the other warpgroup's mainloop.
  double pingpong_edge = 1.05;
  // Tiles taller than wide (256x128 measured ahead of 128x256 at every large shape, 16-bit; not fp8 with
  // fast accumulation nor SM90's TF32 GEMMs, whose 128x256 ran ahead).
  double tall_tile_edge = 1.02;
  // mma.sync (SM80 kernels) relative to wgmma.
  double mma_sync_fraction = 0.62;
  // SM80's TF32 kernels (f32 operands, one product a step) ran 1.1-1.5x the time the terms fitted to 16-bit
  // kernels give them, where SM90's TF32 kernels, their K-major copies of B included, ran 0.9-1.07x theirs
  // (H200, plan.profile of f32 row-major plans: 1024³ on four SM80 tiles 18.4-22.0 µs against estimates of
  // 13.4-14.8, SM90 13.5-16.3 against 14.8-15.3; 128x14336x4096 on SM80 96-117 µs against 84-96): their
  // whole estimate is scaled by this, so that the copying SM90 kernels outrank them at 1024³ (13.5 µs, cuBLAS
  // 13.6; SM80's pick 18.4) and SM80 keeps the shapes where copying B costs more than the GEMM. (A lower
  // mma.sync rate instead moved 128x14336x4096 to a 128x256 SM80 tile that ran 6% slower.)
  double sm80_tf32_time_factor = 1.25;
  double launch_us = 3.0;
  // Stream-K and split-K: CTAs that share a tile exchange f32 partial accumulators through the
  // workspace, and the last one waits for the others. Measured on the H200, stream-K never beat a
  // data-parallel kernel whose last wave was reasonably full (bench/sweep.py); on long K with few
  // tiles it wins, and there the reduction dominates: in K order (deterministic) every peer of a tile
  // takes its turn, about 0.6 µs plus the partial tile's traffic (bench/k_heavy.py fits 1-2 µs per
  // peer).
  double stream_k_overhead = 1.10;
  double fixup_bytes_per_second = 100e9;  // partial-tile exchange, per SM
  double reduction_turn_us = 0.6;
  // In arrival order the peers still take the partial tile one at a time, without waiting for their
  // turn. That saves most where many peers share a tile (128x128x65536 on 128x64 tiles, 66 peers: 14
  // µs instead of 86) and little where a few arrive together (H200, bench/k_heavy.py: 256x512x32768 in
  // 8 slices 26.6 µs, 1024x1024x16384 on 256x128 tiles 61.6, both slower than the K-order choices,
  // 24.9 and 54.3); fitted to the few.
  double arrival_order_turn_fraction = 0.8;
  // SM90 fp8 stream-K units each spanning more than one tile (the last full wave and a ragged one under half full,
  // shared by a wave of units): the turns, beyond a tile's one, each waits on. H100, fp8 128x128 over 144 to 192
  // tiles: 1.31-1.58x the model's time without them (below). (16-bit ones too, not modelled: H200, bf16
  // 384x4096x4096 on 128x64 tiles spanning 192 tiles 34.6 µs, on 128x128 data-parallel in one wave 27.6; the
  // selection trial, bench/results/h200-2026-11-30-selection-trial.json.)
  double spanning_stream_k_turns = 3.0;
  // fp8 GEMMs' turns (stream-K's and serial split-K's partial tiles) take longer than 16-bit ones': H100, promoted
  // 128x128 and 128x192 in 2x1 clusters (bench/results/h100-2026-12-06-fp8-wave-profile.txt), where data-parallel
  // runs took 1.11-1.33x the model's time, split-K x2 took 1.30-1.61x and stream-K shared over 144-192 tiles of
  // 128x128 1.31-1.58x (2.4-9.6 µs more than their turns at 1.17x), 1536x1536x4096 26.3 µs against 20.4 for the
  // one data-parallel wave of 128x192 the model now ranks first.
  double fp8_turn_factor = 3.0;
  // Parallel split-K: each slice's f32 tile is stored (at the per-SM exchange rate above), and a
  // second kernel reads every partial back and writes D; the partials' round trip, mostly from L2,
  // fitted to the H200's kernel times (bench/k_heavy.py: 256x512 x 8 slices, 1024x1024 x 2 to 8).
  // 3e12 rather than 5e12: the stem's wgrad (bench/conv.py --sweep-wgrad) then takes 64x128 x 64
  // slices (1.23x cuDNN in the sweep) over 64x256 x 128 (0.69 of that), no other measured pick moving.
  double reduction_launch_us = 2.0;
  double partial_bytes_per_second = 3e12;
  // A single wave of ping-pong tiles leaves one warpgroup issuing alone (H200: 1024x1024x16384 ran
  // its 128x64 ping-pong tiles at 0.8 of the rate the model gives them in full waves).
  double lone_pingpong_fraction = 0.8;
  // Parallel split-K's SM80 CTAs alone on their SMs (H200, wgrad's long K, bench/conv.py
  // --sweep-wgrad: 1.5-1.8x the model's time at one CTA per SM or fewer, 1.1-1.2x at two to five);
  // SM80's stream-K CTAs in one wave likewise (TF32 16x4096x4096, plan.profile: 1.19x).
  double lone_mma_sync_fraction = 0.6;
  // How much of a memory-bound kernel's compute time still shows (the overlap is imperfect).
  double unhidden_fraction = 0.3;
  // What each wave of tiles (CTA tiles over the multiprocessors, slices counted) adds beyond its
  // share of the work: a tile's start and end that the next one does not hide. Small, but it breaks
  // near ties the right way where a problem takes one wave of large tiles or two of small ones
  // (bench/refit.py: 16x14336x4096 takes the swapped 128x16 tile, 1.00-1.01x cuBLAS in three sweeps,
  // over the 64x16 one, 0.94-0.97x; five measured picks right, none wrong; from 0.35 µs on, parallel
  // split-K's many waves of slices go wrong).
  double wave_latency_us = 0.1;
  // A grouped or convolution kernel's tiles each load their A panel (tile M x K) and B panel
  // (tile N x K), A multicast to a cluster's CTAs along N and B along M (but not fprop's and dgrad's
  // filter, gemm_cost.cpp), at this rate at most: tiles that re-read operands (small tiles, several
  // tiles of rows per group) bind. H200, bench/grouped.py
  // --sweep G=64 (64 groups of 128x2048x2048, the offsets form): every 64- and 128-row tile ran at
  // 6.7-8.5 TB/s of panels where DRAM did not bind (64x64: 2.1 GB of panels in 253 µs; 128x256: 0.8
  // GB, DRAM's 0.6 GB bound, 159 µs). Convolutions (bench/NOTES.md, CTAs sharing an SM): 64x64 tiles
  // three to an SM load 231 MB of panels at 14x14x256->256 and 56x56x64->64 (N = 32) in 24.6 and 27.0
  // µs, where 128x128 loads 115 MB in 17.9. The same term over every GEMM kernel ranked the measured
  // sweeps worse (bench/refit.py: fitting mean 0.967 -> 0.949): their tiles do not bind at such rates.
  double panel_bytes_per_second = 8.5e12;
  // SM80's convolutions gather their panels with cp.async, 16 bytes a thread, at this fraction of the
  // rate above (H200, bench/conv.py --profile: their kernels ran 1.1-1.35x the model's time at 0.8;
  // bench/refit.py scores 0.5-0.65 alike, with lone_implicit_gemm_wave_us at 1).
  double cp_async_panel_fraction = 0.6;
  // What each wave of SM90 fprop or dgrad tiles alone on their SMs adds beyond its share of the work
  // (and beyond CostModel::implicit_gemm_tile_exponent's slower rate): the tile's pipeline fill and
  // epilogue, which no other CTA hides (H200, bench/conv_stages.py at 56x56x64->64, N = 32: 256x64
  // alone in 3 waves 28.9 us, 128x64 two to an SM 26.5, which the model ranked the other way).
  double lone_implicit_gemm_wave_us = 1.0;
  // CUTLASS's non-persistent SM90 GEMM kernel (KernelTmaWarpSpecialized: one consumer warpgroup, a CTA
  // per tile, its tile read from blockIdx) issues its first load sooner than the persistent kernels,
  // which run a tile scheduler and reallocate registers first, but each further wave of its tiles
  // starts only as the one before ends: its setup, pipeline fill and epilogue are not hidden behind
  // another tile's mainloop. H200, bench/one_wave.py (alone, in turn with cuBLAS): the same tile
  // 0.5-1.1 µs faster in one wave at 512³-1024³ (2.4 µs for 128x128 at 2048x1024x2048), 1.2-1.6 µs
  // slower in two waves at 2048³.
  double per_tile_setup_saving_us = 0.6;
  double per_tile_wave_us = 1.9;
  // Its one warpgroup issues the whole tile's wgmma: 64-wide ones keep the tensor cores less busy
  // (128x64 ran 0-9% slower than 64x128 in the same waves, longer K more).
  double per_tile_narrow_fraction = 0.9;
  // Promoted fp8 kernels that run cuforge's consumer loop (library::overlaps_fp8_promotion: each half of
  // the tile's N promoted while the other half's wgmma run) against those on CUTLASS's, which waits for
  // every wgmma at each promotion: the same 128x128 tile ran 1.08-1.13x as fast at three of four shapes
  // (H200, bench/fp8_promotion.cu, the loop then unfenced). The tile-intensity term
  // alone ranked CUTLASS's 128x192 ahead of it, where it ran 3% faster (bench/fp8.py --sweep,
  // 4096x14336x4096, 4096x8192x1024, 2048x14336x4096). Fenced, on an H100 (2026-12-06,
  // bench/results/h100-2026-12-06-fp8-fenced-probe.txt): 0.94-1.26x CUTLASS's loop on 128x128 and 0.98-1.18x
  // on 128x192, which now takes the loop and the edge too; the edge is not refitted to those.
  double overlapped_promotion_edge = 1.08;
  // The K-major copy of a 32-bit operand an SM90 kernel makes first (library::staged_k_major): a
  // kernel reading every element and writing it (3xTF32: its three pieces), at this fraction of
  // DRAM bandwidth (H200: 3.3-3.7 TB/s from 8192x1024 up, bench/tf32_staging.py).
  double transpose_bandwidth_fraction = 0.85;
  // TF32 kernels that read an N-major operand through registers (library::register_sourced: the swapped
  // kernels of a row-major B), against the shared-memory mainloop on a K-major B: CUTLASS's 128x128
  // cooperative kernel ran 0.60-0.68x as fast where compute binds (H200, bench/tf32_mainloops.cu: 2048³,
  // 4096³, 8192³, 4096x14336x4096, 8192x1024x8192), 0.85-0.88x at 1024³ and 128x14336x4096. Tiles of
  // N 256 load half the register operand per product: the 128x256 kernel in 2x1 clusters ran 0.80-0.90x as
  // fast as the shared-memory one (H100, cuforge profile, its copy of B taken out: 2048³ to 8192³,
  // 4096x14336x4096, 8192x1024x8192), ahead of it copy included at 2048³ (55.3 µs against 61.0).
  double register_sourced_fraction = 0.63;
  // 0.85 before the H100's profiles of 2026-12-06, where the 128x256's data-parallel run at 1024x4096x4096
  // took 1.085x the model's time (102.9 µs against 94.9): 0.8.
  double register_sourced_wide_fraction = 0.8;
  // The 128x128 one's rate follows the SMs its tiles keep busy, as under a bound they share: where they
  // leave SMs idle each runs faster, up to this fraction of the shared-memory rate. H200: 0.85-0.88 at 1024³
  // (64 tiles on 132 SMs, bench/tf32_mainloops.cu, above), so the copying kernel keeps 1024³ there. An H100 ran
  // 2.3 TFLOP/s per SM with 64 busy and 1.45-1.5 with 128 to 132 (2048³, 512x4096x4096, 256x8192x8192), about
  // 1.0 of the shared-memory rate: 1024³ in 14.7-15.1 µs, ahead of its copying kernel's 16.0. On an H200 (two
  // cuforge profile calls in one session, 2026-12-05, cuBLAS 13.62 and 13.63 µs in each): the register-sourced
  // kernel 13.81 µs in 2x1 clusters, the copying 64x128 13.47 in 1x2 (now the pick, tie_rank) and 14.28 in 2x1.
  double register_sourced_lone_fraction = 0.87;
  // Their stream-K and split-K runs, which share tiles among CTAs, in place of stream_k_overhead: with 1.10 and a
  // wide fraction of 0.85, the 128x256 kernel's ran 1.11-1.40x the model's time (split-K x4 at 512x2048x2048 31.0
  // µs against 26.2 on an H200; stream-K and split-K x2 to x8 at 256 to 1024 x4096x4096 on an H100).
  double register_sourced_stream_k_overhead = 1.2;
  // Clusters of four CTAs take a GPC's SMs in fours only: GH100's 132 SMs, eight GPCs of 14 to 18, hold 29 to 32
  // such clusters by the chip's layout of GPCs, not 33. cudaOccupancyMaxActiveClusters on an H100 (132 SMs,
  // bench/cluster_occupancy.cu, bench/results/h100-2026-12-06-cluster-occupancy.txt): 30 clusters of four
  // (120 SMs), and a wave of 31 took twice as long as one of 30. That H100 also ran 128 tiles of the
  // register-sourced 128x128 (512x4096x4096 TF32) in 4x1 clusters in 121 µs against 85 in 2x1, a second wave;
  // 112 tiles (128x14336x4096) ran in one. Clusters of four only: larger ones, which only a pinned tile asks
  // for, count every SM (that H100 held 15 clusters of eight, 120 SMs, and 7 of sixteen, 112: not modelled); a
  // value outside (0, 1] counts every SM.
  double cluster_of_four_sm_fraction = 0.91;  // 120 of 132 SMs: 30
};

// Estimated microseconds of one run of `config` on a problem of `shape`, K cut into `splits`
// slices, partial tiles reduced in K order when `deterministic` (a model for ranking, not a
// promise). The shape must not be empty (m, n, batch >= 1).
double estimated_time_us(const library::GemmConfig& config, const GemmShape& shape, int splits, bool deterministic,
                         int sm_count, const CostModel& model = CostModel{});

// The order SM90's persistent schedulers hand out a GEMM's tiles in (GemmLaunch::raster and swizzle): CUTLASS's
// (its heuristic raster, no swizzle) but for 16-bit GEMMs of three waves of tiles or more, which take theirs along N
// in groups of four tiles along M (where the grid CUTLASS pads to whole groups of four clusters takes no more waves,
// and M and N span three tiles or more): a wave's CTAs then share fewer panels of A and B in L2. H100, bf16 on the
// 256x128 tile (bench/results/h100-2026-12-06-raster-swizzle-probe.txt): 8192³ 1388 µs against 1438 for
// CUTLASS's order (cuBLAS 1375), 4096x14336x4096 619 against 623, 4096³ 177.0 against 178.3; one and two waves
// (2048³, 8192x1024x8192) alike within 0.2%; groups of eight with 2x1 clusters ran 2048³ 2.8x as long.
struct Rasterization {
  RasterOrder raster = RasterOrder::Heuristic;
  int swizzle = 1;
};
Rasterization rasterization(const library::GemmConfig& config, const GemmShape& shape, int sm_count);

// Whether `config`, run data-parallel (no split of K, `splits` 1), is an SM90 GEMM whose cluster spans
// all of `shape`'s tiles along M with more than one, its tiles filling at least half of `sm_count`
// SMs: each B panel then leaves L2 once, multicast to every tile of rows, where the SMs together pull
// panels as fast as L2 serves them. The estimate above counts no L2 traffic, so such a kernel ties with
// the same tile in 1x1 clusters; the selection ranks it first among the kernels it estimates alike.
bool cluster_spans_m(const library::GemmConfig& config, int splits, const GemmShape& shape, int sm_count);

// Whether `config` is CUTLASS's non-persistent SM90 kernel running a GEMM (CostModel::per_tile_setup_saving_us):
// a CTA per tile, each alone on its SM, as an SM90 convolution's are (but not a convolution's implicit GEMM).
bool per_tile_gemm(const library::GemmConfig& config);

// Where the selection puts an SM90 kernel among those it estimates alike, lower first (SM80 ones order by
// their K tile instead): 0 where its cluster spans M (cluster_spans_m); 1 for the non-persistent kernel in
// the cluster whose two CTAs share the larger operand's tiles by multicast (2x1, along M, each B tile,
// where B is the larger: N times its element's bytes against M times A's; 1x2, along N, each A tile,
// otherwise; where the cluster pads no tile; a GEMM's: a pointwise convolution's clusters are not timed), for
// TF32's swapped register-sourced 128x128 tile in 4x1 clusters where they pad no tile (catalog.cpp), and for a
// persistent fp8 kernel in 1x2 clusters, whose two CTAs along N share each A tile; but a data-parallel or
// stream-K kernel of fp8's overlapped promotion (library::overlaps_fp8_promotion) ranks 1 in the cluster of two
// sharing the larger operand's tiles (1x2 where A is the larger, 2x1 otherwise: equal operands share B's), 2 in
// the other cluster of two, 3 in a cluster of one and 4 in a cluster that pads a tile, the other cluster of two
// too where the sharing one pads and the tiles fit one wave (`sm_count` or fewer); 2 otherwise, in the catalog's
// order.
// The non-persistent kernel's rule is the H200's calls back to back (bench/one_wave.py, b2b_us of
// h200-2026-12-04-one-wave-{tiles,picks,small-m}.json, 24 shapes): the 64x128 tile in 2x1 clusters 0.69x
// the 1x1 cluster's time at 256x4096x4096 and 0.80-0.95x at 512x4096x1024, 256x8192x2048, 128x14336x4096
// and 128x4096x4096, but 0.91-1.15x at 768³-2048³, 1024x1024x4096, 2048x1024x2048 and 4096x512x4096, where
// 1x2 ran 0.87-0.97x (1.01-1.03x at 768³); 64x64 and 128x128 alike; 128x64 alike but at 512³-1024³ and
// 1024x1024x4096, where 2x1 ran ahead of 1x2 by 3-6%. Over those files the rule's picks run 0.990 of the
// best kernel timed back to back (0.973 with the rule before it) and 0.986 timed alone (0.987 before), where
// the clusters lie closer together (up to 10% apart at 1024³); shapes unlike the files' are untimed (e.g.
// 128x1024x1024's 64x64 tiles, now in 2x1). TF32's copying 64x128 at 1024³ (cuforge profile, back to
// back): on the H200 1x2 13.47 µs, 2x1 14.28 (2026-12-05); on an H100 2x1 15.94-16.17, 1x2 16.59-16.80.
// bench/fp8.py --sweep (e4m3 -> bf16, promoted, ten shapes from 2048x2048x8192 to 16384x1024x4096): the
// 128x128 tile in 1x2 clusters 0.83-0.88x the 1x1 cluster's time at 8192x1024x8192 and 2048x2048x8192,
// 0.92x at 16384x1024x4096, at most 2% slower on the other seven; 256x96 and 128x192 likewise. With fast
// accumulation (--fast-accum, issue 18's four shapes) 256x128 in 1x2 clusters 0.96-0.995x the 1x1 time.
// The overlapped promotion's tiles with each promotion fenced, on an H100 (bench/fp8.py --sweep --sweep-tiles
// 128x128,128x192, h100-2026-12-06-fp8-sweep{,-2}.json, eleven shapes run): the faster cluster of two ran
// 0.67-1.09x the 1x1 time (median 0.89 over the 22 tile and shape runs; above 1 only at 384x4096x4096's
// 128x128, 96 CTAs in one wave). 2x1 against 1x2: 0.90-0.94x the time at 4096³ (both runs),
// 1024x4096x4096 and 3072³'s 128x128, 0.89x at 8192³'s 128x192 (whose 1x2 pads: 42.7 tiles of 192
// columns), but 1.12-1.14x at 8192x1024x8192 (A the larger); 0.96-1.05x at 4096x14336x4096; at
// 384x4096x4096 the 2x1 cluster padding a fourth tile of M 1.30x the 1x1 time, 1x2 1.09x (96 tiles, one wave: 1x1 comes first there).
// Their stream-K kernels (cuforge profile, eight shapes the model gave a stream-K kernel in a 1x1 cluster, from
// 256x14336x8192 to 3072x768x8192, h100-2026-12-06-fp8-streamk-clusters.txt): the sharing cluster of two ran
// 0.81-0.99x the 1x1 time in ten of eleven tile and shape runs (128x128 0.81-0.95x, 128x192 0.87-0.99x), 1.02x
// at 1536³'s 128x192; the serial split-K runs of the same kernels alike (0.84-0.99x, 1.00x at 768x768x8192).
// Held out of the rule, seven more such shapes (512x14336x4096 to 3072x1536x8192, the same file): the sharing
// cluster ran 0.84-1.00x the 1x1 time, and was the fastest of the three clusters or within 0.4% of it at each.
// The 16-bit cooperative 256x128 tile in cuforge's tile order (along N, groups of four; rasterization()), which the
// model estimates alike in clusters of one and two (other tiles and schedules untimed so): on an H100 it ran in 2x1
// and 1x2 clusters 0.985-0.991x the 1x1 time at 8192³, 4096x14336x4096, 6144³, 16384x4096x4096 and
// 4096x8192x8192 (plan.profile, back to back, best of two rounds, h100-2026-12-07-clusters-along-n.txt), and 2x1
// 0.989-0.995x at 8192³, 4096x14336x4096 and 4096³ (2026-12-06); both rank 1 (the catalog's order between them).
int tie_rank(const library::GemmConfig& config, int splits, const GemmShape& shape, int sm_count);

}  // namespace cuforge::select
