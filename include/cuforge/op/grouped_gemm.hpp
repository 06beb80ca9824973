// A grouped GEMM plan: G problems of their own sizes in one launch, each D_g =
// activation(alpha * A_g @ B_g + beta * C_g), types and layouts bound at construction as for Gemm.
// Two forms: lists of tensors (one per group), or the mixture-of-experts offsets form (one A and D
// cut into groups of rows by device offsets, B a batch of G matrices) whose group sizes never leave
// the device, so that a run needs no host synchronisation and can be captured in a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <functional>
#include <vector>

#include "cuforge/core/grouped_problem.hpp"
#include "cuforge/core/tensor.hpp"
#include "cuforge/op/plan.hpp"
#include "cuforge/runtime/grouped_kernel.hpp"
#include "cuforge/runtime/handle.hpp"

namespace cuforge {

class GroupedGemm : public op::Plan<runtime::GroupedGemmKernel, GroupedProblem> {
 public:
  // Groups, M, N, K of the class compile() and construct() take where none is given.
  static constexpr std::array<int64_t, 4> kDefaultProblem{8, 1024, 4096, 4096};

  explicit GroupedGemm(const GemmOptions& options);

  // The problem class of `groups` groups of packed operands of these mean sizes (M differing between
  // groups where `ragged`, as in the offsets form; C a bias row per group where `bias`).
  GemmShape shape(int64_t groups, int64_t m, int64_t n, int64_t k, std::array<int, 3> alignment_caps = {},
                  bool ragged = false, bool bias = false) const;
  // The choice, the candidates, the builds and the timings for groups that have outputs (groups without any are
  // refused: their runs launch nothing).
  select::GemmCandidate select(const GemmShape& shape) const { return choice(kernel_shape(shape)); }
  std::vector<select::GemmCandidate> candidates(const GemmShape& shape) const {
    return Plan::candidates(kernel_shape(shape));
  }
  std::vector<op::BuiltKernel> compile(const std::vector<GemmShape>& shapes, int jobs = 0);
  std::vector<op::ProfileRow> profile(const GroupedProblem& problem, const op::ProfileOptions& options,
                                      cudaStream_t stream, double beta = 0.0);

  // The boundary checks of the two forms (op/grouped_check.hpp).
  GroupedProblem check(const std::vector<TensorRef>& a, const std::vector<TensorRef>& b,
                       const std::vector<TensorRef>& c, const std::vector<TensorRef>& d, double alpha,
                       double beta) const;
  GroupedProblem check_offsets(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                               const TensorRef& offsets, double alpha, double beta) const;

  // Runs a checked problem on `stream` (alpha and beta checked as check() checks them); nothing is launched when a
  // check fails. A group with K = 0
  // writes activation(beta * C) (its product taken over zeros); empty groups write nothing (where every
  // group is empty, nothing is chosen, built or launched).
  runtime::RunHandle run(const GroupedProblem& problem, double alpha = 1.0, double beta = 0.0,
                         cudaStream_t stream = nullptr, std::function<void()> on_complete = {});

 private:
  // `shape`, refused where its groups have no outputs.
  static const GemmShape& kernel_shape(const GemmShape& shape);
};

}  // namespace cuforge
