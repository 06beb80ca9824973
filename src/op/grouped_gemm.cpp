#include "cuforge/op/grouped_gemm.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cuforge/op/gemm_check.hpp"
#include "cuforge/op/grouped_check.hpp"
#include "operand_check.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/scratch.hpp"
#include "scratch_layout.hpp"

namespace cuforge {

GroupedGemm::GroupedGemm(const GemmOptions& options) : Plan(options, KernelKind::Grouped) {}

GemmShape GroupedGemm::shape(int64_t groups, int64_t m, int64_t n, int64_t k, std::array<int, 3> alignment_caps,
                             bool ragged, bool bias) const {
  return op::grouped_shape(options_, groups, m, n, k, alignment_caps, ragged, bias);
}

namespace {

[[noreturn]] void refuse_empty(int64_t groups) {
  throw InvalidArgumentError(fmt::format("{} groups without rows or columns (M or N of 0) have empty outputs: a run of "
                                         "them launches nothing, so they need no kernel", groups));
}

}  // namespace

const GemmShape& GroupedGemm::kernel_shape(const GemmShape& shape) {
  if (shape.empty_output()) refuse_empty(shape.batch);
  return shape;
}

std::vector<op::BuiltKernel> GroupedGemm::compile(const std::vector<GemmShape>& shapes, int jobs) {
  for (const GemmShape& s : shapes) kernel_shape(s);
  return compile_shapes(shapes, jobs);
}

std::vector<op::ProfileRow> GroupedGemm::profile(const GroupedProblem& problem, const op::ProfileOptions& options,
                                                 cudaStream_t stream, double beta) {
  if (problem.empty_output()) refuse_empty(problem.groups);
  return Plan::profile(problem, options, stream, beta);
}

GroupedProblem GroupedGemm::check(const std::vector<TensorRef>& a, const std::vector<TensorRef>& b,
                                  const std::vector<TensorRef>& c, const std::vector<TensorRef>& d, double alpha,
                                  double beta) const {
  check_not_moved_from();
  return op::check_grouped(options_, device_, a, b, c, d, alpha, beta);
}

GroupedProblem GroupedGemm::check_offsets(const TensorRef& a, const TensorRef& b, const TensorRef& c,
                                          const TensorRef& d, const TensorRef& offsets, double alpha,
                                          double beta) const {
  check_not_moved_from();
  return op::check_grouped_offsets(options_, device_, a, b, c, d, offsets, alpha, beta);
}

runtime::RunHandle GroupedGemm::run(const GroupedProblem& checked, double alpha, double beta, cudaStream_t stream,
                                    std::function<void()> on_complete) {
  op::check_scalars(options_, alpha, beta);  // the problem's checks saw the scalars of its own check()
  runtime::use_device(device_);
  if (checked.empty_output()) {
    ran(nullptr);
    return runtime::RunHandle::record(device_, stream, std::move(on_complete));
  }
  // Groups with K = 0 take their product over one zero-filled vector of K, so that the epilogue
  // writes activation(beta * C): A and B of those groups read a scratch buffer of zeros.
  GroupedProblem p = checked;
  size_t zeros_bytes = 0;
  for (const GemmProblem& g : p.list) {
    size_t bytes = 0;
    if (op::takes_zeros(g.shape)) op::over_zeros(kernel_types_, g.shape, bytes);
    zeros_bytes = std::max(zeros_bytes, bytes);
  }
  if (p.offsets && op::takes_zeros(p.offsets->whole.shape))
    op::over_zeros(kernel_types_, p.offsets->whole.shape, zeros_bytes);
  // With autotune, a new class is measured on this problem (not one with a group of K = 0).
  auto l = launchable(p, stream, beta);
  runtime::Scratch scratch(device_, stream, op::scratch_rounded(zeros_bytes) + l->workspace_bytes);
  if (zeros_bytes) {
    runtime::check(cudaMemsetAsync(scratch.data(), 0, zeros_bytes, stream), "zero-filling the operands of K = 0");
    for (GemmProblem& g : p.list)
      if (op::takes_zeros(g.shape)) g = op::over_zeros(kernel_types_, g, scratch.data());
    if (p.offsets) {
      p.offsets->whole = op::over_zeros(kernel_types_, p.offsets->whole, scratch.data());
      p.offsets->batch_stride_b = 0;  // every group reads the same zeros
    }
  }
  GemmLaunch launch = l->launch;
  launch.alpha = alpha;
  launch.beta = beta;
  l->kernel->run(p, launch, static_cast<char*>(scratch.data()) + op::scratch_rounded(zeros_bytes), l->workspace_bytes,
                 stream);
  ran(l);
  return runtime::RunHandle::record(device_, stream, std::move(on_complete));
}

}  // namespace cuforge
