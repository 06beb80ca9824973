// src/cli: `cuforge list` run as a process, as a user runs it. Its count line goes to stderr, the
// names to stdout.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cuforge/library/catalog.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

struct Listed {
  int status = -1;
  std::vector<std::string> names;
  double ms = 0;
};

// The cache the commands below run on (a `cache prune` under test never touches the user's).
const test::TempDir& cli_cache() {
  static const test::TempDir cache;
  return cache;
}

// A directory under cli_cache() and those between, private as the cache makes its own (whatever the umask).
void make_private_directories(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (auto d = dir; d != cli_cache().path(); d = d.parent_path()) ::chmod(d.c_str(), 0700);
}

// `cuforge <command> <args>`, its stdout (and its stderr, with `with_stderr`) as lines, on cli_cache().
Listed run(const std::string& command_and_args, bool with_stderr = false) {
  auto start = std::chrono::steady_clock::now();
  std::string command = "CUFORGE_CACHE_DIR='" + cli_cache().path().string() + "' " + std::string(CUFORGE_TEST_CLI) +
                        " " + command_and_args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  std::string out;
  char buf[65536];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  Listed l;
  int status = ::pclose(pipe.release());
  l.ms = test::ms_since(start);
  l.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) l.names.push_back(line);
  return l;
}

Listed list(const std::string& args) { return run("list " + args); }

// A preset names the kernels the selection picks for its problems, each once, for the target.
TEST(CommandLine, BuildPresetsNameTheirKernels) {
  Listed llm = run("build --preset llm-bf16 --cc 90 --dry-run");
  ASSERT_EQ(llm.status, 0);
  ASSERT_FALSE(llm.names.empty());
  std::set<std::string> distinct(llm.names.begin(), llm.names.end());
  EXPECT_EQ(distinct.size(), llm.names.size());
  for (const auto& n : llm.names) EXPECT_EQ(n.rfind("cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_", 0), 0u) << n;
  Listed sm80 = run("build --preset standard-fp16 --cc 80 --dry-run");
  ASSERT_EQ(sm80.status, 0);
  for (const auto& n : sm80.names) EXPECT_EQ(n.rfind("cuforge_sm80_gemm_", 0), 0u) << n;
  // Conv2d and grouped presets: each pass's kernels, SM90 where they run and SM80 for the rest.
  Listed resnet = run("build --preset resnet50-fp16 --cc 90 --dry-run");
  ASSERT_EQ(resnet.status, 0);
  for (const char* kind : {"fprop", "dgrad", "wgrad"})
    EXPECT_TRUE(std::any_of(resnet.names.begin(), resnet.names.end(), [&](const std::string& n) {
      return n.rfind(std::string("cuforge_sm90_") + kind + "_tensorop_mma_f16_", 0) == 0;
    })) << kind;
  EXPECT_TRUE(std::any_of(resnet.names.begin(), resnet.names.end(), [](const std::string& n) {
    return n.rfind("cuforge_sm80_dgrad_", 0) == 0;
  })) << "strided dgrad runs on SM80";
  Listed moe = run("build --preset moe-bf16 --cc 90 --dry-run");
  ASSERT_EQ(moe.status, 0);
  ASSERT_FALSE(moe.names.empty());
  for (const auto& n : moe.names) EXPECT_EQ(n.rfind("cuforge_sm90_grouped_tensorop_mma_bf16_", 0), 0u) << n;
  EXPECT_EQ(run("build --preset nope --dry-run").status, 2) << "an unknown preset is an error";
  EXPECT_EQ(run("build --preset llm-fp16 --arch 90 --dry-run").status, 2) << "a preset takes no filter";
  // No filter, no preset: the whole catalog only by name (a bare `cuforge build` started 11,559 nvcc builds).
  Listed bare = run("build", true);
  EXPECT_EQ(bare.status, 2);
  ASSERT_FALSE(bare.names.empty());
  EXPECT_EQ(bare.names.front().rfind("cuforge: give a filter (e.g. --arch 90 --a bf16 --filter '*128x256*'), a "
                                     "--preset, or --all to build the whole catalog (", 0), 0u) << bare.names.front();
  EXPECT_EQ(run("build --all --arch 90 --dry-run").status, 2) << "--all takes no filter";
  EXPECT_EQ(run("build --all --dry-run --cc 90").names.size(), run("build --dry-run --cc 90").names.size());
  for (const char* bad : {"--jobs -1", "--jobs 99999999999", "--cc 0"})
    EXPECT_NE(run(std::string("build --preset llm-fp16 --dry-run ") + bad).status, 0) << bad << " is out of range";
}

