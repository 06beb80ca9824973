// The cuforge command line: list the catalog, emit a kernel's source, build kernels into the
// cache, and inspect the cache and its tuning record (`cuforge profile` and `cuforge tune` run
// kernels, so the Python package's front end serves them: cuforge/profile_command.py). A front over the C++ core; it holds no logic of its own.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>

#include "cuforge/compile/compiler.hpp"
#include "cuforge/compile/toolchain.hpp"
#include "cuforge/compile/tuning_record.hpp"
#include "cuforge/core/log.hpp"
#include "cuforge/emit/gemm.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/op/presets.hpp"
#include "cuforge/runtime/device.hpp"
#include "progress.hpp"

namespace {

using namespace cuforge;

// An option given an empty value names nothing: refused, where it once read as the option not given (`--preset ''`
// building the whole catalog).
const CLI::Validator kNonEmpty([](std::string& value) { return value.empty() ? std::string("an empty value names nothing") : std::string(); },
                               "NONEMPTY", "non-empty");
// Numbers are decimal and fit: CLI11 2.1 reads "010" as octal 8 and "0x50" as 80 (`--max-bytes 01100000` pruned to
// 294912 bytes), and a number past int64 as the largest (`--max-bytes 18446744073709551616`: no limit).
const CLI::Validator kDecimal(
    [](std::string& value) {
      int64_t n = 0;
      const bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      if (!digits || (value.size() > 1 && value[0] == '0')) return "expected a decimal number, got '" + value + "'";
      if (std::from_chars(value.data(), value.data() + value.size(), n).ec != std::errc())
        return "'" + value + "' is too large";
      return std::string();
    },
    "DECIMAL", "decimal");

// An option's enum value, a wrong one refused naming the option (`--b: unknown DataType 'fp16' ...`).
template <class E>
E option(const char* flag, const std::string& value) {
  try {
    return parse<E>(value);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(std::string(flag) + ": " + e.what());
  }
}

// An --op value as a KernelKind's name: the interface's spellings "grouped_gemm" and "conv2d_fprop" (dgrad, wgrad)
// too, and only those (conv2d_gemm listed the GEMMs).
std::string kind_name(const std::string& op) {
  if (op == "grouped_gemm") return "grouped";
  for (const char* pass : {"fprop", "dgrad", "wgrad"})
    if (op == std::string("conv2d_") + pass) return pass;
  return op;
}

struct FilterFlags {
  int arch = 0;
  std::string op, a, b, acc, c, d, layouts, opclass, math, glob;

  library::GemmFilter to_filter() const {
    library::GemmFilter f;
    if (!op.empty())
      f.kind = option<KernelKind>("--op", kind_name(op));
    if (arch) f.arch = arch;
    if (!a.empty()) f.element_a = option<DataType>("--a", a);
    if (!b.empty()) f.element_b = option<DataType>("--b", b);
    if (!acc.empty()) f.element_accumulator = option<DataType>("--acc", acc);
    if (!c.empty()) f.element_c = option<DataType>("--c", c);
    if (!d.empty()) f.element_d = option<DataType>("--d", d);
    if (!opclass.empty()) f.opclass = option<OpcodeClass>("--opclass", opclass);
    if (!math.empty()) f.math = option<MathOperation>("--math", math);
    if (!layouts.empty()) {
      if (layouts.size() != 3) throw InvalidArgumentError("--layouts takes three letters (A, B, C), e.g. rcr");
      auto letter = [](char ch) {
        if (ch != 'r' && ch != 'c') throw InvalidArgumentError("--layouts letters are r (row) or c (column)");
        return ch == 'r' ? Layout::RowMajor : Layout::ColumnMajor;
      };
      f.layout_a = letter(layouts[0]);
      f.layout_b = letter(layouts[1]);
      f.layout_c = letter(layouts[2]);
    }
    f.name_glob = glob;
    return f;
  }

  bool any() const {
    return arch || !op.empty() || !a.empty() || !b.empty() || !acc.empty() || !c.empty() || !d.empty() ||
           !layouts.empty() || !opclass.empty() || !math.empty() || !glob.empty();
  }

  void add_to(CLI::App* app) {
    app->add_option("--op", op, "operation: gemm, grouped (grouped_gemm), fprop, dgrad or wgrad (conv2d_fprop, ...); default: every one")->check(kNonEmpty);
    app->add_option("--arch", arch, "architecture family: 80 or 90")->check(kDecimal)->check(CLI::Range(1, 1000));  // 0 once read as "any"
    app->add_option("--a", a, "element type of A (f16, bf16, f32, f64, s8, e4m3, e5m2)")->check(kNonEmpty);
    app->add_option("--b", b, "element type of B")->check(kNonEmpty);
    app->add_option("--acc", acc, "accumulator type")->check(kNonEmpty);
    app->add_option("--c", c, "element type of C")->check(kNonEmpty);
    app->add_option("--d", d, "element type of D")->check(kNonEmpty);
    app->add_option("--layouts", layouts, "layouts of A, B, C as three letters r/c, e.g. rcr")->check(kNonEmpty);
    app->add_option("--opclass", opclass, "opcode class: tensorop (tensor cores) or simt (CUDA cores)")->check(kNonEmpty);
    app->add_option("--math", math, "math operation (mma, 3xtf32, sat, fastaccum, mixed)")->check(kNonEmpty);
    app->add_option("--filter", glob, "shell glob on kernel names")->check(kNonEmpty);
  }
};


int run_list(const FilterFlags& flags, bool json) {
  auto start = std::chrono::steady_clock::now();
  auto found = library::find_gemms(flags.to_filter());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto* c : found) out.push_back(c->name());
    std::cout << out.dump(1) << "\n";
  } else {
    for (const auto* c : found) fmt::print("{}\n", c->name());
    cli::say("{} kernels ({:.1f} ms)\n", found.size(), ms);
  }
  return 0;
}

