// The holes the GEMM-family templates share (GEMM, parallel split-K, grouped GEMM, convolution): a kernel's
// name, types, layouts, tile and epilogue, and each family's mainloop and fusion spellings.
#pragma once

#include <string>
#include <string_view>

#include "cuforge/emit/template.hpp"
#include "cuforge/library/gemm_config.hpp"

namespace cuforge::emit {

// CUTLASS's functor (cutlass/epilogue/thread/activation.h) for an activation.
std::string_view cutlass_activation(Activation a);
// CUTLASS 2.x's threadblock swizzle for a tile scheduler (SM80 kernels).
std::string_view sm80_swizzle(TileScheduler s);
// "alpha * A @ B + beta * C", wrapped in the activation, for comments.
std::string epilogue_formula(const library::GemmConfig& c);
// The statement that passes leaky_relu's slope to a 2.x epilogue functor's parameters `epilogue`.
std::string leaky_relu_argument(const library::GemmConfig& c, std::string_view compute_type);

// Whether an SM90 kernel's epilogue reads scalars on the device: an fp8 GEMM's per-tensor scales
// (cuforge_gemm_arguments::scale_a, scale_b).
bool scales_on_device(const library::GemmConfig& c);

// name, defines, epilogue_formula, element_a/b/c/accumulator, layout_a/b/c, alignment_a/b/c,
// tile_m/n/k. `name`: the kernel the source is emitted for (a parallel split-K kernel's GEMM is
// its partials' configuration).
Holes common_holes(const library::GemmConfig& c, const std::string& name);

// Where an entry's arguments `p` hold a bias row: its pointer and its stride between batches (a
// grouped kernel's: the array of the groups' row pointers).
struct BiasRow {
  std::string_view pointer = "p.c", batch_stride = "p.batch_stride_c";
};

// SM90 (CUTLASS 3.x collective builders), for one kernel or the pointer-array (grouped) kind:
// mainloop_header, element_compute, element_d, cluster_m/n/k, kernel_schedule_name,
// kernel_schedule, epilogue_schedule, stage_count, the fusion and epilogue_thread_arguments (alpha,
// beta, leaky_relu's slope from p; for a bias row, an epilogue visitor tree reading it at `bias`).
Holes sm90_holes(const library::GemmConfig& c, const std::string& name, const BiasRow& bias = {});

// The stage count a CUTLASS 3.x collective builder of namespace `family` (gemm or conv) takes: the
// configuration's stages, or as many as fit beside the epilogue (0).
std::string stage_count(const library::GemmConfig& c, std::string_view family);

// Parallel split-K's reduction (the slices' f32 partial products summed, then the configuration's
// epilogue), for the entry that follows it: namespace split_k's ElementPartial, ElementOut, kVector,
// Reduction, epilogue_of(p) and reduce_slices(reduction, stream).
std::string split_k_reduction(const library::GemmConfig& c);

// SM80 (CUTLASS 2.x): opclass, warp_m/n/k, instruction_m/n/k, stages, activation,
// activation_arguments, math_operation, instruction_name.
Holes sm80_holes(const library::GemmConfig& c, const std::string& name);

// An SM80 kernel's mainloop, in words: CUTLASS's multistage cp.async one, or its two-stage pipelined one
// loading through registers (library::pipelined).
std::string_view sm80_mainloop_name(const library::GemmConfig& c);

}  // namespace cuforge::emit
