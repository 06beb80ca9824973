// One GEMM kernel configuration: everything needed to emit it, and a stable name that encodes
// all of it (so a name alone rebuilds the kernel).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cuforge/core/tile.hpp"
#include "cuforge/core/types.hpp"
#include "cuforge/library/math_instruction.hpp"

namespace cuforge::library {

struct GemmConfig {
  KernelKind kind = KernelKind::Gemm;  // grouped kernels: CUTLASS's pointer-array (SM90) and GemmGrouped (SM80)
  Arch arch = 90;
  DataType element_a = DataType::f16, element_b = DataType::f16;
  DataType element_accumulator = DataType::f32;
  DataType element_c = DataType::f16, element_d = DataType::f16;
  Layout layout_a = Layout::RowMajor, layout_b = Layout::ColumnMajor, layout_c = Layout::RowMajor;
  OpcodeClass opclass = OpcodeClass::TensorOp;
  MathOperation math = MathOperation::MultiplyAdd;
  TileDescription tile;
  int alignment_a = 8, alignment_b = 8, alignment_c = 8;  // in elements
  // The epilogue: D = activation(alpha * A @ B + beta * C), C a matrix or, with `bias`, a row
  // vector of N elements broadcast over the rows of D.
  Activation activation = Activation::identity;
  bool bias = false;
  // Parallel split-K (CUTLASS 2.x's GemmSplitKParallel): the GEMM computes each of the run's K
  // slices into its own accumulator-type matrix in the workspace (a batch over the slices), and a
  // reduction kernel sums them in a fixed order and applies the epilogue above.
  bool parallel_split_k = false;
  // Convolution kinds: a GEMM kernel (SM90, any of the GEMM catalog's schedules) run through the
  // convolution ABI, for 1x1 filters of unit stride and no padding, where the convolution is a GEMM
  // over the NHWC tensors' rows (fprop: x (N·H·W x C) by the filters' transpose; dgrad: dy by the
  // filters; wgrad: dyᵀ by x) in the kind's implicit-GEMM layouts.
  bool pointwise = false;
  // SM80 fprop over exactly `alignment_a` channels (the 3-channel stem padded to 4 or 8): CUTLASS's
  // kFixedChannels iterators pack the filter taps' channels into each K tile, where the optimized
  // iterators start a fresh K tile at every tap (7 x 7 taps of 8 channels: a quarter of each 32-deep
  // tile). No split-K.
  bool fixed_channels = false;

