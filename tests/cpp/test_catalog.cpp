// library/: the kernel catalog, its names and its validity rules.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cuforge/library/catalog.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using library::GemmConfig;

// The catalog's size per family. A change here is a change of what cuforge offers: update the
// numbers on purpose (`cuforge list --arch 90` prints the same count).
constexpr size_t kSm90Kernels = 1575;
constexpr size_t kSm80Kernels = 1980;

size_t count(Arch arch, DataType ab, DataType acc, DataType cd, MathOperation math) {
  library::GemmFilter f;
  f.arch = arch;
  f.element_a = ab;
  f.element_accumulator = acc;
  f.element_c = cd;
  f.math = math;
  return library::find_gemms(f).size();
}

TEST(Catalog, CountsPerFamilyAreStable) {
  EXPECT_EQ(library::gemm_catalog(90).size(), kSm90Kernels);
  EXPECT_EQ(library::gemm_catalog(80).size(), kSm80Kernels);
  EXPECT_EQ(library::find_gemms({}).size(), kSm90Kernels + kSm80Kernels);
}

// Per family: arch, opclass, A, B, accumulator, C/D -> kernels (the README's table).
TEST(Catalog, CountsPerDataTypeFamily) {
  using D = DataType;
  using OC = OpcodeClass;
  struct Row {
    Arch arch;
    OC opclass;
    D a, b, acc, out;
    std::optional<MathOperation> math;
    size_t kernels;
  };
  const std::vector<Row> rows = {
      {90, OC::TensorOp, D::f16, D::f16, D::f32, D::f16, {}, 180},
      {90, OC::TensorOp, D::f16, D::f16, D::f32, D::f32, {}, 180},
      {90, OC::TensorOp, D::f16, D::f16, D::f16, D::f16, {}, 180},
      {90, OC::TensorOp, D::bf16, D::bf16, D::f32, D::bf16, {}, 180},
      {90, OC::TensorOp, D::bf16, D::bf16, D::f32, D::f32, {}, 180},
      {90, OC::TensorOp, D::f32, D::f32, D::f32, D::f32, {}, 45},
      {90, OC::TensorOp, D::s8, D::s8, D::s32, D::s32, {}, 45},
      {90, OC::TensorOp, D::s8, D::s8, D::s32, D::s8, {}, 45},
      {80, OC::TensorOp, D::f16, D::f16, D::f32, D::f16, {}, 240},
      {80, OC::TensorOp, D::f16, D::f16, D::f32, D::f32, {}, 240},
      {80, OC::TensorOp, D::f16, D::f16, D::f16, D::f16, {}, 240},
      {80, OC::TensorOp, D::bf16, D::bf16, D::f32, D::bf16, {}, 240},
      {80, OC::TensorOp, D::bf16, D::bf16, D::f32, D::f32, {}, 240},
      {80, OC::TensorOp, D::f32, D::f32, D::f32, D::f32, MathOperation::MultiplyAdd, 240},
      {80, OC::TensorOp, D::f32, D::f32, D::f32, D::f32, MathOperation::MultiplyAddFastF32, 240},
      {80, OC::TensorOp, D::f64, D::f64, D::f64, D::f64, {}, 104},
      {80, OC::TensorOp, D::s8, D::s8, D::s32, D::s32, MathOperation::MultiplyAddSaturate, 60},
      {80, OC::Simt, D::f32, D::f32, D::f32, D::f32, {}, 88},
      {80, OC::Simt, D::f64, D::f64, D::f64, D::f64, {}, 48},
  };
  std::vector<Row> all = rows;
  // fp8 on SM90: every A/B pairing of e4m3 and e5m2, into each of bf16, f16 and f32.
  for (D a : {D::e4m3, D::e5m2})
    for (D b : {D::e4m3, D::e5m2})
      for (D out : {D::bf16, D::f16, D::f32}) all.push_back({90, OC::TensorOp, a, b, D::f32, out, {}, 45});
  size_t total = 0;
  for (const auto& r : all) {
    library::GemmFilter f;
    f.arch = r.arch;
    f.opclass = r.opclass;
    f.element_a = r.a;
    f.element_b = r.b;
    f.element_accumulator = r.acc;
    f.element_c = f.element_d = r.out;
    f.math = r.math;
    EXPECT_EQ(library::find_gemms(f).size(), r.kernels)
        << "sm" << r.arch << " " << to_string(r.opclass) << " " << to_string(r.a) << " x " << to_string(r.b) << " -> "
        << to_string(r.acc) << " -> " << to_string(r.out);
    total += r.kernels;
  }
  EXPECT_EQ(total, kSm90Kernels + kSm80Kernels) << "a family is missing from this table";
}

