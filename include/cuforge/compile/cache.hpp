// The content-addressed disk cache of compiled kernels.
//
// Layout under the root (CUFORGE_CACHE_DIR, else $XDG_CACHE_HOME/cuforge, else ~/.cache/cuforge;
// never the current directory):
//   kernels/<key>/{kernel.cu, kernel.so, entry.json}   published entries
//   staging/<key>.XXXXXX/                              builds in progress (renamed into kernels/)
//   failed/<key>/{kernel.cu, nvcc.log}                 the last failed build of a key, kept for the user
//   headers/<stamp>                                    the content digest of a CUTLASS tree, by its stamp
//   locks/<key>.lock, locks/cache.lock                 one builder per key; clear waits for builds
// The root and every directory in it are private (0700, files 0600) and must stay so: a directory
// owned by another user or writable by others is refused, never silently changed. An entry whose
// files are missing, modified, foreign or open to others is reported and rebuilt, never loaded.
// Staging left by a build that died (its key's lock is free) is reclaimed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <thread>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cuforge::compile {

struct CacheEntry {
  std::string key;
  std::string name;  // the kernel's name
  std::filesystem::path directory;
  std::filesystem::path library() const { return directory / "kernel.so"; }
  std::filesystem::path source() const { return directory / "kernel.cu"; }
};

struct CacheCheck {
  std::string key, name;
  std::string problem;  // empty when the entry is sound
};

struct CacheInfo {
  std::filesystem::path root;
  size_t entries = 0;
  uint64_t bytes = 0;          // published entries
  size_t staging = 0;          // builds in progress, or left by dead builds not yet reclaimed
  uint64_t staging_bytes = 0;
  size_t failed = 0;           // kept failed builds
  uint64_t failed_bytes = 0;
  size_t torch_modules = 0;    // emit.pytorch's jit-built modules (torch/), and failed builds of them kept
  uint64_t torch_bytes = 0;
};

class KernelCache {
 public:
  explicit KernelCache(std::filesystem::path root);

  // The cache at CUFORGE_CACHE_DIR or the user's cache directory.
  static KernelCache& user_cache();

  const std::filesystem::path& root() const { return root_; }

  // A sound entry for the key, or nullopt; an unsound one is reported (core/log.hpp) and removed so
  // that it is rebuilt. Throws CacheError when the cache itself is unusable.
  std::optional<CacheEntry> find(const std::string& key) const;

  // The right to build one key: the key's lock (one builder across processes), the cache's shared
  // lock (clear() waits for it), and a fresh staging directory, removed unless published.
  class Build {
   public:
    ~Build();
    Build(const Build&) = delete;
    Build& operator=(const Build&) = delete;
    const std::filesystem::path& staging() const { return staging_; }

   private:
    friend class KernelCache;
    Build() = default;
    int key_lock_ = -1, cache_lock_ = -1;
    // The cache and the thread that began it (clear() of that cache on that thread would wait for itself).
    std::filesystem::path root_;
    std::thread::id holder_;
    std::filesystem::path staging_;
  };
  // Blocks while another thread or process builds the same key.
  std::unique_ptr<Build> begin_build(const std::string& key) const;

  // A hold on the cache that clear() waits for, as it waits for a kernel build (the cache's shared lock): for work
  // that reads entries and writes under directory() outside a kernel build (emit.pytorch's jit builds in torch/).
  class Hold {
   public:
    ~Hold();
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    friend class KernelCache;
    Hold() = default;
    int cache_lock_ = -1;
    std::filesystem::path root_;  // as a Build's
    std::thread::id holder_;
  };
  // Blocks while clear() runs.
  std::unique_ptr<Hold> hold() const;

  // Publishes a finished build (its staging directory holding kernel.cu and kernel.so) atomically
  // and durably under the key. If another process published the key first, its entry is kept.
  CacheEntry publish(const std::string& key, const std::string& name, Build& build) const;
  // Keeps a failed build's staging directory under failed/<key> for the user; returns where it is.
  std::filesystem::path keep_failed(const std::string& key, Build& build) const;

  // A private directory of the cache's own under the root (headers, locks, tuning, or torch: the PyTorch modules
  // emit.pytorch builds with jit=True), created if needed.
  std::filesystem::path directory(const std::string& name) const;

  CacheInfo info() const;
  // The cache itself and every entry, with what is wrong with each.
  std::vector<CacheCheck> verify() const;
  // Removes every entry, staging and failed build, and the PyTorch modules built from them (torch/), after the
  // kernel builds in progress have finished: while it waits for them, `stop` is asked every 100 ms, and
  // Interrupted thrown where it says so. A thread holding the cache itself (a Hold, or a Build it began) is
  // refused (CacheError): the clear would wait for it forever. (A Hold handed to another thread is still its
  // maker's: that one is refused, the other waits.)
  void clear(const std::function<bool()>& stop = {}) const;
  // Removes least recently used entries until the cache holds at most max_bytes, and the staging
  // of dead builds; returns how many entries.
  size_t prune(uint64_t max_bytes) const;
  // Throws CacheError when the root cannot be used (missing and uncreatable, not a directory, not this user's
  // alone). `create` makes a missing root; without it a missing root returns false (nothing to list or remove:
  // listings and removals leave no cache behind where there was none).
  bool check_root(bool create = true) const;
  // Whether the cache holds its directory `name` (kernels, staging, tuning, ...; false: none yet); CacheError
  // when that is not a directory of this user's alone (a symbolic link, say), which makes the cache unusable:
  // what is read or removed in it would be elsewhere.
  bool holds(const std::string& name) const;

 private:
  std::optional<std::string> problem_with(const std::filesystem::path& entry_dir, const std::string& key) const;
  std::filesystem::path private_dir(const std::filesystem::path& dir) const;
  void reclaim_staging() const;
  std::filesystem::path root_;
};

}  // namespace cuforge::compile
