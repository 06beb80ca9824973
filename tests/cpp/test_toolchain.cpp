// The toolchain from C++ (label "nvcc"; no GPU needed): CUTLASS's version and headers in the cache
// key, a missing or wrong CUTLASS or nvcc named in the error, an nvcc that hangs, targets nvcc cannot
// build. Each toolchain is found once per process: most cases run this binary again in a child.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "compile_support.hpp"
#include "cuforge/compile/compiler.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::TempDir;
using test::tiny_source;

// --- Toolchain errors, each in a fresh process (the toolchain is found once per process). ---

struct ChildRun {
  int status;
  std::string output;
};

// Runs this test binary's DISABLED_ToolchainChild.Report in a new process with extra environment.
ChildRun report_in_child(const std::vector<std::pair<std::string, std::string>>& env) {
  std::string command;
  for (const auto& [k, v] : env) command += k + "='" + v + "' ";
  command += fs::read_symlink("/proc/self/exe").string() +
             " --gtest_also_run_disabled_tests --gtest_filter=DISABLED_ToolchainChild.Report 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(("env " + command).c_str(), "r"), ::pclose);
  std::string output;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe.get())) output.append(buf, n);
  int status = ::pclose(pipe.release());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string line_after(const std::string& output, const std::string& marker) {
  size_t at = output.find(marker);
  if (at == std::string::npos) return "";
  size_t end = output.find('\n', at);
  return output.substr(at + marker.size(), end - at - marker.size());
}

// Not a test of its own: what report_in_child runs.
TEST(DISABLED_ToolchainChild, Report) {
  try {
    const auto& tc = compile::Toolchain::get();
    std::printf("\nCUTLASS=%s\nKEY=%s\n", tc.cutlass_version.c_str(), compile::cache_key(tiny_source()).c_str());
  } catch (const ToolchainError& e) {
    std::printf("\nTOOLCHAIN_ERROR=%s\n", e.what());
  }
}

fs::path fake_cutlass(const fs::path& dir, const std::string& version) {
  int major = 0, minor = 0, patch = 0;
  std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch);
  test::write_file(dir / "include/cutlass/version.h",
                   "#pragma once\n#define CUTLASS_MAJOR " + std::to_string(major) + "\n#define CUTLASS_MINOR " +
                       std::to_string(minor) + "\n#define CUTLASS_PATCH " + std::to_string(patch) + "\n");
  return dir;
}

TEST(Toolchain, CutlassVersionIsInTheKey) {
  const auto& tc = test::toolchain();
  auto real = report_in_child({{"CUTLASS_PATH", tc.cutlass.string()}});
  ASSERT_EQ(line_after(real.output, "CUTLASS="), tc.cutlass_version) << real.output;
  EXPECT_EQ(line_after(real.output, "KEY="), compile::cache_key(tiny_source())) << "keys are stable across processes";

  TempDir tmp;
  std::string next = tc.cutlass_version.substr(0, tc.cutlass_version.rfind('.')) + ".99";
  auto other = report_in_child({{"CUTLASS_PATH", fake_cutlass(tmp.path(), next).string()}});
  ASSERT_EQ(line_after(other.output, "CUTLASS="), next) << other.output;
  EXPECT_NE(line_after(other.output, "KEY="), line_after(real.output, "KEY="));
}

TEST(Toolchain, MissingOrWrongCutlassIsAClearError) {
  test::toolchain();
  TempDir tmp;
  auto none = report_in_child({{"CUTLASS_PATH", (tmp.path() / "nowhere").string()}});
  std::string error = line_after(none.output, "TOOLCHAIN_ERROR=");
  EXPECT_TRUE(contains(error, "CUTLASS_PATH")) << none.output;
  EXPECT_TRUE(contains(error, "include/cutlass/version.h")) << none.output;
  EXPECT_TRUE(contains(error, "nvidia-cutlass")) << none.output;

  auto old = report_in_child({{"CUTLASS_PATH", fake_cutlass(tmp.path() / "old", "3.9.2").string()}});
  error = line_after(old.output, "TOOLCHAIN_ERROR=");
  EXPECT_TRUE(contains(error, "version 3.9.2")) << old.output;
  EXPECT_TRUE(contains(error, std::string("CUTLASS ") + compile::kCutlassSeries)) << old.output;

  // A path the file system refuses (a loop of links) is the toolchain's error, not the cache's.
  fs::create_symlink(tmp.path() / "loop", tmp.path() / "loop");
  auto loop = report_in_child({{"CUTLASS_PATH", (tmp.path() / "loop").string()}});
  error = line_after(loop.output, "TOOLCHAIN_ERROR=");
  EXPECT_TRUE(contains(error, "holds no include/cutlass/version.h (Too many levels of symbolic links)")) << loop.output;
}