TEST(Catalog, EveryMathInstructionAndLayoutHasKernels) {
  using D = DataType;
  for (Arch arch : {80, 90}) {
    SCOPED_TRACE(arch);
    EXPECT_GT(count(arch, D::f16, D::f32, D::f16, MathOperation::MultiplyAdd), 0u);
    EXPECT_GT(count(arch, D::f16, D::f32, D::f32, MathOperation::MultiplyAdd), 0u);
    EXPECT_GT(count(arch, D::f16, D::f16, D::f16, MathOperation::MultiplyAdd), 0u);
    EXPECT_GT(count(arch, D::bf16, D::f32, D::bf16, MathOperation::MultiplyAdd), 0u);
    EXPECT_GT(count(arch, D::bf16, D::f32, D::f32, MathOperation::MultiplyAdd), 0u);
    EXPECT_GT(count(arch, D::f32, D::f32, D::f32, MathOperation::MultiplyAdd), 0u);
    // No f16 accumulation into a wider output, no bf16 accumulator.
    EXPECT_EQ(count(arch, D::f16, D::f16, D::f32, MathOperation::MultiplyAdd), 0u);
    EXPECT_EQ(count(arch, D::bf16, D::bf16, D::bf16, MathOperation::MultiplyAdd), 0u);
  }
  EXPECT_GT(count(80, D::f32, D::f32, D::f32, MathOperation::MultiplyAddFastF32), 0u);
  EXPECT_EQ(count(90, D::f32, D::f32, D::f32, MathOperation::MultiplyAddFastF32), 0u);

  // 16-bit operands come in all four A/B layouts in both families, and so do f64 and the SIMT
  // kernels; TF32 on SM90 and 8-bit operands everywhere only K-major (row x col).
  for (Arch arch : {80, 90})
    for (DataType t : {D::f16, D::bf16, D::f32, D::f64, D::s8, D::e4m3, D::e5m2})
      for (Layout la : {Layout::RowMajor, Layout::ColumnMajor})
        for (Layout lb : {Layout::RowMajor, Layout::ColumnMajor}) {
          library::GemmFilter f;
          f.arch = arch;
          f.element_a = t;
          f.layout_a = la;
          f.layout_b = lb;
          size_t n = library::find_gemms(f).size();
          bool k_major = la == Layout::RowMajor && lb == Layout::ColumnMajor;
          bool offered = (arch == 90 && t != D::f64) || (arch == 80 && t != D::e4m3 && t != D::e5m2);
          bool any_layout = size_bits(t) == 16 || (arch == 80 && size_bits(t) > 16);
          if (offered && (k_major || any_layout))
            EXPECT_GT(n, 0u) << arch << " " << to_string(t) << " " << to_string(la) << to_string(lb);
          else
            EXPECT_EQ(n, 0u) << arch << " " << to_string(t) << " " << to_string(la) << to_string(lb);
        }
}

TEST(Catalog, NewFamiliesUseTheirInstructions) {
  using D = DataType;
  for (const auto* c : library::find_gemms({})) {
    if (c->opclass == OpcodeClass::Simt) {
      EXPECT_EQ(c->arch, 80) << c->name();
      EXPECT_EQ(c->alignment_a, 1) << c->name();
      EXPECT_EQ(c->tile.threadblock_shape[2], 8) << c->name();
      EXPECT_GE(c->tile.stages, 2) << c->name();
      EXPECT_LE(c->tile.stages, 5) << c->name();
    }
    if (c->element_a == D::f64) EXPECT_EQ(c->alignment_a, 1) << c->name();
    if (c->element_a == D::s8) {
      EXPECT_EQ(c->element_accumulator, D::s32) << c->name();
      EXPECT_EQ(c->math, c->arch == 80 ? MathOperation::MultiplyAddSaturate : MathOperation::MultiplyAdd) << c->name();
    }
    if (c->arch == 90 && size_bits(c->element_a) == 8)
      EXPECT_EQ(c->tile.threadblock_shape[2], 128) << "128 bytes of K: " << c->name();
  }
  // SM80 int8 alignments follow cp.async's 16, 8 and 4 bytes; the s32 output 16, 8, 4 bytes too.
  std::set<std::array<int, 3>> int8_alignments;
  library::GemmFilter f;
  f.arch = 80;
  f.element_a = DataType::s8;
  for (const auto* c : library::find_gemms(f))
    int8_alignments.insert({c->alignment_a, c->alignment_b, c->alignment_c});
  EXPECT_EQ(int8_alignments, (std::set<std::array<int, 3>>{{16, 16, 4}, {8, 8, 2}, {4, 4, 1}}));
}

