// How a run lays out its scratch memory: parts on 256-byte boundaries (what the launches assume of a
// workspace), and, for a measuring run, its own D (never the user's, which may be C or be read by work
// queued after the run).
#pragma once

#include <cstddef>

#include "cuforge/core/conv_problem.hpp"
#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/core/grouped_problem.hpp"

namespace cuforge::op {

constexpr size_t kScratchAlignment = 256;

inline size_t scratch_rounded(size_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

// The bytes of scratch a problem's D needs (each group's at its own aligned place), and the problem with D
// there.
size_t output_bytes(const GemmProblem& p, size_t element);
size_t output_bytes(const ConvProblem& p, size_t element);
size_t output_bytes(const GroupedProblem& p, size_t element);
GemmProblem with_output(GemmProblem p, void* d, size_t element);
ConvProblem with_output(ConvProblem p, void* d, size_t element);
GroupedProblem with_output(GroupedProblem p, void* d, size_t element);

}  // namespace cuforge::op
