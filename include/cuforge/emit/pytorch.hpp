// Export: a kernel as PyTorch operators. The binding is one C++ file that registers
// torch.ops.<module>.run (and, for grouped kernels, run_offsets): a CUDA kernel that checks every
// argument (naming it), allocates the output, takes its workspace from torch's caching allocator
// and calls the kernel library's C ABI on torch's current stream; and a Meta kernel, so that
// torch.compile traces the operator and CUDA graphs capture it. Importing the built module binds
// the operators as its attributes. It builds with torch.utils.cpp_extension, beside the kernel's
// own source or linked to its library.
#pragma once

#include <string>

#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/library/gemm_config.hpp"

namespace cuforge::emit {

struct TorchExport {
  std::string module;          // the Python module and torch.library namespace: an identifier
  library::GemmConfig config;  // the kernel, in its own terms
  // GEMM: the plan's D is column-major, so the kernel computes D^T = B^T A^T; the operator still
  // takes A (M x K) and B (K x N) and returns a column-major D (M x N).
  bool transposed = false;
  GemmLaunch launch;  // what every run passes: the activation's argument, splits, decomposition
};

// The binding's C++ source. Throws InvalidArgumentError for a module name that is not an
// identifier, or a kernel it cannot export (a transposed grouped or bias kernel).
std::string pytorch_binding(const TorchExport& e);

}  // namespace cuforge::emit
