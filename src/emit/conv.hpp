// Emission of convolution kernels (the Conv2d kinds): CUTLASS 2.x ImplicitGemmConvolution over
// NHWC tensors with the convolution C ABI.
#pragma once

#include <string>

#include "cuforge/library/gemm_config.hpp"

namespace cuforge::emit {

std::string conv_source(const library::GemmConfig& config);

}  // namespace cuforge::emit