// A CUTLASS tree patched without a new version string gets new keys: the headers' content is in them.
TEST(Toolchain, TheCutlassHeadersContentIsInTheKey) {
  const auto& tc = test::toolchain();
  TempDir tmp;
  fs::copy(tc.cutlass / "include", tmp.path() / "include", fs::copy_options::recursive);
  fs::copy(tc.cutlass / "tools", tmp.path() / "tools", fs::copy_options::recursive);
  auto copy = report_in_child({{"CUTLASS_PATH", tmp.path().string()}});
  auto real = report_in_child({{"CUTLASS_PATH", tc.cutlass.string()}});
  EXPECT_EQ(line_after(copy.output, "KEY="), line_after(real.output, "KEY=")) << "the same headers elsewhere";
  std::ofstream(tmp.path() / "include/cutlass/gemm/gemm.h", std::ios::app) << "\n// patched\n";
  auto patched = report_in_child({{"CUTLASS_PATH", tmp.path().string()}});
  ASSERT_EQ(line_after(patched.output, "CUTLASS="), tc.cutlass_version) << patched.output;
  EXPECT_NE(line_after(patched.output, "KEY="), line_after(real.output, "KEY=")) << patched.output;
}

TEST(Toolchain, MissingNvccIsAClearError) {
  TempDir tmp;
  auto r = report_in_child({{"CUDA_INSTALL_PATH", tmp.path().string()}});
  std::string error = line_after(r.output, "TOOLCHAIN_ERROR=");
  EXPECT_TRUE(contains(error, "CUDA_INSTALL_PATH")) << r.output;
  EXPECT_TRUE(contains(error, "bin/nvcc")) << r.output;

  fs::create_directories(tmp.path() / "dir/bin/nvcc");
  error = line_after(report_in_child({{"CUDA_INSTALL_PATH", (tmp.path() / "dir").string()}}).output, "TOOLCHAIN_ERROR=");
  EXPECT_TRUE(contains(error, "is a directory")) << error;
  test::write_file(tmp.path() / "plain/bin/nvcc", "not a program");
  ::chmod((tmp.path() / "plain/bin/nvcc").c_str(), 0600);
  error = line_after(report_in_child({{"CUDA_INSTALL_PATH", (tmp.path() / "plain").string()}}).output,
                     "TOOLCHAIN_ERROR=");
  EXPECT_TRUE(contains(error, "not an executable file")) << error;
  fs::create_symlink(tmp.path() / "loop", tmp.path() / "loop");
  error = line_after(report_in_child({{"CUDA_INSTALL_PATH", (tmp.path() / "loop").string()}}).output, "TOOLCHAIN_ERROR=");
  EXPECT_TRUE(contains(error, "cannot be read (Too many levels of symbolic links)")) << error;
}

