// What every GEMM-family plan shares (cuforge::Gemm, cuforge::GroupedGemm, cuforge::Conv2d): the
// types and target bound at construction, one settings value and the kernel set it allows, and
// the choice per problem class — remembered; else the tuning record's measured kernel for the
// class (compile/tuning_record.hpp); else a kernel compile() built that serves it; else, with
// autotune, the fastest of the cost model's best candidates, timed on the problem and recorded;
// else select::choose's candidates, built and loaded through the cache, the first whose
// can_implement accepts the problem (of the first four; a problem they all refuse is an error) — or, with first_run = fallback and that kernel not built yet,
// the best kernel already built (else a quick SM80 one) until a background build of it is ready.
// A plan may be used from several host threads at once; a kernel being built (or measured) holds no
// lock of the plan's, so runs of other classes go on meanwhile.
#pragma once

#include <cuda_runtime_api.h>

#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuforge/compile/compiler.hpp"
#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/select/gemm_choice.hpp"

namespace cuforge {

struct GemmOptions : GemmTypes {
  int cc = 0;         // GPU to build for; 0: the device's (90 without a GPU)
  int kernel_cc = 0;  // kernel family, 80 or 90; 0: the newest the target runs that has kernels for the types
  int device = -1;    // -1: CUTLASS_CUDA_DEVICE_ID, else the current device
  select::GemmSettings settings;  // the plan's settings to begin with
};

namespace op {

// A kernel compile() built: its build (the library in the cache) and the candidate chosen for its class.
struct BuiltKernel : compile::CompileResult {
  select::GemmCandidate candidate;
};

// What profile() times: the cost model's best `top` candidates, those whose names match `filter`
// (a shell glob; empty: all), built with up to `jobs` nvcc processes (0: one per core).
struct ProfileOptions {
  int top = 6;
  std::string filter;
  int jobs = 0;
  compile::ProgressCallback progress;
};

// One candidate profile() timed: its place in the cost model's ranking (0 = its pick) and the GPU
// time of one run (NaN, with `error` saying why, when it could not be built or run).
struct ProfileRow {
  select::GemmCandidate candidate;
  int predicted_rank = 0;
  double measured_us = std::numeric_limits<double>::quiet_NaN();
  std::string error;
};

// Kernel: a runtime kernel type (load, can_implement, workspace_size); Problem: what it runs, with
// a `shape` (the problem class).
template <class Kernel, class Problem>
class Plan {
 public:
  Plan(const GemmOptions& options, KernelKind kind);
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  const GemmOptions& options() const { return options_; }
  int device() const { return device_; }
  int cc() const { return cc_; }
  int kernel_cc() const;

  // The settings, and new ones: checked as a whole against the plan's kernels (InvalidArgumentError
  // names the setting no kernel can honour, and the plan is left as it was). Every problem class
  // then chooses again, and kernels compiled before are no longer used.
  select::GemmSettings settings() const;
  void set_settings(const select::GemmSettings& settings);

  // The math instruction the plan's kernels compute with.
  library::MathInstruction math_instruction() const;
  // What the plan's kernels offer: tile descriptions, fusable activations, tile schedulers.
  std::vector<TileDescription> tile_descriptions() const;
  std::vector<Activation> activations() const;
  std::vector<TileScheduler> tile_schedulers() const;

  // Every candidate for a problem class, ranked, with the refusals; and the kernel a run of the
  // class would use (the tuning record's, else a compiled kernel that serves it, else the
  // selection's first). Compile nothing.
  select::GemmRanking rank(const GemmShape& shape) const;
  select::GemmCandidate choice(const GemmShape& shape) const;
  // The ranking alone, best estimated first (what autotune times, its first autotune_candidates),
  // whatever a tuning record or a compiled kernel would choose; InvalidArgumentError where none runs.
  std::vector<select::GemmCandidate> candidates(const GemmShape& shape) const;
  // The source a configuration is built from, for this plan's target.
  KernelSource kernel_source(const library::GemmConfig& config) const;
  // A chosen kernel as PyTorch operators torch.ops.<module>.* (emit/pytorch.hpp), each run with
  // `settings` (the activation's argument, determinism) and the choice's slices.
  std::string pytorch_binding(const select::GemmCandidate& chosen, const std::string& module,
                              const select::GemmSettings& settings) const;

