#include "cuforge/compile/compiler.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <optional>
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

// Starts argv with stdout and stderr sent to log and environment env (NAME=value entries).
pid_t start_process(const std::vector<std::string>& argv, const fs::path& log, char* const* env) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw ToolchainError(fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
  return pid;
}

// Waits for a process started by start_process; returns its exit status.
int wait_process(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_process(const std::vector<std::string>& argv, const fs::path& log) {
  return wait_process(start_process(argv, log, environ));
}

// --- One nvcc pass, its host and device halves at once ---
//
// nvcc runs its steps one after another: host preprocessing and cudafe++ (the host half), device
// preprocessing, cicc, ptxas and fatbinary (the device half), then the host compile and the link.
// The halves share one input besides the source: the module id, which cudafe++ writes and cicc
// reads. The host compile needs both (it includes cicc's stub, which includes the fatbinary). So
// cuforge writes the module id itself, asks nvcc for its steps (--dryrun) and runs the two halves
// at once: an SM90 kernel builds in ~28 s instead of ~38 s on the 16-core H200 machine, into the
// same SASS and exports, and byte for byte the same library each time (nvcc picks a new module id
// per run). nvcc's own command lines run unchanged but for the module id; steps in any other shape
// (another nvcc) are left to one plain nvcc run.

struct NvccSteps {
  std::vector<std::string> environment;  // NAME=value: what nvcc sets for its steps (PATH, CICC_PATH, ...)
  std::vector<std::string> host, device, rest;  // shell command lines, each group in nvcc's order
  fs::path module_id_file;
};

// The first word of a command line, unquoted, without its directory: "cicc" for "$CICC_PATH/cicc".
std::string tool_of(const std::string& command) {
  std::string word = command.substr(0, command.find(' '));
  word.erase(std::remove(word.begin(), word.end(), '"'), word.end());
  return fs::path(word).filename().string();
}

std::string quoted_option(const std::string& command, const std::string& option) {
  std::string prefix = option + " \"";
  size_t at = command.find(prefix);
  if (at == std::string::npos) return "";
  at += prefix.size();
  return command.substr(at, command.find('"', at) - at);
}

// Splits `nvcc --dryrun` output into the halves described above; nullopt if it has another shape.
std::optional<NvccSteps> parse_dryrun(const std::string& listing) {
  NvccSteps steps;
  std::vector<std::string> commands;
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#$ ", 0) != 0) continue;
    line.erase(0, 3);
    size_t name_end = line.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
    if (name_end != 0 && name_end != std::string::npos && line[name_end] == '=') {
      // Values with spaces or quotes (INCLUDES, LIBRARIES) are spelled out in the commands already.
      if (line.find_first_of(" \"'", name_end) == std::string::npos) steps.environment.push_back(line);
    } else if (tool_of(line) != "rm") {  // rm: stale intermediates, but the steps' directory is fresh
      commands.push_back(line);
    }
  }
  // nvcc 13.0: host -E, cudafe++, device -E, cicc, ptxas, fatbinary, then the host compile and the link.
  if (commands.size() < 3 || commands[0].find(" -E ") == std::string::npos || tool_of(commands[1]) != "cudafe++")
    return std::nullopt;
  auto device_end = std::find_if(commands.begin() + 2, commands.end(),
                                 [](const std::string& c) { return tool_of(c) == "fatbinary"; });
  if (device_end == commands.end()) return std::nullopt;
  steps.host = {commands[0], commands[1]};
  steps.device.assign(commands.begin() + 2, device_end + 1);
  steps.rest.assign(device_end + 1, commands.end());

  // cudafe++ reads the module id instead of writing it; cicc reads the same file.
  const std::string generate = "--gen_module_id_file ";
  size_t at = steps.host[1].find(generate);
  steps.module_id_file = quoted_option(steps.host[1], "--module_id_file_name");
  if (at == std::string::npos || steps.module_id_file.empty()) return std::nullopt;
  steps.host[1].erase(at, generate.size());
  bool cicc_reads_it = false;
  for (const auto& c : steps.device) {
    std::string tool = tool_of(c);
    if (tool == "cicc")
      cicc_reads_it = quoted_option(c, "--module_id_file_name") == steps.module_id_file;
    else if (tool != "ptxas" && tool != "fatbinary" && c.find(" -E ") == std::string::npos)
      return std::nullopt;  // a device step that might read the host half's output
  }
  if (!cicc_reads_it) return std::nullopt;
  return steps;
}

// Builds the library as nvcc would, the host and device halves at once; plain nvcc where its steps
// have another shape. Intermediate files go to steps_dir; the output of the steps to log.
int run_nvcc(const std::vector<std::string>& argv, const fs::path& steps_dir, const std::string& module_id,
             const fs::path& log) {
  fs::create_directories(steps_dir);
  std::vector<std::string> dryrun = argv;
  dryrun.insert(dryrun.begin() + 1, {"--dryrun", "--keep", "--keep-dir", steps_dir.string()});
  std::optional<NvccSteps> steps;
  if (run_process(dryrun, steps_dir / "dryrun.txt") == 0) steps = parse_dryrun(read_file(steps_dir / "dryrun.txt"));
  if (!steps) return run_process(argv, log);
  write_file(steps->module_id_file, module_id);

  // Our environment with nvcc's settings in place of ours.
  std::vector<std::string> environment = steps->environment;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(environment.begin(), environment.end(), [&](const auto& s) { return s.rfind(name, 0) == 0; }))
      environment.push_back(entry);
  }
  std::vector<char*> env;
  for (auto& e : environment) env.push_back(e.data());
  env.push_back(nullptr);
  auto start = [&](const std::vector<std::string>& commands, const fs::path& to) {
    std::string script;
    for (const auto& c : commands) script += (script.empty() ? "" : " && ") + c;
    return start_process({"/bin/sh", "-c", script}, to, env.data());
  };

  pid_t host = start(steps->host, steps_dir / "host.log");
  int device_status = wait_process(start(steps->device, steps_dir / "device.log"));
  int host_status = wait_process(host);
  // The log reads as plain nvcc's would: it stops at the first half that failed.
  std::string text = read_file(steps_dir / "host.log");
  int status = host_status;
  if (status == 0) {
    text += read_file(steps_dir / "device.log");
    status = device_status;
  }
  if (status == 0) {
    status = wait_process(start(steps->rest, steps_dir / "rest.log"));
    text += read_file(steps_dir / "rest.log");
  }
  write_file(log, text);
  return status;
}

// The name nvcc gives the translation unit's internal symbols on both sides (its shape: a hash, the
// length and name of the source file, a hash), here from the cache key, so a build repeats exactly.
std::string module_id(const std::string& key) {
  return fmt::format("_{}_9_kernel_cu_{}", key.substr(0, 8), key.substr(8, 8));
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
  int status = run_nvcc(argv, staging / "steps", module_id(key), log);
  fs::remove_all(staging / "steps");
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
