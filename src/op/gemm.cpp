#include "cuforge/op/gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "cuforge/core/error.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/library/math_instruction.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/module.hpp"
#include "cuforge/runtime/workspace.hpp"
#include "cuforge/select/gemm_heuristic.hpp"

namespace cuforge {
namespace {

constexpr int kDefaultCc = 90;     // the target when there is no GPU to ask
constexpr int kDefaultSmCount = 132;
constexpr int kMaxTries = 4;       // candidates tried when a kernel's can_implement refuses

library::GemmFilter filter_for(const op::GemmTypes& t, Arch arch, const GemmOptions& o) {
  library::GemmFilter f;
  f.arch = arch;
  f.element_a = t.element_a;
  f.element_b = t.element_b;
  f.element_c = t.element_c;
  f.element_d = t.element_d;
  f.element_accumulator = t.element_accumulator;
  f.layout_a = t.layout_a;
  f.layout_b = t.layout_b;
  f.layout_c = t.layout_c;
  f.opclass = o.opclass;
  f.math = o.math;
  return f;
}

// The catalog's kernels for a plan on `arch`: of the opcode class it asks for, else its tensor-op
// kernels where there are any (f32 and f64 also have SIMT kernels, far slower: opclass Simt asks
// for them).
std::vector<const library::GemmConfig*> kernels_for(const op::GemmTypes& t, Arch arch, const GemmOptions& o) {
  library::GemmFilter f = filter_for(t, arch, o);
  if (o.opclass) return library::find_gemms(f);
  f.opclass = OpcodeClass::TensorOp;
  auto tensor_op = library::find_gemms(f);
  if (!tensor_op.empty()) return tensor_op;
  f.opclass.reset();
  return library::find_gemms(f);
}

static_assert(int(Decomposition::DataParallel) == CUFORGE_DECOMPOSITION_DATA_PARALLEL &&
              int(Decomposition::SplitK) == CUFORGE_DECOMPOSITION_SPLIT_K &&
              int(Decomposition::StreamK) == CUFORGE_DECOMPOSITION_STREAM_K);

bool fits(const library::GemmConfig& c, const op::CanonicalGemm& p) {
  return c.alignment_a <= p.align_a && c.alignment_b <= p.align_b && c.alignment_c <= p.align_c;
}

// Whether a kernel can divide its work as asked: split-K needs SM90's stream-K scheduler (SM80
// kernels split K serially); forcing stream-K needs a stream-K kernel; data-parallel excludes them
// unless the stream-K scheduler was pinned; parallel split-K runs data-parallel kernels over the
// slices.
bool divides_as_asked(const library::GemmConfig& c, Decomposition d, bool stream_k_pinned) {
  const bool stream_k = c.tile.tile_scheduler == TileScheduler::StreamK;
  switch (d) {
    case Decomposition::Heuristic: return true;
    case Decomposition::DataParallel: return !stream_k || stream_k_pinned;
    case Decomposition::SplitK: return stream_k || c.arch < 90;
    case Decomposition::StreamK: return stream_k;
    case Decomposition::ParallelSplitK: return !stream_k;
  }
  return false;
}

// Parallel split-K runs K's slices as one batch of equal slices, each starting on whole vectors of
// A and B: K must be a multiple of `splits` times that vector, and the problem a single matrix.
bool slices_evenly(const library::GemmConfig& c, const op::CanonicalGemm& p, int splits) {
  return p.batch == 1 && p.k % (int64_t(splits) * std::max(c.alignment_a, c.alignment_b)) == 0;
}

void with_activation(library::GemmConfig& c, Activation a) { c.activation = a; }
void with_tile_scheduler(library::GemmConfig& c, TileScheduler t) { c.tile.tile_scheduler = t; }

// The values of E that at least one of `kernels` can be built with, `set` applied.
template <class E, class Set>
std::vector<E> accepted(const std::vector<const library::GemmConfig*>& kernels, Set set) {
  std::vector<E> out;
  for (const auto& [value, name] : EnumNames<E>::table)
    if (std::any_of(kernels.begin(), kernels.end(), [&](const library::GemmConfig* c) {
          library::GemmConfig x = *c;
          set(x, value);
          return !library::why_invalid(x);
        }))
      out.push_back(value);
  return out;
}

// Why `kernel` cannot be built with `value`.
template <class E, class Set>
std::string why_refused(const library::GemmConfig& kernel, E value, Set set) {
  library::GemmConfig x = kernel;
  set(x, value);
  return library::why_invalid(x).value_or("no kernel accepts it");
}

}  // namespace

struct Gemm::Launchable {
  Candidate candidate;
  std::shared_ptr<const runtime::GemmModule> module;
  size_t workspace_bytes = 0;
};

// The kernel chosen per problem class (extents and the alignments the operands allow).
struct Gemm::Memo {
  struct Key {
    int64_t m, n, k, batch;
    int align_a, align_b, align_c;
    bool bias;
    bool operator==(const Key& o) const {
      return m == o.m && n == o.n && k == o.k && batch == o.batch && align_a == o.align_a &&
             align_b == o.align_b && align_c == o.align_c && bias == o.bias;
    }
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      size_t h = std::hash<int64_t>()(k.m);
      for (int64_t v : {k.n, k.k, k.batch, int64_t(k.bias << 24 | k.align_a << 16 | k.align_b << 8 | k.align_c)})
        h = h * 1000003u ^ std::hash<int64_t>()(v);
      return h;
    }
  };
  std::unordered_map<Key, Launchable, Hash> chosen;
};