int run_build(const FilterFlags& flags, const std::string& preset, int jobs, int cc, bool dry_run, bool all) {
  const int target = cc ? cc : runtime::default_target_cc();
  compile::check_known_target(target);  // before any kernel is weighed against it
  std::vector<KernelSource> sources;
  if (!preset.empty()) {
    if (flags.any() || all)
      throw InvalidArgumentError("--preset names its own kernels: give it without filter options or --all");
    sources = op::preset_kernels(preset, target);
  } else {
    // The whole catalog is hours of nvcc: asked for by name, never by a filter left out.
    if (!flags.any() && !all && !dry_run)
      throw InvalidArgumentError(fmt::format("give a filter (e.g. --arch 90 --a bf16 --filter '*128x256*'), a "
                                             "--preset, or --all to build the whole catalog ({} kernels)",
                                             library::find_gemms(library::GemmFilter{}).size()));
    if (flags.any() && all) throw InvalidArgumentError("--all builds the whole catalog: give it without filter options");
    auto found = library::find_gemms(flags.to_filter());
    if (found.empty()) {
      cli::say("no kernel matches the filter\n");
      return 1;
    }
    // Catalog rows the target cannot run are left out: SM90's where --cc names another GPU than 9.0 (without --cc
    // they are built for 9.0 whatever this machine's GPU), SM80's over an 8.6, 8.9 or 12.x GPU's 99 KB of shared
    // memory.
    size_t skipped = 0;
    std::string first;
    for (const auto* c : found) {
      std::optional<std::string> why = cc != 0 ? compile::why_bad_target(c->arch, cc) : std::nullopt;
      if (!why) why = library::why_invalid(*c, target);
      if (why) {
        if (!skipped++) first = fmt::format("{}: {}", c->name(), *why);
        continue;
      }
      sources.push_back(emit::gemm_kernel(*c, target));
    }
    if (skipped)
      cli::say("skipped {} of {} kernels that compute capability {} cannot run (the first, {})\n", skipped,
                 found.size(), target, first);
    if (sources.empty()) return 1;
  }
  for (const auto& s : sources) compile::check_target(s.family, s.target_cc);
  if (dry_run) {
    for (const auto& s : sources) fmt::print("{}\n", s.name);
    return 0;
  }
  cli::ProgressBar bar("build");
  auto start = std::chrono::steady_clock::now();
  auto outcomes = compile::compile_many(sources, jobs, [&](const auto& p) { bar.update(p); });
  bar.finish();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t failed = 0, hits = 0;
  for (const auto& o : outcomes) {
    if (!o.result) {
      ++failed;
      cli::say("FAILED {}\n{}\n", o.name, o.error);
    } else if (o.result->cache_hit) {
      ++hits;
    }
  }
  fmt::print("built {} kernels in {:.1f} s: {} compiled, {} from the cache, {} failed (cache: {})\n", outcomes.size(),
             seconds, outcomes.size() - hits - failed, hits, failed,
             compile::KernelCache::user_cache().root().string());
  return failed ? 1 : 0;
}

int run_cache(const std::string& action, int64_t max_bytes) {
  const auto& cache = compile::KernelCache::user_cache();
  if (action == "info") {
    auto info = cache.info();
    fmt::print("cache {}: {} kernels, {:.1f} MiB; {} builds in progress or left by dead builds ({:.1f} MiB); {} failed "
               "builds kept ({:.1f} MiB); {} PyTorch modules ({:.1f} MiB)\n",
               info.root.string(), info.entries, info.bytes / 1048576.0, info.staging, info.staging_bytes / 1048576.0,
               info.failed, info.failed_bytes / 1048576.0, info.torch_modules, info.torch_bytes / 1048576.0);
    const compile::TuningRecord record(cache);
    fmt::print("tuning record {}: {} measured choices\n", record.path().string(), record.entries().size());
  } else if (action == "tuning") {
    const compile::TuningRecord record(cache);
    const auto entries = record.entries();
    if (entries.empty()) fmt::print("the tuning record {} holds no measured choices\n", record.path().string());
    for (const auto& [key, t] : entries)
      fmt::print("{}\n  -> {} x{} {} {:.2f} us ({} of the model's best {} timed)\n", printable(key), printable(t.kernel),
                 t.splits, to_string(t.decomposition), t.microseconds, t.measured.size(), t.candidates);
  } else if (action == "clear-tuning") {
    fmt::print("removed {} measured choices from the tuning record\n", compile::TuningRecord(cache).clear());
  } else if (action == "clear") {
    cache.clear();
    fmt::print("cleared {}\n", cache.root().string());
  } else if (action == "verify") {
    size_t bad = 0;
    auto checks = cache.verify();
    for (const auto& c : checks) {
      if (c.problem.empty()) continue;
      ++bad;
      fmt::print("BAD {} {}: {}\n", printable(c.key), printable(c.name), printable(c.problem));
    }
    fmt::print("{} entries checked, {} bad (bad entries are rebuilt on next use)\n", checks.size(), bad);
    return bad ? 1 : 0;
  } else if (action == "prune") {
    size_t removed = cache.prune(uint64_t(max_bytes));
    fmt::print("removed {} least recently used kernels\n", removed);
  }
  return 0;
}

