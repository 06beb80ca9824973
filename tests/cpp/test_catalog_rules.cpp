// library/: the validity rules (configurations accepted, and refused with a reason that says why).
// Kernel names: test_catalog_names.cpp.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cuforge/library/catalog.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using library::GemmConfig;

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
  c.tile.stages = t == DataType::f64 ? 3 : size_bits(t) == 16 ? 2 : 5;  // 16-bit: library::pipelined_simt
  c.alignment_a = c.alignment_b = c.alignment_c = 1;
  return c;
}

// Configurations of the new families that the rules accept, including epilogue variants.
std::vector<std::pair<const char*, GemmConfig>> accepted() {
  using D = DataType;
  return {
      {"sm90 s8 -> s32", sm90_s8()},
      {"sm90 s8 -> s32, relu and a bias row", test::changed(sm90_s8(), [](auto& c) {
         c.activation = Activation::relu;
         c.bias = true;
       })},
      {"sm90 s8 -> s8 with gelu (a float epilogue)", test::changed(sm90_s8(), [](auto& c) {
         c.element_c = c.element_d = D::s8;
         c.alignment_c = 16;
         c.activation = Activation::gelu;
       })},
      {"sm90 e4m3 x e4m3 -> bf16", sm90_fp8(D::e4m3, D::e4m3, D::bf16)},
      {"sm90 e4m3 x e5m2 -> f16", sm90_fp8(D::e4m3, D::e5m2, D::f16)},
      {"sm90 e5m2 x e4m3 -> f32", sm90_fp8(D::e5m2, D::e4m3, D::f32)},
      {"sm90 e5m2 x e5m2 -> bf16, silu", test::changed(sm90_fp8(D::e5m2, D::e5m2, D::bf16), [](auto& c) {
         c.activation = Activation::silu;
       })},
      // Two promoted accumulators of 96 registers each fit (ptxas: no spills).
      {"sm90 e4m3 128x192 cooperative", test::changed(sm90_fp8(D::e4m3, D::e4m3, D::bf16), [](auto& c) {
         c.tile.threadblock_shape = {128, 192, 128};
         c.tile.kernel_schedule = KernelSchedule::TmaWarpSpecializedCooperative;
         c.tile.epilogue_schedule = EpilogueSchedule::TmaWarpSpecializedCooperative;
       })},
      {"sm90 e4m3 64x192 ping-pong", test::changed(sm90_fp8(D::e4m3, D::e4m3, D::bf16), [](auto& c) {
         c.tile.threadblock_shape = {64, 192, 128};
       })},
      {"sm80 f64 tensor op", sm80_f64()},
      {"sm80 f64 tensor op, leaky_relu and a bias row", test::changed(sm80_f64(), [](auto& c) {
         c.activation = Activation::leaky_relu;
         c.bias = true;
       })},
      {"sm90 fp8 into e4m3 (rounded to nearest even, saturated)",
       test::changed(sm90_fp8(DataType::e4m3, DataType::e5m2, DataType::bf16), [](auto& c) {
         c.element_c = c.element_d = DataType::e4m3;
         c.alignment_c = 16;
       })},
      {"sm90 s8 tile K of 32 (a 32-byte swizzle, the interface's 128x64x32)",
       test::changed(sm90_s8(), [](auto& c) { c.tile.threadblock_shape = {128, 64, 32}; })},
      {"sm80 s8 saturating -> s32", sm80_s8()},
      {"sm80 mixed inputs, s8 x f16", test::changed(sm80_f16(), [](auto& c) {
         c.element_a = DataType::s8;
         c.math = MathOperation::MultiplyAddMixedInputUpcast;
         c.tile.threadblock_shape = {128, 128, 64};
         c.alignment_a = 16;
       })},
      {"sm80 s8 saturating -> s8 (f32 epilogue, 8-element vectors)", test::changed(sm80_s8(), [](auto& c) {
         c.element_c = c.element_d = DataType::s8;
         c.alignment_c = 8;
       })},
      {"sm80 SIMT f32", sm80_simt(D::f32)},
      {"sm80 SIMT f16 into f32 (the seed's opclass switch of an f16 plan)",
       test::changed(sm80_simt(D::f16), [](auto& c) { c.element_accumulator = D::f32; })},
      {"sm80 SIMT f16 into f16", sm80_simt(D::f16)},
      {"sm80 SIMT f64, column-major A", test::changed(sm80_simt(D::f64), [](auto& c) { c.layout_a = Layout::ColumnMajor; })},
      {"sm80 SIMT f64 warp tile 64x64 (the interface's 128x128x8 in 2x2 warps; spills)",
       test::changed(sm80_simt(D::f64), [](auto& c) {
         c.tile.threadblock_shape = {128, 128, 8};
         c.tile.warp_count = {2, 2, 1};
         c.tile.stages = 2;
       })},
      {"sm90 parallel split-K, gelu and a bias row", test::changed(sm90_pingpong(), [](auto& c) {
         c.parallel_split_k = true;
         c.activation = Activation::gelu;
         c.bias = true;
       })},
      {"sm80 parallel split-K, f16 outputs of alignment 2", test::changed(sm80_f16(), [](auto& c) {
         c.parallel_split_k = true;
         c.alignment_c = 2;
       })},
      {"sm80 SIMT f32 parallel split-K (partials stored one element at a time)",
       test::changed(sm80_simt(D::f32), [](auto& c) { c.parallel_split_k = true; })},
  };
}

