// The math instructions GEMM kernels are built from, per architecture family: what one tensor-core
// MMA (or one SIMT fused multiply-add) takes and accumulates in, its shape, and the types the
// kernels built on it write. The catalog enumerates these; the validity rules refuse anything else.
#pragma once

#include <array>
#include <vector>

#include "cuforge/core/types.hpp"

namespace cuforge::library {

struct GemmConfig;

struct MathInstruction {
  Arch arch;
  OpcodeClass opclass;
  MathOperation math;
  DataType a, b, accumulator;
  // One instruction, M x N x K: SM80 mma.sync (1x1x1 for SIMT); SM90 the smallest wgmma of the
  // family (64 x 8 x K: the collective builder picks N from the tile).
  std::array<int, 3> shape;
  std::vector<DataType> outputs;  // C and D share the type
};

const std::vector<MathInstruction>& math_instructions();

// The instruction a configuration computes with (its arch, opclass, math and A/B/accumulator
// types), or nullptr when its family has none.
const MathInstruction* math_instruction(const GemmConfig& config);

// The type the epilogue computes activation(alpha * acc + beta * C) in: s32 for s32 outputs (exact
// for any K, as CUTLASS's own integer kernels do; alpha and beta are then integers), else f32 on
// SM90 and the accumulator's type on SM80 (f64 for f64, f16 for f16 accumulation).
DataType epilogue_compute_type(const GemmConfig& config);

}  // namespace cuforge::library
