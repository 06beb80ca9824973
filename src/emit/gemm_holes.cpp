#include "gemm_holes.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "embedded.hpp"

namespace cuforge::emit {
namespace {

std::string cutlass_layout(Layout l) {
  return l == Layout::RowMajor ? "cutlass::layout::RowMajor" : "cutlass::layout::ColumnMajor";
}

}  // namespace

// CUTLASS's functor (cutlass/epilogue/thread/activation.h) for each activation.
std::string_view cutlass_activation(Activation a) {
  switch (a) {
    case Activation::identity: return "Identity";
    case Activation::relu: return "ReLu";
    case Activation::leaky_relu: return "LeakyReLU";
    case Activation::tanh: return "Tanh";
    case Activation::sigmoid: return "Sigmoid";
    case Activation::silu: return "SiLu";
    case Activation::hardswish: return "HardSwish";
    case Activation::gelu: return "GELU";
  }
  return "?";
}

std::string epilogue_formula(const library::GemmConfig& c) {
  std::string affine = c.bias ? "alpha * A @ B + beta * bias (C, one row broadcast over M)"
                              : "alpha * A @ B + beta * C";
  return c.activation == Activation::identity ? affine : fmt::format("{}({})", to_string(c.activation), affine);
}

// The statement that passes leaky_relu's slope to a 2.x epilogue functor's parameters `epilogue`.
std::string leaky_relu_argument(const library::GemmConfig& c, std::string_view compute_type) {
  return c.activation == Activation::leaky_relu
             ? fmt::format("  epilogue.leaky_alpha = {}(p.activation_argument);", compute_type)
             : "";
}

// CUTLASS 2.x's threadblock swizzle for each tile scheduler.
std::string_view sm80_swizzle(TileScheduler s) {
  switch (s) {
    case TileScheduler::Default: return "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>";
    case TileScheduler::Identity1: return "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>";
    case TileScheduler::Identity2: return "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<2>";
    case TileScheduler::Identity4: return "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<4>";
    case TileScheduler::Horizontal: return "cutlass::gemm::threadblock::GemmHorizontalThreadblockSwizzle";
    case TileScheduler::StreamK: return "cutlass::gemm::threadblock::ThreadblockSwizzleStreamK";
  }
  return "?";
}

namespace {

// Sigmoid (and SiLU, x * sigmoid(x)) as 0.5 * tanh(x / 2) + 0.5: one tanh.approx instruction
// instead of an exponential and a full-precision division, its error (about 2^-11) below the
// rounding of a 16-bit output. Wider outputs keep the exact formula.
std::string defines(const library::GemmConfig& c) {
  const bool sigmoid = c.activation == Activation::sigmoid || c.activation == Activation::silu;
  return sigmoid && size_bits(c.element_d) <= 16 ? "#define CUTLASS_USE_TANH_FOR_SIGMOID 1\n" : "";
}

// SM90 epilogues through the collective builder: CUTLASS's fusion operations for a matrix C, and
// an epilogue visitor tree, activation(beta * X + alpha * acc), where X is a bias row (no C tile is
// loaded; the row is broadcast in registers) or where alpha is a product of scalars (fp8 scales;
// CUTLASS skips loading C while beta is 0, as for its own linear combination).
constexpr std::string_view kSm90TreeFusion = R"(// ${summary}
using ElementSource = ${element_source};
namespace fusion = cutlass::epilogue::fusion;
constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;
using Fusion = fusion::Sm90EVT<
    fusion::Sm90Compute<cutlass::epilogue::thread::${activation}, ElementD, ElementCompute, kRound>,  // activation(...)
    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::homogeneous_multiply_add, ElementCompute, ElementCompute, kRound>,
                    fusion::Sm90ScalarBroadcast<ElementCompute>,  // beta * X + (alpha * acc)
                    ${source_node},
                    fusion::Sm90EVT<fusion::Sm90Compute<cutlass::multiplies, ElementCompute, ElementCompute, kRound>,
                                    ${alpha_broadcast}, fusion::Sm90AccFetch>>>;)";

constexpr std::string_view kSm90TreeArguments = R"(  args.epilogue.thread = {
      {{{ElementCompute(p.beta)}},  // beta
       ${source_arguments},  // X
       {${alpha_arguments}, {}, {}},  // alpha * acc
       {}},
      ${activation_arguments}};  // the activation's
)";