struct Refusal {
  const char* what;
  GemmConfig config;
  std::vector<const char*> reason_mentions;
};

std::vector<Refusal> refusals() {
  using D = DataType;
  using KS = KernelSchedule;
  using ES = EpilogueSchedule;
  return {
      {"pingpong with stream-K", test::changed(sm90_pingpong(), [](auto& c) { c.tile.tile_scheduler = TileScheduler::StreamK; }),
       {"stream-K", "cooperative"}},
      {"coop with tile M 64", test::changed(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {64, 128, 64}; }),
       {"multiple of 128", "got 64", "pingpong"}},
      {"pingpong with tile M 96", test::changed(sm90_pingpong(), [](auto& c) { c.tile.threadblock_shape = {96, 128, 64}; }),
       {"multiple of 64", "got 96"}},
      {"pingpong 128x256: too many accumulator registers",
       test::changed(sm90_pingpong(), [](auto& c) { c.tile.threadblock_shape = {128, 256, 64}; }),
       {"accumulator registers", "256", "cooperative"}},
      // fp8 promotes from a second accumulator: 2 x 128 registers spill but build (spills_registers), no more.
      {"fp8 coop 256x256: two accumulators of 256 registers",
       test::changed(sm90_fp8(DataType::e4m3, DataType::e4m3, DataType::bf16), [](auto& c) {
         c.tile.threadblock_shape = {256, 256, 128};
         c.tile.kernel_schedule = KS::TmaWarpSpecializedCooperative;
         c.tile.epilogue_schedule = ES::TmaWarpSpecializedCooperative;
       }),
       {"512 accumulator registers", "second accumulator", "limit 256"}},
      {"fp8 pingpong 128x192: two accumulators of 192 registers",
       test::changed(sm90_fp8(DataType::e5m2, DataType::e4m3, DataType::f16), [](auto& c) {
         c.tile.threadblock_shape = {128, 192, 128};
       }),
       {"384 accumulator registers", "second accumulator", "cooperative"}},
      {"coop 256x256: too many accumulator registers",
       test::changed(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {256, 256, 64}; }), {"accumulator registers"}},
      {"sm90 f32 with a row-major B in parallel split-K", test::changed(sm90_coop(), [](auto& c) {
         c.element_a = c.element_b = c.element_c = c.element_d = DataType::f32;
         c.tile.threadblock_shape = {128, 128, 32};
         c.alignment_a = c.alignment_b = c.alignment_c = 4;
         c.layout_b = Layout::RowMajor;  // copied K-major first: no parallel split-K over it
         c.parallel_split_k = true;
       }),
       {"K-major first"}},
      {"sm90 alignment of A not 16 bytes", test::changed(sm90_coop(), [](auto& c) { c.alignment_a = 4; }),
       {"16-byte aligned A", "got 4", "SM80"}},
      {"sm90 alignment of C not 16 bytes", test::changed(sm90_coop(), [](auto& c) { c.alignment_c = 2; }),
       {"16-byte aligned C"}},
      {"sm80 one-element B in cp.async's stages", test::changed(sm80_f16(), [](auto& c) { c.alignment_b = 1; }),
       {"two-stage pipelined mainloop", "got 4"}},
      {"sm80 one-element grouped kernel", test::changed(sm80_f16(), [](auto& c) {
         c.kind = KernelKind::Grouped;
         c.alignment_b = 1;
         c.tile.stages = 2;
       }),
       {"fixed-channel ones only"}},
      {"alignment not a power of two", test::changed(sm80_f16(), [](auto& c) { c.alignment_a = 6; }),
       {"power of two", "got 6"}},
      {"alignment wider than 128 bits", test::changed(sm80_f16(), [](auto& c) { c.alignment_a = 16; }),
       {"1 to 8 elements of f16", "got 16"}},
      {"sm80: too much shared memory", test::changed(sm80_f16(), [](auto& c) {
         c.tile.threadblock_shape = {256, 128, 64};
         c.tile.warp_count = {4, 2, 1};
         c.tile.stages = 6;
       }),
       {"shared memory", "6 stages"}},
      {"sm90: too much shared memory", test::changed(sm90_coop(), [](auto& c) {
         c.tile.threadblock_shape = {256, 128, 64};
         c.tile.stages = 8;
       }),
       {"shared memory"}},
      {"cluster of 16 CTAs", test::changed(sm90_coop(), [](auto& c) { c.tile.cluster_shape = {4, 4, 1}; }),
       {"cluster 4x4x1", "up to 8 CTAs"}},
      {"cluster of 6 CTAs", test::changed(sm90_coop(), [](auto& c) { c.tile.cluster_shape = {3, 2, 1}; }),
       {"cluster 3x2x1", "powers of two"}},
      {"cluster along K", test::changed(sm90_coop(), [](auto& c) { c.tile.cluster_shape = {1, 1, 2}; }),
       {"cluster 1x1x2", "K = 1"}},
      {"empty cluster", test::changed(sm90_coop(), [](auto& c) { c.tile.cluster_shape = {0, 1, 1}; }), {"cluster 0x1x1"}},
      {"coop kernel with the pingpong epilogue",
       test::changed(sm90_coop(), [](auto& c) { c.tile.epilogue_schedule = ES::TmaWarpSpecialized; }),
       {"coop kernel schedule needs the tmacoop epilogue"}},
      {"sm90 with the multistage mainloop", test::changed(sm90_coop(), [](auto& c) { c.tile.kernel_schedule = KS::Multistage; }),
       {"TMA warp-specialized"}},
      {"sm90 tile K of 16 f16 (32 bytes)", test::changed(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {128, 128, 16}; }),
       {"tile K", "64 bytes", "got 16"}},
      {"sm90 tile N of 272", test::changed(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {128, 272, 64}; }),
       {"tile N", "got 272"}},
      {"sm90 with one stage", test::changed(sm90_coop(), [](auto& c) { c.tile.stages = 1; }), {"0 stages", "got 1"}},
      {"sm90 with negative stages", test::changed(sm90_coop(), [](auto& c) { c.tile.stages = -1; }),
       {"as many as fit", "got -1"}},
      {"sm80 with a cluster", test::changed(sm80_f16(), [](auto& c) { c.tile.cluster_shape = {2, 1, 1}; }), {"no clusters"}},
      {"sm80 with one stage", test::changed(sm80_f16(), [](auto& c) { c.tile.stages = 1; }), {"at least 2 stages", "got 1"}},
      {"sm80 with a TMA schedule",
       test::changed(sm80_f16(), [](auto& c) { c.tile.kernel_schedule = KS::TmaWarpSpecializedCooperative; }),
       {"multistage"}},
      {"sm80 warps that do not divide the tile", test::changed(sm80_f16(), [](auto& c) { c.tile.warp_count = {3, 2, 1}; }),
       {"warps must divide"}},
      {"sm80 warp tile smaller than one MMA", test::changed(sm80_f16(), [](auto& c) {
         c.tile.threadblock_shape = {64, 64, 32};
         c.tile.warp_count = {8, 1, 1};
       }),
       {"warp tile 8x64", "16x8"}},
      {"sm80 with 16 warps", test::changed(sm80_f16(), [](auto& c) {
         c.tile.threadblock_shape = {256, 256, 32};
         c.tile.warp_count = {4, 4, 1};
         c.tile.stages = 2;
       }),
       {"16 warps", "at most 8"}},
      {"column-major C", test::changed(sm90_coop(), [](auto& c) { c.layout_c = Layout::ColumnMajor; }),
       {"row-major D", "transposed"}},
      {"SIMT bf16", test::changed(sm80_simt(DataType::bf16), [](auto& c) { c.element_accumulator = DataType::f32; }),
       {"sm80 has no simt mma instruction", "bf16 x bf16"}},
      {"SIMT f16 in the multistage mainloop", test::changed(sm80_simt(DataType::f16), [](auto& c) { c.tile.stages = 3; }),
       {"two-stage pipelined", "2 stages, got 3"}},
      {"mixed A and B types", test::changed(sm80_f16(), [](auto& c) { c.element_b = DataType::bf16; }),
       {"no tensorop mma instruction", "f16 x bf16"}},
      {"C and D of different types", test::changed(sm80_f16(), [](auto& c) { c.element_d = DataType::f32; }),
       {"one type", "f16 or f32", "SM90 GEMMs also C f16 with D f32", "got C f16 and D f32"}},
      {"sm90 C f32 with D f16", test::changed(sm90_coop(), [](auto& c) { c.element_c = DataType::f32; }),
       {"one type", "got C f32 and D f16"}},
      {"sm90 C f16 with D f32 in parallel split-K (its reduction reads C as D)", test::changed(sm90_coop(), [](auto& c) {
         c.element_d = DataType::f32;
         c.parallel_split_k = true;
       }),
       {"one type", "unsplit or split in the kernel", "got C f16 and D f32"}},
      // The new families.
      {"sm90 s8 with a column-major A", test::changed(sm90_s8(), [](auto& c) { c.layout_a = Layout::ColumnMajor; }),
       {"8-bit operands only K-major", "row-major A", "transpose"}},
      {"sm90 e4m3 with a row-major B",
       test::changed(sm90_fp8(DataType::e4m3, DataType::e4m3, DataType::bf16), [](auto& c) { c.layout_b = Layout::RowMajor; }),
       {"K-major", "column-major B"}},
      {"sm90 promoted fp8 tile K of 96", test::changed(sm90_fp8(DataType::e4m3, DataType::e4m3, DataType::bf16), [](auto& c) {
         c.tile.threadblock_shape = {64, 128, 96};
       }),
       {"promoted fp8 tiles take a K of 32, 64 or 128", "got 96"}},
      {"sm90 s8 tile K of 16 (16 bytes)", test::changed(sm90_s8(), [](auto& c) { c.tile.threadblock_shape = {128, 128, 16}; }),
       {"tile K", "32 bytes of s8 (32 elements)", "got 16"}},
      {"sm90 s8 with f32 accumulation", test::changed(sm90_s8(), [](auto& c) { c.element_accumulator = DataType::f32; }),
       {"no tensorop mma instruction", "s8 x s8 with f32 accumulation"}},
      {"sm90 s8 saturating (an SM80 instruction)",
       test::changed(sm90_s8(), [](auto& c) { c.math = MathOperation::MultiplyAddSaturate; }), {"sm90 has no tensorop sat"}},
      {"sm90 s32 output with gelu", test::changed(sm90_s8(), [](auto& c) { c.activation = Activation::gelu; }),
       {"s32 outputs are computed in s32", "only relu", "got gelu"}},
      {"sm80 s32 output with leaky_relu", test::changed(sm80_s8(), [](auto& c) { c.activation = Activation::leaky_relu; }),
       {"computed in s32", "got leaky_relu"}},
      {"sm90 fp8 into s8", test::changed(sm90_fp8(DataType::e4m3, DataType::e5m2, DataType::bf16), [](auto& c) {
         c.element_c = c.element_d = DataType::s8;
         c.alignment_c = 16;
       }),
       {"write C and D", "bf16 or f16 or f32 or e4m3 or e5m2", "got C s8"}},
      {"grouped fp8 into e4m3", test::changed(sm90_fp8(DataType::e4m3, DataType::e4m3, DataType::bf16), [](auto& c) {
         c.kind = KernelKind::Grouped;
         c.element_c = c.element_d = DataType::e4m3;
         c.alignment_c = 16;
       }),
       {"grouped kernels write 16-bit or f32 outputs, not e4m3"}},
      {"sm90 f64", test::changed(sm90_coop(), [](auto& c) {
         c.element_a = c.element_b = c.element_accumulator = c.element_c = c.element_d = DataType::f64;
       }),
       {"sm90 has no tensorop mma instruction for f64 x f64"}},
      {"sm80 fp8", test::changed(sm80_f16(), [](auto& c) { c.element_a = c.element_b = DataType::e4m3; }),
       {"sm80 has no tensorop mma instruction for e4m3 x e4m3"}},
      {"sm80 s8 without saturation", test::changed(sm80_s8(), [](auto& c) { c.math = MathOperation::MultiplyAdd; }),
       {"no tensorop mma instruction for s8 x s8"}},
      {"sm80 s8 with a column-major A", test::changed(sm80_s8(), [](auto& c) { c.layout_a = Layout::ColumnMajor; }),
       {"mma.sync reads 8-bit operands only K-major", "row-major A"}},
      {"sm80 mixed inputs with a column-major B", test::changed(sm80_f16(), [](auto& c) {
         c.element_b = DataType::s8;
         c.math = MathOperation::MultiplyAddMixedInputUpcast;
         c.layout_b = Layout::RowMajor;
         c.alignment_b = 16;
       }),
       {"8-bit operands only K-major", "f16 x s8 kernels need a row-major A and a column-major B"}},
      {"sm80 mixed inputs in 8-byte vectors", test::changed(sm80_f16(), [](auto& c) {
         c.element_b = DataType::s8;
         c.math = MathOperation::MultiplyAddMixedInputUpcast;
         c.alignment_a = 4;
         c.alignment_b = 8;
       }),
       {"mixed-input kernels read A and B in 16-byte vectors (8 and 16 elements), got 4 and 8"}},
      {"sm80 mixed inputs over a K of 128", test::changed(sm80_f16(), [](auto& c) {
         c.element_b = DataType::s8;
         c.math = MathOperation::MultiplyAddMixedInputUpcast;
         c.tile.threadblock_shape = {64, 64, 128};
         c.alignment_b = 16;
       }),
       {"tile K of 64", "got 128"}},
      {"sm80 mixed inputs without the mixed-input operation", test::changed(sm80_f16(), [](auto& c) {
         c.element_b = DataType::s8;
         c.alignment_b = 16;
       }),
       {"no tensorop mma instruction for f16 x s8"}},
      {"sm80 s8 outputs in 16-element vectors", test::changed(sm80_s8(), [](auto& c) {
         c.element_c = c.element_d = DataType::s8;
         c.alignment_c = 16;
       }),
       {"8-bit C and D in vectors of at most 8 elements", "got 16"}},
      {"sm80 s8 with 2-byte aligned A", test::changed(sm80_s8(), [](auto& c) { c.alignment_a = 2; }),
       {"4-byte aligned A", "2 x 8 bits"}},
      {"sm80 f64 warp tile of 64x64 doubles", test::changed(sm80_f64(), [](auto& c) { c.tile.warp_count = {2, 2, 1}; }),
       {"warp tile 64x64", "256 accumulator registers"}},
      {"sm80 f64 tile K of 2", test::changed(sm80_f64(), [](auto& c) { c.tile.threadblock_shape = {128, 128, 2}; }),
       {"8x8x4 instructions"}},
      {"sm80 f64 alignment 2 on C wider than 128 bits", test::changed(sm80_f64(), [](auto& c) { c.alignment_c = 4; }),
       {"1 to 2 elements of f64"}},
      {"sm80 SIMT warp tile 16x20", test::changed(sm80_simt(DataType::f32), [](auto& c) {
         c.tile.threadblock_shape = {32, 40, 8};
         c.tile.warp_count = {2, 2, 1};
       }),
       {"SIMT warp tile 16x20", "4x8 threads"}},
      {"sm80 SIMT f64 warp tile 64x128",
       test::changed(sm80_simt(DataType::f64), [](auto& c) {
         c.tile.threadblock_shape = {128, 256, 8};
         c.tile.warp_count = {2, 2, 1};
       }),
       {"warp tile 64x128", "512 accumulator registers", "limit 256"}},
      {"sm80 SIMT f32 storing 4-element vectors of C",
       test::changed(sm80_simt(DataType::f32), [](auto& c) { c.alignment_c = 4; }),
       {"SIMT epilogues store one element", "got 4"}},
      {"sm80 SIMT with 3xTF32", test::changed(sm80_simt(DataType::f32), [](auto& c) { c.math = MathOperation::MultiplyAddFastF32; }),
       {"no simt 3xtf32 instruction"}},
      {"sm70", test::changed(sm80_f16(), [](auto& c) { c.arch = 70; }), {"sm70", "80, 90"}},
      {"parallel split-K on the stream-K scheduler", test::changed(sm90_coop(), [](auto& c) {
         c.parallel_split_k = true;
         c.tile.tile_scheduler = TileScheduler::StreamK;
       }),
       {"parallel split-K", "stream-K scheduler splits K itself"}},
      {"parallel split-K of f64 accumulators", test::changed(sm80_f64(), [](auto& c) { c.parallel_split_k = true; }),
       {"f32 partial products", "accumulates in f64"}},
      {"parallel split-K whose f32 partials overflow shared memory",
       test::changed(sm90_coop(), [](auto& c) {
         c.parallel_split_k = true;
         c.tile.threadblock_shape = {256, 128, 64};
         c.tile.stages = 4;
       }),
       {"its partial products:", "shared memory"}},
      // Extents and counts the rules and the cost model divide by or multiply: refused, not divided by.
      {"sm90 tile M of 0", test::changed(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {0, 128, 64}; }),
       {"tile 0x128x64", "1 to 1024"}},
      {"sm90 negative tile N", test::changed(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {128, -128, 64}; }),
       {"tile 128x-128x64"}},
      {"sm80 tile beyond any kernel's", test::changed(sm80_f16(), [](auto& c) { c.tile.threadblock_shape = {128, 128, 1 << 20}; }),
       {"1 to 1024"}},
      {"sm80 no warps along M", test::changed(sm80_f16(), [](auto& c) { c.tile.warp_count = {0, 2, 1}; }),
       {"warps must divide"}},
      {"alignment 0", test::changed(sm80_f16(), [](auto& c) { c.alignment_a = 0; }), {"alignments 0, 8 and 8"}},
      {"sm90 stages whose bytes overflow an int", test::changed(sm90_coop(), [](auto& c) { c.tile.stages = 131072; }),
       {"131072 stages", "do not fit"}},
      {"sm80 stages whose bytes overflow an int", test::changed(sm80_f16(), [](auto& c) { c.tile.stages = 196608; }),
       {"196608 stages", "exceed"}},
      // CUTLASS's static asserts in the SM80 multistage SIMT cores (default_mma_core_sm80.h), which nvcc met
      // first: 32 threads as 4x8 over the warp tile, and shared memory padded by whole lane vectors.
      {"sm80 SIMT warp tile narrower than 8 threads",
       test::changed(sm80_simt(D::f32), [](auto& c) {
         c.tile.threadblock_shape = {8, 8, 8};
         c.tile.warp_count = {1, 2, 1};
       }),
       {"SIMT warp tile 8x4 does not spread over 4x8 threads"}},
      {"sm80 SIMT tile K of one padding element",
       test::changed(sm80_simt(D::f32), [](auto& c) {
         c.tile.threadblock_shape = {128, 128, 32};
         c.tile.stages = 3;
       }),
       {"SIMT tile K 32 pads shared memory by 1 elements", "lane vector (A 4, B 4)"}},
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

