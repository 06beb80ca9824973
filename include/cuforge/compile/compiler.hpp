// One nvcc pass per kernel, through the disk cache; several kernels in parallel.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cuforge/compile/cache.hpp"
#include "cuforge/core/types.hpp"
#include "cuforge/library/gemm_config.hpp"

namespace cuforge::compile {

struct KernelSource {
  std::string name;
  std::string source;  // the complete translation unit
  Arch family = 90;    // the CUTLASS family the source is written for
  int target_cc = 90;  // the GPU whose SASS is built
};

struct CompileResult {
  CacheEntry entry;
  bool cache_hit = false;
  double seconds = 0;  // wall time of this request, lookup included
};

// The translation unit of a GEMM configuration for a GPU of compute capability `cc` (SM90
// kernels always target sm_90a; SM80 kernels are built into the SASS of `cc`).
KernelSource gemm_kernel_source(const library::GemmConfig& config, int cc);

// The content address of a kernel: source, ABI, compiler identity and flags, CUTLASS version, target.
std::string cache_key(const KernelSource& kernel);

// Returns the cached library, building it first if needed (one builder per key across processes).
// Throws CompilationError with nvcc's log and the kept source when nvcc fails.
CompileResult compile(const KernelSource& kernel, const KernelCache& cache = KernelCache::user_cache());

struct BuildProgress {
  size_t done = 0, total = 0, failed = 0, cache_hits = 0;
  const std::string* last_name = nullptr;
};
using ProgressCallback = std::function<void(const BuildProgress&)>;

struct BuildOutcome {
  std::string name;
  std::optional<CompileResult> result;
  std::string error;  // set when the build failed
};

// Builds every kernel with up to `jobs` nvcc processes at once (0: one per core); never throws for
// a failed kernel, reports it in the outcome instead.
std::vector<BuildOutcome> compile_many(const std::vector<KernelSource>& kernels, int jobs,
                                       const ProgressCallback& progress = {},
                                       const KernelCache& cache = KernelCache::user_cache());

}  // namespace cuforge::compile
