#include "cuforge/runtime/grouped_kernel.hpp"

#include <vector>

#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/upload.hpp"

namespace cuforge::runtime {
namespace {

constexpr size_t kAlign = 256;

// Room for the list form's descriptors, kept in either form: both forms of a class share a
// choice, and so its workspace size.
size_t descriptor_bytes(const GroupedProblem& p) {
  return (size_t(p.groups) * sizeof(cuforge_gemm_group) + kAlign - 1) / kAlign * kAlign;
}

// The arguments; `descriptors`: where the list form's are on the device (null while not written).
cuforge_grouped_arguments arguments(const GroupedProblem& p, const GemmLaunch& l, const void* descriptors) {
  cuforge_grouped_arguments a{};
  a.groups = p.groups;
  a.descriptors = static_cast<const cuforge_gemm_group*>(descriptors);
  if (p.offsets) {
    const GemmProblem& w = p.offsets->whole;
    a.offsets = p.offsets->offsets;
    a.m_total = w.shape.m;
    a.n = w.shape.n;
    a.k = w.shape.k;
    a.a = w.a;
    a.b = w.b;
    a.c = w.c;
    a.d = w.d;
    a.lda = w.lda;
    a.ldb = w.ldb;
    a.ldc = w.ldc;
    a.ldd = w.ldd;
    a.batch_stride_b = p.offsets->batch_stride_b;
  }
  a.alpha = l.alpha;
  a.beta = l.beta;
  a.activation_argument = l.activation_argument;
  a.device = l.device;
  a.sm_count = l.sm_count;
  return a;
}

}  // namespace

std::shared_ptr<const GroupedGemmKernel> GroupedGemmKernel::load(const std::filesystem::path& path) {
  return load_kernel<GroupedGemmKernel>(path, [](std::shared_ptr<const KernelLibrary> library) {
    auto k = std::make_shared<GroupedGemmKernel>();
    k->can_implement_ = library->entry<decltype(k->can_implement_)>("cuforge_grouped_can_implement");
    k->workspace_size_ = library->entry<decltype(k->workspace_size_)>("cuforge_grouped_workspace_size");
    k->run_ = library->entry<decltype(k->run_)>("cuforge_grouped_run");
    k->library_ = std::move(library);
    return k;
  });
}

bool GroupedGemmKernel::can_implement(const GroupedProblem& problem, const GemmLaunch& launch) const {
  auto args = arguments(problem, launch, nullptr);
  return can_implement_(&args) == CUFORGE_STATUS_SUCCESS;
}

size_t GroupedGemmKernel::workspace_size(const GroupedProblem& problem, const GemmLaunch& launch) const {
  auto args = arguments(problem, launch, nullptr);
  size_t bytes = 0;
  library_->check(workspace_size_(&args, &bytes));
  return descriptor_bytes(problem) + bytes;
}

void GroupedGemmKernel::run(const GroupedProblem& problem, const GemmLaunch& launch, void* workspace,
                            size_t workspace_bytes, cudaStream_t stream) const {
  const size_t reserved = descriptor_bytes(problem);
  if (!problem.offsets) {
    std::vector<cuforge_gemm_group> groups;
    groups.reserve(problem.list.size());
    for (const GemmProblem& g : problem.list)
      groups.push_back({g.shape.m, g.shape.n, g.shape.k, g.a, g.b, g.c, g.d, g.lda, g.ldb, g.ldc, g.ldd});
    upload(launch.device, stream, groups.data(), groups.size() * sizeof(cuforge_gemm_group), workspace);
  }
  auto args = arguments(problem, launch, problem.offsets ? nullptr : workspace);
  library_->check(run_(&args, static_cast<char*>(workspace) + reserved, workspace_bytes - reserved, stream));
}

}  // namespace cuforge::runtime