Gemm::Gemm(const GemmOptions& options) : options_(options), memo_(std::make_unique<Memo>()) {
  const bool have_gpu = runtime::device_count() > 0;
  device_ = options.device >= 0 ? options.device : runtime::default_device();
  int device_cc = have_gpu ? runtime::device_info(device_).cc : 0;
  cc_ = options.cc ? options.cc : (have_gpu ? device_cc : kDefaultCc);
  sm_count_ = have_gpu ? runtime::device_info(device_).sm_count : kDefaultSmCount;
  if (cc_ < 80)
    throw DeviceError(fmt::format("cuforge's kernels need compute capability 8.0 or newer; the plan targets {}.{}",
                                  cc_ / 10, cc_ % 10));
  // sm_90a kernels (wgmma, TMA) run on compute capability 9.0 only; SM80 kernels run on 8.0 and later.
  kernel_cc_ = options.kernel_cc ? options.kernel_cc : (cc_ == 90 ? 90 : 80);
  if (kernel_cc_ != 80 && kernel_cc_ != 90)
    throw InvalidArgumentError(fmt::format("kernel_cc must be 80 or 90, got {}", kernel_cc_));
  if (kernel_cc_ > cc_ || (kernel_cc_ == 90 && cc_ != 90))
    throw InvalidArgumentError(fmt::format("kernel_cc={} kernels cannot run on a compute capability {} target{}",
                                           kernel_cc_, cc_, kernel_cc_ == 90 ? " (sm_90a kernels need exactly 9.0)" : ""));

  kernel_types_ = options.canonical();
  candidates_ = kernels_for(kernel_types_, kernel_cc_, options);
  if (kernel_cc_ == 90) fallback_ = kernels_for(kernel_types_, 80, options);
  if (candidates_.empty() && !options.kernel_cc && !fallback_.empty()) {
    // e.g. TF32 with a row-major B: wgmma cannot read it, the SM80 family can.
    kernel_cc_ = 80;
    candidates_ = std::move(fallback_);
    fallback_.clear();
  }
  if (candidates_.empty())
    throw InvalidArgumentError(fmt::format(
        "no sm{} kernel computes A {} x B {} with {} accumulation into C {} / D {}{}{}: see `cuforge list` for what "
        "the catalog offers",
        kernel_cc_, to_string(options.element_a), to_string(options.element_b),
        to_string(options.element_accumulator), to_string(options.element_c), to_string(options.element_d),
        options.opclass ? fmt::format(", opcode class {}", to_string(*options.opclass)) : "",
        options.math ? fmt::format(", math {}", to_string(*options.math)) : ""));
}

Gemm::~Gemm() = default;
Gemm::Gemm(Gemm&&) noexcept = default;
Gemm& Gemm::operator=(Gemm&&) noexcept = default;

