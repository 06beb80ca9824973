#include "process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "cuforge/core/error.hpp"

extern char** environ;

namespace cuforge::compile {
namespace {

int exit_status(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// waitpid's failure other than an interruption: the child's status is lost. ECHILD where this process ignores
// SIGCHLD (Python's signal.signal(SIGCHLD, SIG_IGN)): the kernel then reaps children unasked.
[[noreturn]] void status_lost(pid_t pid, int error) {
  throw ToolchainError(
      error == ECHILD
          ? fmt::format("the compiler's exit status is lost (process {} was reaped unasked): this process ignores "
                        "SIGCHLD; restore its default (signal.signal(signal.SIGCHLD, signal.SIG_DFL)) to build kernels",
                        pid)
          : fmt::format("cannot wait for the compiler (process {}): {}", pid, std::strerror(error)));
}

// In the supervisor: kill every process of its group, itself included.
void kill_group(int) { ::kill(0, SIGKILL); }

// The supervisor, in the forked child. Only async-signal-safe calls from here on: the parent may
// have other threads, whose locks the child inherits held.
[[noreturn]] void supervise(char* const* argv, char* const* env, const char* log, pid_t parent) {
  ::setpgid(0, 0);
  // An ignored SIGCHLD (inherited, and kept across execve) would lose this process's wait for the command, and
  // nvcc's for its own steps ("nvcc fatal: Failed to preprocess host compiler properties").
  struct sigaction child_default{};
  child_default.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &child_default, nullptr);
  struct sigaction kill{};
  kill.sa_handler = kill_group;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &kill, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) kill_group(0);  // the parent died before the line above
  // The parent's descriptors stay with the parent: an inherited cache lock (flock) would stay held
  // for as long as this process lives, after the build that took it is gone.
  if (::syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
    for (int open_fd = 3; open_fd < 65536; ++open_fd) ::close(open_fd);
  int fd = ::open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) ::_exit(126);
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  pid_t worker = ::fork();
  if (worker == 0) {
    struct sigaction standard{};
    standard.sa_handler = SIG_DFL;
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &standard, nullptr);
    ::execve(argv[0], argv, env);
    ::_exit(127);
  }
  if (worker < 0) ::_exit(126);
  int status = 0;
  while (::waitpid(worker, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

}  // namespace

pid_t start_process(const std::vector<std::string>& argv, const std::filesystem::path& log,
                    const std::vector<std::string>& env) {
  // Everything the child needs is built before fork: it must not allocate.
  std::vector<char*> args, environment;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) environment.push_back(const_cast<char*>(e.c_str()));
  environment.push_back(nullptr);
  const std::string log_path = log.string();
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) supervise(args.data(), env.empty() ? environ : environment.data(), log_path.c_str(), parent);
  if (pid < 0) throw ToolchainError(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  ::setpgid(pid, pid);  // also here, so that the group exists whichever runs first
  return pid;
}

int wait_process(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) status_lost(pid, errno);
  return exit_status(status);
}

namespace {

// Polls the process, at most `longest_pause` apart (short steps, nvcc's dry run, end within a few ms of their end),
// until it ends (its exit status) or `give_up` says to (a check that throws says so too): then kills its whole
// group, the supervisor's, which is the command and everything it started, reaps it and returns nullopt.
std::optional<int> wait_unless(pid_t pid, const std::function<bool()>& give_up, std::chrono::milliseconds longest_pause) {
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return exit_status(status);
    if (done < 0 && errno != EINTR) status_lost(pid, errno);
    bool giving_up = true;
    try {
      giving_up = give_up();
    } catch (...) {
    }
    if (giving_up) {
      ::kill(-pid, SIGKILL);
      wait_process(pid);
      return std::nullopt;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, longest_pause);
  }
}

}  // namespace

int wait_process(pid_t pid, const std::function<bool()>& stop) {
  if (!stop) return wait_process(pid);
  const std::optional<int> status = wait_unless(pid, stop, std::chrono::milliseconds(100));
  if (!status) throw Interrupted("interrupted: the compiler's processes were stopped");
  return *status;
}

std::optional<int> wait_process(pid_t pid, std::chrono::milliseconds timeout) {
  // At most 50 ms apart: the waits this serves are short probes, not builds.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  return wait_unless(pid, [&] { return std::chrono::steady_clock::now() >= deadline; }, std::chrono::milliseconds(50));
}

}  // namespace cuforge::compile
