// The content-addressed disk cache of compiled kernels.
//
// Layout under the root (CUFORGE_CACHE_DIR, else $XDG_CACHE_HOME/cuforge, else ~/.cache/cuforge;
// never the current directory):
//   kernels/<key>/{kernel.cu, kernel.so, entry.json}   published entries
//   staging/<key>.XXXXXX/                              builds in progress (renamed into kernels/)
//   failed/<key>/{kernel.cu, nvcc.log}                 the last failed build of a key, kept for the user
//   locks/<key>.lock                                   one builder per key across processes
// The root is private (0700, files 0600); entries owned by another user or writable by others
// are refused, and an entry whose library no longer matches its recorded checksum is rebuilt.
#pragma once

#include <cstdint>
#include <filesystem>
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
  uint64_t bytes = 0;
};

class KernelCache {
 public:
  explicit KernelCache(std::filesystem::path root);

  // The cache at CUFORGE_CACHE_DIR or the user's cache directory.
  static KernelCache& user_cache();

  const std::filesystem::path& root() const { return root_; }

  // A sound entry for the key, or nullopt; an unsound one is removed so that it is rebuilt.
  std::optional<CacheEntry> find(const std::string& key) const;

  // Publishes a finished build directory (holding kernel.cu and kernel.so) atomically under key.
  // If another process published the key first, its entry is kept and returned.
  CacheEntry publish(const std::string& key, const std::string& name, const std::filesystem::path& staged) const;

  std::filesystem::path make_staging_dir(const std::string& key) const;
  std::filesystem::path failed_dir(const std::string& key) const;
  std::filesystem::path lock_path(const std::string& key) const;

  CacheInfo info() const;
  std::vector<CacheCheck> verify() const;  // every entry, with what is wrong with each
  void clear() const;
  // Removes least recently used entries until the cache holds at most max_bytes; returns how many.
  size_t prune(uint64_t max_bytes) const;

 private:
  std::optional<std::string> problem_with(const std::filesystem::path& entry_dir, const std::string& key) const;
  void ensure_private_dir(const std::filesystem::path& dir) const;
  std::filesystem::path root_;
};

}  // namespace cuforge::compile