std::vector<TileDescription> Gemm::tile_descriptions() const {
  std::vector<TileDescription> out;
  for (const auto* c : candidates_)
    if (std::find(out.begin(), out.end(), c->tile) == out.end()) out.push_back(c->tile);
  return out;
}

void Gemm::set_tile_description(const TileDescription& tile) {
  std::vector<library::GemmConfig> configs;
  std::string why;
  for (const auto* c : candidates_) {
    library::GemmConfig pinned = *c;
    pinned.tile = tile;
    if (auto reason = library::why_invalid(pinned)) {
      why = *reason;
      continue;
    }
    if (std::find(configs.begin(), configs.end(), pinned) == configs.end()) configs.push_back(pinned);
  }
  if (configs.empty())
    throw InvalidArgumentError(fmt::format("tile description ({}) cannot be built for this plan: {}; "
                                           "plan.tile_descriptions() lists the {} that can",
                                           tile.describe(), why, tile_descriptions().size()));
  pinned_ = tile;
  pinned_configs_ = std::move(configs);
  forget_choices();
}

void Gemm::forget_choices() {
  memo_->chosen.clear();
  last_ = nullptr;
}

void Gemm::clear_tile_description() {
  pinned_.reset();
  pinned_configs_.clear();
  forget_choices();
}

void Gemm::set_activation(Activation activation, double argument) {
  auto usable = activations();
  if (std::find(usable.begin(), usable.end(), activation) == usable.end())
    throw InvalidArgumentError(fmt::format("activation {} cannot be fused by this plan's kernels: {}",
                                           to_string(activation), why_refused(*candidates_.front(), activation,
                                                                              with_activation)));
  activation_ = activation;
  activation_argument_ = argument;
  forget_choices();
}

std::vector<Activation> Gemm::activations() const {
  // Floating-point epilogues fuse every activation (CUTLASS 3.x fusion callbacks; 2.x generic
  // epilogues); integer ones (s32 D) relu only.
  return accepted<Activation>(candidates_, with_activation);
}

std::vector<TileScheduler> Gemm::tile_schedulers() const {
  return accepted<TileScheduler>(candidates_, with_tile_scheduler);
}

void Gemm::set_tile_scheduler(std::optional<TileScheduler> scheduler) {
  if (scheduler) {
    auto usable = tile_schedulers();
    if (std::find(usable.begin(), usable.end(), *scheduler) == usable.end())
      throw InvalidArgumentError(fmt::format("tile scheduler {} cannot be used by this plan's sm{} kernels: {}",
                                             to_string(*scheduler), kernel_cc_,
                                             why_refused(*candidates_.front(), *scheduler, with_tile_scheduler)));
  }
  scheduler_ = scheduler;
  forget_choices();
}

void Gemm::set_deterministic(bool deterministic) {
  deterministic_ = deterministic;
  forget_choices();  // the workspace a kernel needs may differ
}

void Gemm::set_decomposition(Decomposition decomposition, int splits) {
  const bool sliced = decomposition == Decomposition::SplitK || decomposition == Decomposition::ParallelSplitK;
  if (sliced ? splits < 2 : splits != 1)
    throw InvalidArgumentError(fmt::format("split-K takes 2 or more slices, and only split-K takes slices: got {} "
                                           "with {} slices", to_string(decomposition), splits));
  decomposition_ = decomposition;
  splits_ = splits;
  forget_choices();
}

std::optional<library::GemmConfig> Gemm::derive(const library::GemmConfig& base, const op::CanonicalGemm& p) const {
  if (!fits(base, p)) return std::nullopt;
  library::GemmConfig c = base;
  // Forcing stream-K (and SM90 split-K, which its scheduler runs) takes each kernel's stream-K variant.
  const bool stream_k_variant = decomposition_ == Decomposition::StreamK ||
                                (decomposition_ == Decomposition::SplitK && c.arch >= 90);
  if (scheduler_)
    c.tile.tile_scheduler = *scheduler_;
  else if (stream_k_variant)
    c.tile.tile_scheduler = TileScheduler::StreamK;
  if (!divides_as_asked(c, decomposition_, scheduler_ == TileScheduler::StreamK)) return std::nullopt;
  c.activation = activation_;
  c.bias = p.bias;
  if (decomposition_ == Decomposition::ParallelSplitK) {
    c.parallel_split_k = true;
    if (!slices_evenly(c, p, splits_)) return std::nullopt;
  }
  if (library::why_invalid(c)) return std::nullopt;
  return c;
}

