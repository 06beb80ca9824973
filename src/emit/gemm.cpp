#include "cuforge/emit/gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cuforge/emit/template.hpp"
#include "embedded.hpp"
#include "gemm_holes.hpp"
#include "conv.hpp"
#include "grouped_gemm.hpp"

namespace cuforge::emit {
namespace {

// A CUTLASS 3.x stride (cute tuple: row mode, column mode, batch mode) for an operand whose
// contiguous mode comes first or second; B is indexed N x K in CUTLASS 3.x.
std::string cute_stride(bool unit_first, std::string_view ld, std::string_view batch_stride) {
  return unit_first ? fmt::format("cute::make_stride(cute::Int<1>{{}}, p.{}, p.{})", ld, batch_stride)
                    : fmt::format("cute::make_stride(p.{}, cute::Int<1>{{}}, p.{})", ld, batch_stride);
}

// The header (embedded::sm90_fp8_promotion) of the consumer loop that overlaps fp8's promotion, as
// the SM90 GEMM kernels that use it include it.
constexpr std::string_view kFp8PromotionHeader = "cuforge/sm90_fp8_promotion.hpp";

constexpr std::string_view kSm90StreamKArguments = R"(  using DecompositionMode =
      cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamKParams::DecompositionMode;
  static_assert(int(DecompositionMode::SplitK) == CUFORGE_DECOMPOSITION_SPLIT_K &&
                int(DecompositionMode::StreamK) == CUFORGE_DECOMPOSITION_STREAM_K);
  args.scheduler.splits = p.splits;
  args.scheduler.decomposition_mode = static_cast<DecompositionMode>(p.decomposition);
  // In arrival order, peers accumulate without waiting for each other's turn (faster, but the
  // rounding of the f32 partial sums may differ from run to run).
  using ReductionMode = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamKParams::ReductionMode;
  args.scheduler.reduction_mode = p.deterministic ? ReductionMode::Deterministic : ReductionMode::Nondeterministic;)";

constexpr std::string_view kNoStaging = R"(// The kernel reads every operand where it is.
namespace cuforge_staging {
constexpr size_t staged_bytes(const cuforge_gemm_arguments&) { return 0; }
inline cuforge_gemm_arguments staged_arguments(const cuforge_gemm_arguments& p, void*) { return p; }
inline cudaError_t stage(const cuforge_gemm_arguments&, const cuforge_gemm_arguments&, cudaStream_t) {
  return cudaSuccess;
}
}  // namespace cuforge_staging)";

std::string staging(const library::GemmConfig& c) {
  const library::StagedOperands staged = library::staged_k_major(c);
  if (!staged.any()) return std::string(kNoStaging);
  const auto what = [&](bool a) {
    const bool k_major = a ? c.layout_a == Layout::RowMajor : c.layout_b == Layout::ColumnMajor;
    return fmt::format("{} ({})", a ? "A" : "B", k_major ? "K-major" : a ? "column-major" : "row-major");
  };
  const std::string operands = staged.a && staged.b ? what(true) + " and " + what(false) + " are"
                                                    : what(staged.a) + " is";
  return render(embedded::gemm_staging,
                {{"staged_operands", operands},
                 {"pieces_note", staged.k_pieces > 1 ? "\n// 3xTF32: each element x is written as three pieces along "
                                                       "K, big = x rounded to TF32 and small = x - big: A as\n// [small "
                                                       "big big], B as [big small big] (library::staged_k_major)."
                                                     : ""},
                 {"stage_a", staged.a ? "true" : "false"},
                 {"stage_b", staged.b ? "true" : "false"},
                 {"a_k_major", c.layout_a == Layout::RowMajor ? "true" : "false"},
                 {"b_k_major", c.layout_b == Layout::ColumnMajor ? "true" : "false"},
                 {"k_pieces", std::to_string(staged.k_pieces)}});
}

// Whether an SM90 GEMM kernel is built and launched as a programmatic dependent of the kernel
// before it in the stream (CUTLASS's grid dependency control; sm90_launch adds the launch
// attribute): its CTAs start, set up and prefetch their TMA descriptors while that kernel's last
// tiles run, wait for it to finish (griddepcontrol.wait) before their first access to global memory,
// and let the next kernel start likewise from their own last tiles (H200, back-to-back 1024³ bf16
// runs: 9.0 -> 6.6 µs; bench/NOTES.md). CUTLASS 4.2's data-parallel cooperative and ping-pong
// kernels wait in every warp that reads or writes global memory, except that the epilogue, built
// at the kernel's start, reads scalars given by pointer there: fp8's scales. Stream-K kernels,
// whose CTAs exchange partial tiles through a workspace the run zeroes just before them, are
// launched in stream order as before.
bool waits_for_previous_kernel(const library::GemmConfig& c) {
  return c.kind == KernelKind::Gemm && c.tile.tile_scheduler != TileScheduler::StreamK && !scales_on_device(c);
}

// A swapped configuration instantiates its transposed kernel (library::swapped_kernel) over the
// same arguments: M and N, A and B exchanged, D (and C) read as D^T column-major.
std::string emit_sm90(const library::GemmConfig& config, const std::string& name) {
  const bool swap = config.tile.swap_ab;
  const library::GemmConfig c = swap ? library::swapped_kernel(config) : library::staged_kernel(config);
  Holes h = sm90_holes(c, name);
  if (waits_for_previous_kernel(c)) h["defines"] += "#define CUTLASS_ENABLE_GDC_FOR_SM90 1\n";
  h["swap_note"] = !swap ? ""
                  : library::register_sourced(c)
                      ? "\n// Swapped to read the row-major B as it is: the kernel computes D^T = B^T A^T, B^T its A through "
                        "registers,\n// and writes D^T column-major (D's own row-major memory)."
                      : "\n// Swapped for a small M: the kernel computes D^T = B^T A^T, M on the tile's N, and writes D^T "
                        "column-major\n// (D's own row-major memory).";
  // The arguments the kernel's M and N, A and B are.
  const std::string m = swap ? "n" : "m", n = swap ? "m" : "n", a = swap ? "b" : "a", b = swap ? "a" : "b";
  h["problem_shape"] = fmt::format("int(p.{}), int(p.{}), int(p.k), int(p.batch)", m, n);
  h["operand_a"] = "p." + a;
  h["operand_b"] = "p." + b;
  const bool stream_k = c.tile.tile_scheduler == TileScheduler::StreamK;
  h["tile_scheduler"] = stream_k ? "cutlass::gemm::StreamKScheduler" : "void";
  h["scheduler_arguments"] = stream_k ? std::string(kSm90StreamKArguments) : "";
  h["supports_split_k"] = stream_k ? "true" : "false";
  // Promoted fp8's 128x128 and 128x192 tiles run their own consumer loop over CUTLASS's collective,
  // which overlaps the promotion with the wgmma.
  const bool overlapped = library::overlaps_fp8_promotion(c);
  h["mainloop_include"] = overlapped ? fmt::format("#include \"{}\"\n", kFp8PromotionHeader) : "";
  h["mainloop"] = overlapped ? "// CUTLASS's fp8 collective, its consumer loop adding each half of N while the other half's "
                               "wgmma run.\nusing CollectiveMainloop = typename "
                               "cuforge_fp8::OverlappedPromotion<BuiltMainloop>::type;"
                             : "using CollectiveMainloop = BuiltMainloop;";
  // The non-persistent kernel's header needs a trait gemm_universal.hpp defines before it includes
  // every kernel (IsCutlass3ArrayKernel): that header whole, for these kernels only.
  h["kernel_headers"] = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecialized
                           ? "#include \"cutlass/gemm/kernel/gemm_universal.hpp\""
                           : "#include \"cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_pingpong.hpp\"\n"
                             "#include \"cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_cooperative.hpp\"";
  h["launch"] = std::string(embedded::sm90_launch);
  h["epilogue_arguments"] = h["epilogue_thread_arguments"];
  if (!c.bias)
    h["epilogue_arguments"] += fmt::format("  args.epilogue.ptr_C = static_cast<const ElementC*>(p.c);\n"
                                           "  args.epilogue.dC = {};",
                                           cute_stride(c.layout_c == Layout::ColumnMajor, "ldc", "batch_stride_c"));
  h.erase("epilogue_thread_arguments");
  h["stride_a"] = cute_stride(c.layout_a == Layout::ColumnMajor, "ld" + a, "batch_stride_" + a);
  h["stride_b"] = cute_stride(c.layout_b == Layout::RowMajor, "ld" + b, "batch_stride_" + b);
  h["stride_d"] = cute_stride(c.layout_c == Layout::ColumnMajor, "ldd", "batch_stride_d");
  return render(embedded::gemm_sm90, h);
}

std::string emit_sm80(const library::GemmConfig& c, const std::string& name) {
  Holes h = sm80_holes(c, name);
  // CUTLASS's SIMT kernel of two stages for an SM60 target is its pipelined one (library::pipelined_simt);
  // its tensor-op kernels of two stages are pipelined on any target (library::pipelined).
  h["arch_tag"] = library::pipelined_simt(c) ? "cutlass::arch::Sm60" : "cutlass::arch::Sm80";
  h["mainloop_name"] = std::string(sm80_mainloop_name(c));
  h["swizzle"] = std::string(sm80_swizzle(c.tile.tile_scheduler));
  h["scheduler_arguments"] = c.tile.tile_scheduler == TileScheduler::StreamK
                                 ? "  args.avail_sms = p.decomposition == CUFORGE_DECOMPOSITION_DATA_PARALLEL ? 1 : -1;"
                                 : "";
  h["launch"] = std::string(embedded::sm80_launch);
  return render(embedded::gemm_sm80, h);
}

// The GEMM of a parallel split-K kernel writes the slices' partial products; the reduction after
// it applies the configuration's own epilogue.
std::string emit_split_k(const library::GemmConfig& c, const std::string& name) {
  const bool row_a = c.layout_a == Layout::RowMajor, row_b = c.layout_b == Layout::RowMajor;
  return split_k_reduction(c) + render(embedded::gemm_split_k,
                                       {{"name", name},
                                        {"alignment_k", std::to_string(std::max(c.alignment_a, c.alignment_b))},
                                        {"a_k_stride", row_a ? "1" : "p.lda"},
                                        {"b_k_stride", row_b ? "p.ldb" : "1"}});
}

}  // namespace

