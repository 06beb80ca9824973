// One nvcc pass per kernel, through the disk cache; several kernels in parallel. Knows nothing of
// what a kernel computes: a KernelSource (core/kernel_source.hpp) in, a cached library out.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cuforge/compile/cache.hpp"
#include "cuforge/core/kernel_source.hpp"

namespace cuforge::compile {

struct CompileResult {
  CacheEntry entry;
  bool cache_hit = false;
  double seconds = 0;  // wall time of this request, lookup included
};

// The content address of a kernel: source and headers, ABI, compiler identity and flags, the
// CUTLASS version and the content of its headers (whose digest `cache` remembers), the target.
std::string cache_key(const KernelSource& kernel, const KernelCache& cache = KernelCache::user_cache());

// Returns the cached library, building it first if needed (one builder per key across processes).
// Throws CompilationError with nvcc's log and the kept source when nvcc fails, ToolchainError or
// CacheError when the compiler or the cache cannot be used.
CompileResult compile(const KernelSource& kernel, const KernelCache& cache = KernelCache::user_cache());

struct BuildProgress {
  size_t done = 0, total = 0, failed = 0, cache_hits = 0;
  const std::string* last_name = nullptr;
};
using ProgressCallback = std::function<void(const BuildProgress&)>;

struct BuildOutcome {
  std::string name;
  std::optional<CompileResult> result;
  std::string error;             // what went wrong, when the build failed
  std::exception_ptr exception;  // the failure itself (CompilationError, ToolchainError, CacheError, ...)
};

// Builds every kernel with up to `jobs` nvcc processes at once (0: one per core; negative is an
// InvalidArgumentError); never throws for a failed kernel, reports it in its outcome instead.
std::vector<BuildOutcome> compile_many(const std::vector<KernelSource>& kernels, int jobs,
                                       const ProgressCallback& progress = {},
                                       const KernelCache& cache = KernelCache::user_cache());

// What this process asked of the compiler so far.
struct CompileStatistics {
  size_t requests = 0, cache_hits = 0, builds = 0, failures = 0;
};
CompileStatistics statistics();

}  // namespace cuforge::compile