std::vector<Gemm::Candidate> Gemm::feasible(const op::CanonicalGemm& p) const {
  std::vector<library::GemmConfig> out;
  auto add_from = [&](auto&& bases) {
    for (const auto& base : bases)
      if (auto c = derive(*base, p); c && std::find(out.begin(), out.end(), *c) == out.end()) out.push_back(*c);
  };
  if (pinned_) {
    std::vector<const library::GemmConfig*> pinned;
    for (const auto& c : pinned_configs_) pinned.push_back(&c);
    add_from(pinned);
  } else {
    add_from(candidates_);
    if (out.empty()) add_from(fallback_);  // e.g. odd leading dimensions TMA cannot load: SM80 takes lower alignments
  }
  // Each kernel with the plan's slices. In the heuristic decomposition, SM90 stream-K kernels also
  // with each split-K slice count that leaves every slice a few K iterations, and the other kernels
  // as parallel split-K over each slice count that cuts K evenly (single matrices with f32
  // accumulation).
  const bool heuristic = decomposition_ == Decomposition::Heuristic;
  auto long_enough = [&](const library::GemmConfig& c, int s) {
    return p.k >= int64_t(s) * c.tile.threadblock_shape[2] * 4;
  };
  const size_t kernels = out.size();
  for (size_t i = 0; heuristic && i < kernels; ++i) {
    library::GemmConfig parallel = out[i];
    parallel.parallel_split_k = true;
    if (!library::why_invalid(parallel) && slices_evenly(parallel, p, select::kSplitChoices[0]) &&
        long_enough(parallel, select::kSplitChoices[0]))
      out.push_back(parallel);
  }
  std::vector<select::Choice> choices;
  for (const auto& c : out) {
    if (!c.parallel_split_k || !heuristic) choices.push_back({&c, splits_});
    if (!heuristic) continue;
    const bool stream_k = c.arch >= 90 && c.tile.tile_scheduler == TileScheduler::StreamK;
    for (int s : select::kSplitChoices)
      if ((stream_k || (c.parallel_split_k && slices_evenly(c, p, s))) && long_enough(c, s))
        choices.push_back({&c, s});
  }
  choices = select::rank(std::move(choices), {p.m, p.n, p.k, p.batch, splits_, deterministic_}, sm_count_);
  std::vector<Candidate> ranked;
  for (const auto& choice : choices) {
    Decomposition d = choice.config->parallel_split_k ? Decomposition::ParallelSplitK
                      : choice.splits > 1              ? Decomposition::SplitK
                                                       : decomposition_;
    ranked.push_back({*choice.config, choice.splits, d});
  }
  return ranked;
}

cuforge_gemm_arguments Gemm::kernel_arguments(const op::CanonicalGemm& p, const Candidate& candidate, double alpha,
                                              double beta) const {
  cuforge_gemm_arguments a{};
  a.m = p.m;
  a.n = p.n;
  a.k = p.k;
  a.batch = p.batch;
  a.a = p.a;
  a.b = p.b;
  a.c = p.c;
  a.d = p.d;
  a.lda = p.lda;
  a.ldb = p.ldb;
  a.ldc = p.ldc;
  a.ldd = p.ldd;
  a.batch_stride_a = p.batch_stride_a;
  a.batch_stride_b = p.batch_stride_b;
  a.batch_stride_c = p.batch_stride_c;
  a.batch_stride_d = p.batch_stride_d;
  a.alpha = alpha;
  a.beta = beta;
  a.activation_argument = activation_argument_;
  a.splits = candidate.splits;
  a.decomposition = int(candidate.decomposition);
  a.deterministic = deterministic_;
  a.device = device_;
  a.sm_count = sm_count_;
  return a;
}

