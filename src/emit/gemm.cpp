#include "cuforge/emit/gemm.hpp"

#include <fmt/format.h>

#include "cuforge/emit/template.hpp"
#include "embedded.hpp"

namespace cuforge::emit {
namespace {

std::string cutlass_layout(Layout l) {
  return l == Layout::RowMajor ? "cutlass::layout::RowMajor" : "cutlass::layout::ColumnMajor";
}

// A CUTLASS 3.x stride (cute tuple: row mode, column mode, batch mode) for an operand whose
// contiguous mode comes first or second; B is indexed N x K in CUTLASS 3.x.
std::string cute_stride(bool unit_first, const char* ld, const char* batch_stride) {
  return unit_first ? fmt::format("cute::make_stride(cute::Int<1>{{}}, p.{}, p.{})", ld, batch_stride)
                    : fmt::format("cute::make_stride(p.{}, cute::Int<1>{{}}, p.{})", ld, batch_stride);
}

Holes common_holes(const library::GemmConfig& c) {
  const auto& t = c.tile.threadblock_shape;
  return {{"name", c.name()},
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

std::string emit_sm90(const library::GemmConfig& c) {
  Holes h = common_holes(c);
  const bool coop = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative;
  const auto& cl = c.tile.cluster_shape;
  h["element_d"] = std::string(cutlass_type(c.element_d));
  h["cluster_m"] = std::to_string(cl[0]);
  h["cluster_n"] = std::to_string(cl[1]);
  h["cluster_k"] = std::to_string(cl[2]);
  h["kernel_schedule_name"] = coop ? "cooperative" : "ping-pong";
  h["kernel_schedule"] = coop ? "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
                              : "cutlass::gemm::KernelTmaWarpSpecializedPingpong";
  h["epilogue_schedule"] = c.tile.epilogue_schedule == EpilogueSchedule::TmaWarpSpecializedCooperative
                               ? "cutlass::epilogue::TmaWarpSpecializedCooperative"
                               : "cutlass::epilogue::TmaWarpSpecialized";
  h["stage_count"] =
      c.tile.stages > 0
          ? fmt::format("cutlass::gemm::collective::StageCount<{}>", c.tile.stages)
          : "cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(\n        sizeof(typename "
            "CollectiveEpilogue::SharedStorage))>";
  h["tile_scheduler"] = c.tile.tile_scheduler == TileScheduler::StreamK ? "cutlass::gemm::StreamKScheduler" : "void";
  h["stride_a"] = cute_stride(c.layout_a == Layout::ColumnMajor, "lda", "batch_stride_a");
  h["stride_b"] = cute_stride(c.layout_b == Layout::RowMajor, "ldb", "batch_stride_b");
  h["stride_c"] = cute_stride(c.layout_c == Layout::ColumnMajor, "ldc", "batch_stride_c");
  h["stride_d"] = cute_stride(c.layout_c == Layout::ColumnMajor, "ldd", "batch_stride_d");
  return render(embedded::gemm_sm90, h);
}

std::string emit_sm80(const library::GemmConfig& c) {
  Holes h = common_holes(c);
  const auto& t = c.tile.threadblock_shape;
  const auto& w = c.tile.warp_count;
  const bool tf32 = c.element_a == DataType::f32;
  h["warp_m"] = std::to_string(t[0] / w[0]);
  h["warp_n"] = std::to_string(t[1] / w[1]);
  h["warp_k"] = std::to_string(t[2] / w[2]);
  h["instruction_m"] = "16";
  h["instruction_n"] = "8";
  h["instruction_k"] = std::to_string(256 / size_bits(c.element_a));
  h["stages"] = std::to_string(c.tile.stages);
  h["swizzle"] = c.tile.tile_scheduler == TileScheduler::StreamK
                     ? "cutlass::gemm::threadblock::ThreadblockSwizzleStreamK"
                     : "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>";
  switch (c.math) {
    case MathOperation::MultiplyAddFastF32:
      h["math_operation"] = "cutlass::arch::OpMultiplyAddFastF32";
      h["math_operation_name"] = "3xTF32";
      break;
    case MathOperation::MultiplyAddSaturate:
      h["math_operation"] = "cutlass::arch::OpMultiplyAddSaturate";
      h["math_operation_name"] = "saturating integer";
      break;
    default:
      h["math_operation"] = "cutlass::arch::OpMultiplyAdd";
      h["math_operation_name"] = tf32 ? "TF32" : to_string(c.element_a);
  }
  return render(embedded::gemm_sm80, h);
}

}  // namespace

std::string emit_gemm(const library::GemmConfig& config) {
  if (auto why = library::why_invalid(config))
    throw InvalidArgumentError(fmt::format("cannot emit {}: {}", config.name(), *why));
  std::string body = config.arch >= 90 ? emit_sm90(config) : emit_sm80(config);
  return body + "\n" + render(embedded::gemm_entry, {{"name", config.name()}});
}

std::string_view abi_header() { return embedded::abi_h; }

}  // namespace cuforge::emit
