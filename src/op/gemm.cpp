#include "cuforge/op/gemm.hpp"

#include <fmt/format.h>

#include <tuple>

#include "cuforge/core/error.hpp"
#include "cuforge/op/gemm_check.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/scratch.hpp"
#include "scratch_layout.hpp"

namespace cuforge {

Gemm::Gemm(const GemmOptions& options) : Plan(options, KernelKind::Gemm) {}

GemmShape Gemm::shape(int64_t m, int64_t n, int64_t k, int64_t batch, bool bias,
                      std::array<int, 3> alignment_caps) const {
  return op::packed_shape(options_, m, n, k, batch, bias, alignment_caps);
}

GemmShape Gemm::kernel_shape(GemmShape shape) const {
  if (shape.empty_output())
    throw InvalidArgumentError(fmt::format("a {}x{}x{} problem in a batch of {} has an empty output: a run of it "
                                           "launches nothing, so it needs no kernel", shape.m, shape.n, shape.k,
                                           shape.batch));
  size_t zeros_bytes = 0;
  return shape.k == 0 ? op::over_zeros(kernel_types_, shape, zeros_bytes) : shape;
}

select::GemmCandidate Gemm::select(const GemmShape& shape) const { return choice(kernel_shape(shape)); }

std::vector<op::BuiltKernel> Gemm::compile(const std::vector<GemmShape>& shapes, int jobs) {
  std::vector<GemmShape> kernel_shapes;
  for (const auto& s : shapes) kernel_shapes.push_back(kernel_shape(s));
  return compile_shapes(kernel_shapes, jobs);
}

GemmProblem Gemm::check(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d, double alpha,
                        double beta, const op::Fp8Scales& scales) const {
  check_not_moved_from();
  GemmProblem p = op::check_gemm(options_, device_, a, b, c, d, alpha, beta);
  scale_pointers(scales, d);
  return p;
}

std::pair<const float*, const float*> Gemm::scale_pointers(const op::Fp8Scales& fp8_scales, const TensorRef& d) const {
  const auto scales = op::check_scales(options_, device_, fp8_scales, d);
  if ((scales.first || scales.second) && math_instruction().opclass == OpcodeClass::Simt)
    throw InvalidArgumentError("scale_a, scale_b: this plan's SIMT kernels read no scales on the device (SM90's fp8 "
                               "epilogues do): give Python numbers, folded into alpha, or run the tensor cores (A "
                               "row-major, B column-major)");
  return scales;
}

runtime::RunHandle Gemm::run(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                             double alpha, double beta, cudaStream_t stream, std::function<void()> on_complete,
                             const op::Fp8Scales& fp8_scales) {
  GemmProblem p = op::check_gemm(options_, device_, a, b, c, d, alpha, beta);
  const auto scales = scale_pointers(fp8_scales, d);
  runtime::use_device(device_);
  const GemmShape& s = p.shape;
  if (!s.empty_output() && !(s.k == 0 && beta == 0.0 && activation() != Activation::sigmoid)) {
    launch(p, alpha, beta, scales, stream);
  } else {
    // D = activation(0) with K = 0 and beta = 0, which is 0 for every activation but the sigmoid.
    const int bytes = size_bytes(options_.element_d);
    for (int64_t i = 0; !s.empty_output() && i < s.batch; ++i)
      runtime::check(cudaMemset2DAsync(static_cast<char*>(p.d) + i * p.batch_stride_d * bytes, p.ldd * bytes, 0,
                                       s.n * bytes, s.m, stream),
                     "clearing D (K = 0)");
    ran(nullptr);
  }
  return runtime::RunHandle::record(device_, stream, std::move(on_complete));
}

void Gemm::launch(const GemmProblem& p, double alpha, double beta, std::pair<const float*, const float*> scales,
                  cudaStream_t stream) {
  // With K = 0, D = activation(beta * C): the epilogue of a kernel whose product is taken over zeros.
  size_t zeros_bytes = 0;
  if (p.shape.k == 0) op::over_zeros(kernel_types_, p.shape, zeros_bytes);
  // A product over zeros is not measured: its operands are placed below.
  auto l = p.shape.k == 0 ? launchable(op::over_zeros(kernel_types_, p, nullptr), std::nullopt) : launchable(p, stream, beta);
  const size_t offset = op::scratch_rounded(zeros_bytes);
  runtime::Scratch scratch(device_, stream, offset + l->workspace_bytes);
  GemmProblem problem = p;
  if (p.shape.k == 0) {
    runtime::check(cudaMemsetAsync(scratch.data(), 0, zeros_bytes, stream), "zero-filling the operands of K = 0");
    problem = op::over_zeros(kernel_types_, p, scratch.data());
  }
  GemmLaunch launch = l->launch;
  launch.alpha = alpha;
  launch.beta = beta;
  std::tie(launch.scale_a, launch.scale_b) = scales;
  char* workspace = static_cast<char*>(scratch.data());
  l->kernel->run(problem, launch, workspace ? workspace + offset : nullptr, l->workspace_bytes, stream);
  ran(l);
}

}  // namespace cuforge
