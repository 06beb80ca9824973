// compile/ with the real toolchain (label "nvcc"; no GPU needed): one SM80 and one SM90 kernel
// built into a temporary cache and found again, one small kernel of every other data-type family,
// cache keys, concurrent compiles of one key, compile failures, killed and background builds
// (toolchain errors: test_toolchain.cpp).
//
// nvcc is slow on CI's two cores (~10 s for an SM80 kernel, ~30 s for an SM90 one): the suite
// compiles those two catalog kernels in one test and twelve more (five SM90, seven SM80) in another.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cuforge/compile/compiler.hpp"
#include "cuforge/emit/gemm.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/runtime/gemm_kernel.hpp"
#include "compile_support.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using test::contains;

namespace fs = std::filesystem;
using compile::KernelCache;
using test::TempDir;
using test::tiny_source;

// What a shared library's dynamic section says: the libraries it needs, the symbols it exports.
struct DynamicInfo {
  std::vector<std::string> needed;
  std::set<std::string> exported;  // defined, global or weak, default visibility
};

DynamicInfo read_dynamic(const fs::path& path) {
  std::string file = test::read_file(path);
  DynamicInfo info;
  if (file.size() < sizeof(Elf64_Ehdr) || file.compare(0, 4, ELFMAG) != 0 || file[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error(path.string() + " is not a 64-bit ELF file");
  auto at = [&](size_t offset) { return file.data() + offset; };
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(at(0));
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(at(eh->e_shoff));
  for (int i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& s = sections[i];
    const char* strings = at(sections[s.sh_link].sh_offset);
    if (s.sh_type == SHT_DYNSYM) {
      const auto* syms = reinterpret_cast<const Elf64_Sym*>(at(s.sh_offset));
      for (size_t j = 0; j < s.sh_size / sizeof(Elf64_Sym); ++j) {
        const Elf64_Sym& sym = syms[j];
        int bind = ELF64_ST_BIND(sym.st_info);
        if (sym.st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
            ELF64_ST_VISIBILITY(sym.st_other) == STV_DEFAULT && sym.st_name != 0)
          info.exported.insert(strings + sym.st_name);
      }
    } else if (s.sh_type == SHT_DYNAMIC) {
      const auto* dyn = reinterpret_cast<const Elf64_Dyn*>(at(s.sh_offset));
      for (size_t j = 0; j < s.sh_size / sizeof(Elf64_Dyn) && dyn[j].d_tag != DT_NULL; ++j)
        if (dyn[j].d_tag == DT_NEEDED) info.needed.push_back(strings + dyn[j].d_un.d_val);
    }
  }
  return info;
}

const library::GemmConfig& by_name(const std::string& name) {
  for (Arch arch : library::kArchs)
    for (const auto& c : library::gemm_catalog(arch))
      if (c.name() == name) return c;
  throw std::runtime_error("not in the catalog: " + name);
}

const char* const kGroupedEntryPoints[] = {"cuforge_abi_version", "cuforge_kernel_name", "cuforge_last_cuda_error",
                                           "cuforge_grouped_can_implement", "cuforge_grouped_workspace_size",
                                           "cuforge_grouped_run"};
const char* const kAbiEntryPoints[] = {"cuforge_abi_version", "cuforge_kernel_name", "cuforge_last_cuda_error",
                                       "cuforge_gemm_can_implement", "cuforge_gemm_workspace_size", "cuforge_gemm_run"};
const char* const kConvEntryPoints[] = {"cuforge_abi_version", "cuforge_kernel_name", "cuforge_last_cuda_error",
                                        "cuforge_conv2d_can_implement", "cuforge_conv2d_workspace_size",
                                        "cuforge_conv2d_run"};


TEST(Compile, OneSm80AndOneSm90KernelIntoATemporaryCache) {
  test::toolchain();
  TempDir tmp;
  KernelCache cache(tmp.path());
  const auto& sm80 = by_name(
      "cuforge_sm80_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_64x64x32_w2x2x1_s6_multistage_default_default_a8x8x8");
  const auto& sm90 = by_name(
      "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rcr_128x128x64_c1x1x1_s0_coop_tmacoop_default_a8x8x8");
  std::vector<KernelSource> sources = {emit::gemm_kernel(sm80, 80), emit::gemm_kernel(sm90, 90)};
  EXPECT_EQ(sources[1].target_cc, 90);

  // Both at once (two nvcc processes), with progress reported once per kernel.
  std::vector<size_t> progress;
  auto outcomes = compile::compile_many(sources, 2, [&](const compile::BuildProgress& p) {
    EXPECT_EQ(p.total, 2u);
    progress.push_back(p.done);
  }, cache);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(progress, (std::vector<size_t>{1, 2}));

  for (size_t i = 0; i < 2; ++i) {
    const auto& o = outcomes[i];
    SCOPED_TRACE(o.name);
    ASSERT_TRUE(o.result.has_value()) << o.error;
    EXPECT_EQ(o.error, "");
    EXPECT_FALSE(o.result->cache_hit);
    const auto& entry = o.result->entry;
    EXPECT_EQ(entry.name, sources[i].name);
    EXPECT_EQ(entry.directory.parent_path(), cache.root() / "kernels");
    EXPECT_EQ(test::read_file(entry.source()), sources[i].source) << "the entry keeps the source it was built from";
    EXPECT_EQ(test::mode_of(entry.directory), 0700u);
    EXPECT_EQ(test::mode_of(entry.library()), 0600u);
    EXPECT_FALSE(fs::exists(entry.directory / "nvcc.log"));
    EXPECT_FALSE(fs::exists(entry.directory / "include"));

    // The library exports the C ABI and nothing of CUTLASS's or the CUDA runtime's (hidden
    // visibility). libstdc++ declares namespace std visible, so its inline functions may show.
    DynamicInfo dyn = read_dynamic(entry.library());
    for (const char* symbol : kAbiEntryPoints) EXPECT_EQ(dyn.exported.count(symbol), 1u) << symbol;
    for (const auto& s : dyn.exported) {
      bool std_inline = s.rfind("_ZNSt", 0) == 0 || s.rfind("_ZNKSt", 0) == 0 || s.rfind("_ZSt", 0) == 0;
      EXPECT_TRUE(s.rfind("cuforge_", 0) == 0 || std_inline || s == "_init" || s == "_fini") << "exported: " << s;
    }

    // Found again: a cache hit well under 100 ms.
    auto again = compile::compile(sources[i], cache);
    EXPECT_TRUE(again.cache_hit);
    EXPECT_LT(again.seconds, 0.1);
    EXPECT_EQ(again.entry.directory, entry.directory);
    EXPECT_EQ(again.entry.name, sources[i].name);
  }
  for (const auto& check : cache.verify()) EXPECT_EQ(check.problem, "") << check.name;
  EXPECT_EQ(cache.info().entries, 2u);

  // The libraries load: the SM80 one needs no driver at load time; the SM90 one links libcuda,
  // which only a machine with the NVIDIA driver has.
  for (size_t i = 0; i < 2; ++i) {
    const auto& entry = outcomes[i].result->entry;
    DynamicInfo dyn = read_dynamic(entry.library());
    bool needs_driver = std::find(dyn.needed.begin(), dyn.needed.end(), "libcuda.so.1") != dyn.needed.end();
    if (needs_driver) {
      void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
      if (!driver) driver = ::dlopen("libcuda.so.1", RTLD_LAZY);
      if (!driver) continue;  // no driver on this machine: the ELF checks above stand
    }
    auto kernel = runtime::GemmKernel::load(entry.library());
    EXPECT_EQ(kernel->name(), sources[i].name);
  }
  EXPECT_TRUE(fs::exists(outcomes[0].result->entry.library()));
}

// One kernel of each family beyond f16/bf16/f32 (and one parallel split-K kernel), with the
// smallest tiles, built in parallel: nvcc and CUTLASS must accept every instruction, epilogue type
// and mainloop the catalog emits.
TEST(Compile, OneKernelPerDataTypeFamily) {
  test::toolchain();
  TempDir tmp;
  KernelCache cache(tmp.path());
  const std::vector<std::string> names = {
      // SM90 int8 into s32: int32 epilogue, a bias row and relu (an epilogue visitor tree).
      "cuforge_sm90_gemm_tensorop_mma_s8_s8_s32_s32_s32_rcr_64x64x128_c1x1x1_s0_pingpong_tma_default_a16x16x4_relu_bias",
      // SM90 swapped for small M (D^T = B^T A^T, column-major D^T, the bias row a column broadcast).
      "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_64x16x128_c1x1x1_s0_pingpong_tma_default_a8x8x8"
      "_swapab_bias",
      // SM90 non-persistent (KernelTmaWarpSpecialized): its own kernel header, 2x1 clusters.
      "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_64x128x64_c2x1x1_s0_tmaws_tma_default_a8x8x8",
      // SM90 TF32 swapped for a row-major B: CUTLASS's register-sourced mainloop reads B^T through registers.
      "cuforge_sm90_gemm_tensorop_mma_f32_f32_f32_f32_f32_rrr_128x128x32_c1x1x1_s0_coop_tmacoop_default_a4x4x4"
      "_swapab_relu_bias",
      // SM90 fp8, mixed e4m3 x e5m2: CUTLASS's fp8 mainloop, into fp8 (the epilogue converts with saturation).
      "cuforge_sm90_gemm_tensorop_mma_e4m3_e5m2_f32_e5m2_e5m2_rcr_64x64x128_c1x1x1_s0_pingpong_tma_default_a16x16x16",
      "cuforge_sm80_gemm_tensorop_mma_f64_f64_f64_f64_f64_rcr_32x32x16_w2x2x1_s5_multistage_default_default_a1x1x1",
      // SM80 mixed inputs: f16 x s8, B converted in registers (weight-only int8).
      "cuforge_sm80_gemm_tensorop_mixed_f16_s8_f32_f16_f16_rcr_64x64x64_w2x2x1_s6_multistage_default_default_a8x16x8",
      // SM80 int8 into s8: an f32 epilogue converting with saturation.
      "cuforge_sm80_gemm_tensorop_sat_s8_s8_s32_s8_s8_rcr_64x64x64_w2x2x1_s6_multistage_default_default_a16x16x8",
      "cuforge_sm80_gemm_simt_mma_f64_f64_f64_f64_f64_rcr_64x64x8_w2x1x1_s5_multistage_default_default_a1x1x1",
      // SIMT f16 into f32: CUTLASS's two-stage pipelined mainloop of an SM60 kernel (library::pipelined_simt).
      "cuforge_sm80_gemm_simt_mma_f16_f16_f32_f16_f16_rrr_64x64x8_w2x1x1_s2_multistage_default_default_a1x1x1",
      // SIMT int8 into s8: integer multiply-adds, an f32 epilogue that saturates.
      "cuforge_sm80_gemm_simt_mma_s8_s8_s32_s8_s8_ccr_64x64x16_w2x1x1_s2_multistage_default_default_a1x1x1",
      // SIMT fp8 into e4m3: each element converted to f32 for its multiply-add.
      "cuforge_sm80_gemm_simt_mma_e4m3_e4m3_f32_e4m3_e4m3_rcr_64x64x16_w2x1x1_s2_multistage_default_default_a1x1x1",
      // Parallel split-K: the slices' GEMM and the reduction kernel with a sigmoid epilogue; SIMT f32
      // (its partials stored one element at a time).
      "cuforge_sm80_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_64x64x32_w2x2x1_s6_multistage_default_default_a8x8x8"
      "_splitk_sigmoid",
      "cuforge_sm80_gemm_simt_mma_f32_f32_f32_f32_f32_rcr_64x64x8_w2x1x1_s5_multistage_default_default_a1x1x1_splitk",
      // Grouped GEMM: SM80's GemmGrouped with the prepare kernel that cuts the groups on the device
      // (the SM90 pointer-array kernels compile on the GPU machine: ~4 minutes here).
      "cuforge_sm80_grouped_tensorop_mma_f16_f16_f32_f16_f16_rcr_64x64x32_w2x2x1_s6_multistage_default_default_a8x8x8"
      "_relu",
      // Conv2d: SM80 strided dgrad, the kind with its own iterators and swizzle, and SM90's implicit
      // GEMM (im2col TMA) with a bias and relu (the other kinds compile on the GPU machine,
      // tests/gpu/test_conv2d_gpu.py).
      "cuforge_sm80_dgrad_tensorop_mma_f16_f16_f32_f16_f16_rrr_64x64x32_w2x2x1_s6_multistage_default_default_a8x8x8",
      // fprop of one 16-bit channel: fixed-channel iterators of one element, CUTLASS's two-stage pipelined mainloop.
      "cuforge_sm80_fprop_tensorop_mma_f16_f16_f32_f16_f16_rcr_64x64x32_w2x2x1_s2_multistage_default_default_a1x1x1"
      "_fixedchannels",
      "cuforge_sm90_fprop_tensorop_mma_f16_f16_f32_f16_f16_rcr_64x64x64_c1x1x1_s0_tmaws_tma_default_a8x8x8_relu_bias",
      // SM80 SIMT convolution: f16 wgrad on CUTLASS's two-stage pipelined CUDA-core implicit GEMM.
      "cuforge_sm80_wgrad_simt_mma_f16_f16_f32_f16_f16_crr_64x64x8_w2x1x1_s2_multistage_default_default_a1x1x1",
  };
  std::vector<KernelSource> sources;
  for (const auto& name : names) {
    library::GemmConfig config = library::parse_gemm_name(name);
    library::GemmConfig base = config;
    base.activation = Activation::identity;
    base.bias = false;
    base.parallel_split_k = false;
    by_name(base.name());  // the kernel is in the catalog
    sources.push_back(emit::gemm_kernel(config, config.arch));
  }
  auto start = std::chrono::steady_clock::now();
  auto outcomes = compile::compile_many(sources, 0, {}, cache);
  std::fprintf(stderr, "%zu kernels in %.1f s\n", sources.size(), test::ms_since(start) / 1000.0);
  ASSERT_EQ(outcomes.size(), sources.size());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    SCOPED_TRACE(names[i]);
    ASSERT_TRUE(outcomes[i].result.has_value()) << outcomes[i].error;
    DynamicInfo dyn = read_dynamic(outcomes[i].result->entry.library());
    const bool grouped = names[i].find("_grouped_") != std::string::npos;
    const bool conv = is_conv(library::parse_gemm_name(names[i]).kind);
    for (const char* symbol : grouped ? kGroupedEntryPoints : conv ? kConvEntryPoints : kAbiEntryPoints)
      EXPECT_EQ(dyn.exported.count(symbol), 1u) << symbol;
  }
}

TEST(Compile, CacheKeyCoversSourceFamilyAndTarget) {
  test::toolchain();
  KernelSource k = tiny_source();
  const std::string key = compile::cache_key(k);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos) << key;
  EXPECT_EQ(compile::cache_key(k), key) << "the key is deterministic";

  std::set<std::string> keys = {key};
  auto distinct = [&](KernelSource changed, const char* what) {
    EXPECT_TRUE(keys.insert(compile::cache_key(changed)).second) << what << " does not change the key";
  };
  KernelSource s = k;
  s.source += " ";
  distinct(s, "one more byte of source");
  KernelSource t = k;
  t.target_cc = 86;
  distinct(t, "the target GPU (-gencode)");
  KernelSource f = k;
  f.family = 90;
  f.target_cc = 90;
  distinct(f, "the kernel family (sm_90a flags)");
  KernelSource f2 = k;
  f2.target_cc = 90;
  distinct(f2, "sm80 kernels built for sm90");
  KernelSource h = k;
  h.headers[0].second += " ";
  distinct(h, "one more byte of a header");
  // Two headers, and one whose text holds the second's path and text after a line break: the same bytes joined.
  KernelSource two = k, one = k;
  two.headers = {{"cuforge_probe_a.h", "X"}, {"cuforge_probe_b.h", "Y"}};
  one.headers = {{"cuforge_probe_a.h", "X\ncuforge_probe_b.h\nY"}};
  distinct(two, "two headers");
  distinct(one, "one header holding the other's path and text");

  // The flags differ between the families, which is why the key changes with them.
  const auto& tc = test::toolchain();
  EXPECT_NE(tc.nvcc_flags(80, 80), tc.nvcc_flags(90, 90));
  EXPECT_NE(tc.nvcc_flags(80, 80), tc.nvcc_flags(80, 86));
  auto has = [](const std::vector<std::string>& flags, const std::string& f) {
    return std::find(flags.begin(), flags.end(), f) != flags.end();
  };
  EXPECT_TRUE(has(tc.nvcc_flags(90, 90), "-gencode=arch=compute_90a,code=sm_90a"));
  EXPECT_TRUE(has(tc.nvcc_flags(80, 86), "-gencode=arch=compute_80,code=sm_86"));
  EXPECT_TRUE(has(tc.nvcc_flags(90, 90), "-DNDEBUG"));
  EXPECT_TRUE(has(tc.nvcc_flags(80, 80), "-DNDEBUG"));

  // Two catalog kernels never share a key.
  const auto& a = library::gemm_catalog(90)[0];
  const auto& b = library::gemm_catalog(90)[1];
  EXPECT_NE(compile::cache_key(emit::gemm_kernel(a, 90)), compile::cache_key(emit::gemm_kernel(b, 90)));
  // An SM90 kernel is always built for sm_90a, whatever the plan's cc.
  EXPECT_EQ(compile::cache_key(emit::gemm_kernel(a, 90)), compile::cache_key(emit::gemm_kernel(a, 100)));
}

