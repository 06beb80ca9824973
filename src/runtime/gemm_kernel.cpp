#include "cuforge/runtime/gemm_kernel.hpp"

namespace cuforge::runtime {
namespace {

static_assert(int(Decomposition::Heuristic) == CUFORGE_DECOMPOSITION_HEURISTIC &&
              int(Decomposition::DataParallel) == CUFORGE_DECOMPOSITION_DATA_PARALLEL &&
              int(Decomposition::SplitK) == CUFORGE_DECOMPOSITION_SPLIT_K &&
              int(Decomposition::StreamK) == CUFORGE_DECOMPOSITION_STREAM_K &&
              int(Decomposition::ParallelSplitK) == CUFORGE_DECOMPOSITION_PARALLEL_SPLIT_K);

static_assert(int(RasterOrder::Heuristic) == CUFORGE_RASTER_HEURISTIC &&
              int(RasterOrder::AlongM) == CUFORGE_RASTER_ALONG_M && int(RasterOrder::AlongN) == CUFORGE_RASTER_ALONG_N);

cuforge_gemm_arguments arguments(const GemmProblem& p, const GemmLaunch& l) {
  cuforge_gemm_arguments a{};
  a.m = p.shape.m;
  a.n = p.shape.n;
  a.k = p.shape.k;
  a.batch = p.shape.batch;
  a.a = p.a;
  a.b = p.b;
  a.c = p.c;
  a.d = p.d;
  a.lda = p.lda;
  a.ldb = p.ldb;
  a.ldc = p.ldc;
  a.ldd = p.ldd;
  a.batch_stride_a = p.batch_stride_a;
  a.batch_stride_b = p.batch_stride_b;
  a.batch_stride_c = p.batch_stride_c;
  a.batch_stride_d = p.batch_stride_d;
  a.alpha = l.alpha;
  a.beta = l.beta;
  a.activation_argument = l.activation_argument;
  a.scale_a = l.scale_a;
  a.scale_b = l.scale_b;
  a.splits = l.splits;
  a.decomposition = int(l.decomposition);
  a.deterministic = l.deterministic;
  a.device = l.device;
  a.sm_count = l.sm_count;
  a.raster = int(l.raster);
  a.swizzle = l.swizzle;
  return a;
}

}  // namespace

std::shared_ptr<const GemmKernel> GemmKernel::load(const std::filesystem::path& path) {
  return load_kernel<GemmKernel>(path, [](std::shared_ptr<const KernelLibrary> library) {
    auto k = std::make_shared<GemmKernel>();
    k->can_implement_ = library->entry<decltype(k->can_implement_)>("cuforge_gemm_can_implement");
    k->workspace_size_ = library->entry<decltype(k->workspace_size_)>("cuforge_gemm_workspace_size");
    k->run_ = library->entry<decltype(k->run_)>("cuforge_gemm_run");
    k->library_ = std::move(library);
    return k;
  });
}

bool GemmKernel::can_implement(const GemmProblem& problem, const GemmLaunch& launch) const {
  auto args = arguments(problem, launch);
  return can_implement_(&args) == CUFORGE_STATUS_SUCCESS;
}

size_t GemmKernel::workspace_size(const GemmProblem& problem, const GemmLaunch& launch) const {
  auto args = arguments(problem, launch);
  size_t bytes = 0;
  library_->check(workspace_size_(&args, &bytes));
  return bytes;
}

void GemmKernel::run(const GemmProblem& problem, const GemmLaunch& launch, void* workspace, size_t workspace_bytes,
                     cudaStream_t stream) const {
  auto args = arguments(problem, launch);
  library_->check(run_(&args, workspace, workspace_bytes, stream));
}

}  // namespace cuforge::runtime
