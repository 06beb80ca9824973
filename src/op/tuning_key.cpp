#include "tuning_key.hpp"

#include <fmt/format.h>

#include "cuforge/compile/toolchain.hpp"
#include "cuforge/runtime/device.hpp"

namespace cuforge::op {

std::string shape_key(const GemmShape& s) {
  return fmt::format("{}x{}x{} batch {} align {}/{}/{}{}{}{}{}{}{}{}{}{}", s.m, s.n, s.k, s.batch, s.align_a,
                     s.align_b, s.align_c, s.bias ? " bias" : "", s.ragged ? " ragged" : "",
                     s.conv.sm80_only ? " sm80-only" : "", s.conv.unsplittable ? " unsplittable" : "",
                     s.conv.k_run ? fmt::format(" k-runs of {}", s.conv.k_run) : "",
                     s.conv.im2col_reuse > 1 ? fmt::format(" im2col reuse {}", s.conv.im2col_reuse) : "",
                     s.conv.pointwise ? " pointwise" : "",
                     s.conv.images ? fmt::format(" {} images, n-runs of {}", s.conv.images, s.conv.n_run) : "",
                     s.conv.splits ? fmt::format(" {} split-K x{}", s.conv.parallel_splits ? "parallel" : "serial",
                                                 s.conv.splits)
                                   : "");
}

std::string tuning_key(int device, KernelKind kind, int arch, const GemmTypes& t, const select::GemmSettings& s,
                       const GemmShape& shape) {
  if (auto why = why_invalid(shape)) throw InvalidArgumentError("problem class: " + *why);
  const auto& info = runtime::device_info(device);
  const auto& tc = compile::Toolchain::get();
  return fmt::format("{} ({} SMs), CUDA {}, CUTLASS {} | {} sm{} {} {} {} {} acc {} {}{}{} | {} {} {} x{} {}{}{}{}{}{} | {}",
                     info.name, info.sm_count, tc.cuda_version, tc.cutlass_version, to_string(kind), arch,
                     to_string(t.element_a), to_string(t.element_b), to_string(t.element_c), to_string(t.element_d),
                     to_string(t.accumulator()), to_string(t.layout_a), to_string(t.layout_b), to_string(t.layout_c),
                     to_string(s.activation), s.activation_argument, to_string(s.decomposition), s.splits,
                     s.deterministic ? "k-order" : "arrival-order", s.tile ? " tile " + s.tile->describe() : "",
                     s.tile_scheduler ? fmt::format(" scheduler {}", to_string(*s.tile_scheduler)) : "",
                     s.opclass ? fmt::format(" {}", to_string(*s.opclass)) : "",
                     s.math ? fmt::format(" {}", to_string(*s.math)) : "",
                     s.iterator_algorithm ? fmt::format(" {} iterators", to_string(*s.iterator_algorithm)) : "",
                     shape_key(shape));
}

}  // namespace cuforge::op