// A filter's kernels the target cannot run (over an 8.9 GPU's 99 KB of shared memory) are skipped, with a note.
TEST(CommandLine, BuildSkipsKernelsTheTargetCannotRun) {
  const std::string f64 = "build --arch 80 --a f64 --layouts ccr --dry-run ";
  Listed a100 = run(f64 + "--cc 80"), ada = run(f64 + "--cc 89");
  ASSERT_EQ(a100.status, 0);
  ASSERT_EQ(ada.status, 0);
  EXPECT_EQ(ada.names.size() + 8, a100.names.size()) << "256x32, 32x256, 256x64 and 64x256 of 3 stages, twice";
  for (const auto& n : ada.names) EXPECT_EQ(n.find("_256x32x16_"), std::string::npos) << n;
  Listed none = run(f64 + "--cc 89 --filter '*_256x32x16_*'", true);
  EXPECT_EQ(none.status, 1) << "nothing left to build";
  ASSERT_EQ(none.names.size(), 1u);
  EXPECT_NE(none.names[0].find("skipped 2 of 2 kernels that compute capability 89 cannot run"), std::string::npos)
      << none.names[0];
  // SM90's kernels are sm_90a code: no other GPU that --cc names runs them (they were listed, to be built for 9.0).
  const std::string sm90 = "build --arch 90 --a bf16 --layouts rcr --filter '*_128x256x64_c1x1x1_*' --dry-run ";
  EXPECT_FALSE(run(sm90 + "--cc 90").names.empty());
  for (const std::string cc : {"80", "89", "100"}) {
    Listed other = run(sm90 + "--cc " + cc, true);
    EXPECT_EQ(other.status, 1) << cc;
    ASSERT_FALSE(other.names.empty()) << cc;
    EXPECT_NE(other.names[0].find("run on compute capability 9.0 only"), std::string::npos) << other.names[0];
  }
}

TEST(CommandLine, ListIsFastForEachFamily) {
  for (Arch arch : {90, 80}) {
    Listed l = list("--arch " + std::to_string(arch));
    EXPECT_EQ(l.status, 0);
    EXPECT_EQ(l.names.size(), library::gemm_catalog(arch).size());
    EXPECT_LT(l.ms, 100.0) << "cuforge list --arch " << arch << " in a fresh process";
  }
}

