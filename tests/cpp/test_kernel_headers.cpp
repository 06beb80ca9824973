// The kernels' own headers (src/emit/templates: kept_run.hpp, launch.hpp), compiled here as host
// code as the kernels compile them, and every family's source using them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <thread>
#include <vector>

#include "cuforge/emit/gemm.hpp"
#include "cuforge/library/catalog.hpp"
#include "templates/kept_run.hpp"
#include "templates/launch.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using library::GemmConfig;
using test::contains;

// The kernels' own helper (templates/kept_run.hpp), compiled here as the kernels compile it.
TEST(EmitKeptRun, ARepeatOfTheLatestRunKeepsItsStateAndAnythingElsePreparesAnew) {
  cuforge_kernel::KeptRun<int, sizeof(int) + sizeof(double)> kept;
  int prepared = 0;
  const auto prepare_as = [&](int value, int status) {
    return [&prepared, value, status](int& state) {
      ++prepared;
      state = value;
      return status;
    };
  };
  int key = 7;
  double scale = 0.5;
  EXPECT_EQ(kept.prepare_unless_kept({{&key, sizeof key}, {&scale, sizeof scale}}, prepare_as(1, CUFORGE_STATUS_SUCCESS)),
            CUFORGE_STATUS_SUCCESS);
  EXPECT_EQ(kept.prepare_unless_kept({{&key, sizeof key}, {&scale, sizeof scale}}, prepare_as(2, CUFORGE_STATUS_SUCCESS)),
            CUFORGE_STATUS_SUCCESS);
  EXPECT_EQ(prepared, 1);
  EXPECT_EQ(kept.state(), 1) << "a repeat runs with the state prepared for it";
  scale = 0.25;  // any part of the key
  kept.prepare_unless_kept({{&key, sizeof key}, {&scale, sizeof scale}}, prepare_as(3, CUFORGE_STATUS_SUCCESS));
  EXPECT_EQ(prepared, 2);
  EXPECT_EQ(kept.state(), 3);
  // A preparation that fails keeps nothing: the same run prepares again.
  key = 8;
  EXPECT_EQ(kept.prepare_unless_kept({{&key, sizeof key}, {&scale, sizeof scale}},
                                     prepare_as(4, CUFORGE_STATUS_WORKSPACE_TOO_SMALL)),
            CUFORGE_STATUS_WORKSPACE_TOO_SMALL);
  EXPECT_EQ(kept.prepare_unless_kept({{&key, sizeof key}, {&scale, sizeof scale}}, prepare_as(5, CUFORGE_STATUS_SUCCESS)),
            CUFORGE_STATUS_SUCCESS);
  EXPECT_EQ(prepared, 4);
  EXPECT_EQ(kept.state(), 5);
  // A key of another size than declared is the entry's error, refused before anything is prepared.
  EXPECT_EQ(kept.prepare_unless_kept({{&key, sizeof key}}, prepare_as(6, CUFORGE_STATUS_SUCCESS)),
            CUFORGE_STATUS_INTERNAL_ERROR);
  EXPECT_EQ(kept.prepare_unless_kept({{&scale, sizeof scale}, {&scale, sizeof scale}}, prepare_as(6, CUFORGE_STATUS_SUCCESS)),
            CUFORGE_STATUS_INTERNAL_ERROR);
  EXPECT_EQ(prepared, 4);
}

// The kernels' launch helper (templates/launch.hpp), compiled here as host code: a kernel it cannot
// launch (none at that address; on a machine without a GPU, any) is the runtime's error, reported
// after the driver's attempt falls through, never a success and never a crash; a failed status keeps
// that error for cuforge_last_cuda_error, in the failing thread.
TEST(EmitLaunch, ALaunchThatCannotHappenReportsTheRuntimesError) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(32);
  const cudaError_t launched = cuforge_kernel::launch_kernel(nullptr, config, nullptr);
  EXPECT_NE(launched, cudaSuccess);
  cudaGetLastError();  // the runtime's launch leaves its error to be read
  EXPECT_EQ(cuforge_kernel::launch_status(launched), CUFORGE_STATUS_LAUNCH_FAILED);
  EXPECT_EQ(cuforge_kernel::last_launch_error, launched);
  std::thread([] { EXPECT_EQ(cuforge_kernel::last_launch_error, cudaSuccess) << "another thread's"; }).join();
  EXPECT_EQ(cuforge_kernel::launch_status(cudaSuccess), CUFORGE_STATUS_SUCCESS);
  EXPECT_EQ(cuforge_kernel::last_launch_error, launched) << "a success keeps the latest failure's error";
  cuforge_kernel::KernelAttributes attributes;
  EXPECT_NE(attributes.set_once(nullptr, 0, 1024, cuforge_kernel::Clusters::None), cudaSuccess);
  EXPECT_NE(attributes.set_once(nullptr, 0, 1024, cuforge_kernel::Clusters::NonPortable), cudaSuccess)
      << "a failure is not remembered as done";
  cudaGetLastError();
}

