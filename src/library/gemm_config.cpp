#include "cuforge/library/gemm_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace cuforge::library {
namespace {

constexpr int kSm90SharedMemory = 227 * 1024;  // opt-in maximum per CTA on Hopper
constexpr int kSm90SharedMemoryPerSm = 228 * 1024, kReservedSharedMemoryPerCta = 1024;
constexpr int kRegistersPerSm = 64 * 1024;
// Registers a thread of an SM90 convolution kernel's consumer warpgroup holds beside its f32
// accumulators (ptxas -v, CUDA 13: 64x64 58 registers, 128x64 90, 256x64 154).
constexpr int kSm90ConvOtherRegisters = 26;
// Opt-in shared memory per CTA of the GPU an SM80 kernel is built for (-gencode arch=compute_80,code=sm_XY):
// CUTLASS's SharedMemPerCC (cutlass_library/library.py) for 8.0 to 10.0 (the 1 KB the driver keeps taken off);
// 10.3 and 11.0 as 10.0; any other (8.6, 8.9, 12.x and the rest) 99 KB, as CUTLASS gives 8.6 and 8.9. 0, the
// family's own (the catalog's rows): an A100's.
int sm80_kernel_shared_memory(int target_cc) {
  switch (target_cc) {
    case 0: case 80: case 87: return 163 * 1024;
    case 90: case 100: case 103: case 110: return kSm90SharedMemory;
    default: return 99 * 1024;
  }
}
constexpr int kMaxTileExtent = 1024;  // beyond any kernel's (256); keeps a stage's bytes well inside an int
constexpr int kMaxAccumulatorRegisters = 128;   // per thread, leaving room for addressing
// SIMT warp tiles of up to 64x64 doubles (or 64x128 floats), as the CUTLASS Python interface's f64 tests
// pin them (128x128x8 in 2x2 warps): they build and run, spilling (ptxas -v, CUDA 13, sm_80: 255
// registers, 3.5 KB of spill stores). The catalog lists none.
constexpr int kMaxSimtAccumulatorRegisters = 256;
// Both fp8 accumulators, per thread: ptxas (CUDA 13) fits 2 x 96 in a consumer warpgroup without
// spilling (128x192 and 256x96 cooperative), but spills 600-950 bytes with 2 x 128 (256x128 and
// 128x256 cooperative, 64x256 and 128x128 ping-pong: a third of 128x128's speed on the H200). Those
// build and run, as the CUTLASS Python interface's fp8 tests pin one (128x128 ping-pong), but are no
// catalog rows (spills_registers).
constexpr int kUnspilledPromotedAccumulatorRegisters = 192;
constexpr int kMaxPromotedAccumulatorRegisters = 256;
// SM80 3xTF32 holds big and small fragments of A and B beside the accumulators: a 64x64 warp tile
// (128 accumulator registers) spills 832 bytes each way at 255 registers (ptxas -v, 256x128x16 w4x2x1;
// it ran 2048^3 at a third of the model's estimate on the H200), a 64x32 one fits in 252.
constexpr int kMax3xTf32AccumulatorRegisters = 64;

// Bytes of shared memory the SM90 TMA epilogue keeps (C loads and D stores, two stages of a
// subtile of 32 columns by at most 128 rows, cooperative, or 64, one warpgroup's: CUTLASS's
// EpilogueTileAuto), which the mainloop's automatic stage count leaves free.
int sm90_epilogue_bytes(const GemmConfig& c) {
  const bool coop = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative;
  int rows = std::min(c.tile.threadblock_shape[0], coop ? 128 : 64);
  return 2 * rows * 32 * (size_bytes(c.element_c) + size_bytes(c.element_d));
}

int stage_bytes(const GemmConfig& c) {
  const auto& t = c.tile.threadblock_shape;
  return (t[0] * size_bits(c.element_a) + t[1] * size_bits(c.element_b)) * t[2] / 8;
}

// A and B both f16 or both bf16.
bool sixteen_bit(const GemmConfig& c) {
  return (c.element_a == DataType::f16 || c.element_a == DataType::bf16) && c.element_b == c.element_a;
}

// The rules convolution kernels add: SM80 ImplicitGemmConvolution (CUTLASS 2.x) and SM90
// ConvUniversal (CUTLASS 3.x: im2col TMA loads, a wgmma mainloop on one consumer warpgroup, a CTA per
// tile) over NHWC tensors.
std::optional<std::string> why_invalid_conv(const GemmConfig& c) {
  const bool sixteen = sixteen_bit(c);
  if (c.element_b != c.element_a)
    return std::string("convolution kernels multiply operands of one type");
  const bool simt = c.opclass == OpcodeClass::Simt;
  if ((!simt && !(sixteen || c.element_a == DataType::f32)) ||
      (simt && c.element_a != DataType::f16 && c.element_a != DataType::f32 && c.element_a != DataType::f64))
    return std::string("convolution kernels multiply f16, bf16 or f32 (through TF32) on the tensor cores, or f16, "
                       "f32 and f64 on the CUDA cores (SIMT, SM80 kernels)");
  if (simt && c.arch >= 90)
    return std::string("SIMT convolution kernels are SM80 kernels (CUTLASS 2.x's implicit GEMM on the CUDA cores)");
  const auto [la, lb] = conv_layouts(c.kind);
  if (c.layout_a != la || c.layout_b != lb)
    return fmt::format("a {} kernel over NHWC tensors is the implicit GEMM {}{}r", to_string(c.kind),
                       layout_letter(la), layout_letter(lb));
  if (c.bias && c.kind == KernelKind::Conv2dWgrad)
    return std::string("a bias is one value per output channel of fprop or dgrad; wgrad's C has dw's shape (K, R, S, "
                       "C)");
  if (c.parallel_split_k && c.arch >= 90 && c.kind != KernelKind::Conv2dWgrad)
    return std::string("SM90 convolution kernels split K in parallel for wgrad only (between the images of its K, "
                       "N·P·Q); fprop and dgrad split on SM80 kernels (CUTLASS 2.x's kParallel)");
  const TileScheduler s = c.tile.tile_scheduler;
  if (c.arch >= 90) {
    if (!sixteen || c.element_accumulator != DataType::f32)
      return std::string("SM90 convolution kernels multiply f16 or bf16 with f32 accumulation (TF32 and f16 "
                         "accumulation run on SM80)");
    if (c.tile.kernel_schedule != KernelSchedule::TmaWarpSpecialized)
      return fmt::format("SM90 convolution kernels use CUTLASS's implicit-GEMM TMA warp-specialized schedule ({}); "
                         "its persistent schedules take no convolutions, got {}",
                         to_string(KernelSchedule::TmaWarpSpecialized), to_string(c.tile.kernel_schedule));
    if (s != TileScheduler::Default)
      return fmt::format("SM90 convolution kernels run a CTA per tile (no stream-K, no split-K in the kernel): tile "
                         "scheduler default, got {}", to_string(s));
    return std::nullopt;
  }
  if (s == TileScheduler::StreamK || s == TileScheduler::Horizontal)
    return fmt::format("convolution kernels use the identity threadblock swizzles, not {}", to_string(s));
  if (c.kind == KernelKind::Conv2dDgrad && s != TileScheduler::Default)
    return std::string("strided dgrad kernels schedule with CUTLASS's strided-dgrad swizzle (tile scheduler default)");
  return std::nullopt;
}

// Accumulator registers per thread of an SM90 consumer warpgroup: its share of the tile (a cooperative
// tile's rows split between two warpgroups), doubled where fp8 promotes from a second accumulator.
int sm90_accumulator_registers(const GemmConfig& c) {
  const auto& t = c.tile.threadblock_shape;
  const bool coop = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative;
  const int elements = (coop ? t[0] / 2 : t[0]) * t[1] / 128;
  return elements * size_bits(c.element_accumulator) / 32 * (promotes_fp8(c) ? 2 : 1);
}

}  // namespace

