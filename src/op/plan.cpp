#include "cuforge/op/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <utility>

#include "cuforge/compile/toolchain.hpp"
#include "cuforge/compile/tuning_record.hpp"
#include "cuforge/core/error.hpp"
#include "cuforge/core/conv_problem.hpp"
#include "cuforge/core/grouped_problem.hpp"
#include "cuforge/core/log.hpp"
#include "cuforge/emit/gemm.hpp"
#include "cuforge/emit/pytorch.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/conv_kernel.hpp"
#include "cuforge/runtime/gemm_kernel.hpp"
#include "cuforge/runtime/grouped_kernel.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "plan_state.hpp"
#include "tuning_key.hpp"

namespace cuforge::op {
namespace {

constexpr int kDefaultSmCount = 132;  // an H100/H200's, for choosing without a GPU
constexpr int kMaxTries = 4;          // candidates tried when a kernel's can_implement refuses

// The compiled kernels that serve a class, each re-estimated on it, the model's fastest first.
std::vector<std::pair<select::GemmCandidate, const Compiled*>> serving(const std::vector<Compiled>& compiled,
                                                                       const select::GemmSettings& settings,
                                                                       const GemmShape& shape, int sm_count) {
  std::vector<std::pair<select::GemmCandidate, const Compiled*>> out;
  for (const auto& c : compiled) {
    if (!select::serves(c.candidate, settings, shape)) continue;
    select::GemmCandidate here = c.candidate;
    here.estimated_us = select::estimated_time_us(here.config, shape, here.splits, settings.deterministic, sm_count);
    out.emplace_back(here, &c);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.first.estimated_us < y.first.estimated_us; });
  return out;
}

}  // namespace

template <class Kernel, class Problem>
Plan<Kernel, Problem>::Plan(const GemmOptions& options, KernelKind kind)
    : options_(options), kind_(kind), state_(std::make_unique<State>()) {
  if (options.device < -1)
    throw InvalidArgumentError(fmt::format("device: expected a CUDA device ordinal (or -1: the default), got {}",
                                           options.device));
  if (options.cc < 0)
    throw InvalidArgumentError(fmt::format("cc: expected a compute capability such as 90 (or 0: the GPU's), got {}",
                                           options.cc));
  const bool have_gpu = runtime::device_count() > 0;
  device_ = options.device >= 0 ? options.device : runtime::default_device();
  cc_ = options.cc ? options.cc : (have_gpu ? runtime::device_info(device_).cc : runtime::default_target_cc());
  sm_count_ = have_gpu ? runtime::device_info(device_).sm_count : kDefaultSmCount;
  if (cc_ < 80)
    throw DeviceError(fmt::format("cuforge's kernels need compute capability 8.0 or newer; the plan targets {}.{}",
                                  cc_ / 10, cc_ % 10));
  compile::check_target(80, cc_);
  if (options.kernel_cc != 0 && options.kernel_cc != 80 && options.kernel_cc != 90)
    throw InvalidArgumentError(fmt::format("kernel_cc must be 80 or 90, got {}", options.kernel_cc));
  if (options.kernel_cc != 0)
    if (auto why = compile::why_bad_target(options.kernel_cc, cc_))
      throw InvalidArgumentError(fmt::format("kernel_cc={}: {}", options.kernel_cc, *why));
  for (auto [name, layout] : {std::pair{"layout_A", options.layout_a}, {"layout_B", options.layout_b},
                              {"layout_C", options.layout_c}}) {
    check_enumerator(layout, name);
    if (layout == Layout::TensorNHWC)
      throw InvalidArgumentError(fmt::format("{}: TensorNHWC is the layout of convolution tensors (cuforge.op.Conv2d); "
                                             "GEMM operands are RowMajor or ColumnMajor", name));
  }
  // The accumulator last: absent, it is derived from the others.
  for (auto [name, type] : {std::pair{"element_A", options.element_a}, {"element_B", options.element_b},
                            {"element_C", options.element_c}, {"element_D", options.element_d},
                            {"element_accumulator", options.accumulator()}}) {
    check_enumerator(type, name);
    if (type == DataType::void_)
      throw InvalidArgumentError(fmt::format("{}: void means no tensor; a plan without C takes element_C = element_D "
                                             "and runs with no C (beta = 0)", name));
  }
  kernel_types_ = options.canonical();
  set_settings(options.settings);
}