TEST(Compile, AHeadersPathStaysWithinTheKernelsIncludeDirectory) {
  // A C++ caller's header path was written where it pointed: "/tmp/x.h", "../../x.h".
  for (const std::string& path : {std::string("/tmp/cuforge-escaped.h"), std::string("../../escaped.h"),
                                  std::string("cuforge/../../escaped.h"), std::string("")}) {
    KernelSource k = tiny_source();
    k.headers.push_back({path, "// escaped"});
    EXPECT_THROW(compile::cache_key(k), InvalidArgumentError) << path;
    EXPECT_THROW(compile::compile(k), InvalidArgumentError) << path;
  }
  EXPECT_FALSE(fs::exists("/tmp/cuforge-escaped.h"));
}

TEST(Compile, EightProcessesCompilingOneKernelEndWithOneEntry) {
  test::toolchain();
  TempDir tmp;
  KernelCache cache(tmp.path());
  const KernelSource k = tiny_source("concurrent");
  const int kProcesses = 8;
  // Exit status: 0 = found in the cache, 1 = built it, anything else = an error.
  auto statuses = test::run_children(kProcesses, [&](int) {
    auto r = compile::compile(k, cache);
    if (!fs::exists(r.entry.library())) return 3;
    return r.cache_hit ? 0 : 1;
  });
  int built = 0;
  for (int i = 0; i < kProcesses; ++i) {
    EXPECT_TRUE(statuses[i] == 0 || statuses[i] == 1) << "process " << i << " exited with " << statuses[i];
    built += statuses[i] == 1;
  }
  EXPECT_EQ(built, 1) << "one process builds, the others wait for it and find its entry";
  EXPECT_EQ(cache.info().entries, 1u);
  auto checks = cache.verify();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].problem, "");
  std::error_code ec;
  EXPECT_TRUE(fs::is_empty(cache.root() / "staging", ec));

  // A corrupted entry is rebuilt on the next compile.
  auto r = compile::compile(k, cache);
  ASSERT_TRUE(r.cache_hit);
  fs::resize_file(r.entry.library(), 100);
  auto rebuilt = compile::compile(k, cache);
  EXPECT_FALSE(rebuilt.cache_hit);
  EXPECT_EQ(cache.verify().at(0).problem, "");
}