TEST(Catalog, EveryEntryIsValidAndWritesRowMajorD) {
  for (Arch arch : library::kArchs)
    for (const auto& c : library::gemm_catalog(arch)) {
      EXPECT_EQ(c.arch, arch);
      EXPECT_EQ(library::why_invalid(c), std::nullopt) << c.name();
      EXPECT_EQ(c.layout_c, Layout::RowMajor) << c.name();
      EXPECT_EQ(c.opclass == OpcodeClass::Simt, c.name().find("_simt_") != std::string::npos) << c.name();
      EXPECT_GE(library::resolved_stages(c), 2) << c.name();
      EXPECT_LE(library::shared_memory_bytes(c), (arch == 90 ? 227 : 163) * 1024) << c.name();
      if (arch == 90) {
        // TMA: every operand 16-byte aligned.
        EXPECT_EQ(c.alignment_a * size_bits(c.element_a), 128) << c.name();
        EXPECT_EQ(c.alignment_b * size_bits(c.element_b), 128) << c.name();
        EXPECT_EQ(c.alignment_c * size_bits(c.element_c), 128) << c.name();
        EXPECT_NE(c.tile.kernel_schedule, KernelSchedule::Multistage) << c.name();
      } else {
        EXPECT_GE(c.alignment_a * size_bits(c.element_a), 32) << c.name();
        EXPECT_EQ(c.tile.kernel_schedule, KernelSchedule::Multistage) << c.name();
      }
    }
}

TEST(Catalog, NamesAreUniqueAndRoundTrip) {
  std::set<std::string> names;
  for (Arch arch : library::kArchs)
    for (const auto& c : library::gemm_catalog(arch)) {
      std::string name = c.name();
      EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
      EXPECT_EQ(name.rfind("cuforge_sm" + std::to_string(arch) + "_gemm_", 0), 0u) << name;
      GemmConfig back = library::parse_gemm_name(name);
      EXPECT_EQ(back.name(), name);
      // Field by field, not only through the name.
      EXPECT_EQ(back.arch, c.arch);
      EXPECT_EQ(back.element_a, c.element_a);
      EXPECT_EQ(back.element_b, c.element_b);
      EXPECT_EQ(back.element_accumulator, c.element_accumulator);
      EXPECT_EQ(back.element_c, c.element_c);
      EXPECT_EQ(back.element_d, c.element_d);
      EXPECT_EQ(back.layout_a, c.layout_a);
      EXPECT_EQ(back.layout_b, c.layout_b);
      EXPECT_EQ(back.layout_c, c.layout_c);
      EXPECT_EQ(back.math, c.math);
      EXPECT_EQ(back.opclass, c.opclass);
      EXPECT_TRUE(back.tile == c.tile) << name;
      EXPECT_EQ(back.alignment_a, c.alignment_a);
      EXPECT_EQ(back.alignment_b, c.alignment_b);
      EXPECT_EQ(back.alignment_c, c.alignment_c);
    }
  EXPECT_EQ(names.size(), kSm90Kernels + kSm80Kernels);
}

TEST(Catalog, NameEncodesTheConfiguration) {
  GemmConfig c;  // defaults: sm90 f16 rcr 128x128x64
  c.element_a = c.element_b = DataType::bf16;
  c.element_c = c.element_d = DataType::bf16;
  c.tile.threadblock_shape = {128, 256, 64};
  c.tile.cluster_shape = {2, 1, 1};
  c.tile.kernel_schedule = KernelSchedule::TmaWarpSpecializedCooperative;
  c.tile.epilogue_schedule = EpilogueSchedule::TmaWarpSpecializedCooperative;
  c.tile.tile_scheduler = TileScheduler::StreamK;
  EXPECT_EQ(c.name(),
            "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rcr_128x256x64_c2x1x1_s0_coop_tmacoop_streamk_a8x8x8");
}

// Enumeration must be fast: measured in a fresh process (a death test re-runs this binary), since
// the catalog is kept once enumerated.
void expect_fast_enumeration(Arch arch) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto start = std::chrono::steady_clock::now();
        size_t n = library::gemm_catalog(arch).size();
        double ms = test::ms_since(start);
        std::fprintf(stderr, "sm%d: %zu kernels in %.2f ms\n", arch, n, ms);
        std::fflush(stderr);
        std::_Exit(n > 0 && ms < 100.0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "kernels in");
}

TEST(CatalogDeathTest, Sm90EnumerationTakesUnder100ms) { expect_fast_enumeration(90); }
TEST(CatalogDeathTest, Sm80EnumerationTakesUnder100ms) { expect_fast_enumeration(80); }

TEST(Catalog, UnknownFamilyIsRefused) {
  EXPECT_THROW(library::gemm_catalog(70), InvalidArgumentError);
  EXPECT_THROW(library::gemm_catalog(100), InvalidArgumentError);
  library::GemmFilter f;
  f.arch = 70;
  EXPECT_TRUE(library::find_gemms(f).empty());
}

