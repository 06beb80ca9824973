#include "simt_fallback.hpp"

#include <fmt/format.h>

#include "cuforge/library/catalog.hpp"

namespace cuforge::op {

std::optional<std::string> simt_fallback_warning(const select::GemmKernels& kernels,
                                                 const select::GemmSettings& settings, KernelKind kind,
                                                 Layout layout_a, Layout layout_b) {
  const library::GemmConfig& first = *kernels.family.front();  // a plan's family is never empty
  if (settings.opclass || first.opclass != OpcodeClass::Simt) return std::nullopt;
  library::GemmFilter tensor_op;
  tensor_op.kind = kind;
  tensor_op.arch = first.arch;
  tensor_op.element_a = first.element_a;
  tensor_op.element_b = first.element_b;
  tensor_op.element_accumulator = first.element_accumulator;
  tensor_op.opclass = OpcodeClass::TensorOp;
  if (library::find_gemms(tensor_op).empty()) return std::nullopt;
  // The kernels' layouts (a column-major D runs the transposed problem), with any math operation.
  tensor_op.layout_a = first.layout_a;
  tensor_op.layout_b = first.layout_b;
  const bool layouts = library::find_gemms(tensor_op).empty();
  return fmt::format("no tensor-op kernel computes {} x {} {}: this plan runs SIMT kernels on the CUDA cores, far "
                     "slower (opclass=Simt asks for them; `cuforge list --opclass tensorop` names what the tensor "
                     "cores take)",
                     to_string(first.element_a), to_string(first.element_b),
                     layouts ? fmt::format("with A {}- and B {}-major", to_string(layout_a), to_string(layout_b))
                             : fmt::format("with math {}", settings.math ? to_string(*settings.math) : "default"));
}

}  // namespace cuforge::op