  // A swapped kernel (tile.swap_ab) keeps every field but the tile in the terms of the problem the
  // plan runs (D row-major M x N); swapped_kernel() is the configuration its CUTLASS kernel is
  // instantiated with.
  //
  // e.g. cuforge_sm90_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x256x64_c2x1x1_s0_coop_tmacoop_default_a8x8x8
  // (grouped kernels: cuforge_sm90_grouped_...), followed by _swapab for a swapped kernel, _pointwise
  // for a convolution's GEMM kernel, _fixedchannels for fixed-channel fprop, _splitk for parallel
  // split-K, _<activation> unless it is the identity, and _bias for a bias vector C.
  std::string name() const;
  // Equal when the names are: the fields the name encodes (SM90: not the warp count; SM80: not the cluster).
  bool operator==(const GemmConfig& o) const;
};

// The inverse of GemmConfig::name(): throws InvalidArgumentError for a malformed name, or one that
// names a kernel that cannot be built (saying why).
GemmConfig parse_gemm_name(std::string_view name);

// A layout's letter in kernel names: 'r' (row-major) or 'c'.
char layout_letter(Layout layout);

// The epilogue schedule a kernel schedule runs with (cooperative kernels: the cooperative TMA
// epilogue; ping-pong: the TMA epilogue; SM80 multistage: the default epilogue).
EpilogueSchedule epilogue_for(KernelSchedule kernel);

// The CUTLASS kernel a swapped configuration (TileDescription::swap_ab) instantiates: A and B exchanged
// and transposed (element, layout, alignment), D column-major, the tile as given.
GemmConfig swapped_kernel(const GemmConfig& config);

// SM90 wgrad's parallel split-K slices (between the images) that one launch runs: each slice's CUTLASS
// parameters, TMA descriptors and all, travel in the kernel's parameters (about 1.5 KB each of at most
// 32 KB); more slices take several launches, one after the other.
inline constexpr int kSm90ConvSlicesPerLaunch = 16;

// The kernel a parallel split-K configuration runs over the K slices: the same mainloop, writing
// the accumulators with alpha = 1 (fp8: times the per-tensor scales) into C = D of the accumulator
// type, no activation, no bias.
GemmConfig split_k_partials(const GemmConfig& config);

// The GEMM kernel a pointwise convolution kernel (GemmConfig::pointwise) is built from: the same
// configuration, of kind Gemm.
GemmConfig pointwise_gemm(const GemmConfig& config);

// The math instruction a configuration computes with, or nullptr when its family has none.
const MathInstruction* math_instruction(const GemmConfig& config);

// The operands an SM90 kernel first copies K-major into its workspace (wgmma reads 32-bit operands
// only K-major): A when it is column-major, B when it is row-major. The CUTLASS kernel itself is built
// for the K-major layouts (staged_kernel) and reads the copies.
//
// 3xTF32 copies both operands, each as three pieces along K (CUTLASS 4.2 has no SM90 3xTF32
// mainloop): x = big + small, big the TF32 value nearest x; A becomes [A_small A_big A_big] and B
// [B_big; B_small; B_big], so one TF32 GEMM over the tripled K sums A_small B_big + A_big B_small +
// A_big B_big, the small products first, as CUTLASS's SM80 3xTF32 does. Each piece is K rounded up
// to 16 bytes, the padding zeros.
struct StagedOperands {
  bool a = false, b = false;
  int k_pieces = 1;
  bool any() const { return a || b; }
  // The K of the problem the kernel runs.
  int64_t kernel_k(int64_t k) const { return k_pieces == 1 ? k : k_pieces * ((k + 3) / 4 * 4); }
};
StagedOperands staged_k_major(const GemmConfig& config);

// The CUTLASS kernel a configuration that stages operands instantiates: their K-major layouts, and
// plain TF32 products for 3xTF32 (its pieces are in the copies). Other configurations are their own.
GemmConfig staged_kernel(const GemmConfig& config);

// Whether an SM90 kernel, as instantiated (swapped_kernel, staged_kernel), reads a TF32 A that is not
// K-major: wgmma reads TF32 only K-major from shared memory, so CUTLASS's builder takes its
// register-sourced mainloop, loading A from shared memory into registers as the wgmma's A. cuforge's
// such kernels are the swapped ones of a row-major B (A = B^T, N-major): B read as it is, no copy.
bool register_sourced(const GemmConfig& kernel);

// SM80 SIMT kernels of 16- and 8-bit operands: CUTLASS's two-stage pipelined mainloop (an SM60 kernel),
// which loads one element at a time through registers, where cp.async copies at least 4 bytes (the
// CUTLASS Python interface's f16 and int8 plans switched to SIMT run such kernels).
bool pipelined_simt(const GemmConfig& config);

// SM80 kernels on CUTLASS's two-stage pipelined mainloop, loading A and B through registers at any
// alignment: the 16- and 8-bit SIMT kernels, and 16-bit tensor-op GEMM kernels that read A or B in vectors of
// under 4 bytes (one element: an odd leading dimension), which cp.async cannot copy, and fprop's fixed-channel
// kernels of one 16-bit channel.
bool pipelined(const GemmConfig& config);

// CUTLASS's fp8 mainloop without fast accumulation promotes: wgmma accumulates a few k-blocks into a
// second f32 fragment, added into the first every promotion interval, so both live in registers.
bool promotes_fp8(const GemmConfig& config);

// Kernels that build and run but spill accumulators to local memory: promoted fp8 tiles of more than
// 2 x 96 accumulator registers a thread, up to 2 x 128 (256x128 or 128x256 cooperative, 128x128 or 64x256
// ping-pong: about a third of the speed of 128x128 cooperative). Valid (a pinned tile builds, as in the
// CUTLASS Python interface), not catalog rows.
bool spills_registers(const GemmConfig& config);

// Promoted fp8 GEMM kernels whose consumer loop adds each half of the tile's N while the other half's
// wgmma run, instead of CUTLASS's, which waits for every wgmma at each promotion (the same sums in the
// same order): the 128x128x128 and 128x192x128 cooperative tiles, where an H100 ran it 0.94-1.26x
// (128x128 in 1x1, 1x2 and 2x1 clusters) and 0.98-1.18x (128x192 in 1x1 and 2x1) CUTLASS's loop on
// bench/fp8.py's four shapes (src/emit/templates/sm90_fp8_promotion.hpp).
bool overlaps_fp8_promotion(const GemmConfig& config);

// The widest vector, in bits, an SM80 tensor-op kernel writes C and D of this type in: 16 bytes, 8-bit ones 8
// (a 16-element vector leaves a 64-wide tile's thread map without iterations; CUTLASS's generator takes 16 only
// on tiles 128 wide).
int sm80_output_vector_bits(DataType c);

// The type the epilogue computes activation(alpha * acc + beta * C) in: s32 for s32 outputs (exact
// for any K, as CUTLASS's own integer kernels do; alpha and beta are then integers), else f32 on
// SM90, for s8 outputs (converted with saturation, as CUTLASS's LinearCombinationClamp does) and for a D wider
// than the accumulator (f16 accumulation into f32: C read whole), and the accumulator's type on SM80 otherwise
// (f64 for f64, f16 for f16 accumulation into f16).
DataType epilogue_compute_type(const GemmConfig& config);

// The implicit GEMM's A and B layouts of a convolution kind over NHWC tensors (C and D row-major):
// fprop reads x as N·P·Q rows of R·S·C (row-major A) and the KRSC filter K-major (column-major B);
// dgrad reads dy row-major and the filter C-contiguous (row-major B); wgrad reads dy down its
// N·P·Q columns (column-major A) and x row-major.
std::pair<Layout, Layout> conv_layouts(KernelKind kind);

// Why the configuration cannot be built (shared memory, registers, schedule rules, alignment),
// or nullopt when it can: for a GPU of compute capability `target_cc`, where 0 is the family's own
// (the catalog's rows: SM80 kernels within an A100's shared memory, which a Hopper GPU, 90, has more of and
// an 8.6, 8.9 or 12.x GPU less: its kernel set leaves out the rows that do not fit).
std::optional<std::string> why_invalid(const GemmConfig& config, int target_cc = 0);

// InvalidArgumentError where the tile's extents or the alignments are out of the range why_invalid takes (1 or
// more, tiles up to 1024): the functions below (and select::estimated_time_us) divide by them, and check first.
void check_extents(const GemmConfig& config);
// Shared memory one CTA of the kernel uses, in bytes (stages resolved as the builder would).
int64_t shared_memory_bytes(const GemmConfig& config);
// The stage count the kernel ends up with (SM90 "auto" resolved against shared memory).
int resolved_stages(const GemmConfig& config);
// How many CTAs of the kernel share an SM. CUTLASS's SM90 implicit-GEMM convolution runs one tile per
// CTA: its CTAs share an SM as their shared memory and registers allow (a fewer-stage kernel), which
// overlaps one tile's pipeline fill and epilogue with the others' mainloops. Every other kernel: 1
// (persistent kernels launch one CTA per SM; SM80 kernels' sharing is in CostModel's constants).
int ctas_per_sm(const GemmConfig& config);

}  // namespace cuforge::library
