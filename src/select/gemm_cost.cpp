#include "cuforge/select/gemm_cost.hpp"

#include <algorithm>
#include <cmath>

namespace cuforge::select {
namespace {

// Hopper-class rates; only their ratios matter for ranking.
constexpr double kTensorFlopsPerSm16Bit = 990e12 / 132;  // dense wgmma, 16-bit inputs
constexpr double kMmaSyncFraction = 0.62;                // mma.sync (SM80 kernels) relative to wgmma
constexpr double kDramBytesPerSecond = 4.0e12;
constexpr double kLaunchUs = 3.0;
// Stream-K and split-K: CTAs that share a tile exchange f32 partial accumulators through the
// workspace, and the last one waits for the others. Measured on the H200, stream-K never beat a
// data-parallel kernel whose last wave was reasonably full (bench/sweep.py); on long K with few
// tiles it wins, and there the reduction dominates: in K order (deterministic) every peer of a tile
// takes its turn, about 0.6 µs plus the partial tile's traffic (bench/k_heavy.py fits 1-2 µs per
// peer).
constexpr double kStreamKOverhead = 1.10;
constexpr double kFixupBytesPerSecond = 100e9;  // partial-tile exchange, per SM
constexpr double kReductionTurnUs = 0.6;
// In arrival order the peers still take the partial tile one at a time, without waiting for their
// turn. That saves most where many peers share a tile (128x128x65536 on 128x64 tiles, 66 peers: 14 µs
// instead of 86) and little where a few arrive together (H200, bench/k_heavy.py: 256x512x32768 in 8
// slices 26.6 µs, 1024x1024x16384 on 256x128 tiles 61.6, both slower than the K-order choices, 24.9
// and 54.3); fitted to the few.
constexpr double kArrivalOrderTurnFraction = 0.8;
constexpr int kMinItersPerStreamKUnit = 8;      // CUTLASS's minimum share of K per stream-K CTA
// Parallel split-K: each slice's f32 tile is stored (at the per-SM exchange rate above), and a
// second kernel reads every partial back and writes D; the partials' round trip, mostly from L2,
// fitted to the H200's kernel times (bench/k_heavy.py: 256x512 x 8 slices, 1024x1024 x 2 to 8).
constexpr double kReductionLaunchUs = 2.0;
constexpr double kPartialBytesPerSecond = 5e12;
constexpr double kLonePingpongFraction = 0.8;
// How much of a memory-bound kernel's compute time still shows (the overlap is imperfect).
constexpr double kUnhiddenFraction = 0.3;
// The K-major copy of a 32-bit operand an SM90 kernel makes first (library::staged_k_major): a
// transpose kernel reading and writing every element, at this fraction of DRAM bandwidth.
constexpr double kTransposeBandwidthFraction = 0.6;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
// Tile counts in doubles: 32-bit extents times batches overflow int64 products.
double ceil_div(double a, double b) { return std::ceil(a / b); }

// Fraction of peak one CTA sustains with this tile. Operand reuse grows with M*N/(M+N); the
// exponent and the ping-pong edge (its epilogue overlaps the other warpgroup's mainloop) are
// fitted to bf16 sweeps of every SM90 tile on an H200 (bench/sweep.py, bench/heuristic_check.py).
double tile_efficiency(const library::GemmConfig& c) {
  constexpr double kBestIntensity = 128.0 * 256.0 / (128.0 + 256.0);
  const auto& t = c.tile.threadblock_shape;
  double intensity = double(t[0]) * t[1] / (t[0] + t[1]);
  double e = std::pow(std::min(1.0, intensity / kBestIntensity), 0.4);
  if (c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong) e = std::min(1.0, e * 1.05);
  if (t[0] > t[1]) e *= 1.02;  // 256x128 measured ahead of 128x256 at every large shape
  if (c.arch < 90) e *= kMmaSyncFraction;
  return e;
}

}  // namespace

double estimated_time_us(const library::GemmConfig& c, const GemmShape& p, int splits, bool deterministic,
                         int sm_count) {
  sm_count = std::max(sm_count, 1);
  splits = std::max(splits, 1);
  if (p.empty_output()) return kLaunchUs;
  const auto& t = c.tile.threadblock_shape;
  const auto& cl = c.tile.cluster_shape;
  const double rate = kTensorFlopsPerSm16Bit * (16.0 / size_bits(c.element_a)) * tile_efficiency(c);

  // Clusters launch whole: pad the tile grid up to a multiple of the cluster shape.
  int64_t tiles_m = ceil_div(ceil_div(p.m, t[0]), cl[0]) * cl[0];
  int64_t tiles_n = ceil_div(ceil_div(p.n, t[1]), cl[1]) * cl[1];
  double tiles = double(tiles_m) * double(tiles_n) * double(p.batch);
  int64_t k_iters = std::max<int64_t>(1, ceil_div(p.k, t[2]));
  double iter_us = 2.0 * t[0] * t[1] * t[2] / rate * 1e6;

  int cluster_size = cl[0] * cl[1];
  double slots = std::max(1, sm_count / cluster_size) * cluster_size;
  // Data-parallel: whole waves of tiles. Stream-K: every SM gets an equal share of
  // tile-iterations, plus the exchange of partial tiles where several CTAs share one.
  double compute_us = ceil_div(tiles, slots) * k_iters * iter_us;
  // Ping-pong overlaps one tile's epilogue with the next tile's mainloop in the other warpgroup: a
  // single wave of long-K tiles leaves one warpgroup issuing alone (H200: 1024x1024x16384 ran its
  // 128x64 ping-pong tiles at 0.8 of the rate the model gives them in full waves).
  if (c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong && tiles <= slots && !c.parallel_split_k)
    compute_us /= kLonePingpongFraction;
  double reduce_us = 0.0;
  const double turn_us = kReductionTurnUs + 2.0 * t[0] * t[1] * sizeof(float) / kFixupBytesPerSecond * 1e6;
  auto reduction_us = [&](double peers) {
    return (peers - 1) * turn_us * (deterministic ? 1.0 : kArrivalOrderTurnFraction);
  };
  if (c.parallel_split_k) {  // the slices as a batch of whole tiles, then the reduction kernel
    int64_t slice_iters = ceil_div(k_iters, splits);
    double waves = ceil_div(tiles * splits, slots);
    // Every CTA runs lone long slices, at the lone ping-pong rate whatever its schedule or waves
    // (H200, 256x512x32768 (bench/k_heavy.py --sweep-parallel): 128x64 ping-pong x 8 slices ahead
    // of cooperative, of 64x64 x 4 in one wave and of 64x64 x 8 in two).
    compute_us = waves * slice_iters * iter_us / kLonePingpongFraction;
    double partial_bytes = double(splits) * p.m * p.n * sizeof(float);
    reduce_us = kReductionLaunchUs + waves * t[0] * t[1] * sizeof(float) / kFixupBytesPerSecond * 1e6 +
                2.0 * partial_bytes / kPartialBytesPerSecond * 1e6;
  } else if (splits > 1) {  // every tile cut into `splits` slices of K, then reduced
    int64_t slice_iters = ceil_div(k_iters, splits);
    compute_us = ceil_div(tiles * splits, slots) * slice_iters * iter_us * kStreamKOverhead;
    reduce_us = reduction_us(splits);
  } else if (c.tile.tile_scheduler == TileScheduler::StreamK && tiles < slots) {
    // One wave: the SMs share every tile's K, at least kMinItersPerStreamKUnit iterations each.
    double units = std::max(1.0, std::min(slots, std::floor(tiles * k_iters / kMinItersPerStreamKUnit)));
    compute_us = ceil_div(tiles * k_iters, units) * iter_us * kStreamKOverhead;
    reduce_us = units > tiles ? reduction_us(ceil_div(units, tiles)) : 0.0;
  } else if (c.tile.tile_scheduler == TileScheduler::StreamK) {
    // Whole waves data-parallel, the ragged last one shared by (about) two peers per tile.
    compute_us = ceil_div(tiles * k_iters, slots) * iter_us * kStreamKOverhead;
    reduce_us = std::fmod(tiles, slots) == 0 ? 0.0 : turn_us;
  }
  // DRAM floor: each operand read once and the output written once (L2 serves the re-reads).
  double dram_bytes = (double(p.m) * p.k * size_bytes(c.element_a) + double(p.k) * p.n * size_bytes(c.element_b) +
                       double(p.m) * p.n * size_bytes(c.element_d)) *
                      p.batch;
  double memory_us = dram_bytes / kDramBytesPerSecond * 1e6;
  double staging_us = 0.0;
  if (const library::StagedOperands staged = library::staged_k_major(c); staged.any()) {
    const double elements = (staged.a ? double(p.m) * p.k : 0.0) + (staged.b ? double(p.k) * p.n : 0.0);
    staging_us = (int(staged.a) + int(staged.b)) * kLaunchUs +
                 2.0 * elements * p.batch * sizeof(float) / (kDramBytesPerSecond * kTransposeBandwidthFraction) * 1e6;
  }
  return kLaunchUs + std::max(compute_us, memory_us) + kUnhiddenFraction * std::min(compute_us, memory_us) +
         reduce_us + staging_us;
}

}  // namespace cuforge::select
