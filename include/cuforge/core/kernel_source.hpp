// A kernel as the compiler sees it: a complete translation unit, the headers it includes beside
// the CUTLASS tree, and the GPU it is built for. emit/ writes it; compile/ turns it into a library.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cuforge/core/types.hpp"

namespace cuforge {

struct KernelSource {
  std::string name;
  std::string source;
  // (path relative to an include directory, text): e.g. {"cuforge/abi.h", ...}.
  std::vector<std::pair<std::string, std::string>> headers;
  Arch family = 90;    // the CUTLASS family the source is written for (80: 2.x, 90: 3.x)
  int target_cc = 90;  // the GPU whose SASS is built
};

}  // namespace cuforge