std::string gemm_source(const library::GemmConfig& config) {
  // A C++ caller's configuration may be anything: only one the catalog's rules accept for some GPU is emitted.
  if (auto why = library::why_invalid(config, 90))
    throw InvalidArgumentError(fmt::format("kernel '{}' cannot be emitted: {}", config.name(), *why));
  if (config.kind == KernelKind::Grouped) return grouped_gemm_source(config);
  if (is_conv(config.kind) && !config.pointwise) return conv_source(config);
  // A pointwise convolution kernel is its GEMM kernel, named for the convolution, with the
  // convolution ABI's entries after the GEMM's.
  const library::GemmConfig plain = config.pointwise ? library::pointwise_gemm(config) : config;
  const std::string name = config.name();
  const library::GemmConfig gemm = plain.parallel_split_k ? library::split_k_partials(plain) : plain;
  std::string body = gemm.arch >= 90 ? emit_sm90(gemm, name) : emit_sm80(gemm, name);
  body += "\n" + (plain.parallel_split_k ? emit_split_k(plain, name)
                                         : render(embedded::gemm_entry, {{"name", name}, {"staging", staging(plain)}}));
  return config.pointwise ? body + pointwise_conv_entry(config) : body;
}

KernelSource gemm_kernel(const library::GemmConfig& config, int cc) {
  // A name parses where some GPU builds it (library::parse_gemm_name); this one must build for `cc`.
  if (auto why = library::why_invalid(config, cc))
    throw InvalidArgumentError(
        fmt::format("kernel '{}' cannot be built for compute capability {}: {}", config.name(), cc, *why));
  KernelSource k{config.name(), gemm_source(config), {{"cuforge/abi.h", std::string(abi_header())}}, config.arch,
                 config.arch >= 90 ? 90 : cc};
  // The kernels' own headers, each carried by the sources that include it.
  for (auto [path, text] : {std::pair{std::string_view("cuforge/kept_run.hpp"), embedded::kept_run},
                            std::pair{std::string_view("cuforge/launch.hpp"), embedded::launch},
                            std::pair{kFp8PromotionHeader, embedded::sm90_fp8_promotion}})
    if (k.source.find(fmt::format("#include \"{}\"\n", path)) != std::string::npos)
      k.headers.emplace_back(std::string(path), std::string(text));
  return k;
}

std::string_view abi_header() { return embedded::abi_h; }

}  // namespace cuforge::emit