TEST(Catalog, FiltersSelectWhatTheySay) {
  library::GemmFilter f;
  f.element_a = DataType::bf16;
  f.layout_a = Layout::ColumnMajor;
  auto found = library::find_gemms(f);
  ASSERT_FALSE(found.empty());
  for (const auto* c : found) {
    EXPECT_EQ(c->element_a, DataType::bf16);
    EXPECT_EQ(c->layout_a, Layout::ColumnMajor);
  }

  library::GemmFilter g;
  g.name_glob = "*_pingpong_*";
  auto pingpong = library::find_gemms(g);
  ASSERT_FALSE(pingpong.empty());
  for (const auto* c : pingpong) {
    EXPECT_EQ(c->arch, 90);
    EXPECT_EQ(c->tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedPingpong);
  }

  library::GemmFilter h;
  h.name_glob = library::gemm_catalog(80).front().name();
  ASSERT_EQ(library::find_gemms(h).size(), 1u);
  EXPECT_EQ(library::find_gemms(h)[0], &library::gemm_catalog(80).front());

  library::GemmFilter none;
  none.name_glob = "no_such_kernel*";
  EXPECT_TRUE(library::find_gemms(none).empty());

  library::GemmFilter streamk;
  streamk.arch = 90;
  streamk.name_glob = "*_streamk_*";
  auto sk = library::find_gemms(streamk);
  ASSERT_FALSE(sk.empty());
  for (const auto* c : sk) EXPECT_EQ(c->tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedCooperative);
}

// --- The validity rules: configurations that must be refused, and what the reason must say. ---

GemmConfig sm90_coop() {
  GemmConfig c;
  c.arch = 90;
  c.element_a = c.element_b = DataType::f16;
  c.element_c = c.element_d = DataType::f16;
  c.tile.threadblock_shape = {128, 128, 64};
  c.tile.cluster_shape = {1, 1, 1};
  c.tile.stages = 0;
  c.tile.kernel_schedule = KernelSchedule::TmaWarpSpecializedCooperative;
  c.tile.epilogue_schedule = EpilogueSchedule::TmaWarpSpecializedCooperative;
  c.alignment_a = c.alignment_b = c.alignment_c = 8;
  return c;
}

GemmConfig sm90_pingpong() {
  GemmConfig c = sm90_coop();
  c.tile.threadblock_shape = {64, 128, 64};
  c.tile.kernel_schedule = KernelSchedule::TmaWarpSpecializedPingpong;
  c.tile.epilogue_schedule = EpilogueSchedule::TmaWarpSpecialized;
  return c;
}

GemmConfig sm80_f16() {
  GemmConfig c;
  c.arch = 80;
  c.element_a = c.element_b = DataType::f16;
  c.element_c = c.element_d = DataType::f16;
  c.tile.threadblock_shape = {128, 128, 32};
  c.tile.warp_count = {2, 2, 1};
  c.tile.stages = 4;
  c.tile.kernel_schedule = KernelSchedule::Multistage;
  c.tile.epilogue_schedule = EpilogueSchedule::Default;
  c.alignment_a = c.alignment_b = c.alignment_c = 8;
  return c;
}

GemmConfig sm90_s8() {
  GemmConfig c = sm90_coop();
  c.element_a = c.element_b = DataType::s8;
  c.element_accumulator = c.element_c = c.element_d = DataType::s32;
  c.tile.threadblock_shape = {128, 128, 128};
  c.alignment_a = c.alignment_b = 16;
  c.alignment_c = 4;
  return c;
}

GemmConfig sm90_fp8(DataType a, DataType b, DataType out) {
  GemmConfig c = sm90_pingpong();
  c.element_a = a;
  c.element_b = b;
  c.element_c = c.element_d = out;
  c.tile.threadblock_shape = {64, 128, 128};
  c.alignment_a = c.alignment_b = 16;
  c.alignment_c = 128 / size_bits(out);
  return c;
}

GemmConfig sm80_f64() {
  GemmConfig c = sm80_f16();
  c.element_a = c.element_b = c.element_accumulator = c.element_c = c.element_d = DataType::f64;
  c.tile.threadblock_shape = {128, 128, 16};
  c.tile.warp_count = {4, 2, 1};
  c.tile.stages = 3;
  c.alignment_a = c.alignment_b = c.alignment_c = 1;
  return c;
}

GemmConfig sm80_s8() {
  GemmConfig c = sm80_f16();
  c.element_a = c.element_b = DataType::s8;
  c.element_accumulator = c.element_c = c.element_d = DataType::s32;
  c.math = MathOperation::MultiplyAddSaturate;
  c.tile.threadblock_shape = {128, 128, 64};
  c.layout_b = Layout::ColumnMajor;
  c.alignment_a = c.alignment_b = 16;
  c.alignment_c = 4;
  return c;
}

GemmConfig sm80_simt(DataType t) {
  GemmConfig c = sm80_f16();
  c.opclass = OpcodeClass::Simt;
  c.element_a = c.element_b = c.element_accumulator = c.element_c = c.element_d = t;
  c.tile.threadblock_shape = {128, 128, 8};
  c.tile.warp_count = {4, 2, 1};
  c.tile.stages = t == DataType::f64 ? 3 : 5;
  c.alignment_a = c.alignment_b = c.alignment_c = 1;
  return c;
}

template <class F>
GemmConfig with(GemmConfig c, F&& change);

