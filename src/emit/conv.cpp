#include "conv.hpp"

#include "embedded.hpp"
#include "gemm_holes.hpp"

namespace cuforge::emit {
namespace {

struct ConvKindNames {
  const char* header;  // cutlass/conv/kernel/default_conv2d_<header>.h
  const char* cutlass;  // DefaultConv2d<cutlass>
  const char* words;
};

ConvKindNames names_of(KernelKind kind) {
  switch (kind) {
    case KernelKind::Conv2dFprop: return {"fprop", "Fprop", "forward propagation (fprop)"};
    case KernelKind::Conv2dDgrad: return {"dgrad", "Dgrad", "the input's gradient (dgrad, strided)"};
    default: return {"wgrad", "Wgrad", "the filter's gradient (wgrad)"};
  }
}

}  // namespace

std::string conv_source(const library::GemmConfig& c) {
  Holes h = sm80_holes(c, c.name());
  for (const char* unused : {"layout_a", "layout_b", "layout_c"}) h.erase(unused);  // the tensors are NHWC
  const ConvKindNames names = names_of(c.kind);
  h["conv_kind"] = names.header;
  h["conv_kind_class"] = names.cutlass;
  h["conv_kind_name"] = names.words;
  // Strided dgrad maps each CTA to one of the stride's phases with its own swizzle.
  h["swizzle"] = c.kind == KernelKind::Conv2dDgrad
                     ? "cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<1>"
                     : std::string(sm80_swizzle(c.tile.tile_scheduler));
  h["launch"] = std::string(embedded::sm80_launch);
  return render(embedded::conv_sm80, h);
}

}  // namespace cuforge::emit