// The rules' arithmetic, public as it is, refuses a tile or alignments it would divide by zero with (SIGFPE before).
TEST(CatalogRules, ArithmeticOnAnEmptyTileIsRefused) {
  const GemmConfig empty = test::changed(sm90_coop(), [](auto& c) { c.tile.threadblock_shape = {0, 0, 0}; });
  const GemmConfig unaligned = test::changed(sm90_coop(), [](auto& c) { c.alignment_b = 0; });
  for (const GemmConfig& c : {empty, unaligned}) {
    EXPECT_THROW((void)library::resolved_stages(c), InvalidArgumentError);
    EXPECT_THROW((void)library::shared_memory_bytes(c), InvalidArgumentError);
    EXPECT_THROW((void)select::estimated_time_us(c, GemmShape{64, 64, 64}, 1, true, 132), InvalidArgumentError);
  }
  EXPECT_TRUE(test::contains(test::message_of<InvalidArgumentError>([&] { library::check_extents(empty); }),
                             "tile 0x0x0: each extent must be 1 to 1024"));
}

TEST(CatalogRules, Sm90GemmsReadCOfTheirInputTypeBesideAnF32D) {
  const GemmConfig c = test::changed(sm90_coop(), [](auto& c) { c.element_d = DataType::f32; });
  EXPECT_FALSE(library::why_invalid(c).has_value()) << library::why_invalid(c).value_or("");
  EXPECT_TRUE(library::parse_gemm_name(c.name()) == c) << c.name();  // the name carries both types
  // The catalog lists C and D of one type; the row of D's type reading C of the inputs' is derived, once.
  library::GemmFilter f;
  f.arch = 90, f.kind = KernelKind::Gemm, f.element_a = DataType::f16, f.element_d = DataType::f32;
  const auto rows = library::find_gemms(f);
  ASSERT_FALSE(rows.empty());
  for (const auto* row : rows) EXPECT_EQ(row->element_c, DataType::f32) << row->name();
  const GemmConfig* derived = library::reading_c_as(*rows.front(), DataType::f16);
  ASSERT_NE(derived, nullptr);
  EXPECT_EQ(derived->element_c, DataType::f16);
  EXPECT_EQ(derived->alignment_c, 8);
  EXPECT_EQ(derived, library::reading_c_as(*rows.front(), DataType::f16));
  EXPECT_EQ(library::reading_c_as(*rows.front(), DataType::bf16), nullptr);  // not the inputs' type
}

