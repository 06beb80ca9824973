// Emission: one GEMM configuration becomes one complete CUDA translation unit, the CUTLASS
// instantiation followed by the C ABI entry points of cuforge/abi.h.
#pragma once

#include <string>
#include <string_view>

#include "cuforge/library/gemm_config.hpp"

namespace cuforge::emit {

std::string emit_gemm(const library::GemmConfig& config);

// The text of cuforge/abi.h, which every emitted source includes.
std::string_view abi_header();

}  // namespace cuforge::emit
