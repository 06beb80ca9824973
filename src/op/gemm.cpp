#include "cuforge/op/gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "cuforge/compile/toolchain.hpp"
#include "cuforge/core/error.hpp"
#include "cuforge/core/log.hpp"
#include "cuforge/emit/gemm.hpp"
#include "cuforge/op/gemm_check.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/gemm_kernel.hpp"
#include "cuforge/runtime/scratch.hpp"
#include "cuforge/select/gemm_cost.hpp"

namespace cuforge {
namespace {

constexpr int kDefaultSmCount = 132;  // an H100/H200's, for choosing without a GPU
constexpr int kMaxTries = 4;          // candidates tried when a kernel's can_implement refuses
constexpr size_t kScratchAlignment = 256;

// A kernel compile() built: run for every problem class it serves.
struct Compiled {
  select::GemmCandidate candidate;
  std::filesystem::path library;
};

}  // namespace

struct Gemm::Launchable {
  select::GemmCandidate candidate;
  std::shared_ptr<const runtime::GemmKernel> kernel;
  GemmLaunch launch;  // alpha and beta filled in per run
  size_t workspace_bytes = 0;
};

struct Gemm::State {
  mutable std::mutex mutex;
  select::GemmSettings settings;
  select::GemmKernels kernels;
  std::unordered_map<GemmShape, std::shared_ptr<const Launchable>, GemmShapeHash> chosen;
  std::vector<Compiled> compiled;
  std::shared_ptr<const Launchable> last;
};

Gemm::Gemm(const GemmOptions& options) : options_(options), state_(std::make_unique<State>()) {
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
  kernel_types_ = options.canonical();
  set_settings(options.settings);
}

Gemm::~Gemm() = default;
Gemm::Gemm(Gemm&&) noexcept = default;
Gemm& Gemm::operator=(Gemm&&) noexcept = default;

int Gemm::kernel_cc() const {
  std::lock_guard lock(state_->mutex);
  return state_->kernels.arch;
}

select::GemmSettings Gemm::settings() const {
  std::lock_guard lock(state_->mutex);
  return state_->settings;
}

void Gemm::set_settings(const select::GemmSettings& settings) {
  const Arch family = select::gemm_family(kernel_types_, cc_, options_.kernel_cc, settings);
  select::GemmKernels kernels = select::gemm_kernels(kernel_types_, family, settings);  // throws, changing nothing
  std::lock_guard lock(state_->mutex);
  state_->settings = settings;
  state_->kernels = std::move(kernels);
  state_->chosen.clear();
  state_->compiled.clear();
  state_->last.reset();
}

std::vector<TileDescription> Gemm::tile_descriptions() const {
  std::lock_guard lock(state_->mutex);
  return select::tile_descriptions(state_->kernels);
}

std::vector<Activation> Gemm::activations() const {
  std::lock_guard lock(state_->mutex);
  return select::activations(state_->kernels);
}

std::vector<TileScheduler> Gemm::tile_schedulers() const {
  std::lock_guard lock(state_->mutex);
  return select::tile_schedulers(state_->kernels);
}

select::GemmRanking Gemm::rank(const GemmShape& shape) const {
  std::lock_guard lock(state_->mutex);
  return select::choose(state_->kernels, state_->settings, shape, sm_count_);
}

GemmShape Gemm::kernel_shape(GemmShape shape) const {
  if (shape.empty_output())
    throw InvalidArgumentError(fmt::format("a {}x{}x{} problem in a batch of {} has an empty output: a run of it "
                                           "launches nothing, so it needs no kernel", shape.m, shape.n, shape.k,
                                           shape.batch));
  size_t zeros_bytes = 0;
  return shape.k == 0 ? op::over_zeros(kernel_types_, shape, zeros_bytes) : shape;
}

GemmShape Gemm::shape(int64_t m, int64_t n, int64_t k, int64_t batch, bool bias,
                      std::array<int, 3> alignment_caps) const {
  return op::packed_shape(options_, m, n, k, batch, bias, alignment_caps);
}

select::GemmCandidate Gemm::select(const GemmShape& problem) const {
  GemmShape shape = kernel_shape(problem);
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

KernelSource Gemm::kernel_source(const library::GemmConfig& config) const { return emit::gemm_kernel(config, cc_); }

std::vector<compile::CompileResult> Gemm::compile(const std::vector<GemmShape>& shapes, int jobs) {
  std::vector<select::GemmCandidate> chosen;
  std::vector<KernelSource> sources;
  for (const auto& shape : shapes) {
    auto ranking = rank(kernel_shape(shape));
    if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
    chosen.push_back(ranking.ranked.front());
    sources.push_back(kernel_source(chosen.back().config));
  }
  auto outcomes = compile::compile_many(sources, jobs);
  std::vector<compile::CompileResult> built;
  for (const auto& o : outcomes)
    if (o.exception) std::rethrow_exception(o.exception);
  const bool have_gpu = runtime::device_count() > 0;
  std::lock_guard lock(state_->mutex);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    built.push_back(*outcomes[i].result);
    if (have_gpu) runtime::GemmKernel::load(built.back().entry.library());  // the first run only launches
    state_->compiled.push_back({chosen[i], built.back().entry.library()});
  }
  return built;
}

GemmProblem Gemm::check(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d, double alpha,
                        double beta) const {
  return op::check_gemm(options_, device_, a, b, c, d, alpha, beta);
}

std::shared_ptr<const Gemm::Launchable> Gemm::launchable(const GemmProblem& p) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  if (auto it = s.chosen.find(p.shape); it != s.chosen.end()) return it->second;
  auto usable = [&](const select::GemmCandidate& c, std::shared_ptr<const runtime::GemmKernel> kernel) {
    GemmLaunch launch{1.0, 0.0, s.settings.activation_argument, c.splits, c.decomposition, s.settings.deterministic,
                      device_, sm_count_};
    if (!kernel->can_implement(p, launch)) return false;
    auto l = std::make_shared<Launchable>(Launchable{c, kernel, launch, kernel->workspace_size(p, launch)});
    s.chosen[p.shape] = l;
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
    if (usable(c->candidate, runtime::GemmKernel::load(c->library))) return s.chosen[p.shape];
  if (!s.compiled.empty())
    log(LogLevel::info, fmt::format("no compiled kernel can run a {}x{}x{} problem (batch {}); choosing one",
                                    p.shape.m, p.shape.n, p.shape.k, p.shape.batch));

  auto ranking = select::choose(s.kernels, s.settings, p.shape, sm_count_);
  if (ranking.ranked.empty()) throw InvalidArgumentError(ranking.why_none);
  std::string refused;
  for (size_t i = 0; i < ranking.ranked.size() && i < kMaxTries; ++i) {
    const auto& c = ranking.ranked[i];
    auto built = compile::compile(kernel_source(c.config));
    if (usable(c, runtime::GemmKernel::load(built.entry.library()))) return s.chosen[p.shape];
    refused += " " + c.config.name();
  }
  throw InvalidArgumentError(fmt::format("no kernel can run this {}x{}x{} problem; CUTLASS refused:{}", p.shape.m,
                                         p.shape.n, p.shape.k, refused));
}

std::optional<std::string> Gemm::last_kernel() const {
  std::lock_guard lock(state_->mutex);
  if (!state_->last) return std::nullopt;
  return state_->last->candidate.config.name();
}

std::optional<int> Gemm::last_splits() const {
  std::lock_guard lock(state_->mutex);
  if (!state_->last) return std::nullopt;
  return state_->last->candidate.splits;
}

runtime::RunHandle Gemm::run(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                             double alpha, double beta, cudaStream_t stream, std::function<void()> on_complete) {
  GemmProblem p = check(a, b, c, d, alpha, beta);
  runtime::device_info(device_);  // a clear error when there is no GPU or no such device
  int current = 0;
  runtime::check(cudaGetDevice(&current), "cudaGetDevice");
  if (current != device_) runtime::check(cudaSetDevice(device_), "cudaSetDevice");

  const GemmShape& s = p.shape;
  Activation activation;
  {
    std::lock_guard lock(state_->mutex);
    activation = state_->settings.activation;
  }
  if (!s.empty_output() && !(s.k == 0 && beta == 0.0 && activation != Activation::sigmoid)) {
    launch(p, alpha, beta, stream);
  } else {
    // D = activation(0) with K = 0 and beta = 0, which is 0 for every activation but the sigmoid.
    const int bytes = size_bytes(options_.element_d);
    for (int64_t i = 0; !s.empty_output() && i < s.batch; ++i)
      runtime::check(cudaMemset2DAsync(static_cast<char*>(p.d) + i * p.batch_stride_d * bytes, p.ldd * bytes, 0,
                                       s.n * bytes, s.m, stream),
                     "clearing D (K = 0)");
    std::lock_guard lock(state_->mutex);
    state_->last.reset();  // no kernel ran
  }
  return runtime::RunHandle::record(device_, stream, std::move(on_complete));
}

void Gemm::launch(const GemmProblem& p, double alpha, double beta, cudaStream_t stream) {
  // With K = 0, D = activation(beta * C): the epilogue of a kernel whose product is taken over zeros.
  size_t zeros_bytes = 0;
  if (p.shape.k == 0) op::over_zeros(kernel_types_, p.shape, zeros_bytes);
  auto l = launchable(p.shape.k == 0 ? op::over_zeros(kernel_types_, p, nullptr) : p);
  const size_t offset = (zeros_bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
  runtime::Scratch scratch(device_, stream, offset + l->workspace_bytes);
  GemmProblem problem = p;
  if (p.shape.k == 0) {
    runtime::check(cudaMemsetAsync(scratch.data(), 0, zeros_bytes, stream), "zero-filling the operands of K = 0");
    problem = op::over_zeros(kernel_types_, p, scratch.data());
  }
  GemmLaunch launch = l->launch;
  launch.alpha = alpha;
  launch.beta = beta;
  char* workspace = static_cast<char*>(scratch.data());
  l->kernel->run(problem, launch, workspace ? workspace + offset : nullptr, l->workspace_bytes, stream);
  std::lock_guard lock(state_->mutex);
  state_->last = l;
}

}  // namespace cuforge
