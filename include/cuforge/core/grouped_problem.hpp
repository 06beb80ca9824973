// A grouped GEMM as it flows through the pipeline: G problems of their own sizes in one launch,
// given as a list (each group a GemmProblem, in the kernel's terms) or in the offsets form of
// mixture-of-experts layers (torch._grouped_mm's): one A of m_total rows and one D (and C) cut
// into groups by row offsets on the device, B a batch of G matrices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "cuforge/core/gemm_problem.hpp"

namespace cuforge {

struct GroupOffsets {
  const int32_t* offsets = nullptr;  // G entries on the device: group g's rows end at offsets[g]
  GemmProblem whole;                 // A (m_total x K), C and D as one problem; B's first matrix
  int64_t batch_stride_b = 0;        // elements between B's matrices
};

struct GroupedProblem {
  int64_t groups = 0;
  // The problem class selection sees: the groups as a batch of their mean extents, with the
  // alignment every group allows (grouped_cost: the cost of a grouped launch is estimated so).
  GemmShape shape;
  std::vector<GemmProblem> list;       // the list form: one problem per group
  std::optional<GroupOffsets> offsets;  // or the offsets form

  // Whether no group has an output (the offsets form: no rows or columns at all): a run launches nothing.
  bool empty_output() const {
    if (offsets) return offsets->whole.shape.empty_output();
    return std::all_of(list.begin(), list.end(), [](const GemmProblem& g) { return g.shape.empty_output(); });
  }
};

}  // namespace cuforge
