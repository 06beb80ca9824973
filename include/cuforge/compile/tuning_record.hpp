// Measured choices, kept in the cache beside the kernels: for a key the caller spells (device,
// toolkit, CUTLASS, kernel family and problem class), the kernel that ran fastest and every time
// measured. One JSON file, tuning/record.json, replaced whole and durably under a lock, so that
// concurrent writers leave it valid and lose no one's entry; a corrupted record is reported,
// ignored, and rewritten by the next store.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuforge/compile/cache.hpp"
#include "cuforge/core/types.hpp"

namespace cuforge::compile {

struct TunedKernel {
  std::string kernel;  // the winner's name
  int splits = 1;
  Decomposition decomposition = Decomposition::Heuristic;
  double microseconds = 0;
  std::vector<std::pair<std::string, double>> measured;  // every candidate timed ("<name> x<splits>"), in us
  // How many of the cost model's best the measurement tried (built or not): an autotune asking for
  // more measures again. Records written before it was kept read as measured.size().
  int candidates = 0;
};

class TuningRecord {
 public:
  explicit TuningRecord(const KernelCache& cache = KernelCache::user_cache());

  std::filesystem::path path() const;
  // The entry for `key`, or nullopt (none, or an unreadable record: logged as a warning).
  std::optional<TunedKernel> find(const std::string& key) const;
  // Adds or replaces the entry for `key`. Throws CacheError when the record cannot be written.
  void store(const std::string& key, const TunedKernel& tuned) const;
  // Every entry, by key.
  std::vector<std::pair<std::string, TunedKernel>> entries() const;
  // Removes the record; returns how many measured choices it held (its well-formed entries, as entries() lists
  // them: `cuforge cache info` counted malformed ones as none, and the clear as removed).
  size_t clear() const;

 private:
  const KernelCache& cache_;
};

}  // namespace cuforge::compile