constexpr std::string_view kBiasRow =
    "fusion::Sm90RowBroadcast<0, TileShape, ElementC, ElementCompute,\n"
    "                                             cute::Stride<cute::_0, cute::_1, int64_t>, AlignmentC>";
// A grouped kernel's bias rows: one per group, an array of pointers (the group is the L coordinate).
constexpr std::string_view kGroupBiasRows =
    "fusion::Sm90RowBroadcast<0, TileShape, ElementC*, ElementCompute,\n"
    "                                             cute::Stride<cute::_0, cute::_1, cute::_0>, AlignmentC>";
// A swapped kernel writes D^T: the problem's bias row is a column of it.
constexpr std::string_view kBiasColumn =
    "fusion::Sm90ColBroadcast<0, TileShape, ElementC, ElementCompute,\n"
    "                                             cute::Stride<cute::_1, cute::_0, int64_t>, AlignmentC>";

// alpha as one scalar, or (fp8) as alpha * scale_a * scale_b with the scales read on the device
// (a null pointer counts as 1).
constexpr std::string_view kAlpha = "fusion::Sm90ScalarBroadcast<ElementCompute>";
constexpr std::string_view kAlphaArguments = "{{ElementCompute(p.alpha)}}";
constexpr std::string_view kScaledAlpha =
    "fusion::Sm90ScalarBroadcast<ElementCompute, cute::Stride<cute::_0, cute::_0, cute::_0>, 3>";
constexpr std::string_view kScaledAlphaArguments =
    "{{ElementCompute(p.alpha), ElementCompute(1), ElementCompute(1)}, {nullptr, p.scale_a, p.scale_b}}";

}  // namespace

bool scales_on_device(const library::GemmConfig& c) {
  return c.kind == KernelKind::Gemm && c.arch >= 90 && is_fp8(c.element_a);
}

// `name`: the kernel the source is emitted for (a parallel split-K kernel's GEMM is its partials'
// configuration).
Holes common_holes(const library::GemmConfig& c, const std::string& name) {
  const auto& t = c.tile.threadblock_shape;
  return {{"name", name},
          {"defines", defines(c)},
          {"epilogue_formula", epilogue_formula(c)},
          {"element_a", std::string(cutlass_type(c.element_a))},
          {"element_b", std::string(cutlass_type(c.element_b))},
          {"element_c", std::string(cutlass_type(c.element_c))},
          {"element_accumulator", std::string(cutlass_type(c.element_accumulator))},
          {"layout_a", cutlass_layout(c.layout_a)},
          {"layout_b", cutlass_layout(c.layout_b)},
          {"layout_c", cutlass_layout(c.layout_c)},
          {"alignment_a", std::to_string(c.alignment_a)},
          {"alignment_b", std::to_string(c.alignment_b)},
          {"alignment_c", std::to_string(c.alignment_c)},
          {"tile_m", std::to_string(t[0])},
          {"tile_n", std::to_string(t[1])},
          {"tile_k", std::to_string(t[2])}};
}

std::string stage_count(const library::GemmConfig& c, std::string_view family) {
  if (c.tile.stages > 0) return fmt::format("cutlass::{}::collective::StageCount<{}>", family, c.tile.stages);
  return fmt::format("cutlass::{}::collective::StageCountAutoCarveout<static_cast<int>(\n        sizeof(typename "
                     "CollectiveEpilogue::SharedStorage))>",
                     family);
}

