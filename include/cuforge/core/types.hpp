// The vocabulary shared by every stage: data types, layouts, opcode classes, math operations,
// kernel and epilogue schedules, tile schedulers, architectures. Each enum has one name table,
// used both to print and to parse (kernel names round-trip through these strings).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cuforge/core/error.hpp"

namespace cuforge {

// void: "no tensor" (the seed's element_C for an epilogue without C); no kernel has void operands.
enum class DataType { f16, bf16, tf32, f32, f64, s8, u8, s32, e4m3, e5m2, void_ };
// Matrices are row- or column-major; convolution tensors are NHWC (their kernels see the implicit
// GEMM's matrices, library::conv_layouts).
enum class Layout { RowMajor, ColumnMajor, TensorNHWC };
enum class OpcodeClass { TensorOp, Simt };
// MultiplyAddFastBF16/F16 (f32 operands rounded to 16 bits) name CUTLASS operations cuforge has no
// kernels for: plans asking for them are refused.
// MultiplyAddFastAccum: fp8 wgmma accumulating in the tensor core's own accumulator for all of K
// (CUTLASS's FP8FastAccum schedules), where MultiplyAdd promotes into f32 registers every few k-blocks.
// MultiplyAddMixedInputUpcast: A and B of two types (s8 and f16 or bf16), the narrower converted to the
// wider in registers before each 16-bit mma.sync (CUTLASS 2.x's mixed-input kernels).
enum class MathOperation {
  MultiplyAdd,
  MultiplyAddFastF32,
  MultiplyAddSaturate,
  MultiplyAddFastBF16,
  MultiplyAddFastF16,
  MultiplyAddFastAccum,
  MultiplyAddMixedInputUpcast
};
// Multistage is the CUTLASS 2.x (SM80) mainloop; the TMA schedules are CUTLASS 3.x (SM90), of which
// the catalog builds the cooperative and ping-pong ones. Auto, in a pinned tile description only,
// takes each kernel's own schedule (and the epilogue that goes with it).
enum class KernelSchedule { Multistage, TmaWarpSpecializedCooperative, TmaWarpSpecializedPingpong, TmaWarpSpecialized, Auto };
enum class EpilogueSchedule { Default, TmaWarpSpecialized, TmaWarpSpecializedCooperative, NoSmemWarpSpecialized, Auto };
// Default: data-parallel tiles (SM90: the persistent scheduler; SM80: the identity swizzle over 8
// tiles). The SM80 swizzling functors of CUTLASS 2.x are the other choices there.
enum class TileScheduler { Default, StreamK, Identity1, Identity2, Identity4, Horizontal };
// How a kernel divides K-heavy work: CUTLASS's heuristic, whole tiles per CTA, K cut into a given
// number of slices reduced in the kernel (split-K), every CTA taking an equal share of
// tile-iterations (stream-K), or K slices computed as a batch and summed by a reduction kernel
// (parallel split-K).
enum class Decomposition { Heuristic, DataParallel, SplitK, StreamK, ParallelSplitK };
// The order SM90's persistent schedulers hand out tiles in (CUTLASS's RasterOrderOptions): its heuristic (along M
// where the problem has more tiles along N, else along N), or along M or N.
enum class RasterOrder { Heuristic, AlongM, AlongN };
// What a kernel computes: one GEMM (or a batch of equal ones), a group of GEMMs of their own sizes
// in one launch, or a 2-D convolution as an implicit GEMM: forward (fprop), the gradient of its
// input (dgrad) or of its filter (wgrad).
enum class KernelKind { Gemm, Grouped, Conv2dFprop, Conv2dDgrad, Conv2dWgrad };
// fprop and dgrad: A is activations (or their gradient) read through im2col, B the filter.
inline bool is_fprop_or_dgrad(KernelKind k) { return k == KernelKind::Conv2dFprop || k == KernelKind::Conv2dDgrad; }
inline bool is_conv(KernelKind k) { return is_fprop_or_dgrad(k) || k == KernelKind::Conv2dWgrad; }
// How a convolution kernel walks its activation (CUTLASS 2.x's IteratorAlgorithm): the optimized
// iterators (precomputed masks; every convolution kernel's but these), or fprop's fixed-channel ones,
// for inputs of exactly one vector of channels (a stem layer's 3 channels padded to 4 or 8).
enum class IteratorAlgorithm { Optimized, FixedChannels };
// The elementwise function an epilogue applies to alpha * A @ B + beta * C.
enum class Activation { identity, relu, leaky_relu, tanh, sigmoid, silu, hardswish, gelu };

// Compute capability of a kernel family: 80 (CUTLASS 2.x device API) or 90 (CUTLASS 3.x).
using Arch = int;

template <class E>
struct EnumNames;  // specialised below: a table of {value, name}

#define CUFORGE_ENUM_NAMES(E, ...)                                  \
  template <>                                                       \
  struct EnumNames<E> {                                             \
    static constexpr std::pair<E, std::string_view> table[] = {__VA_ARGS__}; \
    static constexpr std::string_view what = #E;                    \
  }

CUFORGE_ENUM_NAMES(DataType, {DataType::f16, "f16"}, {DataType::bf16, "bf16"},
                   {DataType::tf32, "tf32"}, {DataType::f32, "f32"}, {DataType::f64, "f64"},
                   {DataType::s8, "s8"}, {DataType::u8, "u8"}, {DataType::s32, "s32"},
                   {DataType::e4m3, "e4m3"}, {DataType::e5m2, "e5m2"}, {DataType::void_, "void"});
CUFORGE_ENUM_NAMES(Layout, {Layout::RowMajor, "row"}, {Layout::ColumnMajor, "col"}, {Layout::TensorNHWC, "nhwc"});
CUFORGE_ENUM_NAMES(OpcodeClass, {OpcodeClass::TensorOp, "tensorop"}, {OpcodeClass::Simt, "simt"});
CUFORGE_ENUM_NAMES(MathOperation, {MathOperation::MultiplyAdd, "mma"},
                   {MathOperation::MultiplyAddFastF32, "3xtf32"},
                   {MathOperation::MultiplyAddSaturate, "sat"}, {MathOperation::MultiplyAddFastBF16, "3xbf16"},
                   {MathOperation::MultiplyAddFastF16, "fastf16"},
                   {MathOperation::MultiplyAddFastAccum, "fastaccum"},
                   {MathOperation::MultiplyAddMixedInputUpcast, "mixed"});
CUFORGE_ENUM_NAMES(KernelSchedule, {KernelSchedule::Multistage, "multistage"},
                   {KernelSchedule::TmaWarpSpecializedCooperative, "coop"},
                   {KernelSchedule::TmaWarpSpecializedPingpong, "pingpong"},
                   {KernelSchedule::TmaWarpSpecialized, "tmaws"}, {KernelSchedule::Auto, "auto"});
CUFORGE_ENUM_NAMES(EpilogueSchedule, {EpilogueSchedule::Default, "default"},
                   {EpilogueSchedule::TmaWarpSpecialized, "tma"},
                   {EpilogueSchedule::TmaWarpSpecializedCooperative, "tmacoop"},
                   {EpilogueSchedule::NoSmemWarpSpecialized, "nosmem"}, {EpilogueSchedule::Auto, "auto"});
CUFORGE_ENUM_NAMES(TileScheduler, {TileScheduler::Default, "default"},
                   {TileScheduler::StreamK, "streamk"}, {TileScheduler::Identity1, "identity1"},
                   {TileScheduler::Identity2, "identity2"}, {TileScheduler::Identity4, "identity4"},
                   {TileScheduler::Horizontal, "horizontal"});
CUFORGE_ENUM_NAMES(Decomposition, {Decomposition::Heuristic, "heuristic"},
                   {Decomposition::DataParallel, "data_parallel"}, {Decomposition::SplitK, "split_k"},
                   {Decomposition::StreamK, "stream_k"}, {Decomposition::ParallelSplitK, "parallel_split_k"});
CUFORGE_ENUM_NAMES(KernelKind, {KernelKind::Gemm, "gemm"}, {KernelKind::Grouped, "grouped"},
                   {KernelKind::Conv2dFprop, "fprop"}, {KernelKind::Conv2dDgrad, "dgrad"},
                   {KernelKind::Conv2dWgrad, "wgrad"});
CUFORGE_ENUM_NAMES(IteratorAlgorithm, {IteratorAlgorithm::Optimized, "optimized"},
                   {IteratorAlgorithm::FixedChannels, "fixed_channels"});
CUFORGE_ENUM_NAMES(Activation, {Activation::identity, "identity"}, {Activation::relu, "relu"},
                   {Activation::leaky_relu, "leaky_relu"}, {Activation::tanh, "tanh"},
                   {Activation::sigmoid, "sigmoid"}, {Activation::silu, "silu"},
                   {Activation::hardswish, "hardswish"}, {Activation::gelu, "gelu"});
#undef CUFORGE_ENUM_NAMES

template <class E>
constexpr std::string_view to_string(E value) {
  for (const auto& [v, name] : EnumNames<E>::table)
    if (v == value) return name;
  return "?";
}

template <class E>
std::optional<E> try_parse(std::string_view name) {
  for (const auto& [v, n] : EnumNames<E>::table)
    if (n == name) return v;
  return std::nullopt;
}

// Throws InvalidArgumentError naming `argument` unless `value` is one of E's enumerators: a C++ caller
// may cast any integer to an enum.
template <class E>
void check_enumerator(E value, std::string_view argument) {
  if (to_string(value) != "?") return;
  std::string known;
  for (const auto& [v, n] : EnumNames<E>::table) known += (known.empty() ? "" : ", ") + std::string(n);
  throw InvalidArgumentError(std::string(argument) + ": " + std::to_string(static_cast<long long>(value)) +
                             " is not a value of enum " + std::string(EnumNames<E>::what) + " (expected one of: " + known + ")");
}

template <class E>
E parse(std::string_view name) {
  if (auto v = try_parse<E>(name)) return *v;
  std::string known;
  for (const auto& [v, n] : EnumNames<E>::table) known += (known.empty() ? "" : ", ") + std::string(n);
  throw InvalidArgumentError("unknown " + std::string(EnumNames<E>::what) + " '" + std::string(name) +
                             "' (expected one of: " + known + ")");
}

int size_bits(DataType t);
inline int size_bytes(DataType t) { return size_bits(t) / 8; }
inline bool is_fp8(DataType t) { return t == DataType::e4m3 || t == DataType::e5m2; }
// The CUTLASS C++ type spelling of a data type (cutlass::half_t, float, ...).
std::string_view cutlass_type(DataType t);
inline Layout transposed(Layout l) { return l == Layout::RowMajor ? Layout::ColumnMajor : Layout::RowMajor; }

// The accumulator a plan takes unless told, by the types of A and B: s32 for 8-bit integers, f64 for f64,
// f32 for everything else (16-bit, f32 as TF32, fp8, and s8 beside a 16-bit type).
DataType default_accumulator(DataType element_a, DataType element_b);
// Whether a decomposition cuts K into a number of slices the user gives (split-K, parallel split-K).
inline bool takes_slices(Decomposition d) { return d == Decomposition::SplitK || d == Decomposition::ParallelSplitK; }
// The argument an activation takes unless told: leaky_relu's negative slope is 0.2, the CUTLASS Python
// interface's (torch.nn.functional.leaky_relu's is 0.01); the others take none (0).
inline double default_activation_argument(Activation a) { return a == Activation::leaky_relu ? 0.2 : 0.0; }

}  // namespace cuforge
