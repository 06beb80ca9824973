#include "cuforge/compile/compiler.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

#include "cuforge/compile/toolchain.hpp"
#include "cuforge/core/error.hpp"
#include "cuforge/core/log.hpp"
#include "file_digest.hpp"
#include "files.hpp"
#include "nvcc.hpp"

namespace cuforge::compile {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<size_t> g_requests{0}, g_hits{0}, g_builds{0}, g_failures{0};

std::mutex g_interrupt_mutex;
std::function<bool()> g_interrupt_check;  // set_interrupt_check's

// The name nvcc gives the translation unit's internal symbols on both sides (its shape: a hash, the
// length and name of the source file, a hash), here from the cache key, so a build repeats exactly.
std::string module_id(const std::string& key) {
  return fmt::format("_{}_9_kernel_cu_{}", key.substr(0, 8), key.substr(8, 8));
}

// Appends `field` to `text` after its length, so that no two lists of fields join into the same text (a header's
// text ending in what would otherwise be the next header's path).
void append_field(std::string& text, std::string_view field) {
  text += std::to_string(field.size());
  text += ':';
  text += field;
}

std::string flags_text(const KernelSource& k) {
  std::string text;
  for (const auto& f : Toolchain::get().nvcc_flags(k.family, k.target_cc)) {
    // Include and library paths are locations; the CUTLASS headers' content, not their location, is in the key.
    if (f.rfind("-I", 0) != 0 && f.rfind("-L", 0) != 0) append_field(text, f);
  }
  return text;
}

// The content of the CUTLASS headers in use, so that a patched tree with the same version string
// never reuses a stale library. Hashing the tree (~900 files, 28 MB) costs ~0.1 s; a stamp of it
// (every file's path, size and modification time: ~10 ms) names the digest kept in the cache's
// headers/ directory, and each process computes it once.
std::string cutlass_digest(const KernelCache& cache) {
  static std::mutex mutex;
  static std::map<fs::path, std::string> digests;
  const fs::path root = Toolchain::get().cutlass;
  std::lock_guard lock(mutex);
  if (auto it = digests.find(root); it != digests.end()) return it->second;

  // The stamp: every file's path, size and modification time, in a fixed order (one stat per
  // file; the directory walk's own file types need none).
  std::vector<std::pair<std::string, fs::path>> files;
  const size_t prefix = root.string().size() + 1;
  for (const fs::path& dir : {root / "include", root / "tools" / "util" / "include"}) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file(ec)) files.emplace_back(it->path().string().substr(prefix), it->path());
  }
  std::sort(files.begin(), files.end());
  std::string stamp_text = "digest of lengths and contents\n";  // the memo of another way of digesting not read
  stamp_text.reserve(files.size() * 96);
  for (const auto& [name, path] : files) {
    struct stat st {};
    ::stat(path.c_str(), &st);
    stamp_text += name;
    stamp_text += fmt::format(" {} {}.{}\n", st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  }
  const std::string stamp = digest_of({stamp_text});
  std::optional<fs::path> memo;
  try {
    memo = cache.directory("headers") / stamp;
  } catch (const CacheError&) {
    // A cache that cannot keep the memo still gets the digest, computed every time.
  }
  std::string digest = memo ? read_file_or_empty(*memo) : "";
  if (digest.size() != 32) {
    std::string contents;
    for (const auto& [name, path] : files) {
      append_field(contents, name);
      append_field(contents, read_file_or_empty(path));
    }
    digest = digest_of({contents});
    if (memo) {
      try {
        fs::path temporary = memo->string() + ".tmp" + std::to_string(::getpid());
        write_file_durably(temporary, digest);
        fs::rename(temporary, *memo);
      } catch (const std::exception&) {
      }
    }
  }
  return digests[root] = digest;
}

// Free space where the cache builds, in bytes; nvcc fails with an empty log when it runs out.
uint64_t free_bytes(const fs::path& dir) {
  struct statvfs fs {};
  return ::statvfs(dir.c_str(), &fs) == 0 ? uint64_t(fs.f_bavail) * fs.f_frsize : UINT64_MAX;
}