// SM90 fp8 GEMMs read C of any of their outputs' types beside any D, as the CUTLASS Python interface's fp8
// catalog builds them (its fp8 notebook: C f32 beside D e4m3); not parallel split-K (its reduction reads C as
// D), nor a C type no fp8 kernel writes.
TEST(CatalogRules, Sm90Fp8GemmsReadCOfAnyOutputTypeBesideAnyD) {
  for (DataType c_type : {DataType::f32, DataType::bf16, DataType::f16, DataType::e4m3, DataType::e5m2})
    for (DataType d_type : {DataType::f32, DataType::bf16, DataType::e4m3}) {
      GemmConfig c = sm90_fp8(DataType::e4m3, DataType::e4m3, d_type);
      c.element_c = c_type;
      c.alignment_c = 128 / size_bits(c_type);
      EXPECT_FALSE(library::why_invalid(c).has_value()) << c.name() << ": " << library::why_invalid(c).value_or("");
      EXPECT_TRUE(library::parse_gemm_name(c.name()) == c) << c.name();
      c.parallel_split_k = true;
      EXPECT_TRUE(c_type == d_type || library::why_invalid(c).has_value()) << c.name();
    }
  GemmConfig s8 = sm90_fp8(DataType::e4m3, DataType::e4m3, DataType::bf16);
  s8.element_c = DataType::s8;
  s8.alignment_c = 16;
  EXPECT_TRUE(library::why_invalid(s8).has_value());
}