// Configurations of the new families that the rules accept, including epilogue variants.
std::vector<std::pair<const char*, GemmConfig>> accepted() {
  using D = DataType;
  return {
      {"sm90 s8 -> s32", sm90_s8()},
      {"sm90 s8 -> s32, relu and a bias row", with(sm90_s8(), [](auto& c) {
         c.activation = Activation::relu;
         c.bias = true;
       })},
      {"sm90 s8 -> s8 with gelu (a float epilogue)", with(sm90_s8(), [](auto& c) {
         c.element_c = c.element_d = D::s8;
         c.alignment_c = 16;
         c.activation = Activation::gelu;
       })},
      {"sm90 e4m3 x e4m3 -> bf16", sm90_fp8(D::e4m3, D::e4m3, D::bf16)},
      {"sm90 e4m3 x e5m2 -> f16", sm90_fp8(D::e4m3, D::e5m2, D::f16)},
      {"sm90 e5m2 x e4m3 -> f32", sm90_fp8(D::e5m2, D::e4m3, D::f32)},
      {"sm90 e5m2 x e5m2 -> bf16, silu", with(sm90_fp8(D::e5m2, D::e5m2, D::bf16), [](auto& c) {
         c.activation = Activation::silu;
       })},
      {"sm80 f64 tensor op", sm80_f64()},
      {"sm80 f64 tensor op, leaky_relu and a bias row", with(sm80_f64(), [](auto& c) {
         c.activation = Activation::leaky_relu;
         c.bias = true;
       })},
      {"sm80 s8 saturating -> s32", sm80_s8()},
      {"sm80 SIMT f32", sm80_simt(D::f32)},
      {"sm80 SIMT f64, column-major A", with(sm80_simt(D::f64), [](auto& c) { c.layout_a = Layout::ColumnMajor; })},
  };
}

struct Refusal {
  const char* what;
  GemmConfig config;
  std::vector<const char*> reason_mentions;
};

template <class F>
GemmConfig with(GemmConfig c, F&& change) {
  change(c);
  return c;
}