TEST(Compile, ABuildRepeatsByteForByte) {
  // The module id nvcc would pick anew each run comes from the cache key instead.
  test::toolchain();
  TempDir a, b;
  const KernelSource k = tiny_source("repeat");
  auto first = compile::compile(k, KernelCache(a.path()));
  auto second = compile::compile(k, KernelCache(b.path()));
  EXPECT_EQ(test::read_file(first.entry.library()), test::read_file(second.entry.library()));
}

TEST(Compile, FailureKeepsTheSourceAndLogInTheCache) {
  test::toolchain();
  TempDir tmp;
  KernelCache cache(tmp.path());
  KernelSource k = tiny_source("broken");
  k.source += "this is not C++;\n";
  const fs::path cwd = fs::current_path();
  std::set<fs::path> cwd_before;
  for (const auto& e : fs::directory_iterator(cwd)) cwd_before.insert(e.path());
  try {
    compile::compile(k, cache);
    FAIL() << "nvcc accepted broken source";
  } catch (const CompilationError& e) {
    std::string message = e.what();
    EXPECT_TRUE(contains(message, "nvcc failed")) << message;
    EXPECT_TRUE(contains(message, k.name)) << message;
    EXPECT_TRUE(contains(e.log(), "error")) << e.log();
    EXPECT_TRUE(contains(e.log(), "nvcc")) << "the log starts with the command line";
    EXPECT_EQ(e.source_path().parent_path(), cache.root() / "failed" / compile::cache_key(k, cache));
    EXPECT_EQ(test::read_file(e.source_path()), k.source);
    EXPECT_TRUE(fs::exists(e.source_path().parent_path() / "nvcc.log"));
    EXPECT_TRUE(contains(message, e.source_path().string())) << "the message says where the source is";
  }
  EXPECT_EQ(cache.info().entries, 0u);
  std::set<fs::path> cwd_after;
  for (const auto& e : fs::directory_iterator(cwd)) cwd_after.insert(e.path());
  EXPECT_EQ(cwd_before, cwd_after) << "nothing is written to the current directory";

  // compile_many reports a failure instead of throwing, and builds the rest.
  auto outcomes = compile::compile_many({k, tiny_source("fine")}, 2, {}, cache);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_FALSE(outcomes[0].result.has_value());
  EXPECT_TRUE(contains(outcomes[0].error, "nvcc failed")) << outcomes[0].error;
  ASSERT_TRUE(outcomes[1].result.has_value()) << outcomes[1].error;
}