std::pair<Layout, Layout> conv_layouts(KernelKind kind) {
  switch (kind) {
    case KernelKind::Conv2dFprop: return {Layout::RowMajor, Layout::ColumnMajor};
    case KernelKind::Conv2dDgrad: return {Layout::RowMajor, Layout::RowMajor};
    default: return {Layout::ColumnMajor, Layout::RowMajor};
  }
}

const MathInstruction* math_instruction(const GemmConfig& c) {
  return find_math_instruction(c.arch, c.opclass, c.math, c.element_a, c.element_b, c.element_accumulator);
}

StagedOperands staged_k_major(const GemmConfig& c) {
  if (c.tile.swap_ab || c.arch < 90 || size_bits(c.element_a) != 32 || c.opclass != OpcodeClass::TensorOp) return {};
  if (c.math == MathOperation::MultiplyAddFastF32) return {true, true, 3};
  return {c.layout_a != Layout::RowMajor, c.layout_b != Layout::ColumnMajor};
}

GemmConfig staged_kernel(const GemmConfig& c) {
  const StagedOperands staged = staged_k_major(c);
  GemmConfig k = c;
  if (staged.a) k.layout_a = Layout::RowMajor;
  if (staged.b) k.layout_b = Layout::ColumnMajor;
  if (staged.k_pieces > 1) k.math = MathOperation::MultiplyAdd;
  return k;
}

bool register_sourced(const GemmConfig& kernel) {
  return kernel.arch >= 90 && !kernel.tile.swap_ab && kernel.element_a == DataType::f32 &&
         kernel.opclass == OpcodeClass::TensorOp && kernel.layout_a != Layout::RowMajor;
}

bool pipelined_simt(const GemmConfig& c) {
  return c.arch < 90 && c.opclass == OpcodeClass::Simt && size_bits(c.element_a) < 32;
}

bool pipelined(const GemmConfig& c) {
  const int bits = size_bits(c.element_a);
  return pipelined_simt(c) ||
         (c.arch < 90 && bits == 16 && std::min(c.alignment_a, c.alignment_b) * bits < 32);
}