Holes sm90_holes(const library::GemmConfig& c, const std::string& name, const BiasRow& bias) {
  Holes h = common_holes(c, name);
  const bool grouped = c.kind == KernelKind::Grouped;
  // fp8 operands take CUTLASS's fp8 mainloop (f32 partial sums promoted every few k-blocks), or with
  // fast accumulation the plain mainloop under the FP8FastAccum kernel schedules.
  const bool promoted = library::promotes_fp8(c);
  const bool fast_accum = c.math == MathOperation::MultiplyAddFastAccum;
  // TF32 of an N-major A: the builder takes CUTLASS's register-sourced mainloop (library::register_sourced).
  const bool register_sourced = library::register_sourced(c);
  h["mainloop_header"] = fmt::format("sm90_mma_{}tma_gmma_{}_warpspecialized{}.hpp", grouped ? "array_" : "",
                                     register_sourced ? "rs" : "ss", promoted ? "_fp8" : "");
  h["element_compute"] = std::string(cutlass_type(library::epilogue_compute_type(c)));
  const bool coop = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative;
  // CUTLASS's non-persistent kernel (one consumer warpgroup, a CTA per tile): no tile scheduler and
  // no register reallocation before its first load.
  const bool per_tile = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecialized;
  const auto& cl = c.tile.cluster_shape;
  h["element_d"] = std::string(cutlass_type(c.element_d));
  h["cluster_m"] = std::to_string(cl[0]);
  h["cluster_n"] = std::to_string(cl[1]);
  h["cluster_k"] = std::to_string(cl[2]);
  h["kernel_schedule_name"] = fmt::format("{}{}{}", coop ? "cooperative" : per_tile ? "non-persistent" : "ping-pong",
                                          fast_accum ? " (fp8 fast accumulation)" : "",
                                          register_sourced ? " register-sourced (A through registers)" : "");
  const std::string_view array = grouped ? "PtrArray" : "";
  h["kernel_schedule"] = fmt::format("cutlass::gemm::Kernel{}TmaWarpSpecialized{}{}", array,
                                     coop ? "Cooperative" : per_tile ? "" : "Pingpong",
                                     fast_accum ? "FP8FastAccum" : "");
  h["epilogue_schedule"] = fmt::format(
      "cutlass::epilogue::{}TmaWarpSpecialized{}", array,
      c.tile.epilogue_schedule == EpilogueSchedule::TmaWarpSpecializedCooperative ? "Cooperative"
      : grouped                                                                  ? "Pingpong"
                                                                                 : "");
  h["stage_count"] = stage_count(c, "gemm");
  const bool scaled = scales_on_device(c);
  const std::string alpha(scaled ? kScaledAlpha : kAlpha), alpha_arguments(scaled ? kScaledAlphaArguments : kAlphaArguments);
  const std::string activation(cutlass_activation(c.activation));
  const std::string activation_arguments = c.activation == Activation::leaky_relu ? "{ElementCompute(p.activation_argument)}" : "{}";
  const bool column = c.layout_c == Layout::ColumnMajor;  // D^T of a swapped kernel
  if (c.bias || scaled) {
    h["fusion"] = render(kSm90TreeFusion,
                         {{"summary", c.bias ? "C is a bias row: no C tile is loaded, the row is broadcast over the tile's rows."
                                             : "alpha is alpha * scale_a * scale_b, the scales read on the device."},
                          {"element_source", c.bias ? "void" : "ElementC"},
                          {"source_node", !c.bias ? "fusion::Sm90SrcFetch<ElementC>"
                                          : grouped ? std::string(kGroupBiasRows)
                                          : std::string(column ? kBiasColumn : kBiasRow)},
                          {"activation", activation},
                          {"alpha_broadcast", alpha}});
    h["epilogue_thread_arguments"] = render(
        kSm90TreeArguments,
        {{"source_arguments",
          c.bias ? fmt::format("{{{}({}), ElementC(0),\n"
                               "        cute::make_stride(cute::Int<{}>{{}}, cute::Int<{}>{{}}, {})}}",
                               grouped ? "" : "static_cast<const ElementC*>", bias.pointer, column ? 1 : 0,
                               column ? 0 : 1, bias.batch_stride)
                 : "{}"},
         {"alpha_arguments", alpha_arguments},
         {"activation_arguments", activation_arguments}});
  } else {
    h["fusion"] = c.activation == Activation::identity
                      ? "using ElementSource = ElementC;\nusing Fusion = cutlass::epilogue::fusion::LinearCombination<"
                        "ElementD, ElementCompute, ElementC, ElementCompute>;"
                      : fmt::format("using ElementSource = ElementC;\nusing Fusion = cutlass::epilogue::fusion::"
                                    "LinCombEltAct<\n    cutlass::epilogue::thread::{}, ElementD, ElementCompute, "
                                    "ElementC, ElementCompute>;",
                                    cutlass_activation(c.activation));
    h["epilogue_thread_arguments"] = fmt::format(
        "  args.epilogue.thread.alpha = ElementCompute(p.alpha);\n"
        "  args.epilogue.thread.beta = ElementCompute(p.beta);\n{}",
        c.activation == Activation::leaky_relu
            ? "  args.epilogue.thread.activation.leaky_alpha = ElementCompute(p.activation_argument);\n"
            : "");
  }
  return h;
}

