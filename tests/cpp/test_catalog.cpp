// library/: the kernel catalog: counts per family, instructions, names that round-trip, filters and
// the speed of enumeration (the validity rules: test_catalog_rules.cpp).
#include <gtest/gtest.h>

#include <algorithm>
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
constexpr size_t kSm90Gemm = 5293, kSm90Grouped = 651, kSm90ConvPerKind = 108;
constexpr size_t kSm80Gemm = 3704, kSm80Grouped = 480, kSm80ConvPerKind = 222, kSm80NarrowDgrad = 36;
constexpr size_t kSm80OneChannelFprop = 60;  // 16-bit fixed-channel fprop of one channel: 6 families x 10 tiles
constexpr size_t kSm80SimtConvPerKind = 41;  // f32 11 tiles, f64 6, f16 8 (into f16 and f32, and with f16 accumulation)
constexpr size_t kSm90Kernels = kSm90Gemm + kSm90Grouped + 3 * kSm90ConvPerKind;
// SM80 fprop also with fixed-channel iterators: a twin of each tensor-core row; 16-bit dgrad also on 32-wide tiles.
constexpr size_t kSm80Kernels =
    kSm80Gemm + kSm80Grouped + 4 * kSm80ConvPerKind + kSm80NarrowDgrad + kSm80OneChannelFprop +
    3 * kSm80SimtConvPerKind;

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
    KernelKind kind = KernelKind::Gemm;
  };
  // SM90 16- and 8-bit GEMM families also have 18 swapped kernels (TileDescription::swap_ab) per layout
  // they can read (TF32 two, of a row-major A and B): 6 tiles in clusters of one CTA and of two along M, the cooperative ones with stream-K too;
  // and every SM90 GEMM family 15 non-persistent ones per layout (5 tiles x 3 clusters; promoted fp8: 3 tiles).
  const std::vector<Row> rows = {
      {90, OC::TensorOp, D::f16, D::f16, D::f32, D::f16, {}, 324},
      {90, OC::TensorOp, D::f16, D::f16, D::f32, D::f32, {}, 324},
      {90, OC::TensorOp, D::f16, D::f16, D::f16, D::f16, {}, 324},
      {90, OC::TensorOp, D::bf16, D::bf16, D::f32, D::bf16, {}, 324},
      {90, OC::TensorOp, D::bf16, D::bf16, D::f32, D::f32, {}, 324},
      // K-major copies first, and seven swapped kernels reading a row-major B through registers.
      {90, OC::TensorOp, D::f32, D::f32, D::f32, D::f32, MathOperation::MultiplyAdd, 259},
      {90, OC::TensorOp, D::f32, D::f32, D::f32, D::f32, MathOperation::MultiplyAddFastF32, 252},  // pieces along K
      {90, OC::TensorOp, D::s8, D::s8, D::s32, D::s32, {}, 81},
      {90, OC::TensorOp, D::s8, D::s8, D::s32, D::s8, {}, 81},
      // SM80 16-bit: 10 tiles x 4 alignments (16, 8 and 4 bytes, and one element in two stages) x 2 schedulers.
      {80, OC::TensorOp, D::f16, D::f16, D::f32, D::f16, {}, 320},
      {80, OC::TensorOp, D::f16, D::f16, D::f32, D::f32, {}, 320},
      {80, OC::TensorOp, D::f16, D::f16, D::f16, D::f16, {}, 320},
      {80, OC::TensorOp, D::f16, D::f16, D::f16, D::f32, {}, 320},  // f16 accumulation into f32 (an f32 epilogue)
      {80, OC::TensorOp, D::bf16, D::bf16, D::f32, D::bf16, {}, 320},
      {80, OC::TensorOp, D::bf16, D::bf16, D::f32, D::f32, {}, 320},
      {80, OC::TensorOp, D::f32, D::f32, D::f32, D::f32, MathOperation::MultiplyAdd, 240},
      // 3xTF32: the tiles whose warp holds at most 64 accumulator registers (its operand fragments spill others).
      {80, OC::TensorOp, D::f32, D::f32, D::f32, D::f32, MathOperation::MultiplyAddFastF32, 96},
      {80, OC::TensorOp, D::f64, D::f64, D::f64, D::f64, {}, 104},
      {80, OC::TensorOp, D::s8, D::s8, D::s32, D::s32, MathOperation::MultiplyAddSaturate, 60},
      {80, OC::TensorOp, D::s8, D::s8, D::s32, D::s8, MathOperation::MultiplyAddSaturate, 60},
      {80, OC::Simt, D::f32, D::f32, D::f32, D::f32, {}, 88},
      {80, OC::Simt, D::f64, D::f64, D::f64, D::f64, {}, 48},
      // f16 SIMT (the CUTLASS Python interface's opclass switch of an f16 plan): 8 tiles of two stages.
      {80, OC::Simt, D::f16, D::f16, D::f32, D::f16, {}, 64},
      {80, OC::Simt, D::f16, D::f16, D::f32, D::f32, {}, 64},
      {80, OC::Simt, D::f16, D::f16, D::f16, D::f16, {}, 64},
      // int8 on the CUDA cores (the CUTLASS Python interface's SIMT s8 tests), in every layout.
      {80, OC::Simt, D::s8, D::s8, D::s32, D::s8, {}, 64},
      {80, OC::Simt, D::s8, D::s8, D::s32, D::s32, {}, 64},
  };
  std::vector<Row> all = rows;
  // fp8 on SM90: every A/B pairing of e4m3 and e5m2, into each of bf16, f16, f32, e4m3 and e5m2; promoted
  // accumulation on the tiles whose two accumulators fit in registers, fast accumulation on the
  // 16-bit families' tiles (one accumulator).
  for (D a : {D::e4m3, D::e5m2})
    for (D b : {D::e4m3, D::e5m2})
      for (D out : {D::bf16, D::f16, D::f32, D::e4m3, D::e5m2}) {
        all.push_back({90, OC::TensorOp, a, b, D::f32, out, MathOperation::MultiplyAdd, 69});
        all.push_back({90, OC::TensorOp, a, b, D::f32, out, MathOperation::MultiplyAddFastAccum, 81});
        // On the CUDA cores (the CUTLASS Python interface's SIMT e4m3 test): A and B of one type, int8's 8
        // two-stage tiles in every layout.
        if (a == b) all.push_back({80, OC::Simt, a, b, D::f32, out, MathOperation::MultiplyAdd, 64});
      }
  // Mixed inputs on SM80 (s8 with f16 or bf16, either way round, into the 16-bit type or f32): the 8 tiles of a
  // K of 64 x 2 schedulers, 16-byte vectors.
  for (D wide : {D::f16, D::bf16})
    for (D out : {wide, D::f32}) {
      all.push_back({80, OC::TensorOp, D::s8, wide, D::f32, out, MathOperation::MultiplyAddMixedInputUpcast, 16});
      all.push_back({80, OC::TensorOp, wide, D::s8, D::f32, out, MathOperation::MultiplyAddMixedInputUpcast, 16});
    }
  // Grouped GEMM: 16-bit on both families (every layout), e4m3 on SM90 (K-major only).
  for (D ab : {D::f16, D::bf16})
    for (D out : {ab, D::f32})
      for (Arch arch : library::kArchs) all.push_back({arch, OC::TensorOp, ab, ab, D::f32, out, {}, 120, KernelKind::Grouped});
  for (D out : {D::bf16, D::f16, D::f32}) {
    all.push_back({90, OC::TensorOp, D::e4m3, D::e4m3, D::f32, out, MathOperation::MultiplyAdd, 27, KernelKind::Grouped});
    all.push_back({90, OC::TensorOp, D::e4m3, D::e4m3, D::f32, out, MathOperation::MultiplyAddFastAccum, 30,
                   KernelKind::Grouped});
  }
  // Convolutions. SM80 implicit GEMM: 16-bit into its own type or f32, f16 with f16 accumulation (into f16 or f32),
  // TF32 and 3xTF32 (4 of the tiles); 10 tiles x 3 channel alignments each (fprop twice: fixed-channel iterators,
  // 16-bit ones also of one channel; 16-bit dgrad also over 2 narrow tiles). SM90 implicit GEMM: 16-bit with f32 accumulation into its own type
  // or f32; 9 tiles (6 with as many stages as fit, 3 with few enough to share an SM) x 3 clusters.
  for (KernelKind kind : {KernelKind::Conv2dFprop, KernelKind::Conv2dDgrad, KernelKind::Conv2dWgrad}) {
    const size_t sm80 = kind == KernelKind::Conv2dFprop ? 60 : 30;
    const size_t sm80_16_bit = kind == KernelKind::Conv2dDgrad ? sm80 + 6 : kind == KernelKind::Conv2dFprop ? sm80 + 10
                                                                                                           : sm80;
    for (D ab : {D::f16, D::bf16})
      for (D out : {ab, D::f32}) {
        all.push_back({80, OC::TensorOp, ab, ab, D::f32, out, {}, sm80_16_bit, kind});
        all.push_back({90, OC::TensorOp, ab, ab, D::f32, out, {}, 27, kind});
      }
    all.push_back({80, OC::TensorOp, D::f16, D::f16, D::f16, D::f16, {}, sm80_16_bit, kind});
    all.push_back({80, OC::TensorOp, D::f16, D::f16, D::f16, D::f32, {}, sm80_16_bit, kind});
    all.push_back({80, OC::TensorOp, D::f32, D::f32, D::f32, D::f32, MathOperation::MultiplyAdd, sm80, kind});
    all.push_back({80, OC::TensorOp, D::f32, D::f32, D::f32, D::f32, MathOperation::MultiplyAddFastF32,
                   sm80 * 2 / 5, kind});  // 4 of the 10 tiles
    // SIMT (SM80's CUDA-core implicit GEMM, opclass Simt): the GEMM families' SIMT tiles, one element at a time.
    all.push_back({80, OC::Simt, D::f32, D::f32, D::f32, D::f32, {}, 11, kind});
    all.push_back({80, OC::Simt, D::f64, D::f64, D::f64, D::f64, {}, 6, kind});
    all.push_back({80, OC::Simt, D::f16, D::f16, D::f32, D::f16, {}, 8, kind});
    all.push_back({80, OC::Simt, D::f16, D::f16, D::f32, D::f32, {}, 8, kind});
    all.push_back({80, OC::Simt, D::f16, D::f16, D::f16, D::f16, {}, 8, kind});
  }
  size_t total = 0;
  for (const auto& r : all) {
    library::GemmFilter f;
    f.kind = r.kind;
    f.arch = r.arch;
    f.opclass = r.opclass;
    f.element_a = r.a;
    f.element_b = r.b;
    f.element_accumulator = r.acc;
    f.element_c = f.element_d = r.out;
    f.math = r.math;
    EXPECT_EQ(library::find_gemms(f).size(), r.kernels)
        << "sm" << r.arch << " " << to_string(r.kind) << " " << to_string(r.opclass) << " " << to_string(r.a) << " x " << to_string(r.b) << " -> "
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
    // f16 accumulation into a wider output on SM80 only (the CUTLASS interface's conv tests build it), no bf16
    // accumulator.
    EXPECT_EQ(count(arch, D::f16, D::f16, D::f32, MathOperation::MultiplyAdd) > 0, arch == 80);
    EXPECT_EQ(count(arch, D::bf16, D::bf16, D::bf16, MathOperation::MultiplyAdd), 0u);
  }
  // 3xTF32 on both: SM80 mma.sync's three products, SM90's pieces along K (library::staged_k_major).
  EXPECT_GT(count(80, D::f32, D::f32, D::f32, MathOperation::MultiplyAddFastF32), 0u);
  EXPECT_GT(count(90, D::f32, D::f32, D::f32, MathOperation::MultiplyAddFastF32), 0u);

  // 16-bit operands come in all four A/B layouts in both families, and so do f64 and the SIMT
  // kernels (int8's too); TF32 on SM90 and 8-bit operands on the tensor cores only K-major (row x col).
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
          bool offered = (arch == 90 && t != D::f64) || arch == 80;
          // SM90 copies 32-bit operands K-major first (library::staged_k_major); 8-bit ones have no layout but
          // K-major on the tensor cores (SM80's fp8 kernels are SIMT ones).
          bool any_layout = size_bits(t) == 16 || arch == 80 || (arch == 90 && size_bits(t) == 32);
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
      EXPECT_EQ(c->alignment_c, 1) << c->name();
      EXPECT_EQ(library::pipelined_simt(*c), c->tile.stages == 2) << c->name();
      EXPECT_EQ(c->tile.threadblock_shape[2], size_bits(c->element_a) == 8 ? 16 : 8) << c->name();
      EXPECT_GE(c->tile.stages, 2) << c->name();
      EXPECT_LE(c->tile.stages, 5) << c->name();
    }
    if (c->element_a == D::f64) {
      EXPECT_EQ(c->alignment_a, 1) << c->name();
    }
    if (c->element_a != c->element_b && c->opclass == OpcodeClass::TensorOp && c->arch == 80) {
      // Mixed inputs: s8 with a 16-bit type, f32 accumulation, 16-byte vectors, K-major.
      EXPECT_EQ(c->math, MathOperation::MultiplyAddMixedInputUpcast) << c->name();
      EXPECT_EQ(c->element_accumulator, D::f32) << c->name();
      EXPECT_EQ(c->alignment_a * size_bits(c->element_a), 128) << c->name();
      EXPECT_EQ(c->alignment_b * size_bits(c->element_b), 128) << c->name();
      EXPECT_EQ(c->tile.threadblock_shape[2], 64) << c->name();
      EXPECT_EQ(c->layout_a, Layout::RowMajor) << c->name();
      EXPECT_EQ(c->layout_b, Layout::ColumnMajor) << c->name();
    } else if (c->element_a == D::s8) {
      EXPECT_EQ(c->element_accumulator, D::s32) << c->name();
      const bool saturating = c->arch == 80 && c->opclass == OpcodeClass::TensorOp;  // mma.sync's .satfinite
      EXPECT_EQ(c->math, saturating ? MathOperation::MultiplyAddSaturate : MathOperation::MultiplyAdd) << c->name();
    }
    if (c->arch == 90 && size_bits(c->element_a) == 8) {
      EXPECT_EQ(c->tile.threadblock_shape[2], 128) << "128 bytes of K: " << c->name();
    }
  }
  // SM80 int8 alignments follow cp.async's 16, 8 and 4 bytes; the outputs (s32 and s8) 16, 8, 4 bytes too.
  std::set<std::array<int, 3>> int8_alignments;
  library::GemmFilter f;
  f.arch = 80;
  f.element_a = f.element_b = DataType::s8;
  f.opclass = OpcodeClass::TensorOp;
  for (const auto* c : library::find_gemms(f))
    int8_alignments.insert({c->alignment_a, c->alignment_b, c->alignment_c});
  EXPECT_EQ(int8_alignments,
            (std::set<std::array<int, 3>>{{16, 16, 4}, {8, 8, 2}, {4, 4, 1}, {16, 16, 8}, {8, 8, 8}, {4, 4, 4}}));
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
        // cp.async copies at least 4 bytes; the two-stage pipelined mainloop loads through registers.
        if (library::pipelined(c)) {
          EXPECT_EQ(c.tile.stages, 2) << c.name();
        } else {
          EXPECT_GE(c.alignment_a * size_bits(c.element_a), 32) << c.name();
        }
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
      EXPECT_EQ(name.rfind("cuforge_sm" + std::to_string(arch) + "_" + std::string(to_string(c.kind)) + "_", 0), 0u)
          << name;
      GemmConfig back = library::parse_gemm_name(name);
      EXPECT_EQ(back.name(), name);
      // Field by field, not only through the name.
      EXPECT_EQ(back.kind, c.kind);
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
  f.arch = 75;
  try {
    library::find_gemms(f);
    ADD_FAILURE() << "sm75 listed as an empty family";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("sm80"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sm90"), std::string::npos) << e.what();
  }
}

TEST(Catalog, AMalformedGlobIsRefusedNotMatchedLiterally) {
  for (const char* glob : {"[", "*_[rc", "abc[!x", "[[:alpha:]", "*\\", "[\\]", "[[:foo:]]*"}) {
    library::GemmFilter f;
    f.name_glob = glob;
    EXPECT_THROW(library::find_gemms(f), InvalidArgumentError) << glob;
  }
  for (const char* glob : {"*_[rc]cr_*", "[]]*", "\\[*", "*[!x]*", "[[:alpha:]]*", "*\\_*", "[[:a1:]*", "[[=ab=]*",
                           "[[=c=]]*", "[\\]]*"}) {
    library::GemmFilter f;
    f.name_glob = glob;
    EXPECT_NO_THROW(library::find_gemms(f)) << glob;
  }
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

}  // namespace
}  // namespace cuforge