template <class Kernel, class Problem>
Plan<Kernel, Problem>::~Plan() = default;
template <class Kernel, class Problem>
Plan<Kernel, Problem>::Plan(Plan&&) noexcept = default;
template <class Kernel, class Problem>
Plan<Kernel, Problem>& Plan<Kernel, Problem>::operator=(Plan&&) noexcept = default;

template <class Kernel, class Problem>
typename Plan<Kernel, Problem>::State& Plan<Kernel, Problem>::state() const {
  if (!state_)
    throw InvalidArgumentError("this plan was moved from: it holds no kernels or settings (use the plan it was moved "
                               "into, or assign it a new one)");
  return *state_;
}

template <class Kernel, class Problem>
GemmLaunch Plan<Kernel, Problem>::launch_of(const select::GemmCandidate& c, const GemmShape& shape,
                                            const select::GemmSettings& settings) const {
  GemmLaunch launch{1.0, 0.0, settings.activation_argument, c.splits, c.decomposition, settings.deterministic,
                    device_, sm_count_};
  const select::Rasterization order = select::rasterization(c.config, shape, sm_count_);
  launch.raster = order.raster;
  launch.swizzle = order.swizzle;
  return launch;
}

template <class Kernel, class Problem>
int Plan<Kernel, Problem>::kernel_cc() const {
  std::lock_guard lock(state().mutex);
  return state().kernels.arch;
}

template <class Kernel, class Problem>
select::GemmSettings Plan<Kernel, Problem>::settings() const {
  std::lock_guard lock(state().mutex);
  return state().settings;
}

template <class Kernel, class Problem>
Activation Plan<Kernel, Problem>::activation() const {
  std::lock_guard lock(state().mutex);
  return state().settings.activation;
}

template <class Kernel, class Problem>
void Plan<Kernel, Problem>::set_settings(const select::GemmSettings& settings) {
  const Arch family = select::gemm_family(kernel_types_, cc_, options_.kernel_cc, settings, kind_);
  // Throws, changing nothing.
  select::GemmKernels kernels = select::gemm_kernels(kernel_types_, family, settings, kind_, cc_);
  const auto warnings = select::kernel_set_warnings(kernels, settings, kind_, options_.layout_a, options_.layout_b);
  std::vector<std::string> said;
  {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.settings = settings;
    ++s.generation;
    s.kernels = std::move(kernels);
    s.chosen.clear();
    s.compiled.clear();
    s.last.reset();
    said = std::exchange(s.warned, warnings);
  }
  // Each said once while it holds (from construction or a setting on); outside the lock: the Python sink takes the GIL.
  for (const auto& w : warnings)
    if (std::find(said.begin(), said.end(), w) == said.end()) log(LogLevel::warning, w);
}

template <class Kernel, class Problem>
library::MathInstruction Plan<Kernel, Problem>::math_instruction() const {
  std::lock_guard lock(state().mutex);
  return *library::math_instruction(*state().kernels.family.front());  // a plan's family is never empty
}

template <class Kernel, class Problem>
std::vector<TileDescription> Plan<Kernel, Problem>::tile_descriptions() const {
  std::lock_guard lock(state().mutex);
  return select::tile_descriptions(state().kernels);
}

template <class Kernel, class Problem>
std::vector<Activation> Plan<Kernel, Problem>::activations() const {
  std::lock_guard lock(state().mutex);
  return select::activations(state().kernels);
}

template <class Kernel, class Problem>
std::vector<TileScheduler> Plan<Kernel, Problem>::tile_schedulers() const {
  std::lock_guard lock(state().mutex);
  return select::tile_schedulers(state().kernels);
}

template <class Kernel, class Problem>
select::GemmRanking Plan<Kernel, Problem>::rank(const GemmShape& shape) const {
  std::lock_guard lock(state().mutex);
  return select::choose(state().kernels, state().settings, shape, sm_count_);
}