TEST(CommandLine, ListFiltersByOpcodeClassAndTypes) {
  Listed simt = list("--arch 80 --opclass simt --op gemm");
  ASSERT_EQ(simt.status, 0);
  // f32, f64, f16 (into f16 or f32, and with f16 accumulation), int8 (into s8 or s32), fp8 (e4m3 and e5m2, into
  // five types each)
  EXPECT_EQ(simt.names.size(), 88u + 48u + 3 * 64u + 2 * 64u + 2 * 5 * 64u);
  EXPECT_EQ(list("--arch 80 --opclass simt --op gemm --a e4m3 --d e4m3").names.size(), 64u);
  for (const auto& n : simt.names) EXPECT_NE(n.find("_simt_mma_"), std::string::npos) << n;
  EXPECT_EQ(list("--arch 80 --opclass simt --op gemm --a f64").names.size(), 48u);
  EXPECT_EQ(list("--arch 80 --opclass simt --op gemm --a f16 --acc f16").names.size(), 64u);
  EXPECT_EQ(list("--arch 80 --opclass simt --op gemm --a s8 --d s8").names.size(), 64u);
  // Each convolution pass over the same SIMT tiles, one element at a time: 11 f32, 6 f64, 3 x 8 f16.
  EXPECT_EQ(list("--arch 80 --opclass simt --op conv2d_dgrad").names.size(), 41u);
  EXPECT_EQ(list("--arch 80 --opclass tensorop --a f64").names.size(), 104u);
  EXPECT_EQ(list("--arch 90 --opclass simt").names.size(), 0u);
  // 18 of each swapped; 9 and 15 non-persistent (fp8's promotion doubles the accumulators: no 64x256 or 128x128).
  EXPECT_EQ(list("--arch 90 --a e4m3 --b e5m2 --c bf16").names.size(), 69u + 81u);
  EXPECT_EQ(list("--arch 90 --a e4m3 --b e5m2 --c bf16 --math fastaccum").names.size(), 81u);
  EXPECT_EQ(list("--arch 80 --a s8 --math sat --layouts rcr").names.size(), 120u);  // into s32 and s8
  EXPECT_EQ(list("--arch 80 --a s8 --math sat --layouts rcr --d s8").names.size(), 60u);
  EXPECT_EQ(list("--arch 80 --b s8 --math mixed").names.size(), 64u);  // f16 and bf16 A, each into itself or f32
  EXPECT_EQ(list("--arch 90 --a e4m3 --d e5m2 --math fastaccum").names.size(), 2u * 81u);
  EXPECT_EQ(list("--opclass warp").status, 2) << "an unknown opcode class is an error";
}

TEST(CommandLine, AWrongValueNamesItsOption) {
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--a f16 --b fp16", "cuforge: --b: unknown DataType 'fp16'"},
           {"--acc half", "cuforge: --acc: unknown DataType 'half'"},
           {"--opclass warp", "cuforge: --opclass: unknown OpcodeClass 'warp'"},
           {"--math fast", "cuforge: --math: unknown MathOperation 'fast'"},
           {"--op gem", "cuforge: --op: unknown KernelKind 'gem'"},
           {"--op conv2d_gemm", "cuforge: --op: unknown KernelKind 'conv2d_gemm'"}}) {
    Listed l = run("list " + args, true);
    EXPECT_EQ(l.status, 2) << args;
    ASSERT_FALSE(l.names.empty()) << args;
    EXPECT_EQ(l.names.front().rfind(message, 0), 0u) << args << ": " << l.names.front();
  }
}

// A --cc no GPU has is refused first, not after a line skipping the kernels it "cannot run".
TEST(CommandLine, AnUnknownTargetIsRefusedFirst) {
  Listed l = run("build --dry-run --cc 1 --arch 80", true);
  EXPECT_EQ(l.status, 2);
  ASSERT_EQ(l.names.size(), 1u);
  EXPECT_EQ(l.names.front().rfind("cuforge: compute capability 1 is not a GPU nvcc builds kernels for", 0), 0u)
      << l.names.front();
}

// Numbers are read in decimal and must fit: CLI11 read "0120" as octal 80, "0x50" as 80, and a number past int64
// as the largest (a prune with no limit).
TEST(CommandLine, NumbersAreDecimalAndFit) {
  for (const std::string args : {"list --arch 0x5a", "list --arch 090", "build --dry-run --cc 0120 --filter x",
                                 "build --dry-run -j 010 --filter x", "cache prune --max-bytes 01100000",
                                 "cache prune --max-bytes 18446744073709551616", "cache prune --max-bytes -1",
                                 "cache prune --max-bytes 1e3"}) {
    Listed l = run(args, true);
    EXPECT_EQ(l.status, 2) << args;
    ASSERT_FALSE(l.names.empty()) << args;
    EXPECT_TRUE(l.names.front().find("decimal") != std::string::npos ||
                l.names.front().find("too large") != std::string::npos)
        << args << ": " << l.names.front();
  }
  EXPECT_EQ(run("list --arch 90", true).status, 0);
}

