// Why a plan runs SIMT kernels it did not ask for: as in the CUTLASS Python interface, types whose tensor-op
// kernels do not take the plan's layouts or math operation run on the CUDA cores, far slower, and are told so.
#pragma once

#include <optional>
#include <string>

#include "cuforge/core/types.hpp"
#include "cuforge/select/gemm_choice.hpp"

namespace cuforge::op {

// The warning for a plan of `kind` whose kernel set `kernels` (under `settings`) fell back to SIMT kernels
// where the tensor cores have kernels for its types; nullopt where it asked for its opcode class, runs on the
// tensor cores, or has no tensor-op kernel at all (f64 convolutions). `layout_a`, `layout_b`: the plan's own.
std::optional<std::string> simt_fallback_warning(const select::GemmKernels& kernels,
                                                 const select::GemmSettings& settings, KernelKind kind,
                                                 Layout layout_a, Layout layout_b);

}  // namespace cuforge::op