  // Builds the kernels the selection picks for these problem classes, in parallel with up to `jobs`
  // nvcc processes (0: one per core), and keeps them for later runs. Throws the first failure
  // (CompilationError with nvcc's log) after every build has been tried.
  std::vector<BuiltKernel> compile_shapes(const std::vector<GemmShape>& shapes, int jobs);

  // Builds (in parallel) and times candidates for the problem on `stream`, best measured first.
  // The runs read the problem's inputs (C where `beta` is not 0) and write to scratch memory,
  // never to its D. Throws InvalidArgumentError for a problem no candidate can run, or one this
  // plan cannot measure.
  std::vector<ProfileRow> profile(const Problem& problem, const ProfileOptions& options, cudaStream_t stream,
                                  double beta = 0.0);

  // The tuning record's key for a problem class: device, toolkit, CUTLASS, the plan's kernel
  // family and settings, and the class.
  std::string tuning_key(const GemmShape& shape) const;

  // The kernel the latest run launched and its split-K slices (nullopt before the first run, or
  // when it launched none).
  std::optional<std::string> last_kernel() const;
  std::optional<int> last_splits() const;

 protected:
  // Throws InvalidArgumentError on a moved-from plan: a check of a run's operands, which reads no kernels or
  // settings, refuses it as every other use does.
  void check_not_moved_from() const { (void)state(); }
  struct Launchable {
    select::GemmCandidate candidate;
    std::shared_ptr<const Kernel> kernel;
    GemmLaunch launch;  // alpha and beta filled in per run
    size_t workspace_bytes = 0;
    // A stand-in's chosen kernel, building in the background (first_run = fallback).
    std::shared_ptr<const compile::BackgroundBuild> upgrade;
    select::GemmCandidate upgrade_to;
  };
  // The kernel for the problem's class (built and loaded on first use); with autotune, a new class
  // is measured on `measure_on` with the run's `beta` (nullopt: a problem that cannot be measured
  // as it is given).
  std::shared_ptr<const Launchable> launchable(const Problem& problem, std::optional<cudaStream_t> measure_on,
                                               double beta = 0.0);
  // Records what the latest run launched (null: nothing).
  void ran(std::shared_ptr<const Launchable> launched);
  Activation activation() const;

  GemmOptions options_;
  GemmTypes kernel_types_;  // in the kernel's terms (GemmTypes::canonical)
  int device_ = 0, cc_ = 90, sm_count_ = 132;

 private:
  struct State;
  State& state() const;  // InvalidArgumentError on a moved-from plan
  // How `c` launches on a problem of `shape` (alpha 1, beta 0: the run's own are set when it runs).
  GemmLaunch launch_of(const select::GemmCandidate& c, const GemmShape& shape,
                       const select::GemmSettings& settings) const;
  std::string key_of(const GemmShape& shape) const;  // tuning_key, with the state's lock held
  // The record's entry for the class, when it names one of `ranked` (a kernel the plan may run): that
  // candidate, and how many of the model's best its measurement tried.
  struct Recorded {
    select::GemmCandidate candidate;
    int tried = 0;
  };
  std::optional<Recorded> recorded(const GemmShape& shape, const std::vector<select::GemmCandidate>& ranked) const;
  std::vector<ProfileRow> measure(const Problem& problem, std::vector<ProfileRow> rows, int jobs,
                                  const compile::ProgressCallback& progress, cudaStream_t stream, double beta);
  // first_run = fallback: a stand-in for `chosen`, which is not built yet — the best-ranked other
  // kernel already built, else the SM80 family's pick, built now (quick) — with its library; nullopt
  // when there is none (the run then waits for `chosen`).
  struct StandIn {
    select::GemmCandidate candidate;
    compile::CacheEntry library;
  };
  std::optional<StandIn> stand_in(const GemmShape& shape, const std::vector<select::GemmCandidate>& ranked,
                                  const select::GemmCandidate& chosen) const;
  KernelKind kind_;
  std::unique_ptr<State> state_;
};

}  // namespace op
}  // namespace cuforge
