// Emission of convolution kernels (the Conv2d kinds) over NHWC tensors with the convolution C ABI:
// CUTLASS 2.x ImplicitGemmConvolution (SM80) and CUTLASS 3.x ConvUniversal (SM90).
#pragma once

#include <string>

#include "cuforge/library/gemm_config.hpp"

namespace cuforge::emit {

std::string conv_source(const library::GemmConfig& config);

}  // namespace cuforge::emit
