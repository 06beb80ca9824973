// The choice of a GEMM kernel: from a plan's types and settings to the catalog's kernels it may
// run, and from those to the candidates for one problem, best first, each refusal with its reason.
//
// The steps are those of every operation: the kernel set (catalog rows that fit the types, the
// settings applied and checked), the candidates for a problem class (alignment, decomposition,
// epilogue; split-K expansions in the heuristic decomposition), and their ranking by the
// operation's cost model (gemm_cost.hpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/library/gemm_config.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "cuforge/select/gemm_settings.hpp"

namespace cuforge::select {

// The kernels a plan may run. `family`: the catalog rows of the plan's family for its types,
// opcode class and math operation; `primary`: those with the settings' pinned tile and tile
// scheduler applied; `fallback`: SM80 rows of lower alignment for operands TMA cannot load (a pinned
// GEMM tile's: SM80's rows of its threadblock shape, where it names nothing SM90's own; else none).
struct GemmKernels {
  Arch arch = 90;
  int target_cc = 0;  // the GPU the kernels are built for (library::why_invalid; 0: the family's own)
  std::vector<const library::GemmConfig*> family;
  std::vector<library::GemmConfig> primary, fallback;
  // SM90 fprop and dgrad plans without a pinned tile: the GEMM rows of the plan's types and the
  // kind's layouts as pointwise kernels, for the classes that are GEMMs (GemmShape::pointwise).
  std::vector<library::GemmConfig> pointwise;
};

// The kernel family a plan of these types runs on a GPU of compute capability `cc`: `kernel_cc`
// when given (80 or 90), else SM90 where the target is 9.0 and the family has kernels for the
// types and settings (e.g. not TF32 with a row-major B, which wgmma cannot read), else SM80.
Arch gemm_family(const GemmTypes& kernel_types, int cc, int kernel_cc, const GemmSettings& settings,
                 KernelKind kind = KernelKind::Gemm);

// The kernels of `kind` for `kernel_types` (in the kernel's terms: GemmTypes::canonical) on
// `arch` under `settings`, built for a GPU of compute capability `target_cc` (0: the family's own; a
// pinned tile of SM80's may then use a Hopper GPU's shared memory). Throws InvalidArgumentError naming the
// setting (activation, tile scheduler, tile description, opcode class, math operation) that no kernel of
// the plan can honour, or saying that the types have no kernel.
GemmKernels gemm_kernels(const GemmTypes& kernel_types, Arch arch, const GemmSettings& settings,
                         KernelKind kind = KernelKind::Gemm, int target_cc = 0);

// What a plan of `kind` is told about its kernel set `kernels` (under `settings`), each message said once while
// it holds: SIMT kernels it did not ask for (as in the CUTLASS Python interface, types whose tensor-op kernels
// do not take the plan's layouts or math operation run on the CUDA cores, far slower; not where it asked for
// its opcode class or its types have no tensor-op kernel, as f64 convolutions), and a pinned tile whose kernels
// spill (library::spills_registers). `layout_a`, `layout_b`: the plan's own.
std::vector<std::string> kernel_set_warnings(const GemmKernels& kernels, const GemmSettings& settings,
                                             KernelKind kind, Layout layout_a, Layout layout_b);

// What the family's kernels offer: the distinct tile descriptions, and the activations and tile
// schedulers at least one of them can be built with.
std::vector<TileDescription> tile_descriptions(const GemmKernels& kernels);
std::vector<Activation> activations(const GemmKernels& kernels);
std::vector<TileScheduler> tile_schedulers(const GemmKernels& kernels);

// A kernel and how it divides K: the split-K slices and the decomposition its scheduler is told.
struct GemmCandidate {
  library::GemmConfig config;
  int splits = 1;
  Decomposition decomposition = Decomposition::Heuristic;
  double estimated_us = 0.0;
};

struct GemmRanking {
  std::vector<GemmCandidate> ranked;                          // best first
  std::vector<std::pair<std::string, std::string>> refused;  // kernel name, why it cannot run the problem
  std::string why_none;                                       // set when `ranked` is empty
};

// The candidates for a problem class, ranked by the cost model (`model`'s constants) on a device of
// `sm_count` multiprocessors. Throws InvalidArgumentError for a class no kernel runs (core's why_invalid).
GemmRanking choose(const GemmKernels& kernels, const GemmSettings& settings, const GemmShape& shape, int sm_count,
                   const CostModel& model = CostModel{});

// Whether a candidate chosen (and built) for another problem can run `shape` under `settings`:
// its alignment, epilogue and slices fit. The kernel's own can_implement has the last word.
bool serves(const GemmCandidate& candidate, const GemmSettings& settings, const GemmShape& shape);

}  // namespace cuforge::select
