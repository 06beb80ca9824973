#include "cuforge/runtime/conv_kernel.hpp"

#include <algorithm>

namespace cuforge::runtime {
namespace {

cuforge_conv2d_arguments arguments(const ConvProblem& p, const GemmLaunch& l) {
  const Conv2dSize& z = p.size;
  cuforge_conv2d_arguments a{};
  a.n = z.n;
  a.h = z.h;
  a.w = z.w;
  a.c = z.c;
  a.k = z.k;
  a.r = z.r;
  a.s = z.s;
  a.p = z.p;
  a.q = z.q;
  a.pad_h = z.pad_h;
  a.pad_w = z.pad_w;
  a.stride_h = z.stride_h;
  a.stride_w = z.stride_w;
  a.dilation_h = z.dilation_h;
  a.dilation_w = z.dilation_w;
  a.ptr_a = p.a;
  a.ptr_b = p.b;
  a.ptr_c = p.c;
  a.ptr_d = p.d;
  std::copy(p.stride_a.begin(), p.stride_a.end(), a.stride_a);
  std::copy(p.stride_b.begin(), p.stride_b.end(), a.stride_b);
  std::copy(p.stride_c.begin(), p.stride_c.end(), a.stride_c);
  std::copy(p.stride_d.begin(), p.stride_d.end(), a.stride_d);
  a.alpha = l.alpha;
  a.beta = l.beta;
  a.activation_argument = l.activation_argument;
  a.splits = l.splits;
  a.decomposition = int(l.decomposition);
  a.deterministic = l.deterministic ? 1 : 0;
  a.device = l.device;
  a.sm_count = l.sm_count;
  return a;
}

}  // namespace

std::shared_ptr<const ConvKernel> ConvKernel::load(const std::filesystem::path& path) {
  return load_kernel<ConvKernel>(path, [](std::shared_ptr<const KernelLibrary> library) {
    auto k = std::make_shared<ConvKernel>();
    k->can_implement_ = library->entry<decltype(k->can_implement_)>("cuforge_conv2d_can_implement");
    k->workspace_size_ = library->entry<decltype(k->workspace_size_)>("cuforge_conv2d_workspace_size");
    k->run_ = library->entry<decltype(k->run_)>("cuforge_conv2d_run");
    k->library_ = std::move(library);
    return k;
  });
}

bool ConvKernel::can_implement(const ConvProblem& problem, const GemmLaunch& launch) const {
  auto args = arguments(problem, launch);
  return can_implement_(&args) == CUFORGE_STATUS_SUCCESS;
}

size_t ConvKernel::workspace_size(const ConvProblem& problem, const GemmLaunch& launch) const {
  auto args = arguments(problem, launch);
  size_t bytes = 0;
  library_->check(workspace_size_(&args, &bytes));
  return bytes;
}

void ConvKernel::run(const ConvProblem& problem, const GemmLaunch& launch, void* workspace, size_t workspace_bytes,
                     cudaStream_t stream) const {
  auto args = arguments(problem, launch);
  library_->check(run_(&args, workspace, workspace_bytes, stream));
}

}  // namespace cuforge::runtime