template <class Kernel, class Problem>
std::vector<select::GemmCandidate> Plan<Kernel, Problem>::candidates(const GemmShape& shape) const {
  auto ranking = rank(shape);
  if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
  return std::move(ranking.ranked);
}

template <class Kernel, class Problem>
select::GemmCandidate Plan<Kernel, Problem>::choice(const GemmShape& shape) const {
  std::lock_guard lock(state().mutex);
  auto ranking = select::choose(state().kernels, state().settings, shape, sm_count_);
  if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
  if (runtime::device_count() > 0)  // the record is per device
    if (auto tuned = recorded(shape, ranking.ranked)) return tuned->candidate;
  // Of the compiled kernels that serve the class, the one the model estimates fastest on it.
  auto compiled = serving(state().compiled, state().settings, shape, sm_count_);
  return compiled.empty() ? ranking.ranked.front() : compiled.front().first;
}

template <class Kernel, class Problem>
KernelSource Plan<Kernel, Problem>::kernel_source(const library::GemmConfig& config) const {
  return emit::gemm_kernel(config, cc_);
}

template <class Kernel, class Problem>
std::string Plan<Kernel, Problem>::pytorch_binding(const select::GemmCandidate& chosen, const std::string& module,
                                                   const select::GemmSettings& settings) const {
  // A column-major D runs the transposed problem (GemmTypes::canonical), as the export (GEMM only) does.
  emit::TorchExport e{module, chosen.config, options_.layout_c == Layout::ColumnMajor, GemmLaunch{}};
  e.launch.activation_argument = settings.activation_argument;
  e.launch.splits = chosen.splits;
  e.launch.decomposition = chosen.decomposition;
  e.launch.deterministic = settings.deterministic;
  return emit::pytorch_binding(e);
}

template <class Kernel, class Problem>
std::vector<BuiltKernel> Plan<Kernel, Problem>::compile_shapes(const std::vector<GemmShape>& shapes, int jobs) {
  std::vector<select::GemmCandidate> chosen;
  std::vector<KernelSource> sources;
  const bool have_gpu = runtime::device_count() > 0;
  const uint64_t generation = [&] {
    std::lock_guard lock(state().mutex);
    return state().generation;
  }();
  for (const auto& shape : shapes) {
    auto ranking = rank(shape);
    if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
    std::optional<select::GemmCandidate> tuned;
    if (have_gpu) {  // the record is per device
      std::lock_guard lock(state().mutex);
      if (auto r = recorded(shape, ranking.ranked)) tuned = r->candidate;
    }
    chosen.push_back(tuned.value_or(ranking.ranked.front()));
    sources.push_back(kernel_source(chosen.back().config));
  }
  auto outcomes = compile::compile_many(sources, jobs);
  for (const auto& o : outcomes)
    if (o.exception) std::rethrow_exception(o.exception);
  std::vector<BuiltKernel> built;
  std::lock_guard lock(state().mutex);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    built.push_back({*outcomes[i].result, chosen[i]});
    if (have_gpu) Kernel::load(built.back().entry.library());  // the first run only launches
    // Chosen under settings changed since (by another thread): built, and in the cache, but not the plan's.
    if (state().generation == generation) state().compiled.push_back({chosen[i], built.back().entry.library()});
  }
  return built;
}