std::vector<Refusal> refusals() {
  using KS = KernelSchedule;
  using ES = EpilogueSchedule;
  return {
      {"pingpong with stream-K", with(sm90_pingpong(), [](auto& c) { c.tile.tile_scheduler = TileScheduler::StreamK; }),
       {"stream-K", "cooperative"}},
      {"coop with tile M 64", with(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {64, 128, 64}; }),
       {"multiple of 128", "got 64", "pingpong"}},
      {"pingpong with tile M 96", with(sm90_pingpong(), [](auto& c) { c.tile.threadblock_shape = {96, 128, 64}; }),
       {"multiple of 64", "got 96"}},
      {"pingpong 128x256: too many accumulator registers",
       with(sm90_pingpong(), [](auto& c) { c.tile.threadblock_shape = {128, 256, 64}; }),
       {"accumulator registers", "256", "cooperative"}},
      {"coop 256x256: too many accumulator registers",
       with(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {256, 256, 64}; }), {"accumulator registers"}},
      {"sm90 f32 with a column-major A", with(sm90_coop(), [](auto& c) {
         c.element_a = c.element_b = c.element_c = c.element_d = DataType::f32;
         c.tile.threadblock_shape = {128, 128, 32};
         c.alignment_a = c.alignment_b = c.alignment_c = 4;
         c.layout_a = Layout::ColumnMajor;
       }),
       {"K-major", "row-major A", "SM80"}},
      {"sm90 f32 with a row-major B", with(sm90_coop(), [](auto& c) {
         c.element_a = c.element_b = c.element_c = c.element_d = DataType::f32;
         c.tile.threadblock_shape = {128, 128, 32};
         c.alignment_a = c.alignment_b = c.alignment_c = 4;
         c.layout_b = Layout::RowMajor;
       }),
       {"column-major B"}},
      {"sm90 alignment of A not 16 bytes", with(sm90_coop(), [](auto& c) { c.alignment_a = 4; }),
       {"16-byte aligned A", "got 4", "SM80"}},
      {"sm90 alignment of C not 16 bytes", with(sm90_coop(), [](auto& c) { c.alignment_c = 2; }),
       {"16-byte aligned C"}},
      {"sm80 alignment of B below 4 bytes", with(sm80_f16(), [](auto& c) { c.alignment_b = 1; }),
       {"4-byte aligned B", "1 x 16 bits"}},
      {"alignment not a power of two", with(sm80_f16(), [](auto& c) { c.alignment_a = 6; }),
       {"power of two", "got 6"}},
      {"alignment wider than 128 bits", with(sm80_f16(), [](auto& c) { c.alignment_a = 16; }),
       {"1 to 8 elements of f16", "got 16"}},
      {"sm80: too much shared memory", with(sm80_f16(), [](auto& c) {
         c.tile.threadblock_shape = {256, 128, 64};
         c.tile.warp_count = {4, 2, 1};
         c.tile.stages = 6;
       }),
       {"shared memory", "6 stages"}},
      {"sm90: too much shared memory", with(sm90_coop(), [](auto& c) {
         c.tile.threadblock_shape = {256, 128, 64};
         c.tile.stages = 8;
       }),
       {"shared memory"}},
      {"cluster of 8 CTAs", with(sm90_coop(), [](auto& c) { c.tile.cluster_shape = {4, 2, 1}; }),
       {"cluster 4x2x1", "up to 4 CTAs"}},
      {"cluster along K", with(sm90_coop(), [](auto& c) { c.tile.cluster_shape = {1, 1, 2}; }),
       {"cluster 1x1x2", "K = 1"}},
      {"empty cluster", with(sm90_coop(), [](auto& c) { c.tile.cluster_shape = {0, 1, 1}; }), {"cluster 0x1x1"}},
      {"coop kernel with the pingpong epilogue",
       with(sm90_coop(), [](auto& c) { c.tile.epilogue_schedule = ES::TmaWarpSpecialized; }),
       {"coop kernel schedule needs the tmacoop epilogue"}},
      {"sm90 with the multistage mainloop", with(sm90_coop(), [](auto& c) { c.tile.kernel_schedule = KS::Multistage; }),
       {"TMA warp-specialized"}},
      {"sm90 tile K of 32 f16 (64 bytes)", with(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {128, 128, 32}; }),
       {"tile K", "128 bytes", "got 32"}},
      {"sm90 tile N of 272", with(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {128, 272, 64}; }),
       {"tile N", "got 272"}},
      {"sm80 with a cluster", with(sm80_f16(), [](auto& c) { c.tile.cluster_shape = {2, 1, 1}; }), {"no clusters"}},
      {"sm80 with one stage", with(sm80_f16(), [](auto& c) { c.tile.stages = 1; }), {"at least 2 stages", "got 1"}},
      {"sm80 with a TMA schedule",
       with(sm80_f16(), [](auto& c) { c.tile.kernel_schedule = KS::TmaWarpSpecializedCooperative; }),
       {"multistage"}},
      {"sm80 warps that do not divide the tile", with(sm80_f16(), [](auto& c) { c.tile.warp_count = {3, 2, 1}; }),
       {"warps must divide"}},
      {"sm80 warp tile smaller than one MMA", with(sm80_f16(), [](auto& c) {
         c.tile.threadblock_shape = {64, 64, 32};
         c.tile.warp_count = {8, 1, 1};
       }),
       {"warp tile 8x64", "16x8"}},
      {"sm80 with 16 warps", with(sm80_f16(), [](auto& c) {
         c.tile.threadblock_shape = {256, 256, 32};
         c.tile.warp_count = {4, 4, 1};
         c.tile.stages = 2;
       }),
       {"16 warps", "at most 8"}},
      {"column-major C", with(sm90_coop(), [](auto& c) { c.layout_c = Layout::ColumnMajor; }),
       {"row-major D", "transposed"}},
      {"SIMT f16", with(sm80_f16(), [](auto& c) { c.opclass = OpcodeClass::Simt; }),
       {"sm80 has no simt mma instruction", "f16 x f16"}},
      {"mixed A and B types", with(sm80_f16(), [](auto& c) { c.element_b = DataType::bf16; }),
       {"no tensorop mma instruction", "f16 x bf16"}},
      {"C and D of different types", with(sm80_f16(), [](auto& c) { c.element_d = DataType::f32; }),
       {"one type", "f16 or f32", "got C f16 and D f32"}},
      // The new families.
      {"sm90 s8 with a column-major A", with(sm90_s8(), [](auto& c) { c.layout_a = Layout::ColumnMajor; }),
       {"8-bit operands only K-major", "row-major A", "transpose"}},
      {"sm90 e4m3 with a row-major B",
       with(sm90_fp8(DataType::e4m3, DataType::e4m3, DataType::bf16), [](auto& c) { c.layout_b = Layout::RowMajor; }),
       {"K-major", "column-major B"}},
      {"sm90 s8 tile K of 64 (64 bytes)", with(sm90_s8(), [](auto& c) { c.tile.threadblock_shape = {128, 128, 64}; }),
       {"tile K", "128 bytes of s8 (128 elements)", "got 64"}},
      {"sm90 s8 with f32 accumulation", with(sm90_s8(), [](auto& c) { c.element_accumulator = DataType::f32; }),
       {"no tensorop mma instruction", "s8 x s8 with f32 accumulation"}},
      {"sm90 s8 saturating (an SM80 instruction)",
       with(sm90_s8(), [](auto& c) { c.math = MathOperation::MultiplyAddSaturate; }), {"sm90 has no tensorop sat"}},
      {"sm90 s32 output with gelu", with(sm90_s8(), [](auto& c) { c.activation = Activation::gelu; }),
       {"s32 outputs are computed in s32", "only relu", "got gelu"}},
      {"sm80 s32 output with leaky_relu", with(sm80_s8(), [](auto& c) { c.activation = Activation::leaky_relu; }),
       {"computed in s32", "got leaky_relu"}},
      {"sm90 fp8 into e4m3", with(sm90_fp8(DataType::e4m3, DataType::e5m2, DataType::bf16), [](auto& c) {
         c.element_c = c.element_d = DataType::e4m3;
         c.alignment_c = 16;
       }),
       {"write C and D", "bf16 or f16 or f32", "got C e4m3"}},
      {"sm90 f64", with(sm90_coop(), [](auto& c) {
         c.element_a = c.element_b = c.element_accumulator = c.element_c = c.element_d = DataType::f64;
       }),
       {"sm90 has no tensorop mma instruction for f64 x f64"}},
      {"sm80 fp8", with(sm80_f16(), [](auto& c) { c.element_a = c.element_b = DataType::e4m3; }),
       {"sm80 has no tensorop mma instruction for e4m3 x e4m3"}},
      {"sm80 s8 without saturation", with(sm80_s8(), [](auto& c) { c.math = MathOperation::MultiplyAdd; }),
       {"no tensorop mma instruction for s8 x s8"}},
      {"sm80 s8 with a column-major A", with(sm80_s8(), [](auto& c) { c.layout_a = Layout::ColumnMajor; }),
       {"mma.sync reads 8-bit operands only K-major", "row-major A"}},
      {"sm80 s8 with 2-byte aligned A", with(sm80_s8(), [](auto& c) { c.alignment_a = 2; }),
       {"4-byte aligned A", "2 x 8 bits"}},
      {"sm80 f64 warp tile of 64x64 doubles", with(sm80_f64(), [](auto& c) { c.tile.warp_count = {2, 2, 1}; }),
       {"warp tile 64x64", "256 accumulator registers"}},
      {"sm80 f64 tile K of 2", with(sm80_f64(), [](auto& c) { c.tile.threadblock_shape = {128, 128, 2}; }),
       {"8x8x4 instructions"}},
      {"sm80 f64 alignment 2 on C wider than 128 bits", with(sm80_f64(), [](auto& c) { c.alignment_c = 4; }),
       {"1 to 2 elements of f64"}},
      {"sm80 SIMT warp tile 16x20", with(sm80_simt(DataType::f32), [](auto& c) {
         c.tile.threadblock_shape = {32, 40, 8};
         c.tile.warp_count = {2, 2, 1};
       }),
       {"SIMT warp tile 16x20", "4x8 threads"}},
      {"sm80 SIMT f32 warp tile 64x128",
       with(sm80_simt(DataType::f32), [](auto& c) { c.tile.threadblock_shape = {256, 256, 8}; }),
       {"accumulator registers"}},
      {"sm80 SIMT with 3xTF32", with(sm80_simt(DataType::f32), [](auto& c) { c.math = MathOperation::MultiplyAddFastF32; }),
       {"no simt 3xtf32 instruction"}},
      {"sm70", with(sm80_f16(), [](auto& c) { c.arch = 70; }), {"sm70", "80, 90"}},
  };
}

