#include "cuforge/compile/cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "cuforge/core/error.hpp"
#include "file_digest.hpp"

namespace cuforge::compile {
namespace fs = std::filesystem;
namespace {

constexpr const char* kLayoutVersion = "v1";

fs::path default_root() {
  if (const char* dir = std::getenv("CUFORGE_CACHE_DIR"); dir && *dir) return fs::path(dir);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "cuforge";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "cuforge";
  throw CacheError("no cache directory: set CUFORGE_CACHE_DIR (HOME and XDG_CACHE_HOME are unset)");
}

// Fresh entropy on every call: a generator seeded once would repeat itself in forked children.
std::string random_suffix() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

// Names inside kernels/ that are not entries: directories being removed (see remove_atomically).
bool is_entry_name(const fs::path& p) { return !p.filename().string().empty() && p.filename().string()[0] != '.'; }

// Removes a directory by first renaming it aside, so that readers never see half of it.
void remove_atomically(const fs::path& dir) {
  fs::path aside = dir.parent_path() / (".trash-" + dir.filename().string() + "-" + random_suffix());
  std::error_code ec;
  fs::rename(dir, aside, ec);
  fs::remove_all(ec ? dir : aside, ec);
}

uint64_t directory_bytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& f : fs::recursive_directory_iterator(dir, ec))
    if (f.is_regular_file(ec)) total += f.file_size(ec);
  return total;
}

}  // namespace

KernelCache::KernelCache(fs::path root) : root_(std::move(root) / kLayoutVersion) {}

KernelCache& KernelCache::user_cache() {
  static KernelCache cache(default_root());
  return cache;
}

void KernelCache::ensure_private_dir(const fs::path& dir) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw CacheError(fmt::format("cannot create the kernel cache directory {}: {} (set CUFORGE_CACHE_DIR to a "
                                 "writable directory)", dir.string(), ec.message()));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw CacheError(fmt::format("the kernel cache path {} is not a directory", dir.string()));
  if (st.st_uid != ::geteuid())
    throw CacheError(fmt::format("the kernel cache directory {} belongs to another user (uid {}): cuforge loads "
                                 "code from it, so it must be yours; set CUFORGE_CACHE_DIR", dir.string(), st.st_uid));
  if ((st.st_mode & 0077) != 0 && ::chmod(dir.c_str(), 0700) != 0)
    throw CacheError(fmt::format("the kernel cache directory {} is open to other users and cannot be made private",
                                 dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw CacheError(fmt::format("the kernel cache directory {} is not writable: set CUFORGE_CACHE_DIR to a "
                                 "writable directory", dir.string()));
}

std::optional<std::string> KernelCache::problem_with(const fs::path& dir, const std::string& key) const {
  for (const fs::path& p : {dir, dir / "kernel.so", dir / "entry.json"}) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return fmt::format("{} is missing", p.filename().string());
    if (S_ISLNK(st.st_mode)) return fmt::format("{} is a symbolic link", p.filename().string());
    if (st.st_uid != ::geteuid()) return fmt::format("{} belongs to another user (uid {})", p.filename().string(), st.st_uid);
    if (st.st_mode & 0022) return fmt::format("{} is writable by other users", p.filename().string());
  }
  std::ifstream in(dir / "entry.json");
  auto entry = nlohmann::json::parse(in, nullptr, false);
  if (entry.is_discarded() || !entry.is_object()) return std::string("entry.json is unreadable");
  if (entry.value("key", "") != key) return std::string("entry.json names another key");
  auto digest = file_digest(dir / "kernel.so");
  if (!digest) return std::string("kernel.so is unreadable");
  if (digest->bytes != entry.value("library_bytes", uint64_t(0)) || digest->xxh3 != entry.value("library_xxh3", ""))
    return std::string("kernel.so does not match its recorded checksum (truncated or modified)");
  return std::nullopt;
}