// A fake toolkit whose nvcc says its version and runs `build` (a shell script's lines) for a build.
fs::path fake_toolkit_building(const fs::path& dir, const std::string& build) {
  test::write_file(dir / "bin/nvcc",
                   "#!/bin/sh\n"
                   "case \"$*\" in *--version*) echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0;; esac\n"
                   "case \"$*\" in *--dryrun*) exit 1;; esac\n" + build);
  fs::permissions(dir / "bin/nvcc", fs::perms::owner_all);
  return dir;
}

// A fake nvcc that sleeps in two processes (as nvcc's cicc and ptxas run under it), so that a build
// can be killed midway: none of the compiler's processes may outlive the process that started them.
fs::path fake_toolkit(const fs::path& dir, const std::string& marker) {
  return fake_toolkit_building(dir, "sleep " + marker + " & sleep " + marker + "\nwait\n");
}

bool sleeper_alive(const std::string& marker) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string cmdline = test::read_file(e.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.rfind("sleep " + marker, 0) == 0) return true;
  }
  return false;
}

// Not tests of their own: builds through the fake toolkit, one killed by the parent, one stopped by its StopCheck
// a second in (which must kill the compiler's processes and leave nothing of the build behind).
TEST(DISABLED_BuildChild, Build) {
  test::toolchain();
  compile::compile(tiny_source("killed"), KernelCache(std::getenv("CUFORGE_TEST_CACHE")));
}

