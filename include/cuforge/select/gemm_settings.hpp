// What a GEMM plan lets its user decide about the kernels it runs, as one value: the epilogue's
// activation, how K is divided, a pinned tile, the tile scheduler, the opcode class and the math
// operation. Unset choices are the selection's. Every default is decided here, once.
#pragma once

#include <cstdint>
#include <optional>

#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/core/tile.hpp"
#include "cuforge/core/types.hpp"

namespace cuforge::select {

// What a run does when its class's kernel is not built yet: wait for the build (the default: each
// class runs one kernel, so results repeat), or run at once on the best kernel already built (else a
// quick-to-build SM80 one, built first) while the chosen one builds in the background, and switch
// to it on the first run after it is ready.
enum class FirstRun { wait, fallback };

struct GemmSettings {
  Activation activation = Activation::identity;
  double activation_argument = 0.0;  // leaky_relu's negative slope (set_activation's default: 0.2)
  // The tile scheduler (SM80: CUTLASS 2.x's threadblock swizzle) of every kernel; nullopt: chosen.
  std::optional<TileScheduler> tile_scheduler;
  // Heuristic: the selection weighs data-parallel, stream-K and split-K kernels; the others force
  // one. SplitK and ParallelSplitK cut K into `splits` >= 2 slices; the others take 1.
  Decomposition decomposition = Decomposition::Heuristic;
  int splits = 1;
  // Stream-K and split-K partial tiles summed in K order (bitwise reproducible) or as they arrive.
  bool deterministic = true;
  std::optional<TileDescription> tile;  // a pinned tile description
  // Tensor cores or CUDA cores; nullopt: the tensor-op kernels where the types have any.
  std::optional<OpcodeClass> opclass;
  std::optional<MathOperation> math;  // nullopt: the family's plain multiply-add (or saturating, int8 on SM80)
  // Convolutions: the kernels of these iterators only; nullopt: chosen per problem (fixed-channel
  // kernels for fprop of one vector of channels, the CUTLASS Python interface's proposal too).
  std::optional<IteratorAlgorithm> iterator_algorithm;
  // Measured choice: the first run of a new problem class builds the cost model's best
  // `autotune_candidates` in parallel, times them and keeps the fastest in the tuning record
  // (compile/tuning_record.hpp), which later runs and processes use without timing again.
  // Default: the environment's CUFORGE_AUTOTUNE=1.
  bool autotune = autotune_by_default();
  int autotune_candidates = kDefaultAutotuneCandidates;
  // Default: the environment's CUFORGE_FIRST_RUN (wait or fallback).
  FirstRun first_run = first_run_by_default();

  // The activation and its argument (nullopt: default_activation_argument).
  void set_activation(Activation a, std::optional<double> argument = std::nullopt);
  // The decomposition, keeping the slices where it takes them: a sliced decomposition needs
  // split_k_slices set first (InvalidArgumentError says so).
  void set_decomposition(Decomposition d);
  // K slices: 1 leaves a sliced decomposition (SplitK, ParallelSplitK) for the heuristic one and keeps the
  // others (DataParallel, StreamK, Heuristic); more selects SplitK unless a sliced decomposition is already
  // chosen. At most kMaxSplits.
  void set_split_k_slices(int64_t slices);
  // Throws InvalidArgumentError naming the setting that is out of range or inconsistent.
  void check() const;

  static constexpr int kMaxSplits = cuforge::kMaxSplits;
  static constexpr int kDefaultAutotuneCandidates = 6, kMaxAutotuneCandidates = 64;
  static bool autotune_by_default();  // CUFORGE_AUTOTUNE is 1; another value but 0 is warned of
  static FirstRun first_run_by_default();  // CUFORGE_FIRST_RUN; another value is warned of and waits
};

}  // namespace cuforge::select
