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
  int splits = 1;             // split-K slices (1: none)
  bool deterministic = true;  // partial tiles reduced in K order (each peer waits its turn)
};

// Split-K slice counts the selection weighs (stream-K kernels' split-K, parallel split-K).
inline constexpr int kSplitChoices[] = {2, 4, 8, 16, 32, 64, 128};

// Estimated microseconds of one run of `config` on `problem` (a model for ranking, not a promise).
double estimated_time_us(const library::GemmConfig& config, const GemmProblem& problem, int sm_count);

// A kernel and the split-K slices it would run with.
struct Choice {
  const library::GemmConfig* config;
  int splits = 1;
};

// The choices ordered best first, each estimated with its own slices (stable: equal estimates keep
// their order).
std::vector<Choice> rank(std::vector<Choice> choices, const GemmProblem& problem, int sm_count);
// The same for kernels that all run with problem.splits.
std::vector<const library::GemmConfig*> rank(std::vector<const library::GemmConfig*> candidates,
                                             const GemmProblem& problem, int sm_count);

}  // namespace cuforge::select
