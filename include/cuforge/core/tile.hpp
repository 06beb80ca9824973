// How one kernel tiles the problem and schedules its work: the knobs a user may pin on a plan.
#pragma once

#include <array>
#include <string>

#include "cuforge/core/types.hpp"

namespace cuforge {

struct TileDescription {
  std::array<int, 3> threadblock_shape{128, 128, 64};  // M, N, K of one CTA's tile
  std::array<int, 3> warp_count{2, 2, 1};              // SM80: warps along M, N, K
  int stages = 0;                                      // 0: as many as shared memory holds (SM90)
  std::array<int, 3> cluster_shape{1, 1, 1};           // SM90: CTAs per cluster along M, N, K
  // Auto: each kernel's own (the family's mainloop; SM90 cooperative or ping-pong), when pinned.
  KernelSchedule kernel_schedule = KernelSchedule::Auto;
  EpilogueSchedule epilogue_schedule = EpilogueSchedule::Auto;
  TileScheduler tile_scheduler = TileScheduler::Default;
  // SM90 GEMMs of small M (decode-style): the kernel computes the transposed problem D^T = B^T A^T,
  // so the tile's M runs along the problem's N and the tile's N (wgmma's N, 16 wide and up) along
  // the problem's M, instead of a 64-row tile filled mostly with rows past M.
  bool swap_ab = false;

  bool operator==(const TileDescription& o) const {
    return threadblock_shape == o.threadblock_shape && warp_count == o.warp_count &&
           stages == o.stages && cluster_shape == o.cluster_shape &&
           kernel_schedule == o.kernel_schedule && epilogue_schedule == o.epilogue_schedule &&
           tile_scheduler == o.tile_scheduler && swap_ab == o.swap_ab;
  }
  std::string describe() const;
};

}  // namespace cuforge