library::GemmConfig Gemm::select(int64_t m, int64_t n, int64_t k, int64_t batch, bool bias) const {
  // Packed operands on 16-byte aligned allocations: the leading dimensions set the alignment.
  auto align = [](DataType t, int64_t ld) { return op::operand_alignment(t, 0, ld, ld, 0); };
  auto ld = [](Layout l, int64_t rows, int64_t cols) { return l == Layout::RowMajor ? cols : rows; };
  op::CanonicalGemm p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.align_a = align(options_.element_a, ld(options_.layout_a, m, k));
  p.align_b = align(options_.element_b, ld(options_.layout_b, k, n));
  p.align_c = align(options_.element_d, ld(options_.layout_c, m, n));
  p.bias = bias;
  if (options_.layout_c == Layout::ColumnMajor) {
    std::swap(p.m, p.n);
    std::swap(p.align_a, p.align_b);
  }
  auto ranked = feasible(p);
  if (ranked.empty()) throw InvalidArgumentError(why_no_kernel(p));
  return ranked.front().config;
}

std::string Gemm::why_no_kernel(const op::CanonicalGemm& p) const {
  auto fit = [&](const library::GemmConfig* c) { return fits(*c, p); };
  const bool aligned = pinned_ ? std::any_of(pinned_configs_.begin(), pinned_configs_.end(),
                                             [&](const library::GemmConfig& c) { return fits(c, p); })
                               : std::any_of(candidates_.begin(), candidates_.end(), fit) ||
                                     std::any_of(fallback_.begin(), fallback_.end(), fit);
  if (aligned)
    return fmt::format("no kernel of this plan fits its settings for a {}x{}x{} problem: decomposition {}{}{}{}",
                       p.m, p.n, p.k, to_string(decomposition_),
                       scheduler_ ? fmt::format(", tile scheduler {}", to_string(*scheduler_)) : "",
                       pinned_ ? fmt::format(", tile ({})", pinned_->describe()) : "",
                       decomposition_ == Decomposition::SplitK || decomposition_ == Decomposition::StreamK
                           ? " (SM90 split-K and stream-K need a cooperative stream-K kernel)"
                       : decomposition_ == Decomposition::ParallelSplitK
                           ? fmt::format(" (parallel split-K needs one matrix, not a batch ({} here), f32 "
                                         "accumulation, and K = {} cut into {} equal slices that each start on "
                                         "whole vectors of A and B)",
                                         p.batch, p.k, splits_)
                           : "");
  int least = INT_MAX, most = 1;  // the plan's kernels' alignments of A, in elements
  for (const auto* family : {&candidates_, &fallback_})
    for (const auto* c : *family) {
      least = std::min(least, c->alignment_a);
      most = std::max(most, c->alignment_a);
    }
  return fmt::format(
      "no kernel of this plan accepts the operands' alignment: A allows {}, B {}, C/D {} elements (pointers, "
      "contiguous extents, leading dimensions and batch strides must be multiples); this plan's {} kernels need "
      "at least {} (multiples of {} run the fastest kernels)",
      p.align_a, p.align_b, p.align_c, to_string(kernel_types_.element_a), least, most);
}

compile::KernelSource Gemm::kernel_source(const library::GemmConfig& config) const {
  return compile::gemm_kernel_source(config, cc_);
}

const Gemm::Launchable& Gemm::launchable(const op::CanonicalGemm& p) {
  Memo::Key key{p.m, p.n, p.k, p.batch, p.align_a, p.align_b, p.align_c, p.bias};
  if (auto it = memo_->chosen.find(key); it != memo_->chosen.end()) return it->second;

  auto ranked = feasible(p);
  if (ranked.empty()) throw InvalidArgumentError(why_no_kernel(p));
  std::string refused;
  for (size_t i = 0; i < ranked.size() && i < kMaxTries; ++i) {
    auto args = kernel_arguments(p, ranked[i], 1.0, 0.0);
    auto built = compile::compile(kernel_source(ranked[i].config));
    auto module = runtime::GemmModule::load(built.entry);
    if (!module->can_implement(args)) {
      refused += " " + ranked[i].config.name();
      continue;
    }
    return memo_->chosen[key] = Launchable{ranked[i], module, module->workspace_size(args)};
  }
  throw InvalidArgumentError(fmt::format("no kernel can run this {}x{}x{} problem; CUTLASS refused:{}", p.m, p.n,
                                         p.k, refused));
}