// Promoted fp8 tiles of 2 x 128 accumulator registers a thread spill (ptxas) and run at a third of the speed:
// a pinned one builds, as the CUTLASS Python interface's fp8 tests pin 128x128 ping-pong, but the catalog
// (what the selection ranks) lists none. 2 x 64 (128x128 cooperative) and fast accumulation do not spill.
TEST(CatalogRules, SpillingFp8TilesBuildButAreNoCatalogRows) {
  using KS = KernelSchedule;
  using ES = EpilogueSchedule;
  const GemmConfig promoted = test::changed(sm90_fp8(DataType::e4m3, DataType::e4m3, DataType::e4m3), [](auto& c) {
    c.tile.threadblock_shape = {128, 128, 128};
    c.tile.cluster_shape = {2, 1, 1};
  });
  const GemmConfig cooperative = test::changed(promoted, [](auto& c) {
    c.tile.kernel_schedule = KS::TmaWarpSpecializedCooperative;
    c.tile.epilogue_schedule = ES::TmaWarpSpecializedCooperative;
  });
  const GemmConfig wide = test::changed(cooperative, [](auto& c) { c.tile.threadblock_shape = {256, 128, 128}; });
  const GemmConfig fast = test::changed(promoted, [](auto& c) { c.math = MathOperation::MultiplyAddFastAccum; });
  std::set<std::string> names;
  for (const auto* c : library::find_gemms({})) names.insert(c->name());
  for (const GemmConfig& c : {promoted, wide}) {
    EXPECT_EQ(library::why_invalid(c), std::nullopt) << c.name() << ": " << library::why_invalid(c).value_or("");
    EXPECT_TRUE(library::spills_registers(c)) << c.name();
    EXPECT_EQ(names.count(c.name()), 0u) << c.name() << " is a catalog row";
    EXPECT_TRUE(library::parse_gemm_name(c.name()) == c) << c.name();
  }
  for (const GemmConfig& c : {cooperative, fast}) {
    EXPECT_EQ(library::why_invalid(c), std::nullopt) << c.name() << ": " << library::why_invalid(c).value_or("");
    EXPECT_FALSE(library::spills_registers(c)) << c.name();
  }
  EXPECT_FALSE(library::spills_registers(sm90_coop()));
}