// An option of one action given to another is refused, not ignored.
TEST(CommandLine, MaxBytesIsPrunesOptionAlone) {
  for (const std::string action : {"info", "verify", "tuning"}) {
    Listed l = run("cache " + action + " --max-bytes 5", true);
    EXPECT_EQ(l.status, 2) << action;
    ASSERT_FALSE(l.names.empty()) << action;
    EXPECT_EQ(l.names.front(), "cuforge: --max-bytes is prune's limit; cache " + action + " takes none");
  }
}

// The tuning record's keys and names are shown with control characters escaped: an ESC from the file cleared the
// terminal's screen.
TEST(CommandLine, TheTuningListingEscapesControlCharacters) {
  const auto record = cli_cache().path() / "v1" / "tuning" / "record.json";
  make_private_directories(record.parent_path());
  test::write_file(record, "{\"format\": 1, \"entries\": {\"key\\u001b[2J\": {\"kernel\": \"k\\u0007\", "
                           "\"splits\": 1, \"decomposition\": \"heuristic\", \"us\": 2.0, \"measured\": {}}}}");
  ::chmod(record.c_str(), 0600);  // the record is read only where no one else may write it
  Listed l = run("cache tuning");
  ASSERT_EQ(l.status, 0);
  ASSERT_EQ(l.names.size(), 2u);
  EXPECT_EQ(l.names[0], "key\\x1b[2J");
  EXPECT_EQ(l.names[1].rfind("  -> k\\x07 x1 heuristic 2.00 us", 0), 0u) << l.names[1];
}

// So are a damaged entry's key and name in `cache verify` (a newline in them forged a line of its own).
TEST(CommandLine, TheVerifyListingEscapesControlCharacters) {
  const auto entry = cli_cache().path() / "v1" / "kernels" / "bad\x1b[31mkey\nnewline";
  make_private_directories(entry);
  test::write_file(entry / "entry.json", "{\"name\": \"evil\\u001b]0;t\\u0007\\nFAKE OK line\"}");
  Listed l = run("cache verify", true);
  EXPECT_EQ(l.status, 1);
  ASSERT_GE(l.names.size(), 2u);
  EXPECT_EQ(l.names[0].rfind("BAD bad\\x1b[31mkey\\x0anewline evil\\x1b]0;t\\x07\\x0aFAKE OK line: kernel.so is missing", 0), 0u) << l.names[0];
  std::filesystem::remove_all(entry);
}

// An output that never reaches its file fails the command (a full disk left a truncated `cuforge emit X > k.cu`
// and exit status 0): /dev/full refuses every write.
TEST(CommandLine, ALostOutputFailsTheCommand) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  const std::string name = library::gemm_catalog(90).front().name();
  for (const std::string& command : {"emit " + name, std::string("list --json --arch 90"), std::string("cache info")}) {
    EXPECT_EQ(run(command).status, 0) << command;
    EXPECT_EQ(run(command + " >/dev/full").status, 2) << command;
  }
}

TEST(CommandLine, AnUnknownCommandIsNamed) {
  Listed unknown = run("lsit", true);
  EXPECT_EQ(unknown.status, 2);
  ASSERT_FALSE(unknown.names.empty());
  EXPECT_EQ(unknown.names.front().rfind("cuforge: unknown command 'lsit' (commands: list, emit, build, cache", 0), 0u)
      << unknown.names.front();
  Listed none = run("", true);
  EXPECT_EQ(none.status, 2);
  ASSERT_FALSE(none.names.empty());
  EXPECT_EQ(none.names.front(), "A subcommand is required");
}

}  // namespace
}  // namespace cuforge