bool promotes_fp8(const GemmConfig& c) {
  return is_fp8(c.element_a) && c.math == MathOperation::MultiplyAdd && c.opclass == OpcodeClass::TensorOp;
}

bool spills_registers(const GemmConfig& c) {
  return c.arch >= 90 && promotes_fp8(c) && sm90_accumulator_registers(c) > kUnspilledPromotedAccumulatorRegisters;
}

bool overlaps_fp8_promotion(const GemmConfig& c) {
  const auto& t = c.tile.threadblock_shape;
  return promotes_fp8(c) && c.arch >= 90 && c.kind == KernelKind::Gemm && !c.tile.swap_ab &&
         c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative && t[0] == 128 &&
         (t[1] == 128 || t[1] == 192) && t[2] == 128;
}

int sm80_output_vector_bits(DataType c) { return size_bits(c) == 8 ? 64 : 128; }

DataType epilogue_compute_type(const GemmConfig& c) {
  if (c.element_d == DataType::s32) return DataType::s32;
  const bool wider_d = size_bits(c.element_d) > size_bits(c.element_accumulator);  // f16 accumulation into f32
  return c.arch >= 90 || c.element_d == DataType::s8 || wider_d ? DataType::f32 : c.element_accumulator;
}

EpilogueSchedule epilogue_for(KernelSchedule kernel) {
  switch (kernel) {
    case KernelSchedule::TmaWarpSpecializedCooperative: return EpilogueSchedule::TmaWarpSpecializedCooperative;
    case KernelSchedule::TmaWarpSpecializedPingpong: return EpilogueSchedule::TmaWarpSpecialized;
    case KernelSchedule::Multistage: return EpilogueSchedule::Default;
    case KernelSchedule::TmaWarpSpecialized: return EpilogueSchedule::TmaWarpSpecialized;
    case KernelSchedule::Auto: return EpilogueSchedule::Auto;
  }
  return EpilogueSchedule::Default;
}

GemmConfig swapped_kernel(const GemmConfig& c) {
  GemmConfig k = c;
  k.tile.swap_ab = false;
  k.element_a = c.element_b;
  k.element_b = c.element_a;
  k.layout_a = transposed(c.layout_b);
  k.layout_b = transposed(c.layout_a);
  k.alignment_a = c.alignment_b;
  k.alignment_b = c.alignment_a;
  k.layout_c = Layout::ColumnMajor;
  return k;
}

GemmConfig pointwise_gemm(const GemmConfig& c) {
  GemmConfig gemm = c;
  gemm.kind = KernelKind::Gemm;
  gemm.pointwise = false;
  return gemm;
}

GemmConfig split_k_partials(const GemmConfig& c) {
  GemmConfig partials = c;
  partials.element_c = partials.element_d = c.element_accumulator;
  // 16-byte stores of f32, except from SIMT epilogues, which store one element at a time.
  partials.alignment_c = c.opclass == OpcodeClass::Simt ? 1 : 128 / size_bits(c.element_accumulator);
  partials.activation = Activation::identity;
  partials.bias = false;
  partials.parallel_split_k = false;
  return partials;
}

namespace {

// Tile extents and alignments out of the range the rules' arithmetic takes (they divide by them).
std::optional<std::string> why_out_of_range(const GemmConfig& c) {
  const auto& t = c.tile.threadblock_shape;
  if (std::any_of(t.begin(), t.end(), [](int e) { return e < 1 || e > kMaxTileExtent; }))
    return fmt::format("tile {}x{}x{}: each extent must be 1 to {}", t[0], t[1], t[2], kMaxTileExtent);
  if (c.alignment_a < 1 || c.alignment_b < 1 || c.alignment_c < 1)
    return fmt::format("alignments {}, {} and {}: each must be 1 element or more", c.alignment_a, c.alignment_b,
                       c.alignment_c);
  return std::nullopt;
}

}  // namespace

void check_extents(const GemmConfig& c) {
  if (auto why = why_out_of_range(c)) throw InvalidArgumentError(*why);
}

int resolved_stages(const GemmConfig& c) {
  check_extents(c);
  if (c.tile.stages > 0) return c.tile.stages;
  return (kSm90SharedMemory - sm90_epilogue_bytes(c)) / stage_bytes(c);
}

int64_t shared_memory_bytes(const GemmConfig& c) {
  const int64_t mainloop = int64_t(resolved_stages(c)) * stage_bytes(c);  // stages as pinned: any int
  return c.arch >= 90 ? mainloop + sm90_epilogue_bytes(c) : mainloop;
}

int ctas_per_sm(const GemmConfig& c) {
  if (!is_conv(c.kind) || c.arch < 90 || c.pointwise) return 1;
  const auto& t = c.tile.threadblock_shape;
  constexpr int kThreads = 2 * 128;  // a producer and a consumer warpgroup
  const int registers = (t[0] * t[1] / 128 + kSm90ConvOtherRegisters + 7) / 8 * 8;  // allocated by 8s
  const int by_registers = kRegistersPerSm / (registers * kThreads);
  const int by_shared = int(kSm90SharedMemoryPerSm / (shared_memory_bytes(c) + kReservedSharedMemoryPerCta));
  return std::max(1, std::min(by_registers, by_shared));
}

