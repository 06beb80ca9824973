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

// Estimated microseconds of one run of `config` on a problem of `shape`, K cut into `splits`
// slices, partial tiles reduced in K order when `deterministic` (a model for ranking, not a
// promise). The shape must not be empty (m, n, batch >= 1).
double estimated_time_us(const library::GemmConfig& config, const GemmShape& shape, int splits, bool deterministic,
                         int sm_count);

}  // namespace cuforge::select
