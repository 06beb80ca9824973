// op::Plan's state, which its translation units share: plan.cpp (settings, the choice of a kernel per
// problem class, runs) and plan_measure.cpp (timing candidates, the tuning record).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cuforge/core/conv_problem.hpp"
#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/core/grouped_problem.hpp"
#include "cuforge/op/plan.hpp"

namespace cuforge::op {

// Why a problem cannot be measured as it is given, or nullopt. A grouped run's groups of K = 0 take
// their product over a buffer of zeros that GroupedGemm::run places: such problems are not measured.
std::optional<std::string> unmeasurable(const GemmProblem& problem);
std::optional<std::string> unmeasurable(const ConvProblem& problem);
std::optional<std::string> unmeasurable(const GroupedProblem& problem);

// A kernel compile() built: run for every problem class it serves.
struct Compiled {
  select::GemmCandidate candidate;
  std::filesystem::path library;
};

template <class Kernel, class Problem>
struct Plan<Kernel, Problem>::State {
  mutable std::mutex mutex;
  select::GemmSettings settings;
  uint64_t generation = 0;  // of the settings: what was chosen or built under older ones is not kept
  select::GemmKernels kernels;
  std::unordered_map<GemmShape, std::shared_ptr<const Launchable>, GemmShapeHash> chosen;
  std::vector<Compiled> compiled;
  std::shared_ptr<const Launchable> last;
  // Classes an autotune is measuring (the mutex let go meanwhile): another run of one waits for its choice.
  std::unordered_set<GemmShape, GemmShapeHash> measuring;
  std::condition_variable measured;
  std::vector<std::string> warned;  // select::kernel_set_warnings of the kernels, each said once while it holds
};

}  // namespace cuforge::op
