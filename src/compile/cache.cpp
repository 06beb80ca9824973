#include "cuforge/compile/cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "cuforge/core/error.hpp"
#include "cuforge/core/log.hpp"
#include "file_digest.hpp"
#include "files.hpp"

namespace cuforge::compile {
namespace fs = std::filesystem;
namespace {

constexpr const char* kLayoutVersion = "v1";

fs::path default_root() {
  if (const char* dir = std::getenv("CUFORGE_CACHE_DIR"); dir && *dir) return fs::path(dir);
  // A relative XDG_CACHE_HOME is ignored, as the XDG base directory specification says.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && fs::path(xdg).is_absolute())
    return fs::path(xdg) / "cuforge";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "cuforge";
  throw CacheError("no cache directory: set CUFORGE_CACHE_DIR (HOME is unset, XDG_CACHE_HOME unset or relative)");
}

// Fresh entropy on every call: a generator seeded once would repeat itself in forked children.
std::string random_suffix() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

// A key is compile::cache_key's digest, 32 lowercase hex digits: never a path ("/home/me", "../tuning", whose
// entry the cache would remove as unsound), a lock's name ("cache") or a name with the staging's '.'.
void check_key(const std::string& key) {
  if (key.size() != 32 || key.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw InvalidArgumentError(fmt::format("kernel cache: a key is 32 lowercase hex digits (compile::cache_key's), "
                                           "got '{}'", key));
}

// What in one of the cache's directories is an entry: a directory, or a link put in one's place (sized as the
// link, removed as such), but those being removed (remove_atomically's .trash-*). Every entry the cache makes is a
// directory: a stray file put there is none, neither counted by info() nor pruned.
bool is_entry(const fs::directory_entry& e) {
  const std::string name = e.path().filename().string();
  std::error_code ec;
  const fs::file_type type = e.symlink_status(ec).type();
  return !name.empty() && name[0] != '.' && (type == fs::file_type::directory || type == fs::file_type::symlink);
}

// What a removal killed midway left renamed aside in `dir` (remove_atomically's .trash-*) at least `age` seconds
// ago (the rename set its ctime; prune waits ten minutes, by when no live removal is still at it; clear, which
// holds the cache's lock, none). Best effort, as dead staging's.
void reclaim_trash(const fs::path& dir, time_t age) {
  std::error_code ec;
  std::vector<fs::path> trash;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind(".trash-", 0) == 0) trash.push_back(it->path());
  for (const fs::path& t : trash) {
    struct stat st {};
    if (::lstat(t.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::time(nullptr) - st.st_ctime >= age)
      fs::remove_all(t, ec);
  }
}

// The entries of one of the cache's directories. One that cannot be listed (its mode, say) is a CacheError:
// an unreadable cache is not an empty one. One removed meanwhile (a clear elsewhere) holds none.
std::vector<fs::path> list_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (const fs::directory_iterator end; !ec && it != end; it.increment(ec))
    if (is_entry(*it)) entries.push_back(it->path());
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw CacheError(fmt::format("the kernel cache is unusable: cannot list {}: {}", dir.string(), ec.message()));
  return entries;
}

// Why a directory of the cache cannot be trusted, or "" when it can (stat follows a symbolic link
// only for the root the user named).
std::string unsafe_dir(const fs::path& dir, bool follow) {
  struct stat st {};
  if ((follow ? ::stat(dir.c_str(), &st) : ::lstat(dir.c_str(), &st)) != 0)
    return fmt::format("{} cannot be read: {}", dir.string(), std::strerror(errno));
  if (S_ISLNK(st.st_mode))  // the cache's own directories are never links: what is read there would be elsewhere
    return fmt::format("{} is a symbolic link (the cache's own directories must be real ones: remove the link)",
                       dir.string());
  if (!S_ISDIR(st.st_mode)) return fmt::format("{} is not a directory", dir.string());
  if (st.st_uid != ::geteuid())
    return fmt::format("{} belongs to another user (uid {}): cuforge loads code from the cache, so it must be yours "
                       "(set CUFORGE_CACHE_DIR to a directory of your own)",
                       dir.string(), st.st_uid);
  if (st.st_mode & 0022)
    return fmt::format("{} is writable by other users (mode {:o}): cuforge loads code from the cache, so it must be "
                       "yours alone (chmod go-w it, or set CUFORGE_CACHE_DIR to a private directory)",
                       dir.string(), st.st_mode & 07777);
  return "";
}

// Removes a directory by first renaming it aside, so that readers never see half of it. One that is
// gone already (another thread or process removed it first) is not an error.
void remove_atomically(const fs::path& dir) {
  fs::path aside = dir.parent_path() / (".trash-" + dir.filename().string() + "-" + random_suffix());
  if (::rename(dir.c_str(), aside.c_str()) != 0) {
    if (errno == ENOENT) return;
    throw CacheError(fmt::format("cannot remove {}: {}", dir.string(), std::strerror(errno)));
  }
  std::error_code ec;
  fs::remove_all(aside, ec);
  if (ec) throw CacheError(fmt::format("cannot remove {}: {}", aside.string(), ec.message()));
}

// The bytes of the cache's own files under `path`: a symbolic link counts as itself, never as what it
// points at (a link to /usr is not gigabytes of cache), and what cannot be read is skipped.
uint64_t directory_bytes(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  if (!S_ISDIR(st.st_mode)) return S_ISREG(st.st_mode) || S_ISLNK(st.st_mode) ? uint64_t(st.st_size) : 0;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec))
    if (::lstat(it->path().c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
      total += uint64_t(st.st_size);
  return total;
}

// The entry's JSON, or nullopt when it cannot be read or parsed (`why` says which).
std::optional<nlohmann::json> entry_json(const fs::path& dir, std::string* why = nullptr) {
  try {
    return read_json(dir / "entry.json");
  } catch (const CacheError& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

// The string field of an entry, or why it is missing or of the wrong type.
template <class T>
std::optional<T> field(const nlohmann::json& entry, const char* name, std::string& why) {
  auto it = entry.find(name);
  bool ok = it != entry.end() &&
            (std::is_same_v<T, std::string> ? it->is_string() : it->is_number_unsigned());
  if (!ok) {
    why = fmt::format("entry.json has no {} field '{}'", std::is_same_v<T, std::string> ? "string" : "unsigned",
                      name);
    return std::nullopt;
  }
  return it->template get<T>();
}

}  // namespace

// A relative root is made absolute once, against the working directory of then: the cache stays where it was
// when the process changes directory (builds staged under one directory and published under another).
namespace {

// The cache's root taken absolute, as a CacheError where it cannot be (an empty path, a working directory gone).
fs::path absolute_root(const fs::path& root) {
  std::error_code ec;
  fs::path absolute = root.empty() ? fs::path() : fs::absolute(root, ec);
  if (root.empty() || ec)
    throw CacheError(fmt::format("the kernel cache's directory {} cannot be made an absolute path{}",
                                 root.empty() ? std::string("(empty)") : root.string(),
                                 ec ? ": " + ec.message() : std::string()));
  return absolute;
}

}  // namespace

KernelCache::KernelCache(fs::path root) : root_(absolute_root(root) / kLayoutVersion) {}

KernelCache& KernelCache::user_cache() {
  static KernelCache cache(default_root());
  return cache;
}

bool KernelCache::check_root(bool create) const {
  const fs::path base = root_.parent_path();
  if (const std::string c = shell_special(base); !c.empty())
    throw CacheError(fmt::format("the kernel cache {} holds a '{}', which the shell nvcc runs its steps in would "
                                 "expand: set CUFORGE_CACHE_DIR to a path without {}",
                                 base.string(), c, kShellSpecialCharacters));
  std::error_code ec;
  struct stat st {};
  if (!create && ::lstat(base.c_str(), &st) != 0 && errno == ENOENT) return false;
  if (!fs::exists(base, ec)) {
    fs::create_directories(base, ec);
    if (ec || ::chmod(base.c_str(), 0700) != 0)
      throw CacheError(fmt::format("cannot create the kernel cache directory {}: {} (set CUFORGE_CACHE_DIR to a "
                                   "writable directory)", base.string(), ec ? ec.message() : std::strerror(errno)));
  }
  if (auto why = unsafe_dir(base, /*follow=*/true); !why.empty())
    throw CacheError("the kernel cache is unusable: " + why);
  if (!create && ::lstat(root_.c_str(), &st) != 0 && errno == ENOENT) return false;
  if (::mkdir(root_.c_str(), 0700) != 0 && errno != EEXIST)
    throw CacheError(fmt::format("cannot create {}: {} (the cache directory is not writable: set CUFORGE_CACHE_DIR to "
                                 "a writable directory)", root_.string(), std::strerror(errno)));
  if (auto why = unsafe_dir(root_, /*follow=*/false); !why.empty())
    throw CacheError("the kernel cache is unusable: " + why);
  return true;
}

fs::path KernelCache::private_dir(const fs::path& dir) const {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw CacheError(fmt::format("cannot create {}: {}{}", dir.string(), std::strerror(errno),
                                 errno == EACCES || errno == EROFS
                                     ? " (the cache directory is not writable: set CUFORGE_CACHE_DIR to a writable one)"
                                     : ""));
  if (auto why = unsafe_dir(dir, /*follow=*/false); !why.empty()) throw CacheError("the kernel cache is unusable: " + why);
  return dir;
}

fs::path KernelCache::directory(const std::string& name) const {
  if (name != "headers" && name != "locks" && name != "tuning" && name != "torch")
    throw InvalidArgumentError(fmt::format("kernel cache: its own directories are headers, locks, tuning and torch; "
                                           "got '{}'", name));
  check_root();
  return private_dir(root_ / name);
}

std::optional<std::string> KernelCache::problem_with(const fs::path& dir, const std::string& key) const {
  for (const fs::path& p : {dir, dir / "kernel.so", dir / "kernel.cu", dir / "entry.json"}) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return fmt::format("{} is missing", p.filename().string());
    if (S_ISLNK(st.st_mode)) return fmt::format("{} is a symbolic link", p.filename().string());
    if (st.st_uid != ::geteuid()) return fmt::format("{} belongs to another user (uid {})", p.filename().string(), st.st_uid);
    if (st.st_mode & 0022) return fmt::format("{} is writable by other users", p.filename().string());
    // A FIFO would block the checksum's reader, a device feed it without end.
    if (p != dir && !S_ISREG(st.st_mode)) return fmt::format("{} is not a regular file", p.filename().string());
  }
  std::string why;
  auto entry = entry_json(dir, &why);
  if (!entry) return fmt::format("entry.json is unreadable ({})", why);
  if (!entry->is_object()) return std::string("entry.json is unreadable (not a JSON object)");
  auto recorded_key = field<std::string>(*entry, "key", why);
  auto name = field<std::string>(*entry, "name", why);
  auto library_bytes = field<uint64_t>(*entry, "library_bytes", why);
  auto library_xxh3 = field<std::string>(*entry, "library_xxh3", why);
  auto source_xxh3 = field<std::string>(*entry, "source_xxh3", why);
  if (!why.empty()) return why;
  if (*recorded_key != key) return std::string("entry.json names another key");
  auto library = file_digest(dir / "kernel.so");
  if (!library) return std::string("kernel.so is unreadable");
  if (library->bytes != *library_bytes || library->xxh3 != *library_xxh3)
    return std::string("kernel.so does not match its recorded checksum (truncated or modified)");
  auto source = file_digest(dir / "kernel.cu");
  if (!source || source->xxh3 != *source_xxh3)
    return std::string("kernel.cu does not match its recorded checksum (modified)");
  return std::nullopt;
}

std::optional<CacheEntry> KernelCache::find(const std::string& key) const {
  check_key(key);
  fs::path dir = root_ / "kernels" / key;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return std::nullopt;
  check_root();
  if (auto why = unsafe_dir(root_ / "kernels", false); !why.empty())
    throw CacheError("the kernel cache is unusable: " + why);
  if (auto problem = problem_with(dir, key)) {
    if (!fs::exists(dir, ec)) return std::nullopt;  // removed meanwhile (a prune, a clear): not damaged
    log(LogLevel::warning, fmt::format("kernel cache entry {}: {}; removing it, the kernel is rebuilt", key, *problem));
    remove_atomically(dir);
    return std::nullopt;
  }
  auto entry = entry_json(dir);
  ::utimensat(AT_FDCWD, dir.c_str(), nullptr, 0);  // touch: least recently used entries are pruned first
  return CacheEntry{key, entry ? entry->value("name", "") : "", dir};
}

namespace {

// The threads holding a cache's shared lock (a Hold, or a Build they began), per cache, as often as they hold it.
// Never destroyed: a hold may be released while the process exits.
struct Holders {
  std::mutex mutex;
  std::multiset<std::pair<std::string, std::thread::id>> held;
};

Holders& holders() {
  static auto* h = new Holders();
  return *h;
}

std::thread::id held_by_this_thread(const fs::path& root) {
  Holders& h = holders();
  std::lock_guard lock(h.mutex);
  h.held.emplace(root.string(), std::this_thread::get_id());
  return std::this_thread::get_id();
}

void released(const fs::path& root, std::thread::id holder) {
  Holders& h = holders();
  std::lock_guard lock(h.mutex);
  if (auto it = h.held.find({root.string(), holder}); it != h.held.end()) h.held.erase(it);
}

bool this_thread_holds(const fs::path& root) {
  Holders& h = holders();
  std::lock_guard lock(h.mutex);
  return h.held.count({root.string(), std::this_thread::get_id()}) != 0;
}

}  // namespace

KernelCache::Build::~Build() {
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
  if (cache_lock_ >= 0) released(root_, holder_);
  unlock_file(cache_lock_);
  unlock_file(key_lock_);
}

std::unique_ptr<KernelCache::Build> KernelCache::begin_build(const std::string& key) const {
  check_key(key);
  check_root();
  const fs::path locks = private_dir(root_ / "locks");
  // Dead builds' staging goes first, this key's included: once this build holds the key's lock,
  // a staging directory of the same key (a killed build of this kernel) would look alive.
  reclaim_staging();
  std::unique_ptr<Build> build(new Build());
  build->key_lock_ = lock_file(locks / (key + ".lock"), LockMode::exclusive);
  build->cache_lock_ = lock_file(locks / "cache.lock", LockMode::shared);
  build->root_ = root_;
  build->holder_ = held_by_this_thread(root_);
  // Made under the cache's lock, which clear() takes exclusively to remove them.
  private_dir(root_ / "kernels");
  const fs::path staging = private_dir(root_ / "staging");
  build->staging_ = staging / (key + "." + random_suffix());
  if (::mkdir(build->staging_.c_str(), 0700) != 0) {
    auto path = std::move(build->staging_);
    build->staging_.clear();
    throw CacheError(fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
  }
  return build;
}

KernelCache::Hold::~Hold() {
  if (cache_lock_ >= 0) released(root_, holder_);
  unlock_file(cache_lock_);
}

std::unique_ptr<KernelCache::Hold> KernelCache::hold() const {
  check_root();
  std::unique_ptr<Hold> hold(new Hold());
  hold->cache_lock_ = lock_file(private_dir(root_ / "locks") / "cache.lock", LockMode::shared);
  hold->root_ = root_;
  hold->holder_ = held_by_this_thread(root_);
  return hold;
}

void KernelCache::reclaim_staging() const {
  if (!holds("staging")) return;  // and never through a symbolic link: its target's files are not builds
  // A prune may come before any build made the lock directory.
  const fs::path locks = private_dir(root_ / "locks");
  for (const fs::path& staged : list_entries(root_ / "staging")) {
    const std::string name = staged.filename().string();
    const std::string key = name.substr(0, name.find('.'));
    // A builder of the key holds its lock; a free lock means the build died (or its process did).
    int fd = lock_file(locks / (key + ".lock"), LockMode::exclusive, /*wait=*/false);
    if (fd < 0) continue;
    std::error_code removed;
    fs::remove_all(staged, removed);
    unlock_file(fd);
  }
}

CacheEntry KernelCache::publish(const std::string& key, const std::string& name, Build& build) const {
  check_key(key);
  const fs::path& staged = build.staging();
  auto library = file_digest(staged / "kernel.so");
  auto source = file_digest(staged / "kernel.cu");
  if (!library || !source) throw CacheError(fmt::format("the build in {} left no kernel.so or kernel.cu", staged.string()));
  nlohmann::json entry = {{"key", key},
                          {"name", name},
                          {"library_bytes", library->bytes},
                          {"library_xxh3", library->xxh3},
                          {"source_xxh3", source->xxh3}};
  write_file_durably(staged / "entry.json", entry.dump(2) + "\n");
  for (const auto& f : fs::directory_iterator(staged)) {
    ::chmod(f.path().c_str(), f.is_directory() ? 0700 : 0600);
    fsync_path(f.path());
  }
  fsync_path(staged);

  fs::path final_dir = root_ / "kernels" / key;
  if (::rename(staged.c_str(), final_dir.c_str()) != 0) {
    // ENOTEMPTY/EEXIST: another process published the same key first; keep its entry.
    int err = errno;
    std::error_code ec;
    fs::remove_all(staged, ec);
    build.staging_.clear();
    if (auto existing = find(key)) return *existing;
    throw CacheError(fmt::format("cannot publish {} into {}: {}", name, final_dir.string(), std::strerror(err)));
  }
  build.staging_.clear();
  fsync_path(root_ / "kernels");
  return CacheEntry{key, name, final_dir};
}

fs::path KernelCache::keep_failed(const std::string& key, Build& build) const {
  check_key(key);
  fs::path kept = private_dir(root_ / "failed") / key;
  std::error_code ec;
  fs::remove_all(kept, ec);
  if (::rename(build.staging().c_str(), kept.c_str()) != 0) {
    fs::path staging = build.staging_;
    build.staging_.clear();  // left for the user; reclaimed as dead staging by a later build
    return staging;
  }
  build.staging_.clear();
  return kept;
}

CacheInfo KernelCache::info() const {
  CacheInfo info{root_};
  if (!check_root(/*create=*/false)) return info;
  // What is in one of the cache's directories; one that is not a safe directory (a link, say) makes the cache
  // unusable, not empty.
  auto tally = [&](const char* name, size_t& count, uint64_t& bytes) {
    if (!holds(name)) return;
    for (const fs::path& entry : list_entries(root_ / name)) {
      ++count;
      bytes += directory_bytes(entry);
    }
  };
  tally("kernels", info.entries, info.bytes);
  tally("staging", info.staging, info.staging_bytes);
  tally("failed", info.failed, info.failed_bytes);
  tally("torch", info.torch_modules, info.torch_bytes);
  return info;
}

bool KernelCache::holds(const std::string& name) const {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    throw InvalidArgumentError(fmt::format("kernel cache: '{}' is no directory of the cache's own (one name under its "
                                           "root)", name));
  const fs::path dir = root_ / name;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return false;
  if (auto why = unsafe_dir(dir, false); !why.empty()) {
    if (!fs::exists(dir, ec)) return false;  // cleared meanwhile (clear() in another process)
    throw CacheError("the kernel cache is unusable: " + why);
  }
  return true;
}

std::vector<CacheCheck> KernelCache::verify() const {
  std::vector<CacheCheck> checks;
  if (!check_root(/*create=*/false) || !holds("kernels")) return checks;
  for (const fs::path& dir : list_entries(root_ / "kernels")) {
    std::string key = dir.filename().string();
    const auto entry = entry_json(dir);
    const bool named = entry && entry->is_object() && entry->contains("name") && entry->at("name").is_string();
    auto problem = problem_with(dir, key);
    std::error_code ec;
    if (problem && !fs::exists(dir, ec)) continue;  // removed meanwhile (a prune, a clear): gone, not damaged
    checks.push_back({key, named ? entry->at("name").get<std::string>() : "", problem.value_or("")});
  }
  return checks;
}

void KernelCache::clear(const std::function<bool()>& stop) const {
  if (!check_root(/*create=*/false)) return;
  if (this_thread_holds(root_))
    throw CacheError(fmt::format("cannot clear the cache {} while this thread holds it (a build it runs, or a "
                                 "cache hold): the clear would wait for itself; clear it after the hold ends",
                                 root_.string()));
  const fs::path cache_lock = private_dir(root_ / "locks") / "cache.lock";
  int lock = lock_file(cache_lock, LockMode::exclusive, /*wait=*/false);
  if (lock < 0)  // builds finish first (a kernel's, or a PyTorch module's: minutes), said rather than silent
    log(LogLevel::warning, fmt::format("waiting for the builds in progress to finish before clearing the cache {}",
                                       root_.string()));
  while (lock < 0) {
    if (stop && stop()) throw Interrupted("the cache clear was interrupted while it waited for builds in progress");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    lock = lock_file(cache_lock, LockMode::exclusive, /*wait=*/false);
  }
  try {
    std::error_code ec;
    for (const char* sub : {"kernels", "staging", "failed", "headers", "torch"})
      if (fs::exists(root_ / sub, ec)) remove_atomically(root_ / sub);
    reclaim_trash(root_, 0);  // what a clear killed midway left: under this lock, no clear is alive
  } catch (...) {
    unlock_file(lock);
    throw;
  }
  unlock_file(lock);
}

size_t KernelCache::prune(uint64_t max_bytes) const {
  if (!check_root(/*create=*/false)) return 0;
  const bool kernels = holds("kernels");  // an unusable cache is refused before anything is removed
  reclaim_staging();
  reclaim_trash(root_, 600);
  if (kernels) reclaim_trash(root_ / "kernels", 600);
  if (!kernels) return 0;
  struct Item {
    fs::path dir;
    fs::file_time_type used;
    uint64_t bytes;
  };
  std::vector<Item> items;
  uint64_t total = 0;
  std::error_code ec;
  for (const fs::path& dir : list_entries(root_ / "kernels")) {
    items.push_back({dir, fs::last_write_time(dir, ec), directory_bytes(dir)});
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
