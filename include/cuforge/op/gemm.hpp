// A GEMM plan: D = activation(alpha * A @ B + beta * C), types and layouts bound at construction.
//
// The plan keeps the catalog's configurations that fit its types, layouts and target; each run
// is checked at the boundary (op/gemm_problem.hpp), the kernel for the problem class is chosen
// (select/), built once (compile/, disk-cached) and loaded (runtime/), and the choice is kept so
// that a repeated problem goes straight to launch.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuforge/abi.h"
#include "cuforge/compile/compiler.hpp"
#include "cuforge/core/tensor.hpp"
#include "cuforge/core/tile.hpp"
#include "cuforge/library/gemm_config.hpp"
#include "cuforge/op/gemm_problem.hpp"
#include "cuforge/runtime/device_buffer.hpp"
#include "cuforge/runtime/handle.hpp"

namespace cuforge {

struct GemmOptions : op::GemmTypes {
  int cc = 0;         // GPU to build for; 0: the device's (90 when there is no GPU)
  int kernel_cc = 0;  // kernel family, 80 or 90; 0: the newest the GPU runs
  std::optional<OpcodeClass> opclass;
  std::optional<MathOperation> math;
  int device = -1;  // -1: CUTLASS_CUDA_DEVICE_ID, else the current device
};

class Gemm {
 public:
  explicit Gemm(const GemmOptions& options);
  ~Gemm();
  Gemm(Gemm&&) noexcept;
  Gemm& operator=(Gemm&&) noexcept;

  const GemmOptions& options() const { return options_; }
  int device() const { return device_; }
  int cc() const { return cc_; }
  int kernel_cc() const { return kernel_cc_; }

  // The distinct tile descriptions of the configurations that fit this plan.
  std::vector<TileDescription> tile_descriptions() const;
  // Pins the tile description; throws InvalidArgumentError saying why a description cannot be built.
  void set_tile_description(const TileDescription& tile);
  void clear_tile_description();
  std::optional<TileDescription> tile_description() const { return pinned_; }

  // The epilogue's activation, applied to alpha * A @ B + beta * C (argument: leaky_relu's slope).
  void set_activation(Activation activation, double argument = 0.0);
  Activation activation() const { return activation_; }
  double activation_argument() const { return activation_argument_; }
  // Every activation this plan's kernels can fuse.
  std::vector<Activation> activations() const;

  // Pins the tile scheduler (SM80: the threadblock swizzle) of every kernel the plan runs; nullopt
  // lets the selection choose. Throws InvalidArgumentError when the plan's kernels cannot use it.
  void set_tile_scheduler(std::optional<TileScheduler> scheduler);
  std::optional<TileScheduler> tile_scheduler() const { return scheduler_; }
  // The schedulers this plan's kernels can use (SM80: CUTLASS 2.x's swizzling functors).
  std::vector<TileScheduler> tile_schedulers() const;

  // How K-heavy problems are divided. Heuristic: the selection and CUTLASS decide; DataParallel:
  // whole tiles per CTA; StreamK: stream-K kernels only; SplitK: K cut into `splits` slices
  // (SM90: the stream-K scheduler's split-K mode; SM80: serial split-K).
  void set_decomposition(Decomposition decomposition, int splits = 1);
  Decomposition decomposition() const { return decomposition_; }
  // Stream-K and split-K partial tiles are summed in K order (true: bitwise reproducible) or as
  // they arrive (false: no waiting for turns; the rounding of f32 sums may vary between runs).
  void set_deterministic(bool deterministic);
  bool deterministic() const { return deterministic_; }
  int splits() const { return splits_; }

  // The configuration a run of this size would use, for packed, 16-byte aligned operands
  // (with a bias row for C when `bias`). In the heuristic decomposition the selection also weighs
  // split-K slices for SM90 stream-K kernels.
  library::GemmConfig select(int64_t m, int64_t n, int64_t k, int64_t batch = 1, bool bias = false) const;
  // The source a configuration is built from, for this plan's target.
  compile::KernelSource kernel_source(const library::GemmConfig& config) const;

  // The boundary check of run() alone (for callers that must check before staging operands).
  op::CanonicalGemm check(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                          double alpha, double beta) const;

  // D = alpha * A @ B + beta * C on `stream`; C may be empty when beta == 0. Nothing is launched
  // (and D is untouched) when a check fails. `on_complete` runs in the handle's sync().
  // The kernel the latest run launched and its split-K slices (nullopt before the first run, or
  // when it launched none).
  std::optional<std::string> last_kernel() const;
  std::optional<int> last_splits() const;

  runtime::RunHandle run(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                         double alpha = 1.0, double beta = 0.0, cudaStream_t stream = nullptr,
                         std::function<void()> on_complete = {});

 private:
  // A kernel and how it divides K: split-K slices and the decomposition its scheduler is told.
  struct Candidate {
    library::GemmConfig config;
    int splits = 1;
    Decomposition decomposition = Decomposition::Heuristic;
  };
  struct Launchable;
  struct Memo;
  const Launchable& launchable(const op::CanonicalGemm& problem);
  void launch(const op::CanonicalGemm& problem, double alpha, double beta, cudaStream_t stream);
  // The problem `problem` (K = 0) becomes when its product is taken over one zero-filled vector of K.
  op::CanonicalGemm over_zeros(const op::CanonicalGemm& problem, cudaStream_t stream);
  void forget_choices();  // after a setting changes: every problem class chooses again
  std::vector<Candidate> feasible(const op::CanonicalGemm& problem) const;
  std::optional<library::GemmConfig> derive(const library::GemmConfig& base, const op::CanonicalGemm& problem) const;
  std::string why_no_kernel(const op::CanonicalGemm& problem) const;
  cuforge_gemm_arguments kernel_arguments(const op::CanonicalGemm& problem, const Candidate& candidate, double alpha,
                                          double beta) const;

  GemmOptions options_;
  op::GemmTypes kernel_types_;
  int device_ = 0, cc_ = 90, kernel_cc_ = 90, sm_count_ = 132;
  std::vector<const library::GemmConfig*> candidates_;  // the plan's family
  std::vector<const library::GemmConfig*> fallback_;    // SM80, for operands TMA cannot load
  std::optional<TileDescription> pinned_;
  std::vector<library::GemmConfig> pinned_configs_;
  Activation activation_ = Activation::identity;
  double activation_argument_ = 0.0;
  std::optional<TileScheduler> scheduler_;
  Decomposition decomposition_ = Decomposition::Heuristic;
  int splits_ = 1;
  bool deterministic_ = true;
  std::unique_ptr<Memo> memo_;
  const Launchable* last_ = nullptr;  // into memo_, which keeps its entries until cleared
  runtime::DeviceBuffer zeros_;       // the A and B of K = 0 problems with beta != 0
};

}  // namespace cuforge