std::string_view sm80_mainloop_name(const library::GemmConfig& c) {
  return library::pipelined(c) ? "two-stage pipelined mainloop (loads through registers)"
                               : "multistage cp.async mainloop";
}

Holes sm80_holes(const library::GemmConfig& c, const std::string& name) {
  Holes h = common_holes(c, name);
  const auto& t = c.tile.threadblock_shape;
  const auto& w = c.tile.warp_count;
  const auto& inst = library::math_instruction(c)->shape;  // a valid configuration has one
  const bool simt = c.opclass == OpcodeClass::Simt;
  h["opclass"] = simt ? "cutlass::arch::OpClassSimt" : "cutlass::arch::OpClassTensorOp";
  h["warp_m"] = std::to_string(t[0] / w[0]);
  h["warp_n"] = std::to_string(t[1] / w[1]);
  h["warp_k"] = std::to_string(t[2] / w[2]);
  h["instruction_m"] = std::to_string(inst[0]);
  h["instruction_n"] = std::to_string(inst[1]);
  h["instruction_k"] = std::to_string(inst[2]);
  h["stages"] = std::to_string(c.tile.stages);
  h["activation"] = std::string(cutlass_activation(c.activation));
  h["element_compute"] = std::string(cutlass_type(library::epilogue_compute_type(c)));
  h["activation_arguments"] = leaky_relu_argument(c, "ElementCompute");
  std::string math_name(c.element_a == DataType::f32 ? "TF32" : to_string(c.element_a));
  switch (c.math) {
    case MathOperation::MultiplyAddFastF32:
      h["math_operation"] = "cutlass::arch::OpMultiplyAddFastF32";
      math_name = "3xTF32";
      break;
    case MathOperation::MultiplyAddSaturate:
      h["math_operation"] = "cutlass::arch::OpMultiplyAddSaturate";
      math_name = "saturating integer";
      break;
    case MathOperation::MultiplyAddMixedInputUpcast:
      h["math_operation"] = "cutlass::arch::OpMultiplyAddMixedInputUpcast";
      math_name = size_bits(c.element_a) == 8 ? fmt::format("{} (A's s8 converted in registers)", to_string(c.element_b))
                                              : fmt::format("{} (B's s8 converted in registers)", math_name);
      break;
    default:
      h["math_operation"] = "cutlass::arch::OpMultiplyAdd";
  }
  h["instruction_name"] = simt ? fmt::format("SIMT {} {}multiply-adds (CUDA cores)", to_string(c.element_a),
                                             c.element_a == DataType::s8 ? "integer " : "fused ")
                               : fmt::format("mma.sync {}", math_name);
  return h;
}

std::string split_k_reduction(const library::GemmConfig& c) {
  return render(embedded::split_k_reduce,
                {{"epilogue_formula", epilogue_formula(c)},
                 {"element_d", std::string(cutlass_type(c.element_d))},
                 {"vector", std::to_string(std::min(c.alignment_c, 128 / size_bits(c.element_accumulator)))},
                 {"activation", std::string(cutlass_activation(c.activation))},
                 {"activation_arguments", leaky_relu_argument(c, "float")}});
}

}  // namespace cuforge::emit
