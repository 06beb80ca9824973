#include "nvcc.hpp"

#include <signal.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "files.hpp"
#include "process.hpp"

extern char** environ;

namespace cuforge::compile {
namespace fs = std::filesystem;
namespace {

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

}  // namespace

// Builds the library as nvcc would, the host and device halves at once; plain nvcc where its steps
// have another shape. Intermediate files go to steps_dir; the output of the steps to log.
int run_nvcc(const std::vector<std::string>& argv, const fs::path& steps_dir, const std::string& module_id,
             const fs::path& log, const std::function<bool()>& stop) {
  fs::create_directories(steps_dir);
  std::vector<std::string> dryrun = argv;
  dryrun.insert(dryrun.begin() + 1, {"--dryrun", "--keep", "--keep-dir", steps_dir.string()});
  std::optional<NvccSteps> steps;
  if (wait_process(start_process(dryrun, steps_dir / "dryrun.txt"), stop) == 0)
    steps = parse_dryrun(read_file_or_empty(steps_dir / "dryrun.txt"));
  if (!steps) return wait_process(start_process(argv, log), stop);
  write_file_durably(steps->module_id_file, module_id);

  // Our environment with nvcc's settings in place of ours.
  std::vector<std::string> environment = steps->environment;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(environment.begin(), environment.end(), [&](const auto& s) { return s.rfind(name, 0) == 0; }))
      environment.push_back(entry);
  }
  auto start = [&](const std::vector<std::string>& commands, const fs::path& to) {
    std::string script;
    for (const auto& c : commands) script += (script.empty() ? "" : " && ") + c;
    return start_process({"/bin/sh", "-c", script}, to, environment);
  };

  pid_t host = start(steps->host, steps_dir / "host.log");
  int device_status = 0;
  try {
    device_status = wait_process(start(steps->device, steps_dir / "device.log"), stop);
  } catch (...) {  // stopped (or the device half could not start): the host half goes too
    ::kill(-host, SIGKILL);
    wait_process(host);
    throw;
  }
  int host_status = wait_process(host, stop);
  // The log reads as plain nvcc's would: it stops at the first half that failed.
  std::string text = read_log(steps_dir / "host.log");
  int status = host_status;
  if (status == 0) {
    text += read_log(steps_dir / "device.log");
    status = device_status;
  }
  if (status == 0) {
    status = wait_process(start(steps->rest, steps_dir / "rest.log"), stop);
    text += read_log(steps_dir / "rest.log");
  }
  write_file_durably(log, text);
  return status;
}

}  // namespace cuforge::compile
