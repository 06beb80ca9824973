// Emission of convolution kernels (the Conv2d kinds) over NHWC tensors with the convolution C ABI:
// CUTLASS 2.x ImplicitGemmConvolution (SM80) and CUTLASS 3.x ConvUniversal (SM90), and the ABI of
// the GEMM kernels that run 1x1 convolutions.
#pragma once

#include <string>

#include "cuforge/library/gemm_config.hpp"

namespace cuforge::emit {

std::string conv_source(const library::GemmConfig& config);

// The convolution ABI's entries of a pointwise kernel (GemmConfig::pointwise), to follow its GEMM
// kernel's source: each maps the convolution's NHWC tensors to the GEMM's matrices and calls the
// GEMM entry.
std::string pointwise_conv_entry(const library::GemmConfig& config);

}  // namespace cuforge::emit
