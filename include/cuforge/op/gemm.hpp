// A GEMM plan: D = activation(alpha * A @ B + beta * C), types and layouts bound at construction.
//
// The plan binds its types and target, holds one settings value (select/gemm_settings.hpp), checks
// every run at the boundary (op/gemm_check.hpp), asks select/ for the kernel of each problem class,
// builds it once (compile/, disk-cached), loads it (runtime/) and remembers the choice, so that a
// repeated problem goes straight to launch. After compile(), runs use the compiled kernels for
// every problem they can run; a plan never compiled chooses per problem. A plan may be used from
// several host threads at once.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuforge/compile/compiler.hpp"
#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/core/tensor.hpp"
#include "cuforge/runtime/handle.hpp"
#include "cuforge/select/gemm_choice.hpp"

namespace cuforge {

struct GemmOptions : GemmTypes {
  int cc = 0;         // GPU to build for; 0: runtime::default_target_cc()
  int kernel_cc = 0;  // kernel family, 80 or 90; 0: the newest the target runs that has kernels for the types
  int device = -1;    // -1: CUTLASS_CUDA_DEVICE_ID, else the current device
  select::GemmSettings settings;  // the plan's settings to begin with
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
  int kernel_cc() const;

  // The settings, and new ones: checked as a whole against the plan's kernels (InvalidArgumentError
  // names the setting no kernel can honour, and the plan is left as it was). Every problem class
  // then chooses again, and kernels compiled before are no longer used.
  select::GemmSettings settings() const;
  void set_settings(const select::GemmSettings& settings);

  // What the plan's kernels offer: tile descriptions, fusable activations, tile schedulers (SM80:
  // CUTLASS 2.x's swizzles).
  std::vector<TileDescription> tile_descriptions() const;
  std::vector<Activation> activations() const;
  std::vector<TileScheduler> tile_schedulers() const;

  // The problem class of packed operands of this size on 16-byte aligned allocations, in the
  // kernel's terms (C a bias row when `bias`). Throws InvalidArgumentError naming an extent out
  // of range.
  GemmShape shape(int64_t m, int64_t n, int64_t k, int64_t batch = 1, bool bias = false,
                  std::array<int, 3> alignment_caps = {}) const;
  // The kernel a run of this class would use: a compiled kernel that can run it, else the
  // selection's first. Compiles nothing. Throws InvalidArgumentError for an empty output (a run of
  // it launches nothing) or a problem no kernel of the plan can run.
  select::GemmCandidate select(const GemmShape& shape) const;
  // Every candidate for the problem class, ranked, with the refusals.
  select::GemmRanking rank(const GemmShape& shape) const;
  // The source a configuration is built from, for this plan's target.
  KernelSource kernel_source(const library::GemmConfig& config) const;

  // Builds the kernels the selection picks for these problem classes (packed_shape), in parallel
  // with up to `jobs` nvcc processes (0: one per core), and keeps them for later runs. Throws the
  // first failure (CompilationError with nvcc's log) after every build has been tried.
  std::vector<compile::CompileResult> compile(const std::vector<GemmShape>& shapes, int jobs = 0);

  // The boundary check of run() alone (for callers that must check before staging operands).
  GemmProblem check(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d, double alpha,
                    double beta) const;

  // D = alpha * A @ B + beta * C on `stream`; C may be empty when beta == 0. Nothing is launched
  // (and D is untouched) when a check fails. `on_complete` runs in the handle's sync().
  runtime::RunHandle run(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                         double alpha = 1.0, double beta = 0.0, cudaStream_t stream = nullptr,
                         std::function<void()> on_complete = {});

  // The kernel the latest run launched and its split-K slices (nullopt before the first run, or
  // when it launched none).
  std::optional<std::string> last_kernel() const;
  std::optional<int> last_splits() const;

 private:
  struct State;
  struct Launchable;
  // The shape a kernel runs for a problem class: K = 0 as a product over zeros; an empty output refused.
  GemmShape kernel_shape(GemmShape shape) const;
  std::shared_ptr<const Launchable> launchable(const GemmProblem& problem);
  void launch(const GemmProblem& problem, double alpha, double beta, cudaStream_t stream);

  GemmOptions options_;
  GemmTypes kernel_types_;  // in the kernel's terms (GemmTypes::canonical)
  int device_ = 0, cc_ = 90, sm_count_ = 132;
  std::unique_ptr<State> state_;
};

}  // namespace cuforge