std::optional<CacheEntry> KernelCache::find(const std::string& key) const {
  fs::path dir = root_ / "kernels" / key;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return std::nullopt;
  struct stat root {};
  if (::lstat(root_.c_str(), &root) != 0 || root.st_uid != ::geteuid() || (root.st_mode & 0022))
    throw CacheError(fmt::format("the kernel cache directory {} belongs to another user or is writable by others: "
                                 "cuforge loads code from it, so it must be yours alone; set CUFORGE_CACHE_DIR",
                                 root_.string()));
  if (problem_with(dir, key)) {
    remove_atomically(dir);
    return std::nullopt;
  }
  std::ifstream in(dir / "entry.json");
  auto entry = nlohmann::json::parse(in, nullptr, false);
  ::utimensat(AT_FDCWD, dir.c_str(), nullptr, 0);  // touch: least recently used entries are pruned first
  return CacheEntry{key, entry.value("name", ""), dir};
}

fs::path KernelCache::make_staging_dir(const std::string& key) const {
  ensure_private_dir(root_);
  ensure_private_dir(root_ / "staging");
  ensure_private_dir(root_ / "kernels");
  fs::path dir = root_ / "staging" / (key + "." + random_suffix());
  if (::mkdir(dir.c_str(), 0700) != 0)
    throw CacheError(fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno)));
  return dir;
}

fs::path KernelCache::failed_dir(const std::string& key) const {
  ensure_private_dir(root_ / "failed");
  return root_ / "failed" / key;
}

fs::path KernelCache::lock_path(const std::string& key) const {
  ensure_private_dir(root_ / "locks");
  return root_ / "locks" / (key + ".lock");
}

CacheEntry KernelCache::publish(const std::string& key, const std::string& name, const fs::path& staged) const {
  auto digest = file_digest(staged / "kernel.so");
  if (!digest) throw CacheError(fmt::format("the build in {} produced no kernel.so", staged.string()));
  nlohmann::json entry = {{"key", key}, {"name", name}, {"library_bytes", digest->bytes},
                          {"library_xxh3", digest->xxh3}};
  {
    std::ofstream out(staged / "entry.json");
    out << entry.dump(2) << "\n";
    if (!out) throw CacheError(fmt::format("cannot write {} (is the disk full?)", (staged / "entry.json").string()));
  }
  for (const auto& f : fs::directory_iterator(staged))
    ::chmod(f.path().c_str(), f.is_directory() ? 0700 : 0600);
  ::chmod(staged.c_str(), 0700);

  fs::path final_dir = root_ / "kernels" / key;
  if (::rename(staged.c_str(), final_dir.c_str()) != 0) {
    // ENOTEMPTY/EEXIST: another process published the same key first; keep its entry.
    std::error_code ec;
    fs::remove_all(staged, ec);
    if (auto existing = find(key)) return *existing;
    throw CacheError(fmt::format("cannot publish {} into {}: {}", name, final_dir.string(), std::strerror(errno)));
  }
  return CacheEntry{key, name, final_dir};
}

CacheInfo KernelCache::info() const {
  CacheInfo info{root_, 0, 0};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_ / "kernels", ec)) {
    if (!is_entry_name(e.path())) continue;
    ++info.entries;
    info.bytes += directory_bytes(e.path());
  }
  return info;
}

std::vector<CacheCheck> KernelCache::verify() const {
  std::vector<CacheCheck> checks;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_ / "kernels", ec)) {
    if (!is_entry_name(e.path())) continue;
    std::string key = e.path().filename().string();
    std::ifstream in(e.path() / "entry.json");
    auto entry = nlohmann::json::parse(in, nullptr, false);
    std::string name = entry.is_object() ? entry.value("name", "") : "";
    checks.push_back({key, name, problem_with(e.path(), key).value_or("")});
  }
  return checks;
}

void KernelCache::clear() const {
  std::error_code ec;
  for (const char* sub : {"kernels", "staging", "failed"})
    if (fs::exists(root_ / sub, ec)) remove_atomically(root_ / sub);
}

size_t KernelCache::prune(uint64_t max_bytes) const {
  struct Item {
    fs::path dir;
    fs::file_time_type used;
    uint64_t bytes;
  };
  std::vector<Item> items;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_ / "kernels", ec)) {
    if (!is_entry_name(e.path())) continue;
    items.push_back({e.path(), fs::last_write_time(e.path(), ec), directory_bytes(e.path())});
    total += items.back().bytes;
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.used < b.used; });
  size_t removed = 0;
  for (const auto& item : items) {
    if (total <= max_bytes) break;
    remove_atomically(item.dir);
    total -= item.bytes;
    ++removed;
  }
  return removed;
}

}  // namespace cuforge::compile