TEST(CatalogRules, RefusedConfigurationsSayWhy) {
  ASSERT_EQ(library::why_invalid(sm90_coop()), std::nullopt) << *library::why_invalid(sm90_coop());
  ASSERT_EQ(library::why_invalid(sm90_pingpong()), std::nullopt) << *library::why_invalid(sm90_pingpong());
  ASSERT_EQ(library::why_invalid(sm80_f16()), std::nullopt) << *library::why_invalid(sm80_f16());
  for (const auto& [what, config] : accepted()) {
    auto why = library::why_invalid(config);
    EXPECT_EQ(why, std::nullopt) << what << ": " << why.value_or("");
    EXPECT_EQ(library::parse_gemm_name(config.name()).name(), config.name()) << what;
  }
  for (const auto& r : refusals()) {
    SCOPED_TRACE(r.what);
    auto why = library::why_invalid(r.config);
    ASSERT_TRUE(why.has_value()) << r.config.name() << " was accepted";
    for (const char* word : r.reason_mentions) EXPECT_NE(why->find(word), std::string::npos) << "reason: " << *why;
  }
}

TEST(CatalogRules, NoRefusedConfigurationIsInTheCatalog) {
  std::set<std::string> names;
  for (const auto* c : library::find_gemms({})) names.insert(c->name());
  for (const auto& r : refusals()) {
    // Names encode what the family uses (SM80 names carry no cluster): compare only those.
    if (!(library::parse_gemm_name(r.config.name()).tile == r.config.tile)) continue;
    EXPECT_EQ(names.count(r.config.name()), 0u) << r.what;
  }
}

// --- Malformed names. ---