TEST(DISABLED_BuildChild, Stopped) {
  test::toolchain();
  const KernelCache cache(std::getenv("CUFORGE_TEST_CACHE"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(compile::compile(tiny_source("stopped"), cache,
                                [&] { return std::chrono::steady_clock::now() - start > std::chrono::seconds(1); }),
               Interrupted);
  EXPECT_EQ(cache.info().staging, 0u) << "the stopped build's staging is removed";
  EXPECT_EQ(cache.info().entries, 0u);
}

// A compiler that exits 0 with no library written, or something else written where the library goes (garbage, a
// directory, a link): a failed build, its source kept, nothing published (a later cache verify found them).
TEST(DISABLED_BuildChild, NotALibrary) {
  test::toolchain();
  const KernelCache cache(std::getenv("CUFORGE_TEST_CACHE"));
  try {
    compile::compile(tiny_source("not a library"), cache);
    ADD_FAILURE() << "published";
  } catch (const CompilationError& e) {
    EXPECT_TRUE(contains(e.what(), std::string("nvcc exited 0 but ") + std::getenv("CUFORGE_TEST_SAYS"))) << e.what();
  }
  EXPECT_EQ(cache.info().entries, 0u);
  EXPECT_EQ(cache.info().failed, 1u);
}

// The test binary running one of these tests through the fake toolkit at `tmp`/cuda, with the cache at `tmp`/cache.
pid_t fork_build_child(const TempDir& tmp, const char* test) {
  const fs::path cache_dir = tmp.path() / "cache";
  pid_t child = ::fork();
  if (child == 0) {
    ::setenv("CUDA_INSTALL_PATH", (tmp.path() / "cuda").c_str(), 1);
    ::setenv("CUFORGE_TEST_CACHE", cache_dir.c_str(), 1);
    ::setenv("CUFORGE_CACHE_DIR", cache_dir.c_str(), 1);
    std::string self = fs::read_symlink("/proc/self/exe").string();
    const std::string filter = std::string("--gtest_filter=") + test;
    ::execl(self.c_str(), self.c_str(), "--gtest_also_run_disabled_tests", filter.c_str(), nullptr);
    std::_Exit(127);
  }
  return child;
}

TEST(Compile, ACompilerThatWritesNoLibraryFailsTheBuild) {
  for (const auto& [build, says] : std::vector<std::pair<std::string, std::string>>{
           {"exit 0\n", "it wrote no kernel.so"},
           {"for a; do [ \"$prev\" = -o ] && echo garbage > \"$a\"; prev=$a; done\n",
            "kernel.so is not a shared library (no ELF header)"},
           {"for a; do [ \"$prev\" = -o ] && mkdir \"$a\"; prev=$a; done\n", "kernel.so is not a regular file"},
           {"for a; do [ \"$prev\" = -o ] && ln -s /bin/sh \"$a\"; prev=$a; done\n",
            "kernel.so is not a regular file"}}) {
    TempDir tmp;
    fake_toolkit_building(tmp.path() / "cuda", build);
    ::setenv("CUFORGE_TEST_SAYS", says.c_str(), 1);
    pid_t child = fork_build_child(tmp, "DISABLED_BuildChild.NotALibrary");
    ::unsetenv("CUFORGE_TEST_SAYS");
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << says << ": the child's test failed: " << status;
  }
}

// The test binary running one of the tests above through the fake toolkit (sleeping `marker` seconds), with the
// cache at `tmp`/cache; returns the child's pid once the fake nvcc runs.
pid_t start_build_child(const TempDir& tmp, const std::string& marker, const char* test) {
  fake_toolkit(tmp.path() / "cuda", marker);
  pid_t child = fork_build_child(tmp, test);
  for (int i = 0; i < 100 && !sleeper_alive(marker); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return child;
}

bool sleepers_end(const std::string& marker) {
  bool alive = true;
  for (int i = 0; i < 50 && (alive = sleeper_alive(marker)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return !alive;
}

// A Ctrl-C during a first run's build (compile::interrupt_check as the StopCheck) stopped nothing: a hung nvcc
// hung the interpreter. A stop kills the compiler's processes at once.
TEST(Compile, AStoppedBuildKillsItsCompilerProcessesAndLeavesNothing) {
  TempDir tmp;
  const std::string marker = "6062";
  ASSERT_FALSE(sleeper_alive(marker)) << "left over from an earlier run";
  const auto start = std::chrono::steady_clock::now();
  pid_t child = start_build_child(tmp, marker, "DISABLED_BuildChild.Stopped");
  ASSERT_TRUE(sleeper_alive(marker)) << "the fake nvcc never started";
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's test failed: status " << status;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_TRUE(sleepers_end(marker)) << "the compiler's processes outlived the stop";
}

TEST(Compile, AKilledBuildTakesItsCompilerProcessesAlongAndItsStagingIsReclaimed) {
  TempDir tmp;
  const std::string marker = "6061";
  ASSERT_FALSE(sleeper_alive(marker)) << "left over from an earlier run";
  const fs::path cache_dir = tmp.path() / "cache";
  pid_t child = start_build_child(tmp, marker, "DISABLED_BuildChild.Build");
  ASSERT_TRUE(sleeper_alive(marker)) << "the fake nvcc never started";
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(sleepers_end(marker)) << "the compiler's processes outlived the build's process";
  KernelCache cache(cache_dir);
  EXPECT_EQ(cache.info().staging, 1u) << "the killed build's staging is counted";
  cache.prune(UINT64_MAX);
  EXPECT_EQ(cache.info().staging, 0u) << "and reclaimed, since nobody holds its key";
}

TEST(Compile, ABackgroundBuildPublishesOrReportsItsFailure) {
  test::toolchain();
  static TempDir tmp;  // outlives the builds, even when the wait below gives up
  static const KernelCache cache(tmp.path());
  const KernelSource good = tiny_source("background"), broken = [] {
    KernelSource k = tiny_source("background broken");
    k.source += "this is not C++;\n";
    return k;
  }();
  EXPECT_FALSE(compile::cached(good, cache).has_value()) << "nothing is built yet";
  auto built = compile::BackgroundBuild::start(good, cache);
  auto failed = compile::BackgroundBuild::start(broken, cache);
  for (int i = 0; i < 1200 && !(built->done() && failed->done()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(built->done() && failed->done()) << "two tiny builds took over two minutes";
  ASSERT_TRUE(built->result().has_value()) << built->error();
  EXPECT_EQ(built->name(), good.name);
  auto found = compile::cached(good, cache);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->library(), built->result()->entry.library());
  EXPECT_FALSE(failed->result().has_value());
  EXPECT_TRUE(contains(failed->error(), "nvcc failed")) << failed->error();
  EXPECT_EQ(cache.info().staging, 0u);
}

// Not a test of its own: starts a background build in the user cache and returns at once.
TEST(DISABLED_BackgroundChild, StartAndExit) {
  test::toolchain();
  compile::BackgroundBuild::start(tiny_source("exit"));
}

TEST(Compile, AProcessExitingDuringABackgroundBuildWaitsForIt) {
  test::toolchain();
  TempDir tmp;
  const fs::path cache_dir = tmp.path() / "cache";
  pid_t child = ::fork();
  if (child == 0) {
    ::setenv("CUFORGE_CACHE_DIR", cache_dir.c_str(), 1);
    std::string self = fs::read_symlink("/proc/self/exe").string();
    ::execl(self.c_str(), self.c_str(), "--gtest_also_run_disabled_tests",
            "--gtest_filter=DISABLED_BackgroundChild.StartAndExit", nullptr);
    std::_Exit(127);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  KernelCache cache(cache_dir);
  EXPECT_TRUE(compile::cached(tiny_source("exit"), cache).has_value()) << "the build finished before the exit";
  EXPECT_EQ(cache.info().entries, 1u);
  EXPECT_EQ(cache.info().staging, 0u);
}

}  // namespace
}  // namespace cuforge
