// A GEMM plan: D = alpha * A @ B + beta * C, element types and layouts bound at construction.
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

#include "cuforge/compile/compiler.hpp"
#include "cuforge/core/tensor.hpp"
#include "cuforge/core/tile.hpp"
#include "cuforge/library/gemm_config.hpp"
#include "cuforge/op/gemm_problem.hpp"
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

  // The configuration a run of this size would use, for packed, 16-byte aligned operands.
  const library::GemmConfig& select(int64_t m, int64_t n, int64_t k, int64_t batch = 1) const;
  // The source a configuration is built from, for this plan's target.
  compile::KernelSource kernel_source(const library::GemmConfig& config) const;

  // The boundary check of run() alone (for callers that must check before staging operands).
  void check(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d, double beta) const {
    op::check_gemm(options_, device_, a, b, c, d, beta);
  }

  // D = alpha * A @ B + beta * C on `stream`; C may be empty when beta == 0. Nothing is launched
  // (and D is untouched) when a check fails. `on_complete` runs in the handle's sync().
  runtime::RunHandle run(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                         double alpha = 1.0, double beta = 0.0, cudaStream_t stream = nullptr,
                         std::function<void()> on_complete = {});

 private:
  struct Launchable;
  struct Memo;
  const Launchable& launchable(const op::CanonicalGemm& problem);
  std::vector<const library::GemmConfig*> feasible(const op::CanonicalGemm& problem) const;

  GemmOptions options_;
  op::GemmTypes kernel_types_;
  int device_ = 0, cc_ = 90, kernel_cc_ = 90, sm_count_ = 132;
  std::vector<const library::GemmConfig*> candidates_;  // the plan's family
  std::vector<const library::GemmConfig*> fallback_;    // SM80, for operands TMA cannot load
  std::optional<TileDescription> pinned_;
  std::vector<library::GemmConfig> pinned_configs_;
  std::unique_ptr<Memo> memo_;
};

}  // namespace cuforge
