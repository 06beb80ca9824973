// op::Plan's measurements: candidates built in parallel and timed on a problem (profile), and the
// tuning record's entry for a problem class (what autotuning measured, read back by later plans).
#include <fmt/format.h>

#include <fnmatch.h>

#include <algorithm>
#include <cmath>

#include "cuforge/compile/tuning_record.hpp"
#include "cuforge/core/error.hpp"
#include "cuforge/core/log.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/runtime/conv_kernel.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/gemm_kernel.hpp"
#include "cuforge/runtime/grouped_kernel.hpp"
#include "cuforge/runtime/scratch.hpp"
#include "cuforge/runtime/timing.hpp"
#include "plan_state.hpp"
#include "scratch_layout.hpp"
#include "tuning_key.hpp"

namespace cuforge::op {

std::optional<std::string> unmeasurable(const GemmProblem&) { return std::nullopt; }
std::optional<std::string> unmeasurable(const ConvProblem&) { return std::nullopt; }
std::optional<std::string> unmeasurable(const GroupedProblem& p) {
  auto zero_k = [](const GemmProblem& g) { return g.shape.k == 0; };
  if (std::any_of(p.list.begin(), p.list.end(), zero_k) || (p.offsets && zero_k(p.offsets->whole)))
    return std::string("a grouped problem with a group of K = 0 is not measured (its product is taken over zeros "
                       "the run places): measure one whose groups all have K >= 1");
  return std::nullopt;
}

template <class Kernel, class Problem>
std::string Plan<Kernel, Problem>::key_of(const GemmShape& shape) const {
  return op::tuning_key(device_, kind_, state().kernels.arch, kernel_types_, state().settings, shape);
}

template <class Kernel, class Problem>
std::string Plan<Kernel, Problem>::tuning_key(const GemmShape& shape) const {
  std::lock_guard lock(state().mutex);
  return key_of(shape);
}

template <class Kernel, class Problem>
auto Plan<Kernel, Problem>::recorded(const GemmShape& shape, const std::vector<select::GemmCandidate>& ranked) const
    -> std::optional<Recorded> {
  auto tuned = compile::TuningRecord().find(key_of(shape));
  if (!tuned) return std::nullopt;
  for (const auto& c : ranked)
    if (c.config.name() == tuned->kernel && c.splits == tuned->splits && c.decomposition == tuned->decomposition)
      return Recorded{c, tuned->candidates};
  log(LogLevel::info, fmt::format("the tuning record's {} (x{}) for {} is not a kernel this plan may run: ignored",
                                  tuned->kernel, tuned->splits, shape_key(shape)));
  return std::nullopt;
}

template <class Kernel, class Problem>
std::vector<ProfileRow> Plan<Kernel, Problem>::measure(const Problem& p, std::vector<ProfileRow> rows, int jobs,
                                                       const compile::ProgressCallback& progress,
                                                       cudaStream_t stream, double beta) {
  if (auto why = unmeasurable(p)) throw InvalidArgumentError(*why);
  std::vector<KernelSource> sources;
  for (const auto& r : rows) sources.push_back(kernel_source(r.candidate.config));
  auto outcomes = compile::compile_many(sources, jobs, progress);
  const size_t element = size_bytes(kernel_types_.element_d);
  const size_t scratch_d = output_bytes(p, element);
  select::GemmSettings settings = this->settings();
  for (size_t i = 0; i < rows.size(); ++i) {
    ProfileRow& row = rows[i];
    if (!outcomes[i].result) {
      row.error = outcomes[i].error;
      continue;
    }
    try {
      auto kernel = Kernel::load(outcomes[i].result->entry.library());
      // Checked and sized as launchable() does (beta 0: a grouped kernel's C pointers are only
      // uploaded when it runs), then run with the problem's beta.
      GemmLaunch launch = launch_of(row.candidate, p.shape, settings);
      if (!kernel->can_implement(p, launch)) {
        row.error = "CUTLASS's can_implement refuses the problem";
        continue;
      }
      const size_t workspace = kernel->workspace_size(p, launch);
      launch.beta = beta;
      runtime::Scratch scratch(device_, stream, scratch_d + workspace);
      char* base = static_cast<char*>(scratch.data());
      const Problem measured = with_output(p, base, element);
      row.measured_us = runtime::time_launches(
          [&] { kernel->run(measured, launch, workspace ? base + scratch_d : nullptr, workspace, stream); },
          stream).microseconds;
    } catch (const Error& e) {
      row.error = e.what();
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ProfileRow& x, const ProfileRow& y) {
    return !std::isnan(x.measured_us) && (std::isnan(y.measured_us) || x.measured_us < y.measured_us);
  });
  return rows;
}

template <class Kernel, class Problem>
std::vector<ProfileRow> Plan<Kernel, Problem>::profile(const Problem& p, const ProfileOptions& options,
                                                       cudaStream_t stream, double beta) {
  if (options.top < 1) throw InvalidArgumentError(fmt::format("top: expected 1 or more candidates, got {}", options.top));
  library::check_glob(options.filter);
  auto ranking = rank(p.shape);
  if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
  std::vector<ProfileRow> rows;
  for (size_t i = 0; i < ranking.ranked.size() && int(rows.size()) < options.top; ++i)
    if (options.filter.empty() || fnmatch(options.filter.c_str(), ranking.ranked[i].config.name().c_str(), 0) == 0)
      rows.push_back(ProfileRow{ranking.ranked[i], int(i), std::nan(""), {}});
  if (rows.empty())
    throw InvalidArgumentError(fmt::format("filter: no candidate for this problem matches '{}' ({} candidates, the "
                                           "model's first {})", options.filter, ranking.ranked.size(),
                                           ranking.ranked.front().config.name()));
  runtime::use_device(device_);
  return measure(p, std::move(rows), options.jobs, options.progress, stream, beta);
}

// The members defined here, for each plan (plan.cpp's explicit instantiation covers the others).
#define CUFORGE_PLAN_MEASUREMENTS(K, P)                                                                           \
  template std::string Plan<K, P>::key_of(const GemmShape&) const;                                                \
  template std::string Plan<K, P>::tuning_key(const GemmShape&) const;                                            \
  template auto Plan<K, P>::recorded(const GemmShape&, const std::vector<select::GemmCandidate>&) const            \
      -> std::optional<Recorded>;                                                                                 \
  template std::vector<ProfileRow> Plan<K, P>::measure(const P&, std::vector<ProfileRow>, int,                    \
                                                       const compile::ProgressCallback&, cudaStream_t, double);   \
  template std::vector<ProfileRow> Plan<K, P>::profile(const P&, const ProfileOptions&, cudaStream_t, double);
CUFORGE_PLAN_MEASUREMENTS(runtime::GemmKernel, GemmProblem)
CUFORGE_PLAN_MEASUREMENTS(runtime::GroupedGemmKernel, GroupedProblem)
CUFORGE_PLAN_MEASUREMENTS(runtime::ConvKernel, ConvProblem)
#undef CUFORGE_PLAN_MEASUREMENTS

}  // namespace cuforge::op