// What is wrong with what nvcc wrote as the library, or "" where it is one: a regular file that begins as ELF
// files do (a compiler that exits 0 having written nothing, a directory, a link or garbage is no build to publish).
std::string library_problem(const fs::path& library) {
  struct stat st {};
  if (::lstat(library.c_str(), &st) != 0) return "it wrote no " + library.filename().string();
  if (!S_ISREG(st.st_mode)) return library.filename().string() + " is not a regular file";
  char magic[4] = {};
  const int fd = ::open(library.c_str(), O_RDONLY | O_CLOEXEC);
  const ssize_t got = fd >= 0 ? ::read(fd, magic, sizeof magic) : -1;
  if (fd >= 0) ::close(fd);
  if (got != 4 || std::memcmp(magic, "\177ELF", 4) != 0)
    return library.filename().string() + " is not a shared library (no ELF header)";
  return "";
}

CacheEntry build(const KernelSource& k, const std::string& key, const KernelCache& cache,
                 KernelCache::Build& slot, const StopCheck& stop) {
  const Toolchain& tc = Toolchain::get();
  const fs::path& staging = slot.staging();
  write_file_durably(staging / "kernel.cu", k.source);
  for (const auto& [path, text] : k.headers) {
    fs::create_directories((staging / "include" / path).parent_path());
    write_file_durably(staging / "include" / path, text);
  }
  std::vector<std::string> argv = {tc.nvcc.string()};
  for (auto& f : tc.nvcc_flags(k.family, k.target_cc)) argv.push_back(f);
  argv.insert(argv.end(), {"-I" + (staging / "include").string(), "-o", (staging / "kernel.so").string(),
                           (staging / "kernel.cu").string()});
  fs::path log = staging / "nvcc.log";
  ++g_builds;
  int status = run_nvcc(argv, staging / "steps", module_id(key), log, stop);
  std::error_code ec;
  fs::remove_all(staging / "steps", ec);
  const std::string problem = status == 0 ? library_problem(staging / "kernel.so") : "";
  if (status != 0 || !problem.empty()) {
    ++g_failures;
    std::string text = read_log(log);
    const std::string failed =
        status != 0 ? fmt::format("nvcc failed (exit status {})", status) : "nvcc exited 0 but " + problem + ",";
    const uint64_t free = free_bytes(staging);
    if (free < (uint64_t(256) << 20))
      throw CacheError(fmt::format("{} building {} with {} MiB free on the disk holding the cache {}: free space or "
                                   "set CUFORGE_CACHE_DIR elsewhere{}{}",
                                   failed, k.name, free >> 20, cache.root().string(), text.empty() ? "" : "\n", text));
    std::string command;
    for (const auto& a : argv) command += a + " ";
    // Keep the source and log where the user can read them: in the cache, never the working directory.
    fs::path kept = cache.keep_failed(key, slot);
    throw CompilationError(fmt::format("{} building {}; source kept at {}, log at {}\n{}", failed, k.name,
                                       (kept / "kernel.cu").string(), (kept / "nvcc.log").string(),
                                       text.empty() ? "(nvcc printed nothing)" : text),
                           command + "\n" + text, kept / "kernel.cu");
  }
  fs::remove(log, ec);
  fs::remove_all(staging / "include", ec);
  return cache.publish(key, k.name, slot);
}

// The kernel's own headers are written under its build's include directory: each path relative and
// within it (every entry point computes the key first).
void check_header_paths(const KernelSource& k) {
  for (const auto& [path, text] : k.headers) {
    const fs::path p(path);
    const bool inside = !path.empty() && p.is_relative() && path.find('\0') == std::string::npos &&
                        std::none_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
    if (!inside)
      throw InvalidArgumentError(fmt::format("kernel '{}': a header's path is relative and stays within the "
                                             "kernel's include directory (no '..'), got '{}'", k.name, path));
  }
}

}  // namespace

