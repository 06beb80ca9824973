#include "cuforge/select/gemm_heuristic.hpp"

#include <algorithm>
#include <cmath>

namespace cuforge::select {
namespace {

// Hopper-class rates, only their ratios matter for ranking.
constexpr double kTensorFlopsPerSm16Bit = 990e12 / 132;  // dense wgmma, 16-bit inputs
constexpr double kMmaSyncFraction = 0.62;                // mma.sync (SM80 kernels) relative to wgmma
constexpr double kDramBytesPerSecond = 4.0e12;
constexpr double kSmBytesPerSecond = 2.0 * kDramBytesPerSecond / 132;  // one SM pulls ~2x its fair share
constexpr double kLaunchUs = 3.0;
constexpr double kStreamKOverhead = 1.08;  // fix-up of partial tiles
constexpr double kBestIntensity = 128.0 * 256.0 / (128.0 + 256.0);

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Fraction of peak one CTA sustains with this tile: operand reuse grows with M*N/(M+N).
double tile_efficiency(const library::GemmConfig& c) {
  const auto& t = c.tile.threadblock_shape;
  double intensity = double(t[0]) * t[1] / (t[0] + t[1]);
  double e = std::sqrt(std::min(1.0, intensity / kBestIntensity));
  if (c.arch < 90) e *= kMmaSyncFraction;
  return e;
}

}  // namespace

double estimated_time_us(const library::GemmConfig& c, const GemmProblem& p, int sm_count) {
  const auto& t = c.tile.threadblock_shape;
  const auto& cl = c.tile.cluster_shape;
  const double in_bytes = size_bytes(c.element_a);
  const double rate = kTensorFlopsPerSm16Bit * (16.0 / size_bits(c.element_a)) * tile_efficiency(c);

  // Clusters launch whole: pad the tile grid up to a multiple of the cluster shape.
  int64_t tiles_m = ceil_div(ceil_div(p.m, t[0]), cl[0]) * cl[0];
  int64_t tiles_n = ceil_div(ceil_div(p.n, t[1]), cl[1]) * cl[1];
  int64_t tiles = tiles_m * tiles_n * p.batch;
  int64_t k_iters = std::max<int64_t>(1, ceil_div(p.k, t[2]));
  double iter_us = 2.0 * t[0] * t[1] * t[2] / rate * 1e6;

  int cluster_size = cl[0] * cl[1];
  int64_t slots = std::max(1, sm_count / cluster_size) * cluster_size;
  const bool stream_k = c.tile.tile_scheduler == TileScheduler::StreamK;
  // Stream-K splits work along K so every SM gets an equal share of tile-iterations.
  double compute_us = stream_k ? double(ceil_div(tiles * k_iters, slots)) * iter_us * kStreamKOverhead
                               : double(ceil_div(tiles, slots)) * k_iters * iter_us;
  double active_sms = stream_k ? double(slots) : double(std::min(tiles, slots));
  // Operand traffic: each row panel of A is read once per tile column and vice versa, through L2;
  // count DRAM once per operand plus the output.
  double dram_bytes = (double(p.m) * p.k + double(p.k) * p.n) * in_bytes * p.batch +
                      double(p.m) * p.n * size_bytes(c.element_d) * p.batch;
  double memory_us = dram_bytes / std::min(kDramBytesPerSecond, active_sms * kSmBytesPerSecond) * 1e6;
  // A multicast cluster shares operand loads; a small edge when it has partners to share with.
  double cluster_gain = cluster_size > 1 && tiles >= slots ? 0.98 : 1.0;
  return kLaunchUs + std::max(compute_us * cluster_gain, memory_us);
}

std::vector<const library::GemmConfig*> rank(std::vector<const library::GemmConfig*> candidates,
                                             const GemmProblem& problem, int sm_count) {
  std::vector<std::pair<double, const library::GemmConfig*>> scored;
  scored.reserve(candidates.size());
  for (const auto* c : candidates) scored.emplace_back(estimated_time_us(*c, problem, sm_count), c);
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < scored.size(); ++i) candidates[i] = scored[i].second;
  return candidates;
}

}  // namespace cuforge::select
