// Ranks catalog configurations for one problem by an estimate of their run time on the device:
// tile quantization (padding M and N up to whole tiles), waves of tiles over the multiprocessors,
// the arithmetic intensity of each tile shape, and stream-K's (or split-K's) division of K.
#pragma once

#include <cstdint>
#include <vector>

#include "cuforge/library/gemm_config.hpp"

namespace cuforge::select {

struct GemmProblem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int splits = 1;  // split-K slices asked for (1: none)
};

// Estimated microseconds of one run of `config` on `problem` (a model for ranking, not a promise).
double estimated_time_us(const library::GemmConfig& config, const GemmProblem& problem, int sm_count);

// The candidates ordered best first (stable: equal estimates keep catalog order).
std::vector<const library::GemmConfig*> rank(std::vector<const library::GemmConfig*> candidates,
                                             const GemmProblem& problem, int sm_count);

}  // namespace cuforge::select
