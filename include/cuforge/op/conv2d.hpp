// A 2-D convolution plan of one kind — forward propagation (fprop), the input's gradient (dgrad) or
// the filters' gradient (wgrad) — over NHWC tensors, computed as an implicit GEMM (core/
// conv_problem.hpp): D = activation(alpha * conv + beta * C), C of D's shape or a bias of one value
// per channel of D. The operands:
//   fprop: A = x (n, h, w, c), B = w (k, r, s, c), D = y (n, p, q, k)
//   dgrad: A = dy (n, p, q, k), B = w (k, r, s, c), D = dx (n, h, w, c)
//   wgrad: A = dy (n, p, q, k), B = x (n, h, w, c), D = dw (k, r, s, c)
// Types are bound at construction (the layouts are NHWC's); the plan chooses, builds and remembers
// a kernel per problem class as Gemm does (op/plan.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

#include "cuforge/core/conv_problem.hpp"
#include "cuforge/core/tensor.hpp"
#include "cuforge/op/conv_check.hpp"
#include "cuforge/op/plan.hpp"
#include "cuforge/runtime/conv_kernel.hpp"
#include "cuforge/runtime/handle.hpp"

namespace cuforge {

class Conv2d : public op::Plan<runtime::ConvKernel, ConvProblem> {
 public:
  // The convolution compile() and construct() take where none is given: a ResNet-50 layer, 32 images
  // of 56 x 56 x 64 -> 64 channels, 3 x 3 filters, padding 1.
  static Conv2dSize default_problem();

  // `kind`: Conv2dFprop, Conv2dDgrad or Conv2dWgrad; the options' layouts are ignored.
  Conv2d(KernelKind kind, const GemmOptions& options);

  KernelKind kind() const { return kind_; }
  // The problem class of a convolution of this size on dense tensors in 16-byte aligned allocations,
  // its alignments capped by `caps`, split as `split` asks (op::conv_shape).
  GemmShape shape(const Conv2dSize& size, bool bias = false, op::AlignmentCaps caps = {}, ConvSplitK split = {}) const;
  select::GemmCandidate select(const GemmShape& shape) const { return choice(shape); }
  std::vector<op::BuiltKernel> compile(const std::vector<GemmShape>& shapes, int jobs = 0) {
    return compile_shapes(shapes, jobs);
  }

  // The boundary check (op/conv_check.hpp), and alpha's and beta's (as the epilogue holds them). `split`: the run's
  // own split-K, part of the problem's class (no slices: the plan's settings decide).
  ConvProblem check(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                    const op::ConvGeometry& geometry, double alpha = 1.0, double beta = 0.0,
                    ConvSplitK split = {}) const;

  // Runs a checked problem on `stream`: one of this plan's kind (another kind's is refused), with alpha and beta
  // checked as check() checks them.
  runtime::RunHandle run(const ConvProblem& problem, double alpha = 1.0, double beta = 0.0,
                         cudaStream_t stream = nullptr, std::function<void()> on_complete = {});
  // check() then run(): A, B, C (empty when beta == 0) and D as the kind takes them.
  runtime::RunHandle run(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                         const op::ConvGeometry& geometry, double alpha = 1.0, double beta = 0.0,
                         ConvSplitK split = {}, cudaStream_t stream = nullptr, std::function<void()> on_complete = {});

 private:
  KernelKind kind_;
};

}  // namespace cuforge