namespace {

// SM80 fprop over exactly the channels its vectors hold (CUTLASS 2.x's kFixedChannels iterators).
std::optional<std::string> why_invalid_fixed_channels(const GemmConfig& c) {
  if (c.kind != KernelKind::Conv2dFprop || c.arch >= 90 || c.pointwise || c.opclass != OpcodeClass::TensorOp)
    return std::string("fixed-channel kernels are SM80 tensor-core fprop kernels (CUTLASS 2.x's kFixedChannels "
                       "iterators)");
  if (c.alignment_b != c.alignment_a || c.tile.threadblock_shape[2] % c.alignment_a != 0)
    return fmt::format("fixed-channel kernels read x and the filters in vectors of the channels: alignments of A "
                       "and B equal, dividing the tile's K ({}), got {} and {}",
                       c.tile.threadblock_shape[2], c.alignment_a, c.alignment_b);
  if (c.parallel_split_k)
    return std::string("fixed-channel kernels are not offered split: CUTLASS's kFixedChannels iterators step every "
                       "slice over all of K");
  return std::nullopt;
}

// A convolution's GEMM kernel (1x1 filters): the rules of the GEMM it runs.
std::optional<std::string> why_invalid_pointwise(const GemmConfig& c, int target_cc) {
  if (!is_conv(c.kind) || c.arch < 90 || !sixteen_bit(c))
    return std::string("pointwise GEMM kernels run 1x1 convolutions of f16 or bf16 on SM90 (SM80's own "
                       "convolution kernels run them there)");
  const auto [la, lb] = conv_layouts(c.kind);
  if (c.layout_a != la || c.layout_b != lb)
    return fmt::format("a pointwise {} is the GEMM {}{}r", to_string(c.kind), layout_letter(la), layout_letter(lb));
  return why_invalid(pointwise_gemm(c), target_cc);
}

// Parallel split-K: the kernel writes f32 partial products that a reduction kernel sums.
std::optional<std::string> why_invalid_parallel_split(const GemmConfig& c, int target_cc) {
  if (c.element_accumulator != DataType::f32)
    return fmt::format("parallel split-K sums f32 partial products; this kernel accumulates in {}",
                       to_string(c.element_accumulator));
  if (c.tile.tile_scheduler == TileScheduler::StreamK)
    return std::string("parallel split-K runs its slices as a batch: the stream-K scheduler splits K itself");
  if (auto why = why_invalid(split_k_partials(c), target_cc))
    return fmt::format("its partial products: {}", *why);
  if (staged_k_major(c).any())
    return std::string("parallel split-K is not offered for kernels that copy operands K-major first");
  return std::nullopt;
}

std::optional<std::string> why_invalid_grouped(const GemmConfig& c) {
  const bool sm90 = c.arch >= 90;
  const bool fp8 = c.element_a == DataType::e4m3 && c.element_b == DataType::e4m3;
  const bool sixteen = sixteen_bit(c);
  const bool fast_accum = fp8 && c.math == MathOperation::MultiplyAddFastAccum;
  if (c.opclass != OpcodeClass::TensorOp || (c.math != MathOperation::MultiplyAdd && !fast_accum) ||
      c.element_accumulator != DataType::f32 || !(sixteen || (fp8 && sm90)))
    return std::string("grouped kernels multiply f16 or bf16 (and, on SM90, e4m3) on the tensor cores with f32 "
                       "accumulation");
  if (c.tile.tile_scheduler != TileScheduler::Default)
    return fmt::format("grouped kernels schedule their own tiles over the groups: the {} tile scheduler does not "
                       "apply", to_string(c.tile.tile_scheduler));
  if (c.parallel_split_k) return std::string("grouped kernels do not split K");
  if (is_fp8(c.element_d))
    return fmt::format("grouped kernels write 16-bit or f32 outputs, not {}", to_string(c.element_d));
  return std::nullopt;
}

// The types of C and D the kernel's instruction writes, and the activations its epilogue's type computes.
std::optional<std::string> why_invalid_outputs(const GemmConfig& c, const MathInstruction& mi) {
  const bool sm90 = c.arch >= 90;
  // C and D of one type; SM90 GEMMs of 16-bit inputs also read C of their input type beside an f32 D, and
  // those of fp8 inputs C of any of their outputs' types beside any D (CUTLASS's fp8 GEMMs, as the CUTLASS
  // Python interface's fp8 catalog has them); the parallel split-K reduction reads C as D: not there.
  const bool sixteen_bit = c.element_a == DataType::f16 || c.element_a == DataType::bf16;
  const bool sm90_gemm = sm90 && c.kind == KernelKind::Gemm && !c.parallel_split_k;
  const bool c_of_inputs = sm90_gemm && sixteen_bit && c.element_c == c.element_a && c.element_d == DataType::f32;
  const bool c_of_outputs = sm90_gemm && is_fp8(c.element_a) &&
                            std::find(mi.outputs.begin(), mi.outputs.end(), c.element_c) != mi.outputs.end();
  if ((c.element_c != c.element_d && !c_of_inputs && !c_of_outputs) ||
      std::find(mi.outputs.begin(), mi.outputs.end(), c.element_d) == mi.outputs.end()) {
    std::vector<std::string_view> outputs;
    for (DataType t : mi.outputs) outputs.push_back(to_string(t));
    return fmt::format("{} x {} kernels with {} accumulation write C and D of one type, {}{}; got C {} and D {}",
                       to_string(c.element_a), to_string(c.element_b), to_string(c.element_accumulator),
                       fmt::join(outputs, " or "),
                       sixteen_bit ? fmt::format(" (SM90 GEMMs also C {} with D f32, unsplit or split in the kernel)",
                                                 to_string(c.element_a))
                       : is_fp8(c.element_a) ? std::string(" (SM90 GEMMs C and D of any two of them, unsplit or split "
                                                           "in the kernel)")
                                             : "",
                       to_string(c.element_c), to_string(c.element_d));
  }
  // An integer epilogue (s32 D) computes alpha * acc + beta * C exactly in int32; only the
  // piecewise-linear activations with integer slopes mean anything there.
  const DataType compute = epilogue_compute_type(c);
  if (compute == DataType::s32 && c.activation != Activation::identity && c.activation != Activation::relu)
    return fmt::format("{} outputs are computed in {} (exact for any K): of the activations only relu applies, "
                       "got {}",
                       to_string(c.element_d), to_string(compute), to_string(c.activation));
  return std::nullopt;
}

std::optional<std::string> why_invalid_alignments(const GemmConfig& c) {
  const bool sm90 = c.arch >= 90;
  // Alignment: a whole number of elements, at most 128 bits per access.
  for (auto [what, align, type] : {std::tuple{"A", c.alignment_a, c.element_a}, {"B", c.alignment_b, c.element_b},
                                   {"C", c.alignment_c, c.element_c}}) {
    int max_align = 128 / size_bits(type);
    if (align < 1 || align > max_align || (align & (align - 1)))
      return fmt::format("alignment of {} must be a power of two from 1 to {} elements of {}, got {}", what,
                         max_align, to_string(type), align);
    if (sm90 && align != max_align)
      return fmt::format("SM90 TMA kernels need 16-byte aligned {} ({} elements of {}), got {}; lower "
                         "alignments run on SM80 kernels",
                         what, max_align, to_string(type), align);
    if (!sm90 && !pipelined(c) && align * size_bits(type) < 32 && std::string_view(what) != "C")
      return fmt::format("SM80 cp.async loads need at least 4-byte aligned {}, got {} x {} bits", what, align,
                         size_bits(type));
  }
  return std::nullopt;
}

// CUTLASS 3.x's TMA warp-specialized kernels.
std::optional<std::string> why_invalid_sm90(const GemmConfig& c) {
  const auto& t = c.tile.threadblock_shape;
  const bool coop = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative;
  const bool pingpong = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong;
  // CUTLASS's non-persistent kernel: one consumer warpgroup, a CTA per tile found from blockIdx.
  const bool per_tile = c.tile.kernel_schedule == KernelSchedule::TmaWarpSpecialized;
  if (!coop && !pingpong && !(per_tile && (c.kind == KernelKind::Gemm || is_conv(c.kind))))
    return fmt::format("SM90 {} kernels use the cooperative or ping-pong TMA warp-specialized schedule{}, not {}",
                       to_string(c.kind), c.kind == KernelKind::Gemm ? ", or the non-persistent one (tmaws)" : "",
                       to_string(c.tile.kernel_schedule));
  auto expected_epi = epilogue_for(c.tile.kernel_schedule);
  if (c.tile.epilogue_schedule != expected_epi)
    return fmt::format("the {} kernel schedule needs the {} epilogue schedule, got {}",
                       to_string(c.tile.kernel_schedule), to_string(expected_epi),
                       to_string(c.tile.epilogue_schedule));
  if (coop && t[0] % 128 != 0)
    return fmt::format("cooperative kernels split the tile's M across two warpgroups: M must be a multiple "
                       "of 128, got {} (use pingpong for M = 64)", t[0]);
  if (t[0] % 64 != 0) return fmt::format("tile M must be a multiple of 64, got {}", t[0]);
  if (c.tile.tile_scheduler != TileScheduler::Default && c.tile.tile_scheduler != TileScheduler::StreamK)
    return fmt::format("the {} swizzle is a CUTLASS 2.x (SM80) threadblock swizzle; SM90 kernels use the "
                       "default persistent scheduler or stream-K", to_string(c.tile.tile_scheduler));
  if (c.tile.tile_scheduler == TileScheduler::StreamK && !coop)
    return std::string("the stream-K tile scheduler runs only with the cooperative kernel schedule");
  if (per_tile && c.parallel_split_k && !is_conv(c.kind))
    return std::string("the non-persistent SM90 GEMM kernels are offered unsplit: split K on the persistent schedules");
  // wgmma reads 32-bit operands only K-major: a kernel copies those that are not into its workspace
  // K-major first (library::staged_k_major). 8-bit operands have no such kernel.
  if (size_bits(c.element_a) == 8 && (c.layout_a != Layout::RowMajor || c.layout_b != Layout::ColumnMajor))
    return fmt::format("wgmma reads 8-bit operands only K-major: SM90 {} kernels need a row-major A and a "
                       "column-major B (transpose them first; SIMT kernels read any layout, far slower)",
                       to_string(c.element_a));
  // A K-major tile's rows fill whole swizzle atoms of 128 bytes, or of 64 or 32 where K is a multiple of 32
  // 16- or 8-bit elements (CUTLASS's builder picks the narrower swizzle, as the CUTLASS Python interface's
  // tiles took it: 128x128x32 f16, 128x64x32 s8).
  const int k_bytes = t[2] * size_bits(c.element_a) / 8, k_quantum = std::min(128, 4 * size_bits(c.element_a));
  if (k_bytes % k_quantum != 0)
    return fmt::format("tile K must span a multiple of {} bytes of {} ({} elements), got {}", k_quantum,
                       to_string(c.element_a), k_quantum * 8 / size_bits(c.element_a), t[2]);
  // CUTLASS's promoting fp8 mainloop adds the second accumulator every 4 wgmma K-blocks of 32, whole tiles
  // of them (its can_implement): a K of 32, 64 or 128.
  if (promotes_fp8(c) && 128 % t[2] != 0)
    return fmt::format("promoted fp8 tiles take a K of 32, 64 or 128 (the promotion every 128 elements), got {}",
                       t[2]);
  if (t[1] % 16 != 0 || t[1] > 256) return fmt::format("tile N must be a multiple of 16 up to 256, got {}", t[1]);
  // SM90 kernels run their schedule's warpgroups: warp_count (SM80's) is not read, but no count is below one.
  const auto& w = c.tile.warp_count;
  if (std::min({w[0], w[1], w[2]}) < 1)
    return fmt::format("warp_count {}x{}x{}: warps are counted from 1 (SM90 kernels run their schedule's warpgroups "
                       "and do not read it)", w[0], w[1], w[2]);
  const auto& cl = c.tile.cluster_shape;
  // Up to 8 CTAs, the portable cluster size, each extent a power of two, as CUTLASS's multicast loads divide
  // the tiles (the catalog lists 1x1, 2x1 and 1x2, and 4x1 for TF32's swapped 128x128 tile; the interface's tests
  // pin 2x2, 4x1, 1x4, 2x4 and 4x2).
  const auto power_of_two = [](int e) { return e >= 1 && (e & (e - 1)) == 0; };
  if (cl[2] != 1 || cl[0] * cl[1] > 8 || !power_of_two(cl[0]) || !power_of_two(cl[1]))
    return fmt::format("cluster {}x{}x{} is not one CUTLASS builds (M and N powers of two, up to 8 CTAs, K = 1)",
                       cl[0], cl[1], cl[2]);
  const int acc_registers = sm90_accumulator_registers(c);
  const bool promoted = promotes_fp8(c);
  const int limit = promoted ? kMaxPromotedAccumulatorRegisters : kMaxAccumulatorRegisters;
  if (acc_registers > limit)
    return fmt::format("the tile needs {} accumulator registers per thread{} (limit {}): use a smaller tile{}",
                       acc_registers, promoted ? " (fp8 promotes from a second accumulator)" : "", limit,
                       !coop ? " or the cooperative schedule" : "");
  if (c.tile.stages < 0 || c.tile.stages == 1)
    return fmt::format("SM90 kernels take 0 stages (as many as fit) or 2 or more, got {}", c.tile.stages);
  if (resolved_stages(c) < 2 || shared_memory_bytes(c) > kSm90SharedMemory)
    return fmt::format("{} stages of {} bytes and the epilogue do not fit in {} bytes of shared memory",
                       std::max(resolved_stages(c), 2), stage_bytes(c), kSm90SharedMemory);
  return std::nullopt;
}

// CUTLASS 2.x's multistage (and pipelined) kernels, built for a GPU of compute capability `target_cc`.
std::optional<std::string> why_invalid_sm80(const GemmConfig& c, const MathInstruction& mi, int target_cc) {
  const auto& t = c.tile.threadblock_shape;
  if (c.tile.tile_scheduler == TileScheduler::Horizontal)
    return std::string("the horizontal swizzle cannot drive CUTLASS 2.x GemmUniversal kernels (it has no "
                       "get_tile_offset(int)); the identity swizzles and stream-K can");
  if (c.tile.kernel_schedule != KernelSchedule::Multistage || c.tile.epilogue_schedule != EpilogueSchedule::Default)
    return std::string("SM80 kernels use the multistage mainloop and the default epilogue");
  if (c.tile.cluster_shape != std::array<int, 3>{1, 1, 1}) return std::string("SM80 kernels have no clusters");
  if (c.tile.stages < 2) return fmt::format("SM80 kernels need at least 2 stages, got {}", c.tile.stages);
  if (pipelined(c) && c.tile.stages != 2)
    return fmt::format("{} {} kernels run CUTLASS's two-stage pipelined mainloop (cp.async copies at least 4 "
                       "bytes): 2 stages, got {}",
                       to_string(c.element_a), pipelined_simt(c) ? "SIMT" : "one-element", c.tile.stages);
  if (pipelined(c) && !pipelined_simt(c) && c.kind != KernelKind::Gemm && !c.fixed_channels)
    return std::string("16-bit operands of one element at a time run on GEMM kernels and fprop's fixed-channel "
                       "ones only (no grouped or other convolution kernel reads them)");
  const bool simt = c.opclass == OpcodeClass::Simt;
  if (simt && c.alignment_c != 1)
    return fmt::format("SIMT epilogues store one element of C and D at a time: alignment of C must be 1, got {}",
                       c.alignment_c);
  if (c.alignment_c * size_bits(c.element_c) > sm80_output_vector_bits(c.element_c))
    return fmt::format("SM80 kernels write 8-bit C and D in vectors of at most 8 elements (16 leave a 64-wide tile's "
                       "thread map without iterations; CUTLASS's generator takes 16 only on tiles 128 wide), got {}",
                       c.alignment_c);
  const bool eight_bit = std::min(size_bits(c.element_a), size_bits(c.element_b)) == 8;
  if (!simt && eight_bit && (c.layout_a != Layout::RowMajor || c.layout_b != Layout::ColumnMajor))
    return fmt::format("mma.sync reads 8-bit operands only K-major (ldmatrix transposes 16-bit elements only): "
                       "SM80 {} x {} kernels need a row-major A and a column-major B",
                       to_string(c.element_a), to_string(c.element_b));
  if (c.math == MathOperation::MultiplyAddMixedInputUpcast) {
    if (c.alignment_a * size_bits(c.element_a) != 128 || c.alignment_b * size_bits(c.element_b) != 128)
      return fmt::format("mixed-input kernels read A and B in 16-byte vectors ({} and {} elements), got {} and {}",
                         128 / size_bits(c.element_a), 128 / size_bits(c.element_b), c.alignment_a, c.alignment_b);
    // The 16-bit operand's K-major rows in shared memory span at most a 128-byte line (CUTLASS's crosswise
    // layouts; nvcc refused 128); CUTLASS's mixed-input tests and the interface's take 64.
    if (t[2] != 64)
      return fmt::format("mixed-input kernels take a tile K of 64 (the 16-bit operand's rows of 128 bytes), got {}",
                         t[2]);
  }
  const auto& w = c.tile.warp_count;
  if (w[0] < 1 || w[1] < 1 || w[2] != 1 || t[0] % w[0] || t[1] % w[1])
    return std::string("the warps must divide the tile's M and N");
  if (w[0] * w[1] > 8) return fmt::format("{} warps: CUTLASS's SM80 kernels run at most 8", w[0] * w[1]);
  const int warp_m = t[0] / w[0], warp_n = t[1] / w[1];
  const auto& inst = mi.shape;
  if (warp_m % inst[0] || warp_n % inst[1] || t[2] % inst[2])
    return fmt::format("warp tile {}x{}x{} does not hold whole {}x{}x{} instructions", warp_m, warp_n, t[2],
                       inst[0], inst[1], inst[2]);
  // A SIMT warp spreads its 32 threads over the warp tile: 4x8 in SM80's multistage cores
  // (default_mma_core_sm80.h), 8x4 where M > N else 4x8 in the pipelined ones (default_mma_core_simt.h).
  const int threads_m = pipelined_simt(c) && warp_m > warp_n ? 8 : 4;
  if (simt && (warp_m % threads_m || warp_n % (32 / threads_m)))
    return fmt::format("SIMT warp tile {}x{} does not spread over {}x{} threads", warp_m, warp_n, threads_m,
                       32 / threads_m);
  // The multistage cores pad shared memory by K / 32 elements, a multiple of each K-major operand's
  // lane vector (16 bytes, at most a thread's tile along M or N).
  if (simt && !pipelined_simt(c)) {
    const int lane_m = std::min(128 / size_bits(c.element_a), warp_m / threads_m);
    const int lane_n = std::min(128 / size_bits(c.element_b), warp_n / (32 / threads_m));
    const int padding = t[2] / 32;
    if ((c.layout_a == Layout::RowMajor && padding % lane_m) || (c.layout_b == Layout::ColumnMajor && padding % lane_n))
      return fmt::format("SIMT tile K {} pads shared memory by {} elements, where CUTLASS's multistage core "
                         "needs a multiple of each K-major operand's lane vector (A {}, B {})",
                         t[2], padding, lane_m, lane_n);
  }
  const int acc_registers = warp_m * warp_n / 32 * size_bits(c.element_accumulator) / 32;
  const bool three = c.math == MathOperation::MultiplyAddFastF32;
  const int limit = three ? kMax3xTf32AccumulatorRegisters
                    : simt ? kMaxSimtAccumulatorRegisters
                           : kMaxAccumulatorRegisters;
  if (acc_registers > limit)
    return fmt::format("warp tile {}x{} needs {} accumulator registers per thread (limit {}{}): use more warps or "
                       "a smaller tile",
                       warp_m, warp_n, acc_registers, limit,
                       three ? ": 3xTF32 also holds big and small operand fragments" : "");
  // Built for the plan's GPU, an SM80 kernel has that GPU's shared memory (227 KB on Hopper, 99 on 8.6, 8.9 or 12.x).
  const int shared_memory = sm80_kernel_shared_memory(target_cc);
  if (shared_memory_bytes(c) > shared_memory)
    return fmt::format("{} stages of {} bytes exceed {} bytes of shared memory ({})", c.tile.stages, stage_bytes(c),
                       shared_memory,
                       target_cc == 0 || target_cc == 80
                           ? fmt::format("an A100's; Hopper's {} where the GPU is one", kSm90SharedMemory)
                           : fmt::format("a compute capability {}.{} GPU's", target_cc / 10, target_cc % 10));
  return std::nullopt;
}

// The rules of one CUTLASS kernel, D of either layout (why_invalid adds which D a configuration may have).
std::optional<std::string> why_invalid_kernel(const GemmConfig& c, int target_cc) {
  // What the rules below divide by or multiply, in range first.
  if (auto why = why_out_of_range(c)) return why;
  if (auto why = c.fixed_channels ? why_invalid_fixed_channels(c) : std::nullopt) return why;
  if (c.pointwise) return why_invalid_pointwise(c, target_cc);
  if (auto why = c.parallel_split_k ? why_invalid_parallel_split(c, target_cc) : std::nullopt) return why;
  if (c.arch != 80 && c.arch != 90) return fmt::format("architecture sm{} is not in the catalog (80, 90)", c.arch);
  if (auto why = c.kind == KernelKind::Grouped ? why_invalid_grouped(c) : std::nullopt) return why;
  if (auto why = is_conv(c.kind) ? why_invalid_conv(c) : std::nullopt) return why;
  const MathInstruction* mi = math_instruction(c);
  if (!mi)
    return fmt::format("sm{} has no {} {} instruction for {} x {} with {} accumulation", c.arch, to_string(c.opclass),
                       to_string(c.math), to_string(c.element_a), to_string(c.element_b),
                       to_string(c.element_accumulator));
  if (auto why = why_invalid_outputs(c, *mi)) return why;
  if (auto why = why_invalid_alignments(c)) return why;
  return c.arch >= 90 ? why_invalid_sm90(c) : why_invalid_sm80(c, *mi, target_cc);
}

}  // namespace