op::CanonicalGemm Gemm::check(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                              double alpha, double beta) const {
  op::CanonicalGemm p = op::check_gemm(options_, device_, a, b, c, d, beta);
  // An int32 epilogue (s32 D, exact at any K) takes whole alpha and beta, or would truncate them.
  if (library::epilogue_compute_type(*candidates_.front()) == DataType::s32)
    for (auto [name, v] : {std::pair{"alpha", alpha}, {"beta", beta}})
      if (v != std::trunc(v) || std::abs(v) > double(INT32_MAX))
        throw InvalidArgumentError(fmt::format("{}: {} outputs are computed in int32: expected a whole number, got {}",
                                               name, to_string(options_.element_d), v));
  return p;
}

std::optional<std::string> Gemm::last_kernel() const {
  if (!last_) return std::nullopt;
  return last_->candidate.config.name();
}

std::optional<int> Gemm::last_splits() const {
  if (!last_) return std::nullopt;
  return last_->candidate.splits;
}

runtime::RunHandle Gemm::run(const TensorRef& a, const TensorRef& b, const TensorRef& c, const TensorRef& d,
                             double alpha, double beta, cudaStream_t stream, std::function<void()> on_complete) {
  op::CanonicalGemm p = check(a, b, c, d, alpha, beta);
  runtime::device_info(device_);  // a clear error when there is no GPU or no such device
  int current = 0;
  runtime::check(cudaGetDevice(&current), "cudaGetDevice");
  if (current != device_) runtime::check(cudaSetDevice(device_), "cudaSetDevice");

  last_ = nullptr;
  // K = 0 and beta = 0: D = activation(0), which is 0 for every activation but the sigmoid.
  if (!p.empty_output() && p.k == 0 && beta == 0.0 && activation_ != Activation::sigmoid) {
    const int bytes = size_bytes(options_.element_d);
    for (int64_t i = 0; i < p.batch; ++i)
      runtime::check(cudaMemset2DAsync(static_cast<char*>(p.d) + i * p.batch_stride_d * bytes, p.ldd * bytes, 0,
                                       p.n * bytes, p.m, stream),
                     "clearing D (K = 0)");
  } else if (!p.empty_output()) {
    // Otherwise, with K = 0, D = activation(beta * C): the epilogue of a kernel whose product is
    // taken over zeros.
    launch(p.k == 0 ? over_zeros(p, stream) : p, alpha, beta, stream);
  }
  return runtime::RunHandle::record(device_, stream, std::move(on_complete));
}

void Gemm::launch(const op::CanonicalGemm& p, double alpha, double beta, cudaStream_t stream) {
  const Launchable& l = launchable(p);
  last_ = &l;
  void* ws = runtime::workspace(device_, stream, l.workspace_bytes);
  l.module->run(kernel_arguments(p, l.candidate, alpha, beta), ws, l.workspace_bytes, stream);
}

op::CanonicalGemm Gemm::over_zeros(const op::CanonicalGemm& p, cudaStream_t stream) {
  const DataType t = kernel_types_.element_a;
  const int64_t k = 128 / size_bits(t);  // one 16-byte vector along K
  auto padded = [&](int64_t extent) { return (extent + k - 1) / k * k; };
  op::CanonicalGemm z = p;
  z.k = k;
  // A is M x K and B is K x N in the kernel's layouts, with leading dimensions padded to whole vectors.
  const bool row_a = kernel_types_.layout_a == Layout::RowMajor, row_b = kernel_types_.layout_b == Layout::RowMajor;
  z.lda = row_a ? k : padded(p.m);
  z.ldb = row_b ? padded(p.n) : k;
  z.batch_stride_a = z.batch_stride_b = 0;
  const size_t bytes = size_t(std::max(z.lda * (row_a ? p.m : k), z.ldb * (row_b ? k : p.n))) * size_bytes(t);
  void* zeros = zeros_.reserve(device_, bytes);
  runtime::check(cudaMemsetAsync(zeros, 0, bytes, stream), "zero-filling the operands of a K = 0 product");
  z.a = z.b = zeros;  // both read-only
  z.align_a = op::operand_alignment(t, reinterpret_cast<uintptr_t>(zeros), row_a ? k : p.m, z.lda, 0);
  z.align_b = op::operand_alignment(t, reinterpret_cast<uintptr_t>(zeros), row_b ? p.n : k, z.ldb, 0);
  return z;
}

}  // namespace cuforge
