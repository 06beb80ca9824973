// Named sets of plans and problem sizes whose kernels a machine can build once, ahead of use
// (`cuforge build --preset NAME`): the kernels the selection picks for each, so that the first run
// of such a problem finds its kernel in the cache.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cuforge/core/kernel_source.hpp"

namespace cuforge::op {

struct Preset {
  std::string_view name;
  std::string_view description;
};

const std::vector<Preset>& presets();

// One source per distinct kernel the preset's problems select on a GPU of compute capability `cc`.
// Throws InvalidArgumentError naming the presets there are when `name` is not one.
std::vector<KernelSource> preset_kernels(std::string_view name, int cc);

}  // namespace cuforge::op
