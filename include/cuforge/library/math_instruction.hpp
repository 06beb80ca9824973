// The math instructions GEMM kernels are built from, per architecture family: what one tensor-core
// MMA (or one SIMT fused multiply-add) takes and accumulates in, its shape, and the types the
// kernels built on it write. The catalog enumerates these; the validity rules refuse anything else.
#pragma once

#include <array>
#include <vector>

#include "cuforge/core/types.hpp"

namespace cuforge::library {

struct MathInstruction {
  Arch arch;
  OpcodeClass opclass;
  MathOperation math;
  DataType a, b, accumulator;
  // One instruction, M x N x K: SM80 mma.sync (1x1x1 for SIMT); SM90 the smallest wgmma of the
  // family (64 x 8 x K: the collective builder picks N from the tile).
  std::array<int, 3> shape;
  std::vector<DataType> outputs;  // C and D share the type

  bool operator==(const MathInstruction& o) const {
    return arch == o.arch && opclass == o.opclass && math == o.math && a == o.a && b == o.b &&
           accumulator == o.accumulator && shape == o.shape && outputs == o.outputs;
  }
};

const std::vector<MathInstruction>& math_instructions();

// The instruction of a family that multiplies a x b into the accumulator type, or nullptr when the
// family has none.
const MathInstruction* find_math_instruction(Arch arch, OpcodeClass opclass, MathOperation math, DataType a,
                                             DataType b, DataType accumulator);

// Math a plan uses only when asked for it (settings.math): 3xTF32 (slower, near-f32 accuracy) and
// fp8 fast accumulation (faster, fewer accumulator bits). A plan that names no math operation takes
// its family's plain multiply-add (saturating for int8 on SM80).
bool opt_in(MathOperation math);

}  // namespace cuforge::library