// The typed launch's arguments: each converted to its parameter's type (as <<<>>> converts them), a
// pointer to each in the parameters' order, as cuLaunchKernelEx reads them.
void three_parameters(int, double, bool) {}
void no_parameters() {}

TEST(EmitLaunch, KernelArgumentsPointAtEachArgumentConvertedInOrder) {
  const int64_t count = 3;
  cuforge_kernel::KernelArguments<int, double, bool> arguments(count, 2.5f, 1);
  void** p = arguments.pointers();
  EXPECT_EQ(*static_cast<int*>(p[0]), 3);
  EXPECT_EQ(*static_cast<double*>(p[1]), 2.5);
  EXPECT_EQ(*static_cast<bool*>(p[2]), true);
  EXPECT_NE(p[0], p[1]);
  cuforge_kernel::KernelArguments<> none;
  EXPECT_NE(none.pointers(), nullptr);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(32);
  EXPECT_NE(cuforge_kernel::launch_kernel(three_parameters, config, count, 2.5, true), cudaSuccess)
      << "not a kernel: the runtime's error";
  EXPECT_NE(cuforge_kernel::launch_kernel(no_parameters, config), cudaSuccess);
  cudaGetLastError();
}

// One configuration of each family on `arches`: GEMM, grouped, Conv2d fprop and wgrad, then the
// last one (SM90 wgrad where 90 comes last) split.
std::vector<GemmConfig> family_configs(std::initializer_list<Arch> arches) {
  std::vector<GemmConfig> configs;
  for (Arch arch : arches) configs.push_back(library::gemm_catalog(arch).front());
  for (KernelKind kind : {KernelKind::Grouped, KernelKind::Conv2dFprop, KernelKind::Conv2dWgrad})
    for (Arch arch : arches) {
      library::GemmFilter f;
      f.kind = kind;
      f.arch = arch;
      configs.push_back(*library::find_gemms(f).front());
    }
  GemmConfig split = configs.back();
  split.parallel_split_k = true;
  configs.push_back(split);
  return configs;
}

// Every family's run keeps its latest run through the one helper: GEMM (both families), grouped,
// Conv2d, and SM90 wgrad split between the images.
TEST(EmitKeptRun, EveryFamilysRunKeepsItsLatestRunThroughTheHelper) {
  for (const GemmConfig& c : family_configs({80, 90})) {
    SCOPED_TRACE(c.name());
    const KernelSource k = emit::gemm_kernel(c, 90);
    EXPECT_TRUE(contains(k.source, "#include \"cuforge/kept_run.hpp\"\n"));
    EXPECT_TRUE(contains(k.source, "kept.prepare_unless_kept("));
    EXPECT_FALSE(contains(k.source, "LastRun"));
    ASSERT_GE(k.headers.size(), 2u);
    EXPECT_EQ(k.headers[1].first, "cuforge/kept_run.hpp");
  }
}

