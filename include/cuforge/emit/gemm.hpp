// Emission: one GEMM configuration becomes one complete CUDA translation unit, the CUTLASS
// instantiation followed by the C ABI entry points of cuforge/abi.h.
#pragma once

#include <string>
#include <string_view>

#include "cuforge/core/kernel_source.hpp"
#include "cuforge/library/gemm_config.hpp"

namespace cuforge::emit {

// The translation unit of a configuration the catalog's rules accept (library::why_invalid).
std::string gemm_source(const library::GemmConfig& config);

// The kernel as the compiler takes it, for a GPU of compute capability `cc`: SM90 kernels always
// target sm_90a; SM80 kernels are built into the SASS of `cc` (they run on 8.0 and later). Throws
// InvalidArgumentError where `cc` cannot run it (library::why_invalid: an SM80 kernel of more shared
// memory than that GPU has).
KernelSource gemm_kernel(const library::GemmConfig& config, int cc);

// The text of cuforge/abi.h, which every emitted source includes.
std::string_view abi_header();

}  // namespace cuforge::emit