std::string cache_key(const KernelSource& k, const KernelCache& cache) {
  check_header_paths(k);
  const Toolchain& tc = Toolchain::get();
  std::string headers;
  for (const auto& [path, text] : k.headers) {
    append_field(headers, path);
    append_field(headers, text);
  }
  std::string target = fmt::format("family sm{} target sm{}", k.family, k.target_cc);
  return digest_of({k.source, headers, tc.nvcc_identity, flags_text(k), tc.cutlass_version,
                    cutlass_digest(cache), target});
}

CompileResult compile(const KernelSource& k, const KernelCache& cache, const StopCheck& stop) {
  auto start = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  ++g_requests;
  try {
    check_target(k.family, k.target_cc);
    std::string key = cache_key(k, cache);
    if (auto hit = cache.find(key)) {
      ++g_hits;
      return {*hit, true, seconds()};
    }
    auto slot = cache.begin_build(key);
    if (auto hit = cache.find(key)) {  // built by another thread or process meanwhile
      ++g_hits;
      return {*hit, true, seconds()};
    }
    log(LogLevel::info, fmt::format("building {} for sm{} (nvcc)", k.name, k.target_cc));
    CacheEntry entry = build(k, key, cache, *slot, stop);
    log(LogLevel::info, fmt::format("built {} in {:.1f} s", k.name, seconds()));
    return {entry, false, seconds()};
  } catch (const fs::filesystem_error& e) {
    throw CacheError(fmt::format("the kernel cache at {}: {}", cache.root().string(), e.what()));
  }
}

std::optional<CacheEntry> cached(const KernelSource& k, const KernelCache& cache) {
  try {
    return cache.find(cache_key(k, cache));
  } catch (const fs::filesystem_error& e) {
    throw CacheError(fmt::format("the kernel cache at {}: {}", cache.root().string(), e.what()));
  }
}

namespace {

// Background builds: one at a time per kernel (asking again for a kernel still building gets that
// build), at most one nvcc per core, finished threads joined as new ones start and the rest when
// the process exits (a static's destructor). The statics a build uses (the toolchain, the user's
// cache, the CUTLASS digest) are made first, so they are destroyed after it.
class BuildThreads {
 public:
  static BuildThreads& get() {
    cutlass_digest(KernelCache::user_cache());
    static BuildThreads threads;
    return threads;
  }

  // The build of the cache key `key` still running, if any.
  std::shared_ptr<const BackgroundBuild> running(const std::string& key) {
    std::lock_guard lock(mutex_);
    for (const auto& e : entries_)
      if (e.build->key() == key && !e.build->done()) return e.build;
    return nullptr;
  }
  // Starts `work` on a thread of its own (false once the process is exiting: nothing started).
  bool add(std::shared_ptr<const BackgroundBuild> build, std::function<void()> work) {
    std::lock_guard lock(mutex_);
    if (closing_) return false;
    auto done = std::partition(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.build->done(); });
    for (auto it = done; it != entries_.end(); ++it) it->thread.join();
    entries_.erase(done, entries_.end());
    entries_.push_back({std::move(build), std::thread(std::move(work))});
    return true;
  }
  // A compiler slot, held for one build.
  class Slot {
   public:
    explicit Slot(BuildThreads& t) : t_(t) {
      std::unique_lock lock(t_.mutex_);
      t_.free_.wait(lock, [&] { return t_.busy_ < t_.slots_; });
      ++t_.busy_;
    }
    ~Slot() {
      std::lock_guard lock(t_.mutex_);
      --t_.busy_;
      t_.free_.notify_one();
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    BuildThreads& t_;
  };

  ~BuildThreads() {
    std::vector<Entry> entries;
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
      entries.swap(entries_);
    }
    for (auto& e : entries) {
      if (e.thread.get_id() == std::this_thread::get_id())
        e.thread.detach();  // exit() called on a build thread (by a log sink): it cannot wait for itself
      else
        e.thread.join();
    }
  }

 private:
  struct Entry {
    std::shared_ptr<const BackgroundBuild> build;
    std::thread thread;
  };
  std::mutex mutex_;
  std::condition_variable free_;
  std::vector<Entry> entries_;
  int busy_ = 0;
  const int slots_ = int(std::max(1u, std::thread::hardware_concurrency()));
  bool closing_ = false;
};

}  // namespace