// Every launch cuforge's templates make goes through the driver helper (templates/launch.hpp): SM90
// GEMM, grouped and Conv2d kernels, wgrad's slices (SM90 and SM80), split-K reductions, the grouped
// arrays' preparation and TF32's K-major copies; none through the runtime or <<<>>> directly. SM80
// GEMM, grouped and Conv2d kernels launch inside CUTLASS's adapters.
TEST(EmitLaunch, EveryLaunchOfTheTemplatesGoesThroughTheDriverHelper) {
  std::vector<GemmConfig> configs = family_configs({80, 90});
  GemmConfig split = library::gemm_catalog(80).front();  // SM80 GEMM's reduction
  split.parallel_split_k = true;
  configs.push_back(split);
  split = *std::find_if(configs.begin(), configs.end(), [](const GemmConfig& c) {
    return c.arch == 80 && c.kind == KernelKind::Conv2dWgrad;
  });
  split.parallel_split_k = true;  // SM80 wgrad's slices
  configs.push_back(split);
  configs.push_back(library::parse_gemm_name(  // A column-major: copied K-major first
      "cuforge_sm90_gemm_tensorop_mma_f32_f32_f32_f32_f32_ccr_128x64x32_c1x1x1_s0_coop_tmacoop_streamk_a4x4x4"));
  for (const GemmConfig& c : configs) {
    SCOPED_TRACE(c.name());
    const KernelSource k = emit::gemm_kernel(c, 90);
    EXPECT_FALSE(contains(k.source, "<<<"));
    EXPECT_FALSE(contains(k.source, "cudaLaunchKernelEx"));
    // Every kernel carries launch.hpp (a failed launch's error is kept there for cuforge_last_cuda_error).
    EXPECT_TRUE(contains(k.source, "#include \"cuforge/launch.hpp\"\n"));
    EXPECT_TRUE(std::any_of(k.headers.begin(), k.headers.end(), [](const auto& h) { return h.first == "cuforge/launch.hpp"; }));
    EXPECT_TRUE(contains(k.source, "int cuforge_last_cuda_error(void)"));
    const bool cutlass_launches = c.arch < 90 && !c.parallel_split_k && c.kind != KernelKind::Grouped;
    if (!cutlass_launches) {
      EXPECT_TRUE(contains(k.source, "launch_kernel("));
    }
  }
}

// Data-parallel SM90 GEMM kernels (swapped, with TF32's K-major copies before them, or as parallel
// split-K's partials alike) are built with CUTLASS's grid dependency control, defined before its
// headers, and launched as programmatic dependents of the kernel before them; stream-K, fp8 (whose
// epilogue reads the scales as it is built, before the wait), grouped, convolution and SM80 kernels
// are launched in stream order.
TEST(EmitLaunch, DataParallelSm90GemmsStartWhileTheKernelBeforeThemEnds) {
  constexpr std::string_view kDefine = "#define CUTLASS_ENABLE_GDC_FOR_SM90 1\n";
  const auto dependent = [&](const GemmConfig& c) {
    SCOPED_TRACE(c.name());
    const std::string source = emit::gemm_kernel(c, 90).source;
    const size_t define = source.find(kDefine);
    if (define == std::string::npos) return false;
    EXPECT_LT(define, source.find("#include"));
    const size_t guarded = source.find("#ifdef CUTLASS_ENABLE_GDC_FOR_SM90\n");
    EXPECT_NE(guarded, std::string::npos);
    EXPECT_LT(guarded, source.find("cudaLaunchAttributeProgrammaticStreamSerialization"));
    return true;
  };
  const std::string bf16 = "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_";
  for (const char* tile : {"128x64x64_c1x1x1_s0_coop_tmacoop_default_a8x8x8", "64x64x64_c2x1x1_s0_pingpong_tma_default_a8x8x8",
                           "64x16x128_c1x1x1_s0_pingpong_tma_default_a8x8x8_swapab"})
    EXPECT_TRUE(dependent(library::parse_gemm_name(bf16 + tile)));
  GemmConfig split = library::parse_gemm_name(bf16 + "128x64x64_c1x1x1_s0_coop_tmacoop_default_a8x8x8");
  split.parallel_split_k = true;
  EXPECT_TRUE(dependent(split));
  EXPECT_TRUE(dependent(library::parse_gemm_name(  // A column-major: copied K-major first
      "cuforge_sm90_gemm_tensorop_mma_f32_f32_f32_f32_f32_ccr_128x64x32_c1x1x1_s0_coop_tmacoop_default_a4x4x4")));

  EXPECT_FALSE(dependent(library::parse_gemm_name(bf16 + "128x64x64_c1x1x1_s0_coop_tmacoop_streamk_a8x8x8")));
  EXPECT_FALSE(dependent(library::parse_gemm_name(
      "cuforge_sm90_gemm_tensorop_mma_e4m3_e4m3_f32_bf16_bf16_rcr_128x64x128_c1x1x1_s0_coop_tmacoop_default_a16x16x8")));
  for (const GemmConfig& c : family_configs({80, 90}))
    if (c.kind != KernelKind::Gemm || c.arch < 90) {
      EXPECT_FALSE(dependent(c));
    }
}

}  // namespace
}  // namespace cuforge
