// What the nvcc tests share (test_compile.cpp, test_toolchain.cpp).
#pragma once

#include <string>

#include "cuforge/core/kernel_source.hpp"
#include "cuforge/emit/gemm.hpp"

namespace cuforge::test {

// A translation unit that nvcc builds in a couple of seconds (no CUTLASS): for cache behaviour.
inline KernelSource tiny_source(const std::string& tag = "") {
  KernelSource k;
  k.name = "cuforge_test_tiny" + tag;
  k.source = "// " + tag + "\n#include <cuforge/abi.h>\nextern \"C\" CUFORGE_EXPORT int cuforge_abi_version(void) { return CUFORGE_ABI_VERSION; }\n"
             "extern \"C\" CUFORGE_EXPORT const char* cuforge_kernel_name(void) { return \"" + k.name + "\"; }\n";
  k.headers = {{"cuforge/abi.h", std::string(emit::abi_header())}};
  k.family = 80;
  k.target_cc = 80;
  return k;
}

}  // namespace cuforge::test
