#include "cuforge/op/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "cuforge/compile/toolchain.hpp"
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

namespace cuforge::op {
namespace {

constexpr int kDefaultSmCount = 132;  // an H100/H200's, for choosing without a GPU
constexpr int kMaxTries = 4;          // candidates tried when a kernel's can_implement refuses

// A kernel compile() built: run for every problem class it serves.
struct Compiled {
  select::GemmCandidate candidate;
  std::filesystem::path library;
};

}  // namespace

template <class Kernel, class Problem>
struct Plan<Kernel, Problem>::State {
  mutable std::mutex mutex;
  select::GemmSettings settings;
  select::GemmKernels kernels;
  std::unordered_map<GemmShape, std::shared_ptr<const Launchable>, GemmShapeHash> chosen;
  std::vector<Compiled> compiled;
  std::shared_ptr<const Launchable> last;
};

template <class Kernel, class Problem>
Plan<Kernel, Problem>::Plan(const GemmOptions& options, KernelKind kind)
    : options_(options), kind_(kind), state_(std::make_unique<State>()) {
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
  if (options.kernel_cc > cc_ || (options.kernel_cc == 90 && cc_ != 90))
    throw InvalidArgumentError(fmt::format("kernel_cc={} kernels cannot run on a compute capability {} target{}",
                                           options.kernel_cc, cc_,
                                           options.kernel_cc == 90 ? " (sm_90a kernels need exactly 9.0)" : ""));
  for (auto [name, type] : {std::pair{"element_A", options.element_a}, {"element_B", options.element_b},
                            {"element_C", options.element_c}, {"element_D", options.element_d},
                            {"element_accumulator", options.accumulator()}})
    if (type == DataType::void_)
      throw InvalidArgumentError(fmt::format("{}: void means no tensor; a plan without C takes element_C = element_D "
                                             "and runs with no C (beta = 0)", name));
  for (auto [name, layout] : {std::pair{"layout_A", options.layout_a}, {"layout_B", options.layout_b},
                              {"layout_C", options.layout_c}})
    if (layout == Layout::TensorNHWC)
      throw InvalidArgumentError(fmt::format("{}: TensorNHWC is the layout of convolution tensors (cuforge.op.Conv2d); "
                                             "GEMM operands are RowMajor or ColumnMajor", name));
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
int Plan<Kernel, Problem>::kernel_cc() const {
  std::lock_guard lock(state_->mutex);
  return state_->kernels.arch;
}

template <class Kernel, class Problem>
select::GemmSettings Plan<Kernel, Problem>::settings() const {
  std::lock_guard lock(state_->mutex);
  return state_->settings;
}

template <class Kernel, class Problem>
Activation Plan<Kernel, Problem>::activation() const {
  std::lock_guard lock(state_->mutex);
  return state_->settings.activation;
}

template <class Kernel, class Problem>
void Plan<Kernel, Problem>::set_settings(const select::GemmSettings& settings) {
  const Arch family = select::gemm_family(kernel_types_, cc_, options_.kernel_cc, settings, kind_);
  select::GemmKernels kernels = select::gemm_kernels(kernel_types_, family, settings, kind_);  // throws, changing nothing
  std::lock_guard lock(state_->mutex);
  state_->settings = settings;
  state_->kernels = std::move(kernels);
  state_->chosen.clear();
  state_->compiled.clear();
  state_->last.reset();
}

template <class Kernel, class Problem>
library::MathInstruction Plan<Kernel, Problem>::math_instruction() const {
  std::lock_guard lock(state_->mutex);
  return *library::math_instruction(*state_->kernels.family.front());  // a plan's family is never empty
}

template <class Kernel, class Problem>
std::vector<TileDescription> Plan<Kernel, Problem>::tile_descriptions() const {
  std::lock_guard lock(state_->mutex);
  return select::tile_descriptions(state_->kernels);
}

template <class Kernel, class Problem>
std::vector<Activation> Plan<Kernel, Problem>::activations() const {
  std::lock_guard lock(state_->mutex);
  return select::activations(state_->kernels);
}

template <class Kernel, class Problem>
std::vector<TileScheduler> Plan<Kernel, Problem>::tile_schedulers() const {
  std::lock_guard lock(state_->mutex);
  return select::tile_schedulers(state_->kernels);
}

template <class Kernel, class Problem>
select::GemmRanking Plan<Kernel, Problem>::rank(const GemmShape& shape) const {
  std::lock_guard lock(state_->mutex);
  return select::choose(state_->kernels, state_->settings, shape, sm_count_);
}

template <class Kernel, class Problem>
select::GemmCandidate Plan<Kernel, Problem>::choice(const GemmShape& shape) const {
  std::lock_guard lock(state_->mutex);
  const select::GemmCandidate* best = nullptr;
  for (const auto& c : state_->compiled)
    if (select::serves(c.candidate, state_->settings, shape) && (!best || c.candidate.estimated_us < best->estimated_us))
      best = &c.candidate;
  if (best) return *best;
  auto ranking = select::choose(state_->kernels, state_->settings, shape, sm_count_);
  if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
  return ranking.ranked.front();
}

template <class Kernel, class Problem>
KernelSource Plan<Kernel, Problem>::kernel_source(const library::GemmConfig& config) const {
  return emit::gemm_kernel(config, cc_);
}

template <class Kernel, class Problem>
std::string Plan<Kernel, Problem>::pytorch_binding(const select::GemmCandidate& chosen, const std::string& module,
                                                   const select::GemmSettings& settings) const {
  emit::TorchExport e{module, chosen.config};
  // A column-major D runs the transposed problem (GemmTypes::canonical): the export does too (GEMM
  // only; emit::pytorch_binding refuses the others).
  e.transposed = options_.layout_c == Layout::ColumnMajor;
  e.launch.activation_argument = settings.activation_argument;
  e.launch.splits = chosen.splits;
  e.launch.decomposition = chosen.decomposition;
  e.launch.deterministic = settings.deterministic;
  return emit::pytorch_binding(e);
}

template <class Kernel, class Problem>
std::vector<compile::CompileResult> Plan<Kernel, Problem>::compile_shapes(const std::vector<GemmShape>& shapes,
                                                                          int jobs) {
  std::vector<select::GemmCandidate> chosen;
  std::vector<KernelSource> sources;
  for (const auto& shape : shapes) {
    auto ranking = rank(shape);
    if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
    chosen.push_back(ranking.ranked.front());
    sources.push_back(kernel_source(chosen.back().config));
  }
  auto outcomes = compile::compile_many(sources, jobs);
  for (const auto& o : outcomes)
    if (o.exception) std::rethrow_exception(o.exception);
  const bool have_gpu = runtime::device_count() > 0;
  std::vector<compile::CompileResult> built;
  std::lock_guard lock(state_->mutex);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    built.push_back(*outcomes[i].result);
    if (have_gpu) Kernel::load(built.back().entry.library());  // the first run only launches
    state_->compiled.push_back({chosen[i], built.back().entry.library()});
  }
  return built;
}

template <class Kernel, class Problem>
auto Plan<Kernel, Problem>::launchable(const Problem& p) -> std::shared_ptr<const Launchable> {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  if (auto it = s.chosen.find(p.shape); it != s.chosen.end()) return it->second;
  auto usable = [&](const select::GemmCandidate& c, std::shared_ptr<const Kernel> kernel) {
    GemmLaunch launch{1.0, 0.0, s.settings.activation_argument, c.splits, c.decomposition, s.settings.deterministic,
                      device_, sm_count_};
    if (!kernel->can_implement(p, launch)) return false;
    s.chosen[p.shape] =
        std::make_shared<const Launchable>(Launchable{c, kernel, launch, kernel->workspace_size(p, launch)});
    return true;
  };
  // A compiled kernel that serves the problem, the fastest by the model.
  std::vector<const Compiled*> serving;
  for (const auto& c : s.compiled)
    if (select::serves(c.candidate, s.settings, p.shape)) serving.push_back(&c);
  auto estimate = [&](const Compiled* c) {
    return select::estimated_time_us(c->candidate.config, p.shape, c->candidate.splits, s.settings.deterministic,
                                     sm_count_);
  };
  std::stable_sort(serving.begin(), serving.end(),
                   [&](const Compiled* x, const Compiled* y) { return estimate(x) < estimate(y); });
  for (const Compiled* c : serving)
    if (usable(c->candidate, Kernel::load(c->library))) return s.chosen[p.shape];
  if (!s.compiled.empty())
    log(LogLevel::info, fmt::format("no compiled kernel can run a {}x{}x{} problem (batch {}); choosing one",
                                    p.shape.m, p.shape.n, p.shape.k, p.shape.batch));

  auto ranking = select::choose(s.kernels, s.settings, p.shape, sm_count_);
  if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
  std::string refused;
  for (size_t i = 0; i < ranking.ranked.size() && i < kMaxTries; ++i) {
    const auto& c = ranking.ranked[i];
    auto built = compile::compile(kernel_source(c.config));
    if (usable(c, Kernel::load(built.entry.library()))) return s.chosen[p.shape];
    refused += " " + c.config.name();
  }
  throw InvalidArgumentError(fmt::format("no kernel can run this {}x{}x{} problem; CUTLASS refused:{}", p.shape.m,
                                         p.shape.n, p.shape.k, refused));
}

template <class Kernel, class Problem>
void Plan<Kernel, Problem>::ran(std::shared_ptr<const Launchable> launched) {
  std::lock_guard lock(state_->mutex);
  state_->last = std::move(launched);
}

template <class Kernel, class Problem>
std::optional<std::string> Plan<Kernel, Problem>::last_kernel() const {
  std::lock_guard lock(state_->mutex);
  if (!state_->last) return std::nullopt;
  return state_->last->candidate.config.name();
}

template <class Kernel, class Problem>
std::optional<int> Plan<Kernel, Problem>::last_splits() const {
  std::lock_guard lock(state_->mutex);
  if (!state_->last) return std::nullopt;
  return state_->last->candidate.splits;
}

template class Plan<runtime::GemmKernel, GemmProblem>;
template class Plan<runtime::GroupedGemmKernel, GroupedProblem>;
template class Plan<runtime::ConvKernel, ConvProblem>;

}  // namespace cuforge::op