// `status`, once what was printed has reached its file (`cuforge emit X > k.cu` on a full disk), else 2: an output
// lost in the buffers at exit would leave a truncated file and a success.
int written(int status) {
  errno = 0;
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    cli::say("cuforge: cannot write the output: {}\n", errno ? std::strerror(errno) : "write error");
    return 2;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuforge: enumerate, emit, build and cache CUTLASS kernels"};
  app.require_subcommand(1);
  app.footer("With the Python package, two commands more time kernels on this machine's GPU: "
             "`cuforge profile --help`, `cuforge tune --help`.");

  FilterFlags list_flags, build_flags;
  bool json = false;
  auto* list = app.add_subcommand("list", "list the kernel catalog (names and a count)");
  list_flags.add_to(list);
  list->add_flag("--json", json, "print a JSON array of names");

  std::string emit_name;
  auto* emit_cmd = app.add_subcommand("emit", "print the complete CUDA source of a kernel");
  emit_cmd->add_option("name", emit_name, "kernel name, as `cuforge list` prints it")->required();

  int jobs = 0, cc = 0;
  bool dry_run = false;
  std::string preset;
  auto* build = app.add_subcommand("build", "compile the kernels matching a filter into the cache, in parallel");
  build_flags.add_to(build);
  build->add_option("-j,--jobs", jobs, "nvcc processes at once (default: one per core)")
      ->check(kDecimal)
      ->check(CLI::Range(0, 1 << 16));
  build->add_option("--cc", cc, "GPU to build for (default: SM80 kernels for this machine's GPU, else 90; SM90 "
                                 "kernels for 9.0); matching kernels it cannot run are skipped")
      ->check(kDecimal)
      ->check(CLI::Range(1, std::numeric_limits<int>::max()));
  build->add_flag("--dry-run", dry_run, "print what would be built");
  bool all = false;
  build->add_flag("--all", all, "build the whole catalog (without a filter or --preset, `build` refuses to)");
  std::string preset_help = "instead of a filter, the kernels the selection picks for a named set of problems:";
  for (const auto& p : op::presets()) preset_help += fmt::format(" {} ({});", p.name, p.description);
  build->add_option("--preset", preset, preset_help)->check(kNonEmpty);

  std::string cache_action;
  int64_t max_bytes = int64_t(10) << 30;
  auto* cache = app.add_subcommand("cache", "inspect or tidy the kernel cache");
  cache->add_option("action", cache_action,
                    "info | clear | verify | prune | tuning (the measured choices) | clear-tuning")
      ->required()
      ->check(CLI::IsMember({"info", "clear", "verify", "prune", "tuning", "clear-tuning"}));
  auto* max_bytes_option = cache->add_option("--max-bytes", max_bytes, "prune: keep at most this many bytes (default 10 GiB)")
      ->check(kDecimal);

  // CLI11 says "A subcommand is required" of a word that is no command: name it and the commands.
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](const CLI::App* c) { return c->get_name() == argv[1]; }).empty()) {
    std::string commands;
    for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; }))
      commands += (commands.empty() ? "" : ", ") + c->get_name();
    std::cerr << fmt::format("cuforge: unknown command '{}' (commands: {}; with the Python package, also profile "
                             "and tune)\nRun with --help for more information.\n",
                             argv[1], commands);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2, as cuforge's own errors and the profiler's
    // argparse do (CLI11's own codes, 105 and up, say nothing a caller would test for).
    return written(app.exit(e) == 0 ? 0 : 2);
  }
  int status = 0;
  try {
    if (*list) {
      status = run_list(list_flags, json);
    } else if (*emit_cmd) {
      std::cout << emit::gemm_source(library::parse_gemm_name(emit_name));
    } else if (*build) {
      status = run_build(build_flags, preset, jobs, cc, dry_run, all);
    } else if (*cache) {
      if (*max_bytes_option && cache_action != "prune") {
        cli::say("cuforge: --max-bytes is prune's limit; cache {} takes none\n", cache_action);
        return 2;
      }
      status = run_cache(cache_action, max_bytes);
    }
  } catch (const std::exception& e) {  // cuforge's errors, and anything else: a message, never an abort
    cli::say("cuforge: {}\n", e.what());
    return 2;
  }
  return written(status);
}
