// Emission of grouped GEMM kernels (KernelKind::Grouped): the family's pointer-array (SM90) or
// GemmGrouped (SM80) instantiation, then the grouped C ABI with its prepare kernel.
#pragma once

#include <string>

#include "cuforge/library/gemm_config.hpp"

namespace cuforge::emit {

std::string grouped_gemm_source(const library::GemmConfig& config);

}  // namespace cuforge::emit
