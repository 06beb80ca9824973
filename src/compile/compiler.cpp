#include "cuforge/compile/compiler.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "cuforge/compile/toolchain.hpp"
#include "cuforge/core/error.hpp"
#include "cuforge/emit/gemm.hpp"
#include "file_digest.hpp"

extern char** environ;

namespace cuforge::compile {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

// Holds an exclusive flock on a file for its lifetime.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ < 0) throw CacheError(fmt::format("cannot open the lock file {}", path.string()));
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

void write_file(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), std::streamsize(text.size()));
  if (!out) throw CacheError(fmt::format("cannot write {} (is the disk full?)", path.string()));
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs argv with stdout and stderr sent to log; returns the exit status.
int run_process(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw ToolchainError(fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string flags_text(const KernelSource& k) {
  std::string text;
  for (const auto& f : Toolchain::get().nvcc_flags(k.family, k.target_cc)) {
    // Include and library paths are locations; CUTLASS's version, not its location, is in the key.
    if (f.rfind("-I", 0) != 0 && f.rfind("-L", 0) != 0) text += f + " ";
  }
  return text;
}

CacheEntry build(const KernelSource& k, const std::string& key, const KernelCache& cache) {
  const Toolchain& tc = Toolchain::get();
  fs::path staging = cache.make_staging_dir(key);
  write_file(staging / "kernel.cu", k.source);
  write_file(staging / "include" / "cuforge" / "abi.h", emit::abi_header());

  std::vector<std::string> argv = {tc.nvcc.string()};
  for (auto& f : tc.nvcc_flags(k.family, k.target_cc)) argv.push_back(f);
  argv.insert(argv.end(), {"-I" + (staging / "include").string(), "-o", (staging / "kernel.so").string(),
                           (staging / "kernel.cu").string()});
  fs::path log = staging / "nvcc.log";
  int status = run_process(argv, log);
  if (status != 0 || !fs::exists(staging / "kernel.so")) {
    // Keep the source and log where the user can read them: in the cache, never the working directory.
    fs::path kept = cache.failed_dir(key);
    std::error_code ec;
    fs::remove_all(kept, ec);
    fs::rename(staging, kept, ec);
    fs::path where = ec ? staging : kept;
    std::string text = read_file(where / "nvcc.log");
    std::string command;
    for (const auto& a : argv) command += a + " ";
    throw CompilationError(fmt::format("nvcc failed (exit status {}) building {}; source kept at {}\n{}", status,
                                       k.name, (where / "kernel.cu").string(), text),
                           command + "\n" + text, where / "kernel.cu");
  }
  fs::remove(log);
  fs::remove_all(staging / "include");
  return cache.publish(key, k.name, staging);
}

}  // namespace

KernelSource gemm_kernel_source(const library::GemmConfig& config, int cc) {
  return {config.name(), emit::emit_gemm(config), config.arch, config.arch >= 90 ? 90 : cc};
}

std::string cache_key(const KernelSource& k) {
  const Toolchain& tc = Toolchain::get();
  std::string target = fmt::format("family sm{} target sm{}", k.family, k.target_cc);
  return digest_of({k.source, emit::abi_header(), tc.nvcc_identity, flags_text(k), tc.cutlass_version, target});
}

CompileResult compile(const KernelSource& k, const KernelCache& cache) {
  auto start = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::string key = cache_key(k);
  if (auto hit = cache.find(key)) return {*hit, true, seconds()};
  FileLock lock(cache.lock_path(key));
  if (auto hit = cache.find(key)) return {*hit, true, seconds()};  // built by another process meanwhile
  CacheEntry entry = build(k, key, cache);
  return {entry, false, seconds()};
}

std::vector<BuildOutcome> compile_many(const std::vector<KernelSource>& kernels, int jobs,
                                       const ProgressCallback& progress, const KernelCache& cache) {
  std::vector<BuildOutcome> outcomes(kernels.size());
  if (jobs <= 0) jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min<int>(jobs, int(std::max<size_t>(1, kernels.size())));
  std::atomic<size_t> next{0};
  std::mutex mutex;
  BuildProgress state{0, kernels.size(), 0, 0, nullptr};
  auto worker = [&] {
    for (size_t i; (i = next++) < kernels.size();) {
      BuildOutcome out{kernels[i].name, std::nullopt, ""};
      try {
        out.result = compile(kernels[i], cache);
      } catch (const CompilationError& e) {
        out.error = e.what();
      } catch (const Error& e) {
        out.error = e.what();
      }
      std::lock_guard lock(mutex);
      ++state.done;
      state.failed += out.result ? 0 : 1;
      state.cache_hits += out.result && out.result->cache_hit ? 1 : 0;
      state.last_name = &kernels[i].name;
      outcomes[i] = std::move(out);
      if (progress) progress(state);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return outcomes;
}

}  // namespace cuforge::compile