template <class Kernel, class Problem>
auto Plan<Kernel, Problem>::launchable(const Problem& p, std::optional<cudaStream_t> measure_on, double beta)
    -> std::shared_ptr<const Launchable> {
  State& s = state();
  std::unique_lock lock(s.mutex);
  const uint64_t generation = s.generation;
  // The candidate's kernel ready to launch on the problem, or null when CUTLASS refuses it.
  auto launchable_of = [&](const select::GemmCandidate& c,
                           std::shared_ptr<const Kernel> kernel) -> std::shared_ptr<Launchable> {
    const GemmLaunch launch = launch_of(c, p.shape, s.settings);
    if (!kernel->can_implement(p, launch)) return nullptr;
    return std::make_shared<Launchable>(Launchable{c, kernel, launch, kernel->workspace_size(p, launch), {}, {}});
  };
  auto usable = [&](const select::GemmCandidate& c, std::shared_ptr<const Kernel> kernel) {
    auto l = launchable_of(c, std::move(kernel));
    if (l) s.chosen[p.shape] = l;
    return bool(l);
  };
  if (auto it = s.chosen.find(p.shape); it != s.chosen.end()) {
    if (!it->second->upgrade || !it->second->upgrade->done()) return it->second;
    // A stand-in whose chosen kernel has finished building: switch to it.
    const std::shared_ptr<const Launchable> stand_in = it->second;
    const compile::BackgroundBuild& build = *stand_in->upgrade;
    std::string why = build.error();
    if (build.result()) {
      try {
        if (usable(stand_in->upgrade_to, Kernel::load(build.result()->entry.library()))) {
          log(LogLevel::info, fmt::format("{}: {} is built; runs switch to it from {}", shape_key(p.shape),
                                          build.name(), stand_in->candidate.config.name()));
          return s.chosen[p.shape];
        }
        why = "CUTLASS's can_implement refuses the problem";
      } catch (const Error& e) {
        why = e.what();
      }
    }
    log(LogLevel::warning, fmt::format("{}: the background build of {} cannot serve ({}); runs stay on {}",
                                       shape_key(p.shape), build.name(), why, stand_in->candidate.config.name()));
    auto kept = std::make_shared<Launchable>(*stand_in);
    kept->upgrade.reset();
    return s.chosen[p.shape] = kept;
  }
  auto ranking = select::choose(s.kernels, s.settings, p.shape, sm_count_);
  if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
  // How trying a candidate ended: chosen (it runs the problem), refused by CUTLASS, or the plan changed
  // while it built (new settings, or another thread's choice for the class): then start over.
  enum class Tried { chosen, refused, plan_changed };
  // The candidate from the cache or built, the plan's lock let go meanwhile (a first run's nvcc must not
  // hold back the plan's runs of other classes), then loaded and chosen if it runs the problem.
  auto try_candidate = [&](const select::GemmCandidate& c) {
    const KernelSource source = kernel_source(c.config);
    lock.unlock();
    // A failure ends launchable(), unlocked; so does an interrupt (a Ctrl-C stops nvcc).
    const compile::CacheEntry entry =
        compile::compile(source, compile::KernelCache::user_cache(), compile::interrupt_check()).entry;
    lock.lock();
    if (s.generation != generation || s.chosen.count(p.shape)) return Tried::plan_changed;
    return usable(c, Kernel::load(entry.library())) ? Tried::chosen : Tried::refused;
  };
  // With autotune, the class this call measures stays marked (s.measuring) until its choice is made, so
  // that other runs of it wait for that choice rather than measure again; the mark is taken off on every
  // way out (the lock held).
  bool marked = false;
  auto unmark = [&] {
    if (!marked) return;
    if (!lock.owns_lock()) lock.lock();
    marked = false;
    s.measuring.erase(p.shape);
    s.measured.notify_all();
  };
  struct OnExit {
    decltype(unmark)& run;
    ~OnExit() { run(); }
  } unmark_on_exit{unmark};  // destroyed before `lock`
  auto start_over = [&] {
    unmark();
    lock.unlock();
    return launchable(p, measure_on, beta);
  };

  // first_run = fallback, `chosen` not built yet: a built (or quickly built) kernel runs now, `chosen` once built.
  auto stood_in = [&](const select::GemmCandidate& chosen) {
    if (s.settings.first_run != select::FirstRun::fallback) return false;
    const KernelSource source = kernel_source(chosen.config);
    if (compile::cached(source)) return false;
    // Started first: if no stand-in can run, the run waits for this build (its key's lock).
    auto upgrade = compile::BackgroundBuild::start(source);
    std::shared_ptr<Launchable> l;
    try {
      if (auto c = stand_in(p.shape, ranking.ranked, chosen))
        l = launchable_of(c->candidate, Kernel::load(c->library.library()));
    } catch (const Error& e) {
      log(LogLevel::warning, fmt::format("{}: no stand-in for {} ({}); the run waits for it", shape_key(p.shape),
                                         chosen.config.name(), e.what()));
    }
    if (!l) return false;
    l->upgrade = std::move(upgrade);
    l->upgrade_to = chosen;
    log(LogLevel::info, fmt::format("{}: {} runs while {} builds in the background", shape_key(p.shape),
                                    l->candidate.config.name(), chosen.config.name()));
    s.chosen[p.shape] = l;
    return true;
  };

  // With autotune, a new class is measured (never while a graph is being captured: nothing runs then).
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  const bool autotuning = s.settings.autotune && measure_on && !unmeasurable(p) &&
                          cudaStreamIsCapturing(*measure_on, &capture) == cudaSuccess &&
                          capture == cudaStreamCaptureStatusNone;

  // The tuning record's measurement for the class. An autotuning plan that asks for more candidates than
  // the measurement tried measures again, before any compiled kernel could serve: it asked for the search.
  const auto record = recorded(p.shape, ranking.ranked);
  const size_t wanted = std::min<size_t>(size_t(s.settings.autotune_candidates), ranking.ranked.size());
  const bool remeasure = autotuning && record && size_t(record->tried) < wanted;
  if (remeasure)
    log(LogLevel::info, fmt::format("{}: the tuning record's measurement timed the model's best {}; "
                                    "autotune_candidates asks for {}: measuring again",
                                    shape_key(p.shape), record->tried, wanted));
  if (record && !remeasure) {
    const Tried tried = stood_in(record->candidate) ? Tried::chosen : try_candidate(record->candidate);
    if (tried == Tried::plan_changed) return start_over();
    if (tried == Tried::chosen) {
      log(LogLevel::info,
          fmt::format("{}: the tuning record's {}", shape_key(p.shape), record->candidate.config.name()));
      return s.chosen[p.shape];
    }
  }

  // A compiled kernel that serves the problem, the fastest by the model.
  if (!remeasure) {
    for (const auto& [candidate, c] : serving(s.compiled, s.settings, p.shape, sm_count_))
      if (usable(candidate, Kernel::load(c->library))) {
        log(LogLevel::info, fmt::format("{}: the compiled {}", shape_key(p.shape), candidate.config.name()));
        return s.chosen[p.shape];
      }
    if (!s.compiled.empty())
      log(LogLevel::info, fmt::format("no compiled kernel can run a {}x{}x{} problem (batch {}); choosing one",
                                      p.shape.m, p.shape.n, p.shape.k, p.shape.batch));
  }

  // With autotune, the fastest of the model's best, measured on the problem and recorded.
  if (autotuning) {
    if (s.measuring.count(p.shape)) {  // another thread measures this class: its choice, once made
      s.measured.wait(lock, [&] { return !s.measuring.count(p.shape); });
      lock.unlock();
      return launchable(p, measure_on, beta);
    }
    std::vector<ProfileRow> rows;
    for (size_t i = 0; i < ranking.ranked.size() && int(i) < s.settings.autotune_candidates; ++i)
      rows.push_back(ProfileRow{ranking.ranked[i], int(i), std::nan(""), {}});
    s.measuring.insert(p.shape);
    marked = true;
    lock.unlock();  // measuring reads the settings; runs of other classes go on meanwhile
    rows = measure(p, std::move(rows), 0, {}, *measure_on, beta);
    lock.lock();
    // The settings changed meanwhile: what was measured is another plan's.
    if (s.generation != generation) return start_over();
    if (auto it = s.chosen.find(p.shape); it != s.chosen.end()) return it->second;  // another thread's
    if (!rows.empty() && !std::isnan(rows.front().measured_us)) {
      compile::TunedKernel tuned{rows.front().candidate.config.name(), rows.front().candidate.splits,
                                 rows.front().candidate.decomposition, rows.front().measured_us, {}, int(rows.size())};
      for (const auto& r : rows)
        if (!std::isnan(r.measured_us))
          tuned.measured.emplace_back(fmt::format("{} x{}", r.candidate.config.name(), r.candidate.splits),
                                      r.measured_us);
      compile::TuningRecord().store(key_of(p.shape), tuned);
      log(LogLevel::info, fmt::format("{}: autotuned {} ({:.1f} us; the model's pick {}, rank {})", shape_key(p.shape),
                                      tuned.kernel, tuned.microseconds, ranking.ranked.front().config.name(),
                                      rows.front().predicted_rank));
      const Tried tried = try_candidate(rows.front().candidate);  // built by the measurement
      if (tried == Tried::plan_changed) return start_over();
      if (tried == Tried::chosen) return s.chosen[p.shape];
    } else {
      log(LogLevel::warning, fmt::format("{}: autotune measured none of {} candidates ({}); the model's choice runs",
                                         shape_key(p.shape), rows.size(), rows.empty() ? "" : rows.front().error));
    }
  }

  if (stood_in(ranking.ranked.front())) return s.chosen[p.shape];

  std::string refused;
  for (size_t i = 0; i < ranking.ranked.size() && i < kMaxTries; ++i) {
    const auto& c = ranking.ranked[i];
    const Tried tried = try_candidate(c);
    if (tried == Tried::plan_changed) return start_over();
    if (tried == Tried::chosen) {
      log(LogLevel::info, fmt::format("{}: {}{} (the model's choice{})", shape_key(p.shape), c.config.name(),
                                      c.splits > 1 ? fmt::format(" x{}", c.splits) : "",
                                      i ? fmt::format(", its {} before refused by CUTLASS", i) : ""));
      return s.chosen[p.shape];
    }
    refused += " " + c.config.name();
  }
  throw InvalidArgumentError(fmt::format("no kernel can run this {}x{}x{} problem; CUTLASS refused:{}", p.shape.m,
                                         p.shape.n, p.shape.k, refused));
}

