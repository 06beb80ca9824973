#include "cuforge/op/conv2d.hpp"

#include <fmt/format.h>

#include "cuforge/core/error.hpp"
#include "cuforge/library/gemm_config.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/scratch.hpp"
#include "operand_check.hpp"

namespace cuforge {
namespace {

// The options in the implicit GEMM's terms: the kind's operand layouts, D row-major.
GemmOptions implicit_gemm_options(KernelKind kind, GemmOptions options) {
  if (!is_conv(kind))
    throw InvalidArgumentError(fmt::format("Conv2d: kind must be fprop, dgrad or wgrad, got {}",
                                           to_string(kind) == "?" ? std::to_string(int(kind)) : to_string(kind)));
  std::tie(options.layout_a, options.layout_b) = library::conv_layouts(kind);
  options.layout_c = Layout::RowMajor;
  return options;
}

}  // namespace

Conv2dSize Conv2d::default_problem() {
  Conv2dSize z;
  z.n = 32;
  z.h = z.w = 56;
  z.c = z.k = 64;
  z.r = z.s = 3;
  z.pad_h = z.pad_w = 1;
  z.p = Conv2dSize::output_extent(z.h, z.r, z.pad_h, z.stride_h, z.dilation_h);
  z.q = Conv2dSize::output_extent(z.w, z.s, z.pad_w, z.stride_w, z.dilation_w);
  return z;
}

Conv2d::Conv2d(KernelKind kind, const GemmOptions& options)
    : Plan(implicit_gemm_options(kind, options), kind), kind_(kind) {}

GemmShape Conv2d::shape(const Conv2dSize& size, bool bias, op::AlignmentCaps caps, ConvSplitK split) const {
  return op::conv_shape(kind_, options_, size, bias, caps, split);
}

ConvProblem Conv2d::check(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                          const op::ConvGeometry& geometry, double alpha, double beta, ConvSplitK split) const {
  op::check_scalars(options_, alpha, beta);
  return op::check_conv(kind_, options_, device_, a, b, c, d, geometry, beta, split, settings().splits,
                        settings().opclass == OpcodeClass::Simt);
}

runtime::RunHandle Conv2d::run(const ConvProblem& p, double alpha, double beta, cudaStream_t stream,
                               std::function<void()> on_complete) {
  // What a checked problem cannot say for itself: the scalars are this run's, and the kind may be another plan's.
  op::check_scalars(options_, alpha, beta);
  if (p.kind != kind_)
    throw InvalidArgumentError(fmt::format("problem: a {} problem (another plan's check()), and this plan runs {}",
                                           to_string(p.kind), to_string(kind_)));
  runtime::use_device(device_);
  auto l = launchable(p, stream, beta);
  GemmLaunch launch = l->launch;
  launch.alpha = alpha;
  launch.beta = beta;
  runtime::Scratch scratch(device_, stream, l->workspace_bytes);
  l->kernel->run(p, launch, scratch.data(), l->workspace_bytes, stream);
  ran(l);
  return runtime::RunHandle::record(device_, stream, std::move(on_complete));
}

runtime::RunHandle Conv2d::run(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                               const op::ConvGeometry& geometry, double alpha, double beta, ConvSplitK split,
                               cudaStream_t stream, std::function<void()> on_complete) {
  return run(check(a, b, c, d, geometry, alpha, beta, split), alpha, beta, stream, std::move(on_complete));
}

}  // namespace cuforge