std::optional<std::string> why_invalid(const GemmConfig& c, int target_cc) {
  if (!c.tile.swap_ab) {
    if (c.layout_c != Layout::RowMajor)
      return std::string("kernels write row-major D; a column-major D is computed as the transposed problem (and "
                         "swapped kernels, _swapab, write D^T column-major for it)");
    return why_invalid_kernel(c, target_cc);
  }
  if (c.kind != KernelKind::Gemm || c.arch < 90 || c.pointwise || c.fixed_channels)
    return std::string("swapped kernels (D^T = B^T A^T) are SM90 GEMMs");
  if (c.layout_c != Layout::RowMajor)
    return std::string("a swapped kernel's fields are those of the problem it runs, whose D is row-major");
  if (c.parallel_split_k)
    return std::string("swapped kernels split K through the stream-K tile scheduler, not parallel split-K");
  // TF32: a row-major B becomes the kernel's N-major A, read through registers (register_sourced). A must be
  // row-major, the kernel's K-major B: of a column-major A, CUTLASS would swap the operands back inside the
  // kernel, and write D through its transposed epilogue, which takes no fusion.
  if (size_bits(c.element_a) == 32) {
    if (c.math != MathOperation::MultiplyAdd || c.layout_a != Layout::RowMajor)
      return std::string("swapped TF32 kernels read a row-major A (TF32 math; 3xTF32 copies its pieces K-major)");
    const auto& t = c.tile.threadblock_shape;
    if (c.tile.kernel_schedule != KernelSchedule::TmaWarpSpecializedCooperative || (t[1] != 128 && t[1] != 256) ||
        t[2] != 32)
      return std::string("swapped TF32 kernels run the register-sourced tiles measured: cooperative, N of 128 or "
                         "256, K of 32 (narrower tiles fail to build at some stage counts)");
  }
  const GemmConfig kernel = swapped_kernel(c);
  if (auto why = why_invalid_kernel(kernel, target_cc))
    return fmt::format("its kernel on the transposed problem: {}", *why);
  return std::nullopt;
}

}  // namespace cuforge::library