template <class Kernel, class Problem>
auto Plan<Kernel, Problem>::stand_in(const GemmShape& shape, const std::vector<select::GemmCandidate>& ranked,
                                    const select::GemmCandidate& chosen) const -> std::optional<StandIn> {
  constexpr size_t kBuiltRanks = 32;  // how far down the ranking a built kernel is looked for
  for (size_t i = 0; i < ranked.size() && i < kBuiltRanks; ++i)
    if (!(ranked[i].config == chosen.config))
      if (auto built = compile::cached(kernel_source(ranked[i].config))) return StandIn{ranked[i], *built};
  if (state().kernels.arch < 90) return std::nullopt;  // the chosen kernel is itself a quick SM80 build
  try {
    auto tensor_op = state().settings;  // never SIMT kernels the plan did not ask for (fp8 has only those on SM80)
    tensor_op.opclass = tensor_op.opclass.value_or(OpcodeClass::TensorOp);
    const auto sm80 = select::gemm_kernels(kernel_types_, 80, tensor_op, kind_, cc_);
    const auto ranking = select::choose(sm80, state().settings, shape, sm_count_);
    if (ranking.ranked.empty() || ranking.ranked.front().config == chosen.config) return std::nullopt;
    // Built with the plan's lock held: no interrupt check, which takes the GIL that a thread waiting on the lock
    // may hold (a quick SM80 build, which a Ctrl-C waits out).
    return StandIn{ranking.ranked.front(), compile::compile(kernel_source(ranking.ranked.front().config)).entry};
  } catch (const InvalidArgumentError&) {  // no SM80 kernels for these types or settings
    return std::nullopt;
  }
}

template <class Kernel, class Problem>
void Plan<Kernel, Problem>::ran(std::shared_ptr<const Launchable> launched) {
  std::lock_guard lock(state().mutex);
  state().last = std::move(launched);
}

template <class Kernel, class Problem>
std::optional<std::string> Plan<Kernel, Problem>::last_kernel() const {
  std::lock_guard lock(state().mutex);
  if (!state().last) return std::nullopt;
  return state().last->candidate.config.name();
}

template <class Kernel, class Problem>
std::optional<int> Plan<Kernel, Problem>::last_splits() const {
  std::lock_guard lock(state().mutex);
  if (!state().last) return std::nullopt;
  return state().last->candidate.splits;
}

template class Plan<runtime::GemmKernel, GemmProblem>;
template class Plan<runtime::GroupedGemmKernel, GroupedProblem>;
template class Plan<runtime::ConvKernel, ConvProblem>;

}  // namespace cuforge::op
