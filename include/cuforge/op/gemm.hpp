// A GEMM plan: D = activation(alpha * A @ B + beta * C), types and layouts bound at construction.
//
// The plan (op/plan.hpp: settings, kernel set, the choice per problem class) checks every run at
// the boundary (op/gemm_check.hpp), builds the chosen kernel once (compile/, disk-cached), loads it
// (runtime/) and remembers the choice, so that a repeated problem goes straight to launch. After
// compile(), runs use the compiled kernels for every problem they can run; a plan never compiled
// chooses per problem. A plan may be used from several host threads at once.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <functional>
#include <vector>

#include "cuforge/core/tensor.hpp"
#include "cuforge/op/gemm_check.hpp"
#include "cuforge/op/plan.hpp"
#include "cuforge/runtime/gemm_kernel.hpp"
#include "cuforge/runtime/handle.hpp"

namespace cuforge {

class Gemm : public op::Plan<runtime::GemmKernel, GemmProblem> {
 public:
  // M, N, K of the class compile() and construct() take where none is given (and the plan holds no
  // tensors): large and square, the class most plans are built for.
  static constexpr std::array<int64_t, 3> kDefaultProblem{4096, 4096, 4096};

  explicit Gemm(const GemmOptions& options);

  // The problem class of packed operands of this size on 16-byte aligned allocations, in the
  // kernel's terms (C a bias row when `bias`; alignments capped, in elements, where given).
  // Throws InvalidArgumentError naming an extent out of range.
  GemmShape shape(int64_t m, int64_t n, int64_t k, int64_t batch = 1, bool bias = false,
                  std::array<int, 3> alignment_caps = {}) const;
  // The kernel a run of this class would use: the tuning record's for the class (with a GPU), else
  // the compiled kernel that serves it best, else the selection's first. Compiles nothing. Throws InvalidArgumentError for an empty output (a run of
  // it launches nothing) or a problem no kernel of the plan can run.
  select::GemmCandidate select(const GemmShape& shape) const;
  // Plan::candidates for the class as select() takes it (K = 0 as a product over zeros). Compiles nothing.
  std::vector<select::GemmCandidate> candidates(const GemmShape& shape) const {
    return Plan::candidates(kernel_shape(shape));
  }
  // Builds the kernels the selection picks for these classes, in parallel (jobs: 0 = one per
  // core), and keeps them: later runs use them for every problem they serve.
  std::vector<op::BuiltKernel> compile(const std::vector<GemmShape>& shapes, int jobs = 0);

  // The boundary checks of run() alone, the scales' among them (for callers that must check before
  // staging operands).
  GemmProblem check(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d, double alpha,
                    double beta, const op::Fp8Scales& scales = {}) const;

  // D = alpha * A @ B + beta * C on `stream`; C may be empty when beta == 0. Nothing is launched
  // (and D is untouched) when a check fails. `on_complete` runs in the handle's sync(). fp8 plans
  // take per-tensor scales of A and B on the device (op/gemm_check.hpp).
  runtime::RunHandle run(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                         double alpha = 1.0, double beta = 0.0, cudaStream_t stream = nullptr,
                         std::function<void()> on_complete = {}, const op::Fp8Scales& scales = {});

 private:
  // The shape a kernel runs for a problem class: K = 0 as a product over zeros; an empty output refused.
  GemmShape kernel_shape(GemmShape shape) const;
  // The scales' device pointers (op::check_scales), refused where this plan's kernels are SIMT (they read none).
  std::pair<const float*, const float*> scale_pointers(const op::Fp8Scales& scales, const TensorRef& d) const;
  void launch(const GemmProblem& problem, double alpha, double beta, std::pair<const float*, const float*> scales,
              cudaStream_t stream);
};

}  // namespace cuforge