// An nvcc that never answers `--version` (a hung wrapper) is killed, with what it started, after the
// probe's timeout (a short one here; 60 s in use), and named in a ToolchainError.
TEST(Toolchain, AHangingNvccIsKilledAfterItsTimeout) {
  TempDir tmp;
  const fs::path nvcc = tmp.path() / "cuda/bin/nvcc", pid_file = tmp.path() / "sleep.pid";
  test::write_file(nvcc, "#!/bin/sh\nsleep 30 &\necho $! > " + pid_file.string() + "\nwait\n");
  ::chmod(nvcc.c_str(), 0700);
  const char* before = std::getenv("CUDA_INSTALL_PATH");
  const std::string saved = before ? before : "";
  ::setenv("CUDA_INSTALL_PATH", (tmp.path() / "cuda").c_str(), 1);
  auto start = std::chrono::steady_clock::now();
  std::string error = test::message_of<ToolchainError>([] { compile::Toolchain::find(std::chrono::milliseconds(500)); });
  const double ms = test::ms_since(start);
  // Once is enough: a later lookup in the process is refused at once, not after another wait.
  start = std::chrono::steady_clock::now();
  const std::string again =
      test::message_of<ToolchainError>([] { compile::Toolchain::find(std::chrono::milliseconds(500)); });
  const double again_ms = test::ms_since(start);
  if (before) {
    ::setenv("CUDA_INSTALL_PATH", saved.c_str(), 1);
  } else {
    ::unsetenv("CUDA_INSTALL_PATH");
  }
  EXPECT_TRUE(contains(error, nvcc.string() + " --version did not finish within 0.5 s")) << error;
  EXPECT_LT(ms, 3000.0);
  EXPECT_EQ(again, error);
  EXPECT_LT(again_ms, 200.0);
  // The script's own child went with it: gone, or a zombie waiting for its new parent to reap it.
  std::string pid = test::read_file(pid_file);
  pid = pid.substr(0, pid.find('\n'));
  ASSERT_FALSE(pid.empty()) << "the fake nvcc did not start";
  const std::string stat = "/proc/" + pid + "/stat";
  std::string state;
  for (int i = 0; i < 100; ++i) {
    std::string text = test::read_file(stat);
    state = text.empty() ? "gone" : text.substr(text.rfind(')') + 2, 1);
    if (state == "gone" || state == "Z") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(state == "gone" || state == "Z") << "the fake nvcc's sleep is still running (state " << state << ")";
}

// An nvcc whose `--version` fails (exits non-zero, or dies of a signal: under compute-sanitizer following
// child processes nvcc died of SIGSEGV) and says no version is refused by name, not read as version "unknown",
// which would key every kernel anew and rebuild the whole cache with it; a failing one that says its version
// is taken at its word.
TEST(Toolchain, AFailingNvccVersionIsAClearError) {
  TempDir tmp;
  const char* before = std::getenv("CUDA_INSTALL_PATH");
  const std::string saved = before ? before : "";
  std::vector<std::string> outcomes;
  for (const auto& [dir, body] : std::vector<std::pair<std::string, std::string>>{
           {"exits", "exit 3"},
           {"crashes", "kill -SEGV $$"},
           {"says", "echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 1"},
           // A version of other bytes is none (it is part of every cache and tuning key, and shown).
           {"odd", "printf 'release 13.0, V\\377\\376/../x\\n'"}}) {
    const fs::path cuda = tmp.path() / dir;
    test::write_file(cuda / "bin/nvcc", "#!/bin/sh\n" + body + "\n");
    ::chmod((cuda / "bin/nvcc").c_str(), 0700);
    ::setenv("CUDA_INSTALL_PATH", cuda.c_str(), 1);
    try {
      outcomes.push_back("version " + compile::Toolchain::find(std::chrono::seconds(10)).cuda_version);
    } catch (const ToolchainError& e) {
      outcomes.push_back(e.what());
    }
  }
  if (before) {
    ::setenv("CUDA_INSTALL_PATH", saved.c_str(), 1);
  } else {
    ::unsetenv("CUDA_INSTALL_PATH");
  }
  EXPECT_TRUE(contains(outcomes[0], (tmp.path() / "exits/bin/nvcc").string() +
                                        " --version failed (exit status 3) and said no version"))
      << outcomes[0];
  EXPECT_TRUE(contains(outcomes[1], "--version failed (exit status 139: signal 11?)")) << outcomes[1];
  EXPECT_TRUE(contains(outcomes[1], "CUDA_INSTALL_PATH")) << outcomes[1];
  EXPECT_EQ(outcomes[2], "version 13.0.88");
  EXPECT_EQ(outcomes[3], "version unknown");
}

TEST(Toolchain, TargetsNvccCannotBuildAreRefused) {
  EXPECT_NO_THROW(compile::check_target(80, 86));
  EXPECT_NO_THROW(compile::check_target(90, 90));
  for (auto [family, cc] : {std::pair{80, -5}, {80, 91}, {80, 75}, {90, 100}, {90, 80}, {99, 90}, {0, 80}})
    EXPECT_THROW(compile::check_target(family, cc), InvalidArgumentError) << family << " " << cc;
  KernelSource k = tiny_source();
  k.target_cc = 91;
  EXPECT_THROW(compile::compile(k), InvalidArgumentError) << "refused before nvcc runs";
}

// nvcc runs its steps through /bin/sh with paths in double quotes: a CUTLASS_PATH the shell would expand
// ($, `, \\, ") is refused when the toolchain is found, before anything runs.
TEST(Toolchain, ACutlassPathTheShellWouldExpandIsRefused) {
  const auto& tc = test::toolchain();
  TempDir tmp;
  auto odd = report_in_child({{"CUTLASS_PATH", fake_cutlass(tmp.path() / "x$HOME", tc.cutlass_version).string()}});
  const std::string error = line_after(odd.output, "TOOLCHAIN_ERROR=");
  EXPECT_TRUE(contains(error, "CUTLASS_PATH is ")) << odd.output;
  EXPECT_TRUE(contains(error, "holds a '$' the shell nvcc runs its steps in would expand")) << odd.output;
}

// nvcc's `--version` is read through a file in a directory of the process's own (a predictable name in a shared
// temporary directory could be a link another user planted, which the log's truncation would write through), left
// behind by nothing; a TMPDIR that is no directory is named, not blamed on the kernel cache.
TEST(Toolchain, NvccsVersionIsReadInADirectoryOfItsOwn) {
  test::toolchain();  // the CUTLASS headers found, as every search here needs
  TempDir tmp;
  const char* before_cuda = std::getenv("CUDA_INSTALL_PATH");
  const char* before_tmp = std::getenv("TMPDIR");
  const std::string saved_cuda = before_cuda ? before_cuda : "", saved_tmp = before_tmp ? before_tmp : "";
  std::vector<std::string> outcomes;
  fs::create_directories(tmp.path() / "temp");
  for (const auto& [dir, temp] : std::vector<std::pair<std::string, fs::path>>{
           {"a", tmp.path() / "temp"}, {"b", tmp.path() / "missing"}}) {
    const fs::path cuda = tmp.path() / dir;
    // It says where its output goes: the file cuforge reads it from.
    test::write_file(cuda / "bin/nvcc", "#!/bin/sh\nout=$(readlink /proc/$$/fd/1); echo \"$out\" > " +
                                            (cuda / "wrote").string() +
                                            "\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n");
    ::chmod((cuda / "bin/nvcc").c_str(), 0700);
    ::setenv("CUDA_INSTALL_PATH", cuda.c_str(), 1);
    ::setenv("TMPDIR", temp.c_str(), 1);
    try {
      outcomes.push_back("version " + compile::Toolchain::find(std::chrono::seconds(10)).cuda_version);
    } catch (const ToolchainError& e) {
      outcomes.push_back(e.what());
    }
  }
  for (const auto& [name, value] : {std::pair{"CUDA_INSTALL_PATH", before_cuda ? &saved_cuda : nullptr},
                                    std::pair{"TMPDIR", before_tmp ? &saved_tmp : nullptr}}) {
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  EXPECT_EQ(outcomes[0], "version 13.0.88");
  const std::string wrote = test::read_file(tmp.path() / "a" / "wrote");
  EXPECT_TRUE(wrote.rfind((tmp.path() / "temp" / "cuforge-nvcc-version-").string(), 0) == 0) << wrote;
  EXPECT_TRUE(contains(wrote, "/nvcc-version.txt")) << wrote;
  EXPECT_TRUE(fs::is_empty(tmp.path() / "temp")) << "the private directory is removed";
  EXPECT_TRUE(contains(outcomes[1], "--version needs a temporary directory: TMPDIR is " +
                                        (tmp.path() / "missing").string()))
      << outcomes[1];
}

}  // namespace
}  // namespace cuforge
