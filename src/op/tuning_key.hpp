// The tuning record's key for a plan's problem class (compile/tuning_record.hpp): the device, toolkit and
// CUTLASS, the plan's kernel family and settings, and the class itself, spelled so that a person reading
// `cuforge cache tuning` can tell them apart.
#pragma once

#include <string>

#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/core/types.hpp"
#include "cuforge/select/gemm_settings.hpp"

namespace cuforge::op {

// The class (also how log messages name it).
std::string shape_key(const GemmShape& shape);

// The whole key: the device `device`'s, the toolkit's and CUTLASS's identity, then `kind`'s kernels of
// `arch` on `types` (in the kernel's terms) under `settings`, then shape_key(shape).
std::string tuning_key(int device, KernelKind kind, int arch, const GemmTypes& types,
                       const select::GemmSettings& settings, const GemmShape& shape);

}  // namespace cuforge::op