// SM80 kernels are built for the plan's GPU and have its shared memory: a tile within an A100's 163 KB runs
// on Hopper (227 KB) but not on the 99 KB of an 8.6, 8.9 or 12.x GPU, whose plans leave it out.
TEST(CatalogRules, Sm80KernelsHaveTheirGpusSharedMemory) {
  const GemmConfig big = test::changed(sm80_f16(), [](auto& c) {
    c.tile.threadblock_shape = {128, 256, 64};
    c.tile.warp_count = {2, 4, 1};
    c.tile.stages = 3;  // 48 KB a stage
  });
  ASSERT_GT(library::shared_memory_bytes(big), 99 * 1024);
  for (int cc : {0, 80, 87, 90}) EXPECT_EQ(library::why_invalid(big, cc), std::nullopt) << cc;
  for (int cc : {86, 89, 120}) {
    const std::string why = library::why_invalid(big, cc).value_or("accepted");
    EXPECT_TRUE(test::contains(why, "exceed 101376 bytes of shared memory (a compute capability " +
                                        std::to_string(cc / 10) + "." + std::to_string(cc % 10) + " GPU's)"))
        << why;
  }
}

TEST(CatalogRules, NoRefusedConfigurationIsInTheCatalog) {
  std::set<std::string> names;
  for (const auto* c : library::find_gemms({})) names.insert(c->name());
  for (const auto& r : refusals()) {
    // Names encode what the family uses (SM80 names carry no cluster): a refused configuration's
    // name is refused too, unless the refused part is not in the name (then it names another kernel).
    try {
      if (!(library::parse_gemm_name(r.config.name()).tile == r.config.tile)) continue;
      ADD_FAILURE() << r.what << ": the name of a refused configuration was accepted";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot be built"), std::string::npos) << e.what();
    }
    EXPECT_EQ(names.count(r.config.name()), 0u) << r.what;
  }
}

}  // namespace
}  // namespace cuforge
