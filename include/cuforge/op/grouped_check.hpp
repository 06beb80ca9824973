// The boundary check of a grouped GEMM run, in its two forms: every group checked as a GEMM
// (op/gemm_check.hpp) with the group named, and the whole problem summarised as the class the
// selection sees (GroupedProblem::shape).
#pragma once

#include <vector>

#include "cuforge/core/grouped_problem.hpp"
#include "cuforge/core/tensor.hpp"

namespace cuforge::op {

// The list form: A, B, D (and C, unless it is empty and beta == 0) one tensor per group. Throws
// InvalidArgumentError or DataTypeError naming the group and operand.
GroupedProblem check_grouped(const GemmTypes& plan, int device, const std::vector<TensorRef>& a,
                             const std::vector<TensorRef>& b, const std::vector<TensorRef>& c,
                             const std::vector<TensorRef>& d, double alpha, double beta);

// The offsets form: A (total_M x K, row-major), B (G x K x N, each matrix in the plan's layout_B),
// D and C (total_M x N, row-major), offsets (G int32 on the device: group g's rows end at
// offsets[g]). The offsets' values stay on the device: rows past total_M, or before the previous
// group's end, are never touched (the groups are clipped), but not refused.
GroupedProblem check_grouped_offsets(const GemmTypes& plan, int device, const TensorRef& a, const TensorRef& b,
                                     const TensorRef& c, const TensorRef& d, const TensorRef& offsets, double alpha,
                                     double beta);

// The class G groups of these mean sizes are chosen as (operands of whole 16-byte vectors on
// 16-byte aligned allocations, alignments capped where given, in elements); `ragged`: the groups'
// M differ around that mean (the offsets form's class always is); `bias`: C is a bias row per group.
GemmShape grouped_shape(const GemmTypes& plan, int64_t groups, int64_t m, int64_t n, int64_t k,
                        std::array<int, 3> alignment_caps = {}, bool ragged = false, bool bias = false);

}  // namespace cuforge::op
