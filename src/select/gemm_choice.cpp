#include "cuforge/select/gemm_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <tuple>
#include <utility>

#include "cuforge/core/error.hpp"
#include "cuforge/select/gemm_cost.hpp"

namespace cuforge::select {
namespace {

using library::GemmConfig;

// Serial split-K passes each output tile from slice to slice through memory: past a few slices the queue
// costs more than the parallelism gains.
constexpr int kMaxSerialSplits = 16;

// The operands' alignments allow the kernel's vectors. An operand the kernel copies K-major first (library::
// staged_k_major) is read element by element by the copy and along K, in vectors, from the copy (rows padded to
// 16 bytes): K must hold whole vectors, unless the kernel runs the padded K of 3xTF32's pieces (the padding zeros).
// Tensor-op kernels loading 16-bit operands an element at a time (library::pipelined) serve what no other kernel
// can: an operand of rows narrower than 4 bytes (cp.async copies 4 at least, and the other 16-bit kernels' epilogues
// store as much), where their cp.async twins of one element in C/D (an f32 D) serve a wider one as fast.
bool fits(const GemmConfig& c, const GemmShape& p) {
  const library::StagedOperands staged = library::staged_k_major(c);
  const bool any_k = staged.k_pieces > 1;
  const auto narrow = [](int alignment, DataType t) { return alignment * size_bits(t) < 32; };
  if (library::pipelined(c) && !library::pipelined_simt(c) && !narrow(p.align_a, c.element_a) &&
      !narrow(p.align_b, c.element_b) && !narrow(p.align_c, c.element_c))
    return false;
  // 3xTF32 on SM90 runs its pieces along a K three times as long: within the kernels' 32-bit extents too.
  if (staged.any() && staged.kernel_k(p.k) > INT32_MAX) return false;
  return (staged.a ? any_k || p.k % c.alignment_a == 0 : c.alignment_a <= p.align_a) &&
         (staged.b ? any_k || p.k % c.alignment_b == 0 : c.alignment_b <= p.align_b) && c.alignment_c <= p.align_c;
}

// The rows of M a swapped kernel's cluster holds: its tiles' N, one tile per CTA along the cluster's N.
int64_t swapped_rows(const GemmConfig& c) {
  return int64_t(c.tile.threadblock_shape[1]) * c.tile.cluster_shape[1];
}

// A swapped kernel (TileDescription::swap_ab) is offered where the problem's M fits one cluster's
// tiles along N: the decode-style problems it is for, whose M would fill a small part of an unswapped
// tile. A pinned tile runs whatever M. TF32's swapped kernels swap to read a row-major B through
// registers (library::register_sourced), not for a small M: they are offered where M fills more than
// half their tile's N (H100, cuforge profile: at 16 to 64 rows SM80's kernels ran 1.2-1.4x as fast as
// the 128-wide ones, which ran ahead from 96 rows on).
bool swap_fits(const GemmConfig& c, const GemmSettings& s, const GemmShape& p) {
  if (!c.tile.swap_ab || s.tile) return true;
  if (c.element_a == DataType::f32) return 2 * p.m > c.tile.threadblock_shape[1];
  return p.m <= swapped_rows(c);
}

static_assert(int(Decomposition::DataParallel) == 1 && int(Decomposition::SplitK) == 2 &&
              int(Decomposition::StreamK) == 3, "CUTLASS's DecompositionMode order (runtime/gemm_kernel.cpp)");

// Whether a kernel can divide its work as asked: split-K needs a stream-K scheduler or an SM80 kernel (serial,
// through D: not an 8-bit D, which would saturate); forcing stream-K needs a stream-K kernel; data-parallel
// excludes them unless the stream-K scheduler was pinned; parallel split-K runs data-parallel kernels.
bool divides_as_asked(const GemmConfig& c, Decomposition d, bool stream_k_pinned) {
  const bool stream_k = c.tile.tile_scheduler == TileScheduler::StreamK;
  switch (d) {
    case Decomposition::Heuristic: return true;
    case Decomposition::DataParallel: return !stream_k || stream_k_pinned;
    case Decomposition::SplitK: return stream_k || (c.arch < 90 && size_bits(c.element_d) > 8);
    case Decomposition::StreamK: return stream_k;
    case Decomposition::ParallelSplitK: return !stream_k;
  }
  return false;
}

// Parallel split-K runs K's slices as one batch of equal slices, each starting on whole vectors of
// A and B: K must be a multiple of `splits` times that vector, and the problem a single matrix.
// Convolution kernels give each slice its share of K's tiles, whatever K is (SM80, CUTLASS 2.x's),
// or of wgrad's images (SM90: at least one each), but store the partial output in 16-byte vectors of
// f32 (SIMT kernels: one element), which tensor-op kernels take only when they tile the output's
// channels: a multiple of 4 (D's alignment, capped at 16 bytes, is 4 or more).
bool slices_evenly(const GemmConfig& c, const GemmShape& p, int splits) {
  const bool vectors = p.align_c >= 4 || c.opclass == OpcodeClass::Simt;
  if (is_conv(c.kind) && !c.pointwise) return vectors && (c.arch < 90 || splits <= p.conv.images);
  return p.batch == 1 && p.k % (int64_t(splits) * std::max(c.alignment_a, c.alignment_b)) == 0;
}

// Whether `other` is `c` with wider operand alignments and the same slices: the same tile loading wider
// vectors, never the slower of the two, so `c` is no candidate beside it (SM80's rows come in every
// alignment down to 1, and each took a rank that autotuning and profile() then spent timing a copy).
// Fixed-channel convolution kernels read exactly their alignment's channels: none outranks another.
bool wider_twin(const GemmCandidate& other, const GemmCandidate& c) {
  const GemmConfig &o = other.config, &k = c.config;
  if (k.fixed_channels || other.splits != c.splits || other.decomposition != c.decomposition) return false;
  if (o.alignment_a < k.alignment_a || o.alignment_b < k.alignment_b || o.alignment_c < k.alignment_c) return false;
  const auto narrow = std::tie(k.alignment_a, k.alignment_b, k.alignment_c);
  if (std::tie(o.alignment_a, o.alignment_b, o.alignment_c) == narrow) return false;
  GemmConfig narrowed = o;
  std::tie(narrowed.alignment_a, narrowed.alignment_b, narrowed.alignment_c) = narrow;
  return narrowed == k;
}

// The settings a class runs with: a convolution run's own split-K fixes the decomposition and the
// slices (one slice: K whole).
GemmSettings class_settings(GemmSettings s, const GemmShape& p) {
  if (p.conv.splits == 0) return s;
  s.splits = p.conv.splits;
  s.decomposition = p.conv.splits == 1         ? Decomposition::DataParallel
                    : p.conv.parallel_splits ? Decomposition::ParallelSplitK
                                             : Decomposition::SplitK;
  return s;
}

// Whether the settings cut K into slices (a count, or a splitting decomposition).
bool splits_k(const GemmSettings& s) {
  return s.splits > 1 || s.decomposition == Decomposition::SplitK || s.decomposition == Decomposition::ParallelSplitK;
}

constexpr std::string_view kSm80Only =
    "only SM80 kernels run this convolution (strided dgrad, serial split-K, parallel split-K of fprop or dgrad "
    "or into more slices than wgrad has images, or padding and dilation beyond SM90's TMA im2col loads)";

// A row of the kernel set with the settings and the problem's epilogue applied, or why it cannot
// run the problem.
std::optional<GemmConfig> derive(const GemmConfig& row, const GemmSettings& s, const GemmShape& p, int target_cc,
                                 std::string& why) {
  if (p.conv.sm80_only && row.arch >= 90) {
    why = kSm80Only;
    return std::nullopt;
  }
  if (s.iterator_algorithm && row.fixed_channels != (*s.iterator_algorithm == IteratorAlgorithm::FixedChannels)) {
    why = fmt::format("iterator_algorithm is {}: this kernel's iterators are {}", to_string(*s.iterator_algorithm),
                      row.fixed_channels ? "fixed_channels" : row.pointwise ? "a GEMM's" : "optimized");
    return std::nullopt;
  }
  if (row.fixed_channels && p.conv.k_run != row.alignment_a) {
    why = fmt::format("a fixed-channel kernel takes exactly {} channels; this one has {}", row.alignment_a, p.conv.k_run);
    return std::nullopt;
  }
  if (splits_k(s) && p.conv.unsplittable) {
    why = "strided dgrad does not split K in CUTLASS's kernels";
    return std::nullopt;
  }
  if (splits_k(s) && row.fixed_channels) {
    why = "fixed-channel kernels are not offered split (CUTLASS's iterators step every slice over all of K)";
    return std::nullopt;
  }
  if (!swap_fits(row, s, p)) {
    why = row.element_a == DataType::f32
              ? fmt::format("a swapped TF32 kernel runs problems whose M fills more than half its tile's N ({}); "
                            "this one's M is {}", row.tile.threadblock_shape[1], p.m)
              : fmt::format("a swapped kernel runs problems whose M fits its cluster's tiles along N ({}); this "
                            "one's M is {}", swapped_rows(row), p.m);
    return std::nullopt;
  }
  if (!fits(row, p)) {
    why = fmt::format("needs alignments {}/{}/{}{}; the operands allow {}/{}/{}", row.alignment_a, row.alignment_b,
                      row.alignment_c, library::staged_k_major(row).any() ? " and K of whole vectors" : "",
                      p.align_a, p.align_b, p.align_c);
    return std::nullopt;
  }
  GemmConfig c = row;
  // Forcing stream-K (and SM90 split-K, which its scheduler runs) takes each kernel's stream-K variant.
  const bool stream_k_variant =
      s.decomposition == Decomposition::StreamK || (s.decomposition == Decomposition::SplitK && c.arch >= 90);
  if (s.tile_scheduler || stream_k_variant) c.tile.tile_scheduler = s.tile_scheduler.value_or(TileScheduler::StreamK);
  if (!divides_as_asked(c, s.decomposition, s.tile_scheduler == TileScheduler::StreamK)) {
    why = fmt::format("its {} tile scheduler cannot run decomposition {}", to_string(c.tile.tile_scheduler),
                      to_string(s.decomposition));
    return std::nullopt;
  }
  c.activation = s.activation;
  c.bias = p.bias;
  if (s.decomposition == Decomposition::ParallelSplitK) {
    c.parallel_split_k = true;
    if (auto invalid = library::why_invalid(c, target_cc)) {
      why = *invalid;
      return std::nullopt;
    }
    if (!slices_evenly(c, p, s.splits)) {
      const bool conv = is_conv(c.kind) && !c.pointwise;
      why = conv && p.align_c >= 4
                ? fmt::format("SM90 wgrad kernels split K between the images, at least one a slice: at most {} "
                              "slices here, got {}", p.conv.images, s.splits)
            : conv
                ? fmt::format("a convolution's parallel split-K stores f32 partial products in 16-byte vectors: "
                              "the output's channels must be a multiple of 4 (this problem's allow vectors of {})",
                              p.align_c)
                : fmt::format("parallel split-K needs one matrix (not a batch of {}) and K = {} in {} equal slices "
                              "of whole vectors", p.batch, p.k, s.splits);
      return std::nullopt;
    }
  }
  if (auto invalid = library::why_invalid(c, target_cc)) {
    why = *invalid;
    return std::nullopt;
  }
  return c;
}

std::string why_no_kernel(const GemmKernels& k, const GemmSettings& s, const GemmShape& p) {
  if (p.conv.unsplittable && splits_k(s))
    return fmt::format("strided dgrad does not split K in CUTLASS's kernels; this plan's settings split it ({}, {} "
                       "slices)", to_string(s.decomposition), s.splits);
  if (p.conv.sm80_only && k.arch >= 90 && k.fallback.empty())
    return fmt::format("{}, and this plan's tile is pinned to an SM90 one (kernel_cc=80 plans run it)", kSm80Only);
  // The channels of the inputs the plan's fixed-channel kernels take (each exactly one vector of them).
  std::vector<int64_t> widths;
  for (const auto* set : {&k.primary, &k.fallback})
    for (const auto& c : *set)
      if (c.fixed_channels && std::find(widths.begin(), widths.end(), c.alignment_a) == widths.end())
        widths.push_back(c.alignment_a);
  const bool fixed_width = std::find(widths.begin(), widths.end(), p.conv.k_run) != widths.end();
  if (s.iterator_algorithm == IteratorAlgorithm::FixedChannels && !fixed_width) {
    std::sort(widths.rbegin(), widths.rend());
    std::string list;
    for (int64_t w : widths) list += (list.empty() ? "" : ", ") + std::to_string(w);
    return fmt::format("iterator_algorithm is fixed_channels: its kernels take inputs of exactly one vector of "
                       "channels ({} here); this convolution's input has {}", list, p.conv.k_run);
  }
  // Channels in vectors under 4 bytes (one 16-bit channel): only fprop's fixed-channel kernels read them, unsplit.
  // (Channels that make 4-byte vectors, read narrower for the operand's address, are the alignment's to say.)
  const GemmConfig* first = k.primary.empty() ? nullptr : &k.primary.front();
  if (first && is_conv(first->kind) && first->opclass == OpcodeClass::TensorOp && p.conv.k_run > 0 &&
      p.align_a * size_bits(first->element_a) < 32 && p.conv.k_run * size_bits(first->element_a) % 32 != 0) {
    if (first->kind != KernelKind::Conv2dFprop || !fixed_width)
      return fmt::format("{} channel{} of {}: {}'s kernels read channels in vectors of at least 4 bytes{} (pad the "
                         "channels with zeros to 8)", p.conv.k_run, p.conv.k_run == 1 ? "" : "s",
                         to_string(first->element_a), to_string(first->kind),
                         first->kind == KernelKind::Conv2dFprop ? "" : "; only fprop has kernels that read one, an "
                                                                       "element at a time");
    return fmt::format("{} channel of {}: fprop's fixed-channel kernels read it, an element at a time and unsplit; "
                       "this plan's settings (iterator_algorithm {}, decomposition {}, {} slices) leave none of them "
                       "(or pad the channels with zeros to 8)",
                       p.conv.k_run, to_string(first->element_a),
                       s.iterator_algorithm ? to_string(*s.iterator_algorithm) : "unset", to_string(s.decomposition),
                       s.splits);
  }
  // A fixed-channel kernel serves only inputs of its one vector of channels.
  auto serves = [&](const GemmConfig& c) { return !c.fixed_channels || c.alignment_a == p.conv.k_run; };
  auto fit = [&](const GemmConfig& c) { return serves(c) && fits(c, p); };
  const bool conv = first && is_conv(first->kind);
  const bool aligned = std::any_of(k.primary.begin(), k.primary.end(), fit) ||
                       std::any_of(k.fallback.begin(), k.fallback.end(), fit);
  if (aligned)
    return fmt::format(
        "no kernel of this plan fits its settings for a {}x{}x{} problem: decomposition {}{}{}{}", p.m, p.n, p.k,
        to_string(s.decomposition), s.tile_scheduler ? fmt::format(", tile scheduler {}", to_string(*s.tile_scheduler)) : "",
        s.tile ? fmt::format(", tile ({})", s.tile->describe()) : "",
        s.decomposition == Decomposition::SplitK || s.decomposition == Decomposition::StreamK
            ? fmt::format(" (SM90 split-K and stream-K need a cooperative stream-K kernel{}{})",
                          p.batch > 1 && s.splits > 1
                              ? fmt::format("; SM80's split-K kernels run one matrix, not a batch ({} here)", p.batch)
                              : "",
                          !k.primary.empty() && size_bits(k.primary.front().element_d) == 8
                              ? "; SM80 data-parallel kernels split K through D, which an 8-bit D would saturate" : "")
        : s.decomposition == Decomposition::ParallelSplitK && conv
            ? fmt::format(" (a convolution's parallel split-K runs SM80 kernels, or SM90 wgrad kernels between the "
                          "images ({}), with f32 accumulation, storing the partial products in 16-byte vectors: the "
                          "output's channels must be a multiple of 4; this problem's allow vectors of {})",
                          p.conv.images ? fmt::format("at most {} slices here, got {}", p.conv.images, s.splits)
                                        : std::string("wgrad only"),
                          p.align_c)
        : s.decomposition == Decomposition::ParallelSplitK
            ? fmt::format(" (parallel split-K needs one matrix, not a batch ({} here), f32 accumulation, C and D of "
                          "one type, and K = {} cut into {} equal slices that each start on whole vectors of A and B)",
                          p.batch, p.k, s.splits)
            : "");
  int least[3] = {INT_MAX, INT_MAX, INT_MAX}, most = 1;  // the kernels' alignments of A, B, C (most: of A)
  for (const auto* set : {&k.primary, &k.fallback})
    for (const auto& c : *set) {
      if (!serves(c)) continue;
      for (auto [i, a] : {std::pair{0, c.alignment_a}, {1, c.alignment_b}, {2, c.alignment_c}})
        least[i] = std::min(least[i], a);
      most = std::max(most, c.alignment_a);
    }
  if (least[0] == INT_MAX)  // every kernel of the plan a fixed-channel one of another width (a pinned tile)
    return fmt::format("this plan's kernels are fixed-channel ones, which take inputs of exactly one vector of "
                       "channels; this convolution's input has {}", p.conv.k_run);
  return fmt::format(
      "no kernel of this plan accepts the operands' alignment: A allows {}, B {}, C/D {} elements (pointers, "
      "contiguous extents, leading dimensions and batch strides must be multiples); this plan's kernels need at "
      "least A {}, B {}, C/D {}{}", p.align_a, p.align_b, p.align_c, least[0], least[1], least[2],
      k.fallback.empty() && least[0] == most ? "" : fmt::format(" (A in multiples of {} runs the fastest)", most));
}

}  // namespace

GemmRanking choose(const GemmKernels& k, const GemmSettings& settings, const GemmShape& p, int sm_count,
                   const CostModel& model) {
  if (auto why = why_invalid(p)) throw InvalidArgumentError("problem class: " + *why);
  const GemmSettings s = class_settings(settings, p);
  GemmRanking ranking;
  std::vector<GemmConfig> configs;
  auto add_from = [&](const std::vector<GemmConfig>& rows) {
    for (const auto& row : rows) {
      std::string why;
      if (auto c = derive(row, s, p, k.target_cc, why)) {
        if (std::find(configs.begin(), configs.end(), *c) == configs.end()) configs.push_back(*c);
      } else {
        ranking.refused.emplace_back(row.name(), std::move(why));
      }
    }
  };
  add_from(k.primary);
  // SM80 kernels when no SM90 one can run the problem (e.g. odd leading dimensions TMA cannot
  // load), or beside SM90 kernels that must copy an operand K-major first: for a small M the copy
  // of B can cost more than the whole GEMM on mma.sync (the model weighs both, and TF32's swapped
  // kernels, which copy nothing). Convolutions always weigh both: SM90's implicit GEMM splits only
  // wgrad's K, between its images. A pinned tile runs SM80's kernels of it only for operands none of its
  // own can load.
  const bool copying = std::any_of(configs.begin(), configs.end(), [](const GemmConfig& c) {
    return library::staged_k_major(c).any();
  });
  const bool conv = !k.primary.empty() && is_conv(k.primary.front().kind);
  const bool unaligned =
      std::none_of(k.primary.begin(), k.primary.end(), [&](const GemmConfig& c) { return fits(c, p); });
  if (s.tile ? configs.empty() && unaligned : configs.empty() || copying || conv) add_from(k.fallback);
  // A 1x1 convolution of unit stride is a GEMM: the GEMM kernels' persistent, stream-K and
  // parallel split-K schedules serve it too.
  if (p.conv.pointwise) add_from(k.pointwise);

  // Each kernel with the settings' slices. In the heuristic decomposition, SM90 stream-K kernels
  // also with each split-K slice count that leaves every slice a few K iterations, wgrad into f32
  // with serial split-K over up to kMaxSerialSplits slices, and the other kernels as parallel
  // split-K over each slice count that cuts K evenly (single matrices with f32 accumulation).
  const bool heuristic = s.decomposition == Decomposition::Heuristic;
  auto long_enough = [&](const GemmConfig& c, int splits) {
    return p.k >= int64_t(splits) * c.tile.threadblock_shape[2] * 4;
  };
  // Convolution kernels split in parallel by choice only for wgrad, the kind measured so (fprop and
  // dgrad when a run or the settings ask for it); pointwise GEMM kernels as GEMMs do.
  const size_t kernels = configs.size();
  for (size_t i = 0; heuristic && i < kernels; ++i) {
    if (is_conv(configs[i].kind) && !configs[i].pointwise && configs[i].kind != KernelKind::Conv2dWgrad) continue;
    GemmConfig parallel = configs[i];
    parallel.parallel_split_k = true;
    if (!library::why_invalid(parallel, k.target_cc) && slices_evenly(parallel, p, kSplitChoices[0]) &&
        long_enough(parallel, kSplitChoices[0]))
      configs.push_back(parallel);
  }
  auto add = [&](const GemmConfig& c, int splits) {
    // SM80's split-K kernels (serial and parallel) run single matrices (gemm_sm80.cu.in's supports()).
    if (splits > 1 && p.batch > 1 && c.arch < 90) return;
    Decomposition d = c.parallel_split_k ? Decomposition::ParallelSplitK
                      : splits > 1       ? Decomposition::SplitK
                                         : s.decomposition;
    ranking.ranked.push_back({c, splits, d, estimated_time_us(c, p, splits, s.deterministic, sm_count, model)});
  };
  for (const auto& c : configs) {
    if (!c.parallel_split_k || !heuristic) add(c, s.splits);
    if (!heuristic) continue;
    const bool stream_k = c.arch >= 90 && c.tile.tile_scheduler == TileScheduler::StreamK;
    // wgrad, whose K (N·P·Q) is long beside its few output tiles, reduces serial slices in the SM80
    // kernel into an f32 or f64 D (a 16-bit D would round every slice's partial sum; fprop splits only
    // over C, strided dgrad and SM90's implicit GEMM not at all).
    const bool serial = c.kind == KernelKind::Conv2dWgrad && size_bits(c.element_d) >= 32 && c.arch < 90;
    for (int splits : kSplitChoices)
      if ((stream_k || (serial && splits <= kMaxSerialSplits) || (c.parallel_split_k && slices_evenly(c, p, splits))) &&
          long_enough(c, splits))
        add(c, splits);
  }
  const std::vector<GemmCandidate> candidates = std::exchange(ranking.ranked, {});
  for (const auto& c : candidates)
    if (std::none_of(candidates.begin(), candidates.end(), [&](const GemmCandidate& o) { return wider_twin(o, c); }))
      ranking.ranked.push_back(c);
  // Among SM80 kernels the model cannot tell apart, the deeper K tile first: fewer mainloop steps
  // (cp.async waits, barriers, iterator updates) for the same work (H200, bench/conv.py --sweep-wgrad:
  // on the 1x1 layer 64x64x32 ran 2.0-2.7x the time of 64x64x64 in the same slices, estimated alike;
  // TF32 at 128x14336x4096, 128x128x32 ahead of 128x128x16). SM90's ties keep the catalog's order,
  // but a data-parallel GEMM whose cluster spans all of M's tiles comes first (select::cluster_spans_m;
  // H200, bench/clusters.py: 64x64 in 2x1 clusters at 96 and 128 rows, 128x64 at 256, 1.15-1.25x the
  // 1x1 cluster of the same tile in 128 tiles; 0.95x in 32 tiles at 128x1024x1024), then the
  // clusters select::tie_rank ranks 1 (the non-persistent kernel's sharing the larger operand's tiles, ...).
  const auto tie_order = [&](const GemmCandidate& c) {
    if (c.config.arch < 90) return std::tuple(1, -c.config.tile.threadblock_shape[2]);
    return std::tuple(0, tie_rank(c.config, c.splits, p, sm_count));
  };
  std::stable_sort(ranking.ranked.begin(), ranking.ranked.end(), [&](const GemmCandidate& a, const GemmCandidate& b) {
    return std::pair(a.estimated_us, tie_order(a)) < std::pair(b.estimated_us, tie_order(b));
  });
  if (ranking.ranked.empty()) ranking.why_none = why_no_kernel(k, s, p);
  return ranking;
}

bool serves(const GemmCandidate& candidate, const GemmSettings& s, const GemmShape& p) {
  const GemmConfig& c = candidate.config;
  if (p.conv.splits > 0 && (candidate.splits != p.conv.splits || c.parallel_split_k != p.conv.parallel_splits))
    return false;
  if (c.pointwise && !p.conv.pointwise) return false;  // a 1x1 convolution's GEMM kernel
  if (c.fixed_channels && p.conv.k_run != c.alignment_a) return false;
  if (candidate.splits > 1 && (c.fixed_channels || p.conv.unsplittable)) return false;
  // Parallel split-K's dgrad kernel is CUTLASS's unit-stride one: strided dgrad, unsplit, takes the strided one.
  if (c.parallel_split_k && c.kind == KernelKind::Conv2dDgrad && p.conv.unsplittable) return false;
  return fits(c, p) && swap_fits(c, s, p) && !(p.conv.sm80_only && c.arch >= 90) && c.bias == p.bias &&
         c.activation == s.activation && (!c.parallel_split_k || slices_evenly(c, p, candidate.splits)) &&
         (candidate.splits <= 1 || p.batch == 1);
}

}  // namespace cuforge::select
