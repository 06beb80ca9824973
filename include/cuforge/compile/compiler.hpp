// One nvcc pass per kernel, through the disk cache; several kernels in parallel. Knows nothing of
// what a kernel computes: a KernelSource (core/kernel_source.hpp) in, a cached library out.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
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

// What stops a build under way, asked about every 100 ms while nvcc runs: where it says to stop, nvcc's processes
// are killed, the build's staging removed and Interrupted thrown (nothing reaches the cache). Empty: never.
using StopCheck = std::function<bool()>;

// Returns the cached library, building it first if needed (one builder per key across processes).
// Throws CompilationError with nvcc's log and the kept source when nvcc fails, ToolchainError or
// CacheError when the compiler or the cache cannot be used, Interrupted where `stop` stops the build.
CompileResult compile(const KernelSource& kernel, const KernelCache& cache = KernelCache::user_cache(),
                      const StopCheck& stop = {});

// The cached library of a kernel, or nullopt when it is not built yet. Builds nothing.
std::optional<CacheEntry> cached(const KernelSource& kernel, const KernelCache& cache = KernelCache::user_cache());

// compile() on a thread of its own. The process waits at exit for the builds still running, so
// each ends published or failed; a process killed midway leaves a staging directory that the cache
// reclaims (cache.hpp), never a half-written entry. `cache` must outlive the build.
class BackgroundBuild {
 public:
  static std::shared_ptr<const BackgroundBuild> start(KernelSource kernel,
                                                      const KernelCache& cache = KernelCache::user_cache());

  const std::string& name() const { return name_; }
  const std::string& key() const { return key_; }  // its cache key: one build per source, flags and target
  bool done() const { return done_.load(std::memory_order_acquire); }  // one atomic load
  // After done(): the library, or nullopt with what went wrong.
  const std::optional<CompileResult>& result() const { return result_; }
  const std::string& error() const { return error_; }

 private:
  BackgroundBuild() = default;
  std::string name_;
  std::string key_;
  std::atomic<bool> done_{false};
  std::optional<CompileResult> result_;
  std::string error_;
};

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
// InvalidArgumentError); never throws for a failed kernel, reports it in its outcome instead. Interrupted where
// the interrupt check says so (set_interrupt_check): the builds under way are stopped, and Interrupted thrown.
std::vector<BuildOutcome> compile_many(const std::vector<KernelSource>& kernels, int jobs,
                                       const ProgressCallback& progress = {},
                                       const KernelCache& cache = KernelCache::user_cache());

// What compile_many asks, in the thread that called it, about every 100 ms while builds run, and a build on the
// caller's own thread given it as its StopCheck (interrupt_check()): whether its caller was interrupted (the Python
// module's check: a Ctrl-C, which its main thread would otherwise see only once every kernel was built). Then the
// builds under way are stopped (their nvcc processes killed, nothing of them cached), no further one starts, and
// Interrupted is thrown. Empty (the default): never interrupted. Never to be asked from another thread than the
// build's caller: the Python check takes the GIL, which a thread the caller waits for must not wait for.
void set_interrupt_check(std::function<bool()> check);
StopCheck interrupt_check();

// What this process asked of the compiler so far.
struct CompileStatistics {
  size_t requests = 0, cache_hits = 0, builds = 0, failures = 0;
};
CompileStatistics statistics();

}  // namespace cuforge::compile
