#include "cuforge/library/math_instruction.hpp"

namespace cuforge::library {
namespace {

using D = DataType;
constexpr auto kTensorOp = OpcodeClass::TensorOp;
constexpr auto kSimt = OpcodeClass::Simt;
constexpr auto kMma = MathOperation::MultiplyAdd;
constexpr auto kFastAccum = MathOperation::MultiplyAddFastAccum;
constexpr auto kMixed = MathOperation::MultiplyAddMixedInputUpcast;
// fp8 GEMMs write 16-bit or f32 D, or fp8 D (rounded to nearest even, saturated to the type's finite range).
const std::vector<DataType> kFp8Outputs = {D::bf16, D::f16, D::f32, D::e4m3, D::e5m2};

// What CUTLASS's generator builds for SM90 (wgmma) and SM80 (mma.sync, and SIMT on the CUDA
// cores). f32 operands run as TF32 on the tensor cores.
const std::vector<MathInstruction> kInstructions = {
    // SM90: 16-bit, TF32 (and 3xTF32), int8 and fp8 wgmma.
    {90, kTensorOp, kMma, D::f16, D::f16, D::f32, {64, 8, 16}, {D::f16, D::f32}},
    {90, kTensorOp, kMma, D::f16, D::f16, D::f16, {64, 8, 16}, {D::f16}},
    {90, kTensorOp, kMma, D::bf16, D::bf16, D::f32, {64, 8, 16}, {D::bf16, D::f32}},
    {90, kTensorOp, kMma, D::f32, D::f32, D::f32, {64, 8, 8}, {D::f32}},
    // 3xTF32: the TF32 wgmma over operands split into big and small halves (library::staged_k_major).
    {90, kTensorOp, MathOperation::MultiplyAddFastF32, D::f32, D::f32, D::f32, {64, 8, 8}, {D::f32}},
    {90, kTensorOp, kMma, D::s8, D::s8, D::s32, {64, 8, 32}, {D::s32, D::s8}},
    {90, kTensorOp, kMma, D::e4m3, D::e4m3, D::f32, {64, 8, 32}, kFp8Outputs},
    {90, kTensorOp, kMma, D::e4m3, D::e5m2, D::f32, {64, 8, 32}, kFp8Outputs},
    {90, kTensorOp, kMma, D::e5m2, D::e4m3, D::f32, {64, 8, 32}, kFp8Outputs},
    {90, kTensorOp, kMma, D::e5m2, D::e5m2, D::f32, {64, 8, 32}, kFp8Outputs},
    // fp8 with fast accumulation: faster, fewer accumulator bits over long K (a plan asks for it).
    {90, kTensorOp, kFastAccum, D::e4m3, D::e4m3, D::f32, {64, 8, 32}, kFp8Outputs},
    {90, kTensorOp, kFastAccum, D::e4m3, D::e5m2, D::f32, {64, 8, 32}, kFp8Outputs},
    {90, kTensorOp, kFastAccum, D::e5m2, D::e4m3, D::f32, {64, 8, 32}, kFp8Outputs},
    {90, kTensorOp, kFastAccum, D::e5m2, D::e5m2, D::f32, {64, 8, 32}, kFp8Outputs},
    // SM80: 16-bit, TF32 (and 3xTF32, near-f32 accuracy from TF32 tensor cores), f64 DMMA,
    // saturating int8 mma.sync; SIMT f32, f64 and f16 (into f32 or f16) fused multiply-adds, int8's
    // integer multiply-adds into s32 (wrapping, as CUTLASS's SIMT int8 kernels), and fp8's in f32.
    {80, kTensorOp, kMma, D::f16, D::f16, D::f32, {16, 8, 16}, {D::f16, D::f32}},
    {80, kTensorOp, kMma, D::f16, D::f16, D::f16, {16, 8, 16}, {D::f16, D::f32}},
    {80, kTensorOp, kMma, D::bf16, D::bf16, D::f32, {16, 8, 16}, {D::bf16, D::f32}},
    {80, kTensorOp, kMma, D::f32, D::f32, D::f32, {16, 8, 8}, {D::f32}},
    {80, kTensorOp, MathOperation::MultiplyAddFastF32, D::f32, D::f32, D::f32, {16, 8, 8}, {D::f32}},
    {80, kTensorOp, kMma, D::f64, D::f64, D::f64, {8, 8, 4}, {D::f64}},
    {80, kTensorOp, MathOperation::MultiplyAddSaturate, D::s8, D::s8, D::s32, {16, 8, 32}, {D::s32, D::s8}},
    // Mixed inputs: s8 with f16 or bf16, either way round, the s8 operand converted in registers (weight-only
    // int8 GEMMs), into the 16-bit type or f32.
    {80, kTensorOp, kMixed, D::s8, D::f16, D::f32, {16, 8, 16}, {D::f16, D::f32}},
    {80, kTensorOp, kMixed, D::f16, D::s8, D::f32, {16, 8, 16}, {D::f16, D::f32}},
    {80, kTensorOp, kMixed, D::s8, D::bf16, D::f32, {16, 8, 16}, {D::bf16, D::f32}},
    {80, kTensorOp, kMixed, D::bf16, D::s8, D::f32, {16, 8, 16}, {D::bf16, D::f32}},
    {80, kSimt, kMma, D::f32, D::f32, D::f32, {1, 1, 1}, {D::f32}},
    {80, kSimt, kMma, D::f64, D::f64, D::f64, {1, 1, 1}, {D::f64}},
    {80, kSimt, kMma, D::f16, D::f16, D::f32, {1, 1, 1}, {D::f16, D::f32}},
    {80, kSimt, kMma, D::f16, D::f16, D::f16, {1, 1, 1}, {D::f16}},
    {80, kSimt, kMma, D::s8, D::s8, D::s32, {1, 1, 1}, {D::s32, D::s8}},
    // fp8 on the CUDA cores, each element converted to f32 before its multiply-add (CUTLASS's generic SIMT
    // multiply-add; the CUTLASS Python interface's SIMT e4m3 test), of one type.
    {80, kSimt, kMma, D::e4m3, D::e4m3, D::f32, {1, 1, 1}, kFp8Outputs},
    {80, kSimt, kMma, D::e5m2, D::e5m2, D::f32, {1, 1, 1}, kFp8Outputs},
};

}  // namespace

const std::vector<MathInstruction>& math_instructions() { return kInstructions; }

const MathInstruction* find_math_instruction(Arch arch, OpcodeClass opclass, MathOperation math, DataType a,
                                             DataType b, DataType accumulator) {
  for (const auto& mi : kInstructions)
    if (mi.arch == arch && mi.opclass == opclass && mi.math == math && mi.a == a && mi.b == b &&
        mi.accumulator == accumulator)
      return &mi;
  return nullptr;
}

bool opt_in(MathOperation math) {
  return math == MathOperation::MultiplyAddFastF32 || math == MathOperation::MultiplyAddFastAccum;
}

}  // namespace cuforge::library
