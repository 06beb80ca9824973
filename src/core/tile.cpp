#include "cuforge/core/tile.hpp"

#include <fmt/format.h>

namespace cuforge {

std::string TileDescription::describe() const {
  const auto& t = threadblock_shape;
  if (kernel_schedule == KernelSchedule::Multistage)
    return fmt::format("{}x{}x{} tile, {}x{}x{} warps, {} stages, {}", t[0], t[1], t[2], warp_count[0],
                       warp_count[1], warp_count[2], stages, to_string(tile_scheduler));
  const auto& c = cluster_shape;
  return fmt::format("{}x{}x{} tile, {}x{}x{} cluster, {} stages, {} kernel, {} epilogue, {}{}", t[0], t[1],
                     t[2], c[0], c[1], c[2], stages == 0 ? std::string("auto") : std::to_string(stages),
                     to_string(kernel_schedule), to_string(epilogue_schedule), to_string(tile_scheduler),
                     swap_ab ? ", swapped (D^T = B^T A^T)" : "");
}

}  // namespace cuforge
