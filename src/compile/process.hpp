// The compiler's processes. Each command runs under a small supervisor in a process group of its
// own: when the process that asked for it dies (even by SIGKILL), the supervisor is told by the
// kernel (PR_SET_PDEATHSIG) and kills the whole group, so no nvcc, cicc or ptxas outlives it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cuforge::compile {

// Starts argv[0] (an absolute path) with stdout and stderr sent to `log` and the environment
// `env` (NAME=value entries; empty: this process's). Throws ToolchainError if it cannot start.
pid_t start_process(const std::vector<std::string>& argv, const std::filesystem::path& log,
                    const std::vector<std::string>& env = {});
// Waits for a process started by start_process; returns its exit status (128 + signal if killed).
int wait_process(pid_t pid);
// The same, asking `stop` (where given) about every 100 ms whether to wait on: where it says to stop, kills the
// process's whole group (what it started too), reaps it and throws Interrupted.
int wait_process(pid_t pid, const std::function<bool()>& stop);
// Waits at most `timeout`; past it, kills the process's whole group (what it started too) and
// returns nullopt.
std::optional<int> wait_process(pid_t pid, std::chrono::milliseconds timeout);

}  // namespace cuforge::compile
