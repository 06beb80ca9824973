#include "conv.hpp"

#include "embedded.hpp"
#include "gemm_holes.hpp"

namespace cuforge::emit {
namespace {

struct ConvKindNames {
  const char* header;  // cutlass/conv/kernel/default_conv2d_<header>.h
  const char* cutlass;  // DefaultConv2d<cutlass>, conv::Operator::k<cutlass>
  const char* words;
};

ConvKindNames names_of(KernelKind kind) {
  switch (kind) {
    case KernelKind::Conv2dFprop: return {"fprop", "Fprop", "forward propagation (fprop)"};
    case KernelKind::Conv2dDgrad: return {"dgrad", "Dgrad", "the input's gradient (dgrad)"};
    default: return {"wgrad", "Wgrad", "the filter's gradient (wgrad)"};
  }
}

Holes kind_holes(Holes h, KernelKind kind) {
  const ConvKindNames names = names_of(kind);
  h["conv_kind_class"] = names.cutlass;
  h["conv_kind_name"] = names.words;
  return h;
}

// A parallel split-K kernel's convolution writes the slices' partial products (f32, no epilogue);
// the reduction after it applies the configuration's own epilogue.
std::string emit_sm80(const library::GemmConfig& config) {
  const library::GemmConfig c = config.parallel_split_k ? library::split_k_partials(config) : config;
  Holes h = kind_holes(sm80_holes(c, config.name()), c.kind);
  for (const char* unused : {"layout_a", "layout_b", "layout_c"}) h.erase(unused);  // the tensors are NHWC
  h["conv_kind"] = names_of(c.kind).header;
  // dgrad runs on CUTLASS's strided-dgrad kernel, which maps each CTA to one of the stride's phases
  // with its own swizzle, but writes no per-slice partials: parallel split-K (unit stride only, as
  // any split of dgrad) takes the unit-stride kernel.
  const bool strided_dgrad = c.kind == KernelKind::Conv2dDgrad && !config.parallel_split_k;
  h["stride_support"] = strided_dgrad || c.kind != KernelKind::Conv2dDgrad ? "kStrided" : "kUnity";
  h["swizzle"] = strided_dgrad ? "cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<1>"
                               : std::string(sm80_swizzle(c.tile.tile_scheduler));
  h["split_k_mode"] = config.parallel_split_k ? "kParallel" : "kSerial";
  h["iterator_algorithm"] = c.fixed_channels ? "kFixedChannels" : "kOptimized";
  h["mainloop_name"] = std::string(sm80_mainloop_name(c));
  h["launch"] = std::string(embedded::sm80_launch);
  return render(embedded::conv_sm80, h);
}

// The tensors each kind reads and writes in CUTLASS's terms (x, the filters, y) as the ABI's A, B
// and D; wgrad writes dw, which CUTLASS 3.x addresses as K x (C, S, R).
struct Sm90Tensors {
  const char *x, *filter, *y, *words;
};

Sm90Tensors tensors_of(KernelKind kind) {
  switch (kind) {
    case KernelKind::Conv2dFprop: return {"stride_a", "stride_b", "stride_d", "A, B and D"};
    case KernelKind::Conv2dDgrad: return {"stride_d", "stride_b", "stride_a", "D (dx), B and A (dy)"};
    default: return {"stride_b", "stride_d", "stride_a", "B, D (dw) and A (dy)"};
  }
}

// As on SM80, a parallel split-K kernel's convolution writes f32 partial products (no epilogue).
std::string emit_sm90(const library::GemmConfig& config) {
  const library::GemmConfig c = config.parallel_split_k ? library::split_k_partials(config) : config;
  // A bias row is one value per output channel, the same for the whole (single) batch.
  Holes h = kind_holes(sm90_holes(c, config.name(), {"p.ptr_c", "int64_t(0)"}), c.kind);
  for (const char* unused : {"layout_a", "layout_b", "mainloop_header", "kernel_schedule_name"}) h.erase(unused);
  h["stage_count"] = stage_count(c, "conv");
  h["kernel_schedule"] = "cutlass::conv::KernelImplicitTmaWarpSpecializedSm90";
  const std::string tile_n = "_" + h["tile_n"];
  h["tile_n_mode"] = c.kind == KernelKind::Conv2dWgrad ? "Shape<" + tile_n + ">" : tile_n;
  h.erase("tile_n");
  const Sm90Tensors t = tensors_of(c.kind);
  h["stride_x"] = t.x;
  h["stride_filter"] = t.filter;
  h["stride_y"] = t.y;
  h["tensors_words"] = t.words;
  if (c.kind == KernelKind::Conv2dWgrad) {
    h["layout_c"] = "cutlass::layout::TensorKCSR";
    h["output_layout_words"] = "KRSC filters (dw)";
    h["output_modes"] = "(K, (C, S, R))";
    h["output_stride"] = "cute::make_stride(s[2], cute::make_stride(cute::Int<1>{}, s[0], s[1]), cute::Int<0>{})";
  } else {
    h["layout_c"] = "LayoutTensor";
    h["output_layout_words"] = "NHWC";
    h["output_modes"] = "((W, H, N), C)";
    h["output_stride"] = "cute::make_stride(cute::make_stride(s[0], s[1], s[2]), cute::Int<1>{}, cute::Int<0>{})";
  }
  h["epilogue_arguments"] = h["epilogue_thread_arguments"];
  if (!c.bias)
    h["epilogue_arguments"] += "  args.epilogue.ptr_C = static_cast<const ElementC*>(p.ptr_c);\n"
                               "  args.epilogue.dC = output_stride(p.stride_c);";
  h.erase("epilogue_thread_arguments");
  h["launch"] = std::string(embedded::sm90_launch);
  return render(embedded::conv_sm90, h);
}

// The GEMM of a 1x1 convolution of unit stride over dense NHWC tensors (strides along W, H and N),
// per kind: its extents and the leading dimensions of A, B, C and D.
struct PointwiseGemm {
  const char *m, *n, *k, *lda, *ldb, *ldc, *ldd, *words;
};

PointwiseGemm pointwise_gemm(KernelKind kind) {
  switch (kind) {
    case KernelKind::Conv2dFprop:  // y (pixels x K) = x (pixels x C) times the KC filters, C-contiguous
      return {"pixels", "p.k", "p.c", "p.stride_a[0]", "p.stride_b[2]", "p.stride_c[0]", "p.stride_d[0]",
              "y (N·P·Q x K) = x (N·H·W x C) w (K x C)ᵀ"};
    case KernelKind::Conv2dDgrad:  // dx (pixels x C) = dy (pixels x K) times the KC filters
      return {"pixels", "p.c", "p.k", "p.stride_a[0]", "p.stride_b[2]", "p.stride_c[0]", "p.stride_d[0]",
              "dx (N·H·W x C) = dy (N·P·Q x K) w (K x C)"};
    default:  // dw (K x C) = dyᵀ (K x pixels, column-major) times x (pixels x C)
      return {"p.k", "p.c", "pixels", "p.stride_a[0]", "p.stride_b[0]", "p.stride_c[2]", "p.stride_d[2]",
              "dw (K x C) = dy (N·P·Q x K)ᵀ x (N·H·W x C)"};
  }
}

// The output a parallel split-K kernel's slices write, per kind, as the matrix its reduction sums:
// rows, columns (contiguous), which of the ABI's three strides steps a row (dense tensors: the
// columns; a bias: 0); and the tensor's channels and extents along W and H, whose dense strides
// the partial products take.
struct SplitOutput {
  const char *words, *rows, *columns, *row_stride, *channels, *extents;
};

SplitOutput split_output(KernelKind kind) {
  switch (kind) {
    case KernelKind::Conv2dFprop: return {"y (N·P·Q x K)", "p.n * p.p * p.q", "p.k", "0", "p.k", "{p.q, p.p}"};
    case KernelKind::Conv2dDgrad: return {"dx (N·H·W x C)", "p.n * p.h * p.w", "p.c", "0", "p.c", "{p.w, p.h}"};
    default: return {"dw (K x R·S·C)", "p.k", "p.r * p.s * p.c", "2", "p.c", "{p.s, p.r}"};
  }
}

// How a parallel split-K kernel launches its slices' convolution (conv_split_k_sm80/sm90.cu.in).
std::string launch_partials(const library::GemmConfig& c) {
  if (c.arch < 90) return std::string(embedded::conv_split_k_sm80);
  return render(embedded::conv_split_k_sm90, {{"slices_per_launch", std::to_string(library::kSm90ConvSlicesPerLaunch)}});
}

}  // namespace

std::string pointwise_conv_entry(const library::GemmConfig& c) {
  const PointwiseGemm g = pointwise_gemm(c.kind);
  return render(embedded::conv_pointwise, {{"m", g.m},
                                           {"n", g.n},
                                           {"k", g.k},
                                           {"lda", g.lda},
                                           {"ldb", g.ldb},
                                           {"ldc", g.ldc},
                                           {"ldd", g.ldd},
                                           {"gemm_words", g.words}});
}

std::string conv_source(const library::GemmConfig& c) {
  const std::string body = c.arch >= 90 ? emit_sm90(c) : emit_sm80(c);
  if (c.parallel_split_k) {
    const SplitOutput out = split_output(c.kind);
    return body + split_k_reduction(c) +
           render(embedded::conv_split_k, {{"name", c.name()},
                                           {"launch_partials", launch_partials(c)},
                                           {"output_words", out.words},
                                           {"output_rows", out.rows},
                                           {"output_columns", out.columns},
                                           {"output_row_stride", out.row_stride},
                                           {"output_channels", out.channels},
                                           {"output_extents", out.extents}});
  }
  return body + render(embedded::conv_entry, {{"name", c.name()}});
}

}  // namespace cuforge::emit
