#include "cuforge/select/gemm_cost.hpp"

#include <algorithm>
#include <cmath>

namespace cuforge::select {
namespace {

// Hopper-class rates; only their ratios matter for ranking.
constexpr double kTensorFlopsPerSm16Bit = 990e12 / 132;  // dense wgmma, 16-bit inputs
// FFMA on the CUDA cores (f64 at half; SIMT f16 and fp8 as f32, SIMT int8's IMAD too, though it issues at half the
// rate: it only ranks SIMT int8 kernels among themselves).
constexpr double kCudaCoreFlopsPerSm32Bit = 67e12 / 132;
constexpr double kDramBytesPerSecond = 4.0e12;
constexpr int kMinItersPerStreamKUnit = 8;  // CUTLASS's minimum share of K per stream-K CTA

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
// Tile counts in doubles: 32-bit extents times batches overflow int64 products.
double ceil_div(double a, double b) { return std::ceil(a / b); }

// A lone CTA of SM90's implicit-GEMM fprop or dgrad (one tile per CTA, `sharing` CTAs to an SM)
// exposes each tile's fill and epilogue (CostModel::implicit_gemm_tile_exponent and
// lone_implicit_gemm_wave_us); CTAs sharing an SM hide them from each other, as GEMM's kernels do.
bool lone_implicit_gemm(const library::GemmConfig& c, int sharing) {
  return is_fprop_or_dgrad(c.kind) && c.arch >= 90 && !c.pointwise && sharing == 1;
}

// Fraction of peak one CTA sustains with this tile (CostModel: the exponent and the edges), `sharing`
// CTAs of it to an SM (library::ctas_per_sm).
double tile_efficiency(const library::GemmConfig& c, int sharing, const CostModel& model) {
  constexpr double kBestIntensity = 128.0 * 256.0 / (128.0 + 256.0);
  const auto& t = c.tile.threadblock_shape;
  double intensity = double(t[0]) * t[1] / (t[0] + t[1]);
  const double exponent =
      lone_implicit_gemm(c, sharing) ? model.implicit_gemm_tile_exponent : model.tile_efficiency_exponent;
  double e = std::pow(std::min(1.0, intensity / kBestIntensity), exponent);
  if (c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong) e = std::min(1.0, e * model.pingpong_edge);
  // Taller tiles than wide run ahead of their transposes in 16-bit GEMMs; fp8 GEMMs with fast
  // accumulation and SM90's TF32 GEMMs measured the other way (H200, bench/fp8.py --fast-accum --sweep:
  // 128x256 ahead of 256x128 at each of four shapes, by 0.2-4.4% in the same clusters; TF32, cuforge profile
  // of f32 GEMMs (bench/results/h200-2026-12-05-tf32-profile-*.csv): 128x256 ahead of 256x128 by 7-10% in 1x1
  // clusters at 4096³ with either layout of B, 8192³, 4096x14336x4096 and 8192x1024x8192; tiles of N 128 or more,
  // the ones timed).
  // SM90's 3xTF32 runs that TF32 kernel over its pieces' K (library::staged_kernel): the same rule, not timed.
  const bool wide_first =
      c.kind == KernelKind::Gemm && t[1] >= 128 &&
      ((is_fp8(c.element_a) && c.math == MathOperation::MultiplyAddFastAccum) ||
       (c.arch >= 90 && c.element_a == DataType::f32 && c.math == MathOperation::MultiplyAdd));
  if (t[0] > t[1] && !wide_first) e *= model.tall_tile_edge;
  if (per_tile_gemm(c) && t[1] < 128) e *= model.per_tile_narrow_fraction;
  if (library::overlaps_fp8_promotion(c)) e = std::min(1.0, e * model.overlapped_promotion_edge);
  if (library::register_sourced(c))
    e *= t[1] >= 256 ? model.register_sourced_wide_fraction : model.register_sourced_fraction;
  if (c.arch < 90) e *= model.mma_sync_fraction;
  return e;
}

// One run of a kernel as instantiated (library::swapped_kernel, staged_kernel) on the problem it runs.
double kernel_time_us(const library::GemmConfig& c, const GemmShape& p, int splits, bool deterministic, int sm_count,
                      const CostModel& model) {
  const auto& t = c.tile.threadblock_shape;
  const auto& cl = c.tile.cluster_shape;
  // SM80 3xTF32 issues three TF32 products per step (SM90's runs its pieces along K: estimated_time_us).
  const double products = c.math == MathOperation::MultiplyAddFastF32 ? 3.0 : 1.0;
  // CTAs sharing an SM (in proportionally more slots, below) each run at their share of its rate.
  const int sharing = library::ctas_per_sm(c);
  const int bits = std::max(size_bits(c.element_a), size_bits(c.element_b));  // mixed inputs: the wider's mma.sync
  const double peak = c.opclass == OpcodeClass::Simt ? kCudaCoreFlopsPerSm32Bit * 32.0 / std::max(32, bits)
                                                     : kTensorFlopsPerSm16Bit * 16.0 / bits;
  const double rate = peak * tile_efficiency(c, sharing, model) / products;

  // Clusters launch whole: pad the tile grid up to a multiple of the cluster shape. Groups of
  // differing M (mean p.m) each end in a tile (of clusters) that is half empty on average.
  const double tiles_m = p.ragged ? (double(p.m) / (t[0] * cl[0]) + 0.5) * cl[0]
                                  : double(ceil_div(ceil_div(p.m, t[0]), cl[0]) * cl[0]);
  // SM90 wgrad's N (C·S·R) is runs of C channels (GemmShape::n_run), each starting a fresh N tile.
  const bool sm90_conv = is_conv(c.kind) && c.arch >= 90 && !c.pointwise;
  const int64_t n_tiles = sm90_conv && p.conv.n_run > 0 ? p.n / p.conv.n_run * ceil_div(p.conv.n_run, t[1])
                                                        : ceil_div(p.n, t[1]);
  int64_t tiles_n = ceil_div(n_tiles, cl[1]) * cl[1];
  double tiles = tiles_m * double(tiles_n) * double(p.batch);
  // A convolution's K runs each start a fresh K tile (GemmShape::k_run), unless fixed-channel
  // iterators pack them.
  const bool runs = p.conv.k_run > 0 && !c.fixed_channels;
  const int64_t k_iters =
      std::max<int64_t>(1, runs ? p.k / p.conv.k_run * ceil_div(p.conv.k_run, t[2]) : ceil_div(p.k, t[2]));
  const double iter_us = 2.0 * t[0] * t[1] * t[2] / rate * 1e6 * sharing;

  const int cluster_size = cl[0] * cl[1];
  const double four_fraction = model.cluster_of_four_sm_fraction > 0.0 && model.cluster_of_four_sm_fraction <= 1.0
                                   ? model.cluster_of_four_sm_fraction
                                   : 1.0;
  const int usable_sms = cluster_size == 4 ? int(sm_count * four_fraction) : sm_count;
  double slots = double(std::max(1, usable_sms / cluster_size) * cluster_size) * sharing;
  // Data-parallel: whole waves of tiles. Stream-K: every SM gets an equal share of
  // tile-iterations, plus the exchange of partial tiles where several CTAs share one.
  double compute_us = ceil_div(tiles, slots) * k_iters * iter_us;
  // Ping-pong overlaps one tile's epilogue with the next tile's mainloop in the other warpgroup: a
  // single wave of long-K tiles leaves one warpgroup issuing alone.
  if (c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong && tiles <= slots && !c.parallel_split_k)
    compute_us /= model.lone_pingpong_fraction;
  double reduce_us = 0.0;
  const double turn_us =
      model.reduction_turn_us + 2.0 * t[0] * t[1] * sizeof(float) / model.fixup_bytes_per_second * 1e6;
  auto reduction_us = [&](double peers) {
    return (peers - 1) * turn_us * (deterministic ? 1.0 : model.arrival_order_turn_fraction) *
           (is_fp8(c.element_a) ? model.fp8_turn_factor : 1.0);
  };
  double busy = std::min(slots, tiles * splits);  // CTAs at work at once, at most one (cluster) per slot
  const double stream_k_overhead =
      library::register_sourced(c) ? model.register_sourced_stream_k_overhead : model.stream_k_overhead;
  if (c.parallel_split_k) {  // the slices as a batch of whole tiles, then the reduction kernel
    // An SM90 wgrad slice holds whole images: the longest of S slices of N images runs ceil(N/S).
    const int64_t images = sm90_conv ? p.conv.images : 0;
    const int64_t slice_iters =
        images > 0 ? ceil_div(ceil_div(images, int64_t(splits)) * (p.k / images), int64_t(t[2]))
                   : ceil_div(k_iters, int64_t(splits));
    // SM90 wgrad launches its slices library::kSm90ConvSlicesPerLaunch at a time, one launch after the
    // other, each in whole waves.
    const int64_t launches = sm90_conv ? ceil_div(int64_t(splits), int64_t(library::kSm90ConvSlicesPerLaunch)) : 1;
    double waves = double(launches) * ceil_div(tiles * double(ceil_div(int64_t(splits), launches)), slots);
    // SM90: every CTA runs lone long slices, at the lone ping-pong rate whatever its schedule or
    // waves (H200, 256x512x32768 (bench/k_heavy.py --sweep-parallel): 128x64 ping-pong x 8 slices
    // ahead of cooperative, of 64x64 x 4 in one wave and of 64x64 x 8 in two). SM80: CTAs share
    // an SM, and only a lone one is slowed, more (CostModel::lone_mma_sync_fraction).
    const bool lone = (c.arch >= 90 && sharing == 1) || tiles * splits <= slots;
    const double lone_fraction = c.arch >= 90 ? model.lone_pingpong_fraction : model.lone_mma_sync_fraction;
    compute_us = waves * slice_iters * iter_us / (lone ? lone_fraction : 1.0);
    double partial_bytes = double(splits) * p.m * p.n * sizeof(float);
    reduce_us = model.reduction_launch_us + waves * t[0] * t[1] * sizeof(float) / model.fixup_bytes_per_second * 1e6 +
                2.0 * partial_bytes / model.partial_bytes_per_second * 1e6;
  } else if (splits > 1) {  // every tile cut into `splits` slices of K, then reduced
    int64_t slice_iters = ceil_div(k_iters, splits);
    compute_us = ceil_div(tiles * splits, slots) * slice_iters * iter_us * stream_k_overhead;
    reduce_us = reduction_us(splits);
  } else if (c.tile.tile_scheduler == TileScheduler::StreamK && c.arch >= 90 && is_fp8(c.element_a)) {
    // CUTLASS's heuristic decomposition (PersistentTileSchedulerSm90StreamKParams::get_num_sk_tiles), which a
    // run of one slice asks for: every tile data-parallel, on the stream-K kernel, where the last wave is at
    // least half full (one wave too) or K too short to share; else the last full wave and the ragged one
    // shared among `slots` units of at least kMinItersPerStreamKUnit iterations, the waves before them
    // data-parallel. (A pinned StreamK decomposition shares the ragged wave whatever its fill: not told apart.)
    // fp8 only, where it was measured (CostModel::fp8_turn_factor). 16-bit kernels keep the branches below,
    // whose credit for sharing a wave that CUTLASS runs data-parallel also hides a small tile's misestimate:
    // with this branch, bf16 384x4096x4096 took the 64x64 ping-pong tile, 39.4 µs on an H100, where the
    // 128x128 ran 26.5 (bench/results/h100-2026-12-06-fp8-wave-profile.txt, the model's check; NOTES.md).
    const double full_waves = std::floor(tiles / slots), tail = tiles - full_waves * slots;
    if (tail == 0 || k_iters <= kMinItersPerStreamKUnit || 2 * tail >= slots) {
      compute_us *= stream_k_overhead;
    } else {
      const double dp_waves = std::max(0.0, full_waves - 1), sk_tiles = tiles - dp_waves * slots;
      const double units = std::max(1.0, std::min(slots, std::floor(sk_tiles * k_iters / kMinItersPerStreamKUnit)));
      busy = units;
      compute_us = (dp_waves * k_iters + ceil_div(sk_tiles * k_iters, units)) * iter_us * stream_k_overhead;
      // Each tile's peers take their turns; units spanning more than a tile (more tiles than units) end one
      // tile and start the next, both partial, and wait on peers at each (CostModel::spanning_stream_k_turns).
      reduce_us = reduction_us(units > sk_tiles ? ceil_div(units, sk_tiles) : 2.0 + model.spanning_stream_k_turns);
    }
  } else if (c.tile.tile_scheduler == TileScheduler::StreamK && tiles < slots) {
    // One wave: the SMs share every tile's K, at least kMinItersPerStreamKUnit iterations each.
    double units = std::max(1.0, std::min(slots, std::floor(tiles * k_iters / kMinItersPerStreamKUnit)));
    busy = units;
    compute_us = ceil_div(tiles * k_iters, units) * iter_us * stream_k_overhead;
    // SM80's stream-K CTAs, no more than the SMs, each run alone on one, as parallel split-K's lone slices
    // (H200, TF32 16x4096x4096: 64x64x16 with stream-K 30.2 µs against the model's 25.3, where parallel
    // split-K's 4 slices of 64x64x32 took 24.1 against 26.3).
    if (c.arch < 90 && units <= sm_count) compute_us /= model.lone_mma_sync_fraction;
    reduce_us = units > tiles ? reduction_us(ceil_div(units, tiles)) : 0.0;
  } else if (c.tile.tile_scheduler == TileScheduler::StreamK) {
    // Whole waves data-parallel, the ragged last one shared by (about) two peers per tile.
    busy = slots;
    compute_us = ceil_div(tiles * k_iters, slots) * iter_us * stream_k_overhead;
    reduce_us = std::fmod(tiles, slots) == 0 ? 0.0 : turn_us;
  }
  // Register-sourced tiles of N under 256 (128x128), priced for every SM busy (tile_efficiency), run faster in one
  // wave that leaves SMs idle (counted on the GPU's SMs: clusters of four leave some idle in every wave).
  if (library::register_sourced(c) && t[1] < 256 && tiles * splits <= slots)
    compute_us /= std::max(1.0, std::min(model.register_sourced_lone_fraction / model.register_sourced_fraction,
                                         double(sm_count) * sharing / busy));
  // DRAM floor: each operand read once and the output written once (L2 serves the re-reads, a
  // convolution's im2col operand's too); for grouped kernels and convolutions, also the panels every
  // tile loads, re-reads and all (CostModel::panel_bytes_per_second).
  const bool im2col_b = c.kind == KernelKind::Conv2dWgrad;
  double dram_bytes = (double(p.m) * p.k * size_bytes(c.element_a) / (im2col_b ? 1 : p.conv.im2col_reuse) +
                       double(p.k) * p.n * size_bytes(c.element_b) / (im2col_b ? p.conv.im2col_reuse : 1) +
                       double(p.m) * p.n * size_bytes(c.element_d)) *
                      p.batch;
  double memory_us = dram_bytes / kDramBytesPerSecond * 1e6;
  if (c.kind == KernelKind::Grouped || (is_conv(c.kind) && !c.parallel_split_k)) {
    // fprop's and dgrad's B is the filter, a few hundred KB that every tile re-reads: multicasting it
    // along M saves none of the time (H200, bench/conv_stages.py: cluster 2x1 ran slower than
    // 1x1 in 77 of 80 tiles and layers, by 6% at the median).
    const double panel_bytes = tiles * double(k_iters) * t[2] *
                               (double(t[0]) * size_bytes(c.element_a) / cl[1] +
                                double(t[1]) * size_bytes(c.element_b) / (is_fprop_or_dgrad(c.kind) ? 1 : cl[0]));
    const bool gathered = is_conv(c.kind) && c.arch < 90;
    const double panel_rate = model.panel_bytes_per_second * (gathered ? model.cp_async_panel_fraction : 1.0);
    memory_us = std::max(memory_us, panel_bytes / panel_rate * 1e6);
  }
  const double wave_us =
      model.wave_latency_us + (lone_implicit_gemm(c, sharing) ? model.lone_implicit_gemm_wave_us : 0.0);
  const double waves = ceil_div(tiles * splits, slots);
  const double waves_us = waves * wave_us;
  const double per_tile_us =
      per_tile_gemm(c) ? (waves - 1) * model.per_tile_wave_us - model.per_tile_setup_saving_us : 0.0;
  const bool sm80_tf32 = c.arch < 90 && c.element_a == DataType::f32 && c.math == MathOperation::MultiplyAdd;
  return (model.launch_us + per_tile_us + std::max(compute_us, memory_us) +
          model.unhidden_fraction * std::min(compute_us, memory_us) + reduce_us + waves_us) *
         (sm80_tf32 ? model.sm80_tf32_time_factor : 1.0);
}

// Whether clusters of shape `cluster` would pad the tile grid of `c` on `p` (along M or N).
bool cluster_pads(const library::GemmConfig& c, const GemmShape& p, const std::array<int, 3>& cluster) {
  const auto& t = c.tile.threadblock_shape;
  return ceil_div(p.m, int64_t(t[0])) % cluster[0] != 0 || ceil_div(p.n, int64_t(t[1])) % cluster[1] != 0;
}

}  // namespace

double estimated_time_us(const library::GemmConfig& c, const GemmShape& p, int splits, bool deterministic,
                         int sm_count, const CostModel& model) {
  library::check_extents(c);
  sm_count = std::max(sm_count, 1);
  splits = std::max(splits, 1);
  if (p.empty_output()) return model.launch_us;
  // A swapped kernel runs the transposed problem.
  if (c.tile.swap_ab)
    return kernel_time_us(library::swapped_kernel(c), transposed_shape(p), splits, deterministic, sm_count, model);
  // A kernel that copies operands K-major first runs its CUTLASS kernel over the copies (3xTF32:
  // over the pieces' K), after the copies: each a kernel reading the operand and writing its pieces.
  if (const library::StagedOperands staged = library::staged_k_major(c); staged.any()) {
    const double read = (staged.a ? double(p.m) * p.k : 0.0) + (staged.b ? double(p.k) * p.n : 0.0);
    const double transpose_bytes_per_second = kDramBytesPerSecond * model.transpose_bandwidth_fraction;
    const double staging_us = (int(staged.a) + int(staged.b)) * model.launch_us +
                              (1 + staged.k_pieces) * read * p.batch * sizeof(float) / transpose_bytes_per_second * 1e6;
    GemmShape run = p;
    run.k = staged.kernel_k(p.k);
    return staging_us + kernel_time_us(library::staged_kernel(c), run, splits, deterministic, sm_count, model);
  }
  return kernel_time_us(c, p, splits, deterministic, sm_count, model);
}

Rasterization rasterization(const library::GemmConfig& c, const GemmShape& p, int sm_count) {
  const auto& t = c.tile.threadblock_shape;
  const auto& cl = c.tile.cluster_shape;
  const bool persistent = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative ||
                          c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong;
  const bool sixteen_bit = (c.element_a == DataType::f16 || c.element_a == DataType::bf16) &&
                           c.element_b == c.element_a;
  if (c.kind != KernelKind::Gemm || c.arch < 90 || c.tile.swap_ab || !persistent || !sixteen_bit) return {};
  const int64_t tiles_m = ceil_div(p.m, int64_t(t[0])), tiles_n = ceil_div(p.n, int64_t(t[1]));
  const double slots = std::max(1, sm_count / (cl[0] * cl[1]) * (cl[0] * cl[1]));
  // CUTLASS pads the grid to whole groups of `swizzle` clusters along M and N (PersistentTileSchedulerSm90Params;
  // a swizzle of 4 takes groups of 4 where the smaller extent has 3 tiles or more, get_log_swizzle_size).
  auto waves = [&](int64_t group) {
    return double(ceil_div(tiles_m, group * cl[0]) * group * cl[0]) *
           double(ceil_div(tiles_n, group * cl[1]) * group * cl[1]) * double(p.batch) / slots;
  };
  if (std::min(tiles_m, tiles_n) < 3 || waves(1) < 3.0 || std::ceil(waves(4)) != std::ceil(waves(1))) return {};
  return {RasterOrder::AlongN, 4};
}

bool per_tile_gemm(const library::GemmConfig& c) {
  return c.arch >= 90 && c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecialized &&
         (!is_conv(c.kind) || c.pointwise);
}

bool cluster_spans_m(const library::GemmConfig& c, int splits, const GemmShape& p, int sm_count) {
  const auto& t = c.tile.threadblock_shape;
  const auto& cl = c.tile.cluster_shape;
  const bool data_parallel = c.tile.tile_scheduler == TileScheduler::Default && !c.parallel_split_k && splits <= 1;
  const int64_t tiles_m = ceil_div(p.m, int64_t(t[0]));
  const double tiles = double(tiles_m) * double(ceil_div(p.n, int64_t(t[1]))) * double(p.batch);
  return c.kind == KernelKind::Gemm && c.arch >= 90 && !c.pointwise && !c.tile.swap_ab && data_parallel &&
         cl[0] > 1 && cl[1] == 1 && tiles_m == cl[0] && 2 * tiles >= sm_count;
}

int tie_rank(const library::GemmConfig& c, int splits, const GemmShape& p, int sm_count) {
  if (cluster_spans_m(c, splits, p, sm_count)) return 0;
  const auto& cl = c.tile.cluster_shape;
  if (per_tile_gemm(c)) {
    // A pointwise convolution's clusters were not timed, nor a pinned swapped non-persistent kernel's.
    if (c.kind != KernelKind::Gemm || c.tile.swap_ab) return 2;
    // Two CTAs share the larger operand's tiles by multicast: along M (2x1, each B tile) where B is the
    // larger, else along N (1x2, each A tile); where the cluster pads no tile.
    const bool b_larger = double(p.n) * size_bytes(c.element_b) > double(p.m) * size_bytes(c.element_a);
    return cl == (b_larger ? std::array{2, 1, 1} : std::array{1, 2, 1}) && !cluster_pads(c, p, cl) ? 1 : 2;
  }
  const bool data_parallel = c.tile.tile_scheduler == TileScheduler::Default && !c.parallel_split_k && splits <= 1;
  // TF32's swapped register-sourced 128x128 tile, data-parallel, in 4x1 clusters (four tiles along the problem's
  // N, the kernel's M, sharing each A^T tile), where they pad no tile.
  if (c.tile.swap_ab && cl == std::array{4, 1, 1}) {
    const library::GemmConfig kernel = library::swapped_kernel(c);
    const auto& t = kernel.tile.threadblock_shape;
    return library::register_sourced(kernel) && data_parallel && t[0] == 128 && t[1] == 128 &&
                   ceil_div(p.n, int64_t(t[0])) % 4 == 0
               ? 1
               : 2;
  }
  // The overlapped promotion's tiles, data-parallel or stream-K (the two: each split of K serially, not parallel
  // split-K's): the cluster of two sharing the larger operand's tiles (1x2, each A tile along N, where A is the
  // larger, else 2x1, each B tile along M), then the other, then 1x1, then a cluster that pads a tile, and with it
  // (in the catalog's order) the other cluster of two where the sharing one pads and the tiles fit one wave.
  if (library::overlaps_fp8_promotion(c) && !c.parallel_split_k &&
      (data_parallel || c.tile.tile_scheduler == TileScheduler::StreamK)) {
    const bool a_larger = double(p.m) * size_bytes(c.element_a) > double(p.n) * size_bytes(c.element_b);
    const std::array<int, 3> sharing = a_larger ? std::array{1, 2, 1} : std::array{2, 1, 1};
    if (cluster_pads(c, p, cl)) return 4;
    if (cl == std::array{1, 1, 1}) return 3;
    if (cl == sharing) return 1;
    const auto& t = c.tile.threadblock_shape;
    const bool one_wave = ceil_div(double(p.m), t[0]) * ceil_div(double(p.n), t[1]) * double(p.batch) <= sm_count;
    return cluster_pads(c, p, sharing) && one_wave ? 4 : 2;
  }
  // The 16-bit cooperative 256x128 tile (the one timed so) in cuforge's tile order (along N in groups of four,
  // rasterization()): a cluster of two that pads no tile, either way.
  const bool pair = cl == std::array{2, 1, 1} || cl == std::array{1, 2, 1};
  const auto& t = c.tile.threadblock_shape;
  if (pair && c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative && t[0] == 256 && t[1] == 128 &&
      rasterization(c, p, sm_count).raster == RasterOrder::AlongN && !cluster_pads(c, p, cl))
    return 1;
  const bool fp8_gemm = c.kind == KernelKind::Gemm && c.arch >= 90 && !c.tile.swap_ab && is_fp8(c.element_a);
  return fp8_gemm && data_parallel && cl == std::array<int, 3>{1, 2, 1} ? 1 : 2;
}

}  // namespace cuforge::select