std::shared_ptr<const BackgroundBuild> BackgroundBuild::start(KernelSource kernel, const KernelCache& cache) {
  BuildThreads& threads = BuildThreads::get();
  std::string key = cache_key(kernel, cache);
  if (auto same = threads.running(key)) return same;
  std::shared_ptr<BackgroundBuild> build(new BackgroundBuild);
  build->name_ = kernel.name;
  build->key_ = std::move(key);
  auto work = [build, kernel = std::move(kernel), &cache, &threads] {
    try {
      BuildThreads::Slot slot(threads);
      build->result_ = compile(kernel, cache);
    } catch (abi::__forced_unwind&) {  // the thread is being cancelled: let it unwind
      throw;
    } catch (const std::exception& e) {  // no other exception may leave a thread
      build->error_ = e.what();
    } catch (...) {
      build->error_ = "unknown failure";
    }
    build->done_.store(true, std::memory_order_release);
  };
  if (!threads.add(build, work)) work();  // the process is exiting: build here
  return build;
}

std::vector<BuildOutcome> compile_many(const std::vector<KernelSource>& kernels, int jobs,
                                       const ProgressCallback& progress, const KernelCache& cache) {
  if (jobs < 0) throw InvalidArgumentError(fmt::format("jobs: expected 0 (one per core) or more, got {}", jobs));
  std::vector<BuildOutcome> outcomes(kernels.size());
  if (jobs == 0) jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min<int>(jobs, int(std::max<size_t>(1, kernels.size())));
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable finished;
  int running = jobs;
  BuildProgress state{0, kernels.size(), 0, 0, nullptr};
  const std::function<bool()> interrupted = interrupt_check();
  // The builds under way stop with the rest where an interrupt check is installed; else nothing stops them.
  const StopCheck builds_stop = interrupted ? StopCheck([&] { return stop.load(); }) : StopCheck();
  auto worker = [&] {
    for (size_t i; !stop.load() && (i = next++) < kernels.size();) {
      BuildOutcome out{kernels[i].name, std::nullopt, "", nullptr};
      try {
        out.result = compile(kernels[i], cache, builds_stop);
      } catch (const Interrupted&) {  // stopped with the rest: neither done nor failed
        break;
      } catch (const std::exception& e) {  // no exception may leave a thread
        out.error = e.what();
        out.exception = std::current_exception();
      } catch (...) {
        out.error = "unknown failure";
        out.exception = std::current_exception();
      }
      std::lock_guard lock(mutex);
      ++state.done;
      state.failed += out.result ? 0 : 1;
      state.cache_hits += out.result && out.result->cache_hit ? 1 : 0;
      state.last_name = &kernels[i].name;
      outcomes[i] = std::move(out);
      if (progress) {
        try {
          progress(state);
        } catch (...) {  // a failing progress display does not stop the builds
        }
      }
    }
    std::lock_guard lock(mutex);
    --running;
    finished.notify_all();
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  {
    std::unique_lock lock(mutex);
    if (!interrupted) finished.wait(lock, [&] { return running == 0; });
    while (!finished.wait_for(lock, std::chrono::milliseconds(100), [&] { return running == 0; }))
      if (!stop.load()) {
        lock.unlock();  // the check may wait for the GIL, which a progress callback holding this lock may take
        bool stopping = true;  // a check that fails stops the builds too: the threads must be joined
        try {
          stopping = interrupted();
        } catch (...) {
        }
        if (stopping) stop.store(true);
        lock.lock();
      }
  }
  for (auto& t : threads) t.join();
  if (stop.load())
    throw Interrupted(fmt::format("interrupted: {} of {} kernels done, the rest stopped or not started", state.done,
                                  kernels.size()));
  return outcomes;
}

void set_interrupt_check(std::function<bool()> check) {
  std::lock_guard lock(g_interrupt_mutex);
  g_interrupt_check = std::move(check);
}

StopCheck interrupt_check() {
  std::lock_guard lock(g_interrupt_mutex);
  return g_interrupt_check;
}

CompileStatistics statistics() { return {g_requests.load(), g_hits.load(), g_builds.load(), g_failures.load()}; }

}  // namespace cuforge::compile