TEST(CatalogNames, MalformedNamesAreRefused) {
  const std::string good = library::gemm_catalog(90).front().name();
  ASSERT_NO_THROW(library::parse_gemm_name(good));
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  const std::vector<std::string> bad = {
      "",
      "cuforge",
      "not_a_kernel_name",
      good.substr(0, good.rfind('_')),                  // alignment part missing
      good + "_extra",                                  // one part too many
      replace("cuforge_", "cutlass_"),                  // wrong prefix
      replace("_gemm_", "_conv_"),                      // wrong operation
      replace("cuforge_sm90", "cuforge_xx90"),          // no "sm"
      replace("cuforge_sm90", "cuforge_smXY"),          // arch not a number
      replace("_tensorop_", "_wmma_"),                  // unknown opclass
      replace("_mma_", "_fma_"),                        // unknown math
      replace("_f16_f16_f32_", "_f17_f16_f32_"),        // unknown data type
      replace("_rcr_", "_rxr_"),                        // bad layout letter
      replace("_rcr_", "_rc_"),                         // two layout letters
      replace("_128x", "_128xx"),                       // malformed tile
      replace("_c1x1x1_", "_w1x1x1_"),                  // warp shape on sm90
      replace("_c1x1x1_", "_c1x1_"),                    // two-part cluster
      replace("_s0_", "_t0_"),                          // stages without s
      replace("_s0_", "_s_"),                           // stages without a number
      replace("_s0_", "_s99999999999_"),                // stages out of range
      replace("_coop_", "_cooperative_"),               // unknown kernel schedule
      replace("_tmacoop_", "_tmax_"),                   // unknown epilogue schedule
      replace("_default_a", "_splitk_a"),               // unknown tile scheduler
      good.substr(0, good.rfind("_a")) + "_b8x8x8",     // alignment without a
      good.substr(0, good.rfind("_a")) + "_a8x8",       // two alignments
      good.substr(0, good.rfind("_a")) + "_a8x-x8",     // alignment not a number
  };
  for (const auto& name : bad) {
    SCOPED_TRACE(name);
    EXPECT_THROW(library::parse_gemm_name(name), InvalidArgumentError);
  }
  // The message says what a name looks like, or which part is wrong.
  try {
    library::parse_gemm_name("not_a_kernel_name");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("not a cuforge GEMM kernel name"), std::string::npos) << e.what();
  }
  try {
    library::parse_gemm_name(replace("_f16_f16_f32_", "_f17_f16_f32_"));
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("f17"), std::string::npos) << e.what();
  }
}

TEST(CatalogNames, TheEpilogueIsASuffix) {
  const std::string base =
      "cuforge_sm90_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x128x64_c1x1x1_s0_coop_tmacoop_default_a8x8x8";
  auto plain = library::parse_gemm_name(base);
  EXPECT_EQ(plain.activation, Activation::identity);
  EXPECT_FALSE(plain.bias);
  auto fused = library::parse_gemm_name(base + "_leaky_relu_bias");
  EXPECT_EQ(fused.activation, Activation::leaky_relu);
  EXPECT_TRUE(fused.bias);
  EXPECT_EQ(fused.name(), base + "_leaky_relu_bias");
  EXPECT_TRUE(library::parse_gemm_name(base + "_bias").bias);
  EXPECT_EQ(library::parse_gemm_name(base + "_gelu").activation, Activation::gelu);
  EXPECT_THROW(library::parse_gemm_name(base + "_identity"), InvalidArgumentError) << "one spelling per kernel";
  EXPECT_THROW(library::parse_gemm_name(base + "_softmax"), InvalidArgumentError);
  EXPECT_THROW(library::parse_gemm_name(base + "_bias_relu"), InvalidArgumentError);
}

TEST(CatalogNames, SM80NamesCarryWarpsNotClusters) {
  const auto& c = library::gemm_catalog(80).front();
  std::string name = c.name();
  EXPECT_NE(name.find("_w"), std::string::npos) << name;
  std::string as_cluster = name;
  as_cluster.replace(as_cluster.find("_w") + 1, 1, "c");
  EXPECT_THROW(library::parse_gemm_name(as_cluster), InvalidArgumentError);
}

TEST(CoreTypes, EnumNamesRoundTrip) {
  for (const auto& [v, n] : EnumNames<DataType>::table) EXPECT_EQ(parse<DataType>(n), v);
  for (const auto& [v, n] : EnumNames<KernelSchedule>::table) EXPECT_EQ(parse<KernelSchedule>(n), v);
  try {
    parse<DataType>("f17");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("expected one of: f16, bf16"), std::string::npos) << e.what();
  }
  EXPECT_EQ(size_bits(DataType::bf16), 16);
  EXPECT_EQ(size_bits(DataType::e4m3), 8);
  EXPECT_EQ(size_bits(DataType::f64), 64);
  EXPECT_EQ(cutlass_type(DataType::bf16), "cutlass::bfloat16_t");
  EXPECT_EQ(transposed(Layout::RowMajor), Layout::ColumnMajor);
}

}  // namespace
}  // namespace cuforge
