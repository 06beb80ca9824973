// The kernel set of a plan (select/gemm_choice.hpp): the catalog rows its types, opcode class and math operation
// allow on its family, the settings applied and checked, and what they offer; why a plan runs SIMT kernels unasked.
#include "cuforge/select/gemm_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cuforge/core/error.hpp"
#include "cuforge/library/catalog.hpp"
#include "cuforge/library/math_instruction.hpp"

namespace cuforge::select {
namespace {

using library::GemmConfig;

// The rows `f` matches, less those of opt-in math (3xTF32, fp8 fast accumulation) unless the
// settings name a math operation.
std::vector<const GemmConfig*> rows_of_math(const library::GemmFilter& f) {
  auto rows = library::find_gemms(f);
  if (!f.math)
    rows.erase(std::remove_if(rows.begin(), rows.end(), [](const GemmConfig* c) { return library::opt_in(c->math); }),
               rows.end());
  return rows;
}

// The catalog's rows for the types on `arch`: of the opcode class asked for, else its tensor-op kernels
// where there are any, else its SIMT ones, far slower, as the CUTLASS Python interface chose (op::Plan says so).
std::vector<const GemmConfig*> catalog_rows(const GemmTypes& t, Arch arch, const GemmSettings& s, KernelKind kind) {
  library::GemmFilter f;
  f.kind = kind;
  f.arch = arch;
  f.element_a = t.element_a;
  f.element_b = t.element_b;
  f.element_c = t.element_c;
  f.element_d = t.element_d;
  f.element_accumulator = t.accumulator();
  f.layout_a = t.layout_a;
  f.layout_b = t.layout_b;
  f.layout_c = t.layout_c;
  f.opclass = s.opclass ? s.opclass : OpcodeClass::TensorOp;
  f.math = s.math;
  auto rows = rows_of_math(f);
  if (rows.empty() && !s.opclass) {
    f.opclass.reset();
    rows = rows_of_math(f);
  }
  // C of another type than D: the kernels of D's type that read C of its own (library::reading_c_as).
  if (rows.empty() && t.element_c != t.element_d) {
    GemmTypes same = t;
    same.element_c = t.element_d;
    for (const GemmConfig* row : catalog_rows(same, arch, s, kind))
      if (const GemmConfig* c = library::reading_c_as(*row, t.element_c)) rows.push_back(c);
  }
  return rows;
}

void with_activation(GemmConfig& c, Activation a) { c.activation = a; }
void with_tile_scheduler(GemmConfig& c, TileScheduler t) { c.tile.tile_scheduler = t; }

// The values of E that at least one of `rows` can be built with, `set` applied.
template <class E, class Set>
std::vector<E> accepted(const std::vector<const GemmConfig*>& rows, Set set) {
  std::vector<E> out;
  for (const auto& [value, name] : EnumNames<E>::table)
    if (std::any_of(rows.begin(), rows.end(), [&](const GemmConfig* c) {
          GemmConfig x = *c;
          set(x, value);
          return !library::why_invalid(x);
        }))
      out.push_back(value);
  return out;
}

// Why `row` cannot be built with `value`.
template <class E, class Set>
std::string why_refused(const GemmConfig& row, E value, Set set) {
  GemmConfig x = row;
  set(x, value);
  return library::why_invalid(x).value_or("no kernel accepts it");
}

template <class E>
bool contains(const std::vector<E>& values, E value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// The kernel schedule CUTLASS's SM90 builder takes for KernelScheduleAuto: ping-pong for a tile of 64 rows
// (cooperative splits M between two warpgroups of 64), cooperative otherwise. cuforge's kernels of it
// end in its TMA epilogue where the builder's automatic epilogue is NoSmem.
KernelSchedule builders_schedule(const TileDescription& tile) {
  return tile.threadblock_shape[0] == 64 ? KernelSchedule::TmaWarpSpecializedPingpong
                                         : KernelSchedule::TmaWarpSpecializedCooperative;
}

// A pinned tile description on a catalog row: its automatic schedules are the row's kernel schedule and the
// epilogue schedule that goes with it, which also stands for SM90's epilogue without shared memory (the same
// results: cuforge's SM90 kernels end in TMA epilogues; the interface's tests pin NoSmem on a ping-pong tile).
TileDescription pinned_tile(TileDescription pinned, const TileDescription& row) {
  if (pinned.kernel_schedule == KernelSchedule::Auto) pinned.kernel_schedule = row.kernel_schedule;
  const EpilogueSchedule e = pinned.epilogue_schedule;
  if (e == EpilogueSchedule::Auto ||
      (e == EpilogueSchedule::NoSmemWarpSpecialized && row.kernel_schedule != KernelSchedule::Multistage))
    pinned.epilogue_schedule = library::epilogue_for(pinned.kernel_schedule);
  return pinned;
}

std::string kind_words(KernelKind kind) {
  switch (kind) {
    case KernelKind::Gemm: return "GEMM";
    case KernelKind::Grouped: return "grouped GEMM";
    default: return fmt::format("Conv2d {}", to_string(kind));
  }
}
// A C++ caller may cast any integer to an enum: one that names no type, layout or kind is refused by name (a type
// past the enum chose the SM80 family, having no SM90 rows).
void check_enumerators(const GemmTypes& t, KernelKind kind) {
  for (auto [name, type] : {std::pair{"element_A", t.element_a}, {"element_B", t.element_b},
                            {"element_C", t.element_c}, {"element_D", t.element_d}})
    check_enumerator(type, name);
  if (t.element_accumulator) check_enumerator(*t.element_accumulator, "element_accumulator");
  for (auto [name, layout] : {std::pair{"layout_A", t.layout_a}, {"layout_B", t.layout_b}, {"layout_C", t.layout_c}})
    check_enumerator(layout, name);
  check_enumerator(kind, "kind");
}
}  // namespace

Arch gemm_family(const GemmTypes& t, int cc, int kernel_cc, const GemmSettings& s, KernelKind kind) {
  check_enumerators(t, kind);
  if (kernel_cc) return kernel_cc;
  return cc == 90 && !catalog_rows(t, 90, s, kind).empty() ? 90 : 80;
}

GemmKernels gemm_kernels(const GemmTypes& t, Arch arch, const GemmSettings& s, KernelKind kind, int target_cc) {
  check_enumerators(t, kind);
  s.check();
  if (kind == KernelKind::Grouped && s.decomposition != Decomposition::Heuristic &&
      s.decomposition != Decomposition::DataParallel)
    throw InvalidArgumentError(fmt::format("decomposition {}: grouped kernels run each group's tiles whole; they do "
                                           "not split K", to_string(s.decomposition)));
  if (is_conv(kind) && s.decomposition == Decomposition::StreamK)
    throw InvalidArgumentError(fmt::format("decomposition {}: convolution kernels split K serially (SplitK), in "
                                           "parallel (ParallelSplitK) or not at all", to_string(s.decomposition)));
  if (s.iterator_algorithm && !is_conv(kind))
    throw InvalidArgumentError(fmt::format("iterator_algorithm {}: a convolution's setting; {} kernels have no "
                                           "activation iterators", to_string(*s.iterator_algorithm), kind_words(kind)));
  if (s.iterator_algorithm == IteratorAlgorithm::FixedChannels && kind != KernelKind::Conv2dFprop)
    throw InvalidArgumentError(fmt::format("iterator_algorithm fixed_channels: fprop's iterators (they read the "
                                           "activation's few channels); this plan is {}", kind_words(kind)));
  GemmKernels k;
  k.arch = arch;
  k.target_cc = target_cc;
  k.family = catalog_rows(t, arch, s, kind);
  if (k.family.empty()) {
    GemmTypes defaulted = t;
    defaulted.element_accumulator.reset();
    const bool accumulator = t.element_accumulator && !catalog_rows(defaulted, arch, s, kind).empty();
    // GEMMs: the layouts (A, B, C as r or c) an architecture's kernels take where the types have kernels in
    // others; sm90's where this plan's sm80 family has none in any layout (8-bit outputs).
    auto layouts_at = [&](Arch at) {
      std::string layouts;
      for (int bits = 0; kind == KernelKind::Gemm && bits < 8; ++bits) {
        GemmTypes other = t;
        auto pick = [&](int bit) { return (bits >> bit) & 1 ? Layout::ColumnMajor : Layout::RowMajor; };
        other.layout_a = pick(2), other.layout_b = pick(1), other.layout_c = pick(0);
        if (catalog_rows(other, at, s, kind).empty()) continue;
        layouts += layouts.empty() ? "" : " ";
        for (Layout l : {other.layout_a, other.layout_b, other.layout_c}) layouts += l == Layout::RowMajor ? "r" : "c";
      }
      return layouts;
    };
    std::string layouts = layouts_at(arch), layouts_90 = arch < 90 && layouts.empty() ? layouts_at(90) : "";
    const bool sm90_has_it = arch < 90 && !catalog_rows(t, 90, s, kind).empty();
    throw InvalidArgumentError(fmt::format(
        "no sm{} {} kernel{} computes A {} x B {} with {} accumulation into C {} / D {}{}{}{}: {}see `cuforge list` "
        "for what the catalog offers",
        arch, kind_words(kind), arch < 90 && !sm90_has_it ? " (nor any sm90 one)" : "",
        to_string(t.element_a), to_string(t.element_b), to_string(t.accumulator()), to_string(t.element_c),
        to_string(t.element_d), s.opclass ? fmt::format(", opcode class {}", to_string(*s.opclass)) : "",
        s.math ? fmt::format(", math {}", to_string(*s.math)) : "",
        !layouts.empty()    ? fmt::format(" in these layouts (its kernels take A, B, C as {})", layouts)
        : sm90_has_it         ? std::string(" (sm90 kernels do: leave kernel_cc to cuforge, or give 90)")
        : !layouts_90.empty() ? fmt::format(" in these layouts (sm90 kernels take A, B, C as {})", layouts_90)
                              : "",
        accumulator ? fmt::format("element_accumulator {} is the one without kernels (the default, {}, has some); ",
                                  to_string(t.accumulator()), to_string(defaulted.accumulator()))
                    : ""));
  }
  const GemmConfig& first = *k.family.front();
  if (!contains(activations(k), s.activation))
    throw InvalidArgumentError(fmt::format("activation {} cannot be fused by this plan's kernels: {}",
                                           to_string(s.activation), why_refused(first, s.activation, with_activation)));
  if (s.tile_scheduler && !contains(tile_schedulers(k), *s.tile_scheduler))
    throw InvalidArgumentError(fmt::format("tile scheduler {} cannot be used by this plan's sm{} kernels: {}",
                                           to_string(*s.tile_scheduler), arch,
                                           why_refused(first, *s.tile_scheduler, with_tile_scheduler)));
  std::string why;
  for (const GemmConfig* row : k.family) {
    GemmConfig c = *row;
    if (s.tile) c.tile = pinned_tile(*s.tile, row->tile);
    if (auto reason = library::why_invalid(c, target_cc)) {
      if (why.empty()) why = *reason;  // the first row's: the family's widest, not its one-element fallback
      continue;
    }
    if (!contains(k.primary, c)) k.primary.push_back(c);
  }
  // Automatic schedules on SM90 are the builder's where the plan has that kernel (so a pinned description
  // means one kernel, as in the CUTLASS Python interface), else the model's choice among the plan's.
  if (s.tile && s.tile->kernel_schedule == KernelSchedule::Auto && arch >= 90) {
    std::vector<GemmConfig> builders;
    for (const GemmConfig& c : k.primary)
      if (c.tile.kernel_schedule == builders_schedule(*s.tile)) builders.push_back(c);
    if (!builders.empty()) k.primary = std::move(builders);
  }
  if (k.primary.empty())
    throw InvalidArgumentError(
        s.tile ? fmt::format("tile description ({}) cannot be built for this plan: {}; "
                             "plan.tile_descriptions() lists the {} that can",
                             s.tile->describe(), why, tile_descriptions(k).size())
               : fmt::format("none of this plan's sm{} kernels can be built for compute capability {}: {}", arch,
                             target_cc, why));
  // Operands TMA cannot load (leading dimensions not 16-byte multiples) run on SM80 tensor-op kernels of lower
  // alignment, never SIMT ones. A pinned tile is the user's word: a GEMM's SM80 kernels of it only (the same
  // threadblock shape, their own warps and stages), and only where it names nothing SM90's own (a cluster of one
  // CTA, automatic schedules and stages), where the CUTLASS Python interface builds an SM90 cp.async kernel of it
  // (select::choose takes them only for operands none of its SM90 kernels can load).
  GemmSettings tensor_op = s;
  tensor_op.opclass = OpcodeClass::TensorOp;
  const bool portable_tile =
      !s.tile || (kind == KernelKind::Gemm && s.tile->cluster_shape == std::array<int, 3>{1, 1, 1} &&
                  s.tile->stages == 0 && s.tile->kernel_schedule == KernelSchedule::Auto &&
                  s.tile->epilogue_schedule == EpilogueSchedule::Auto &&
                  s.tile->tile_scheduler == TileScheduler::Default && !s.tile->swap_ab);
  if (arch >= 90 && portable_tile)
    for (const GemmConfig* row : catalog_rows(t, 80, tensor_op, kind))
      if (!s.tile || row->tile.threadblock_shape == s.tile->threadblock_shape) k.fallback.push_back(*row);
  // 1x1 fprop and dgrad may also run as GEMMs. Not wgrad: its GEMM (dyᵀ x, K = N·P·Q) on the SM90
  // GEMM kernels' parallel split-K measured 0.40x cuDNN where SM80's convolution kernels split in
  // parallel reach 0.70x (H200, 56²×256→64, bench/NOTES.md).
  if (arch >= 90 && !s.tile && is_fprop_or_dgrad(kind))
    for (const GemmConfig* row : catalog_rows(t, 90, s, KernelKind::Gemm)) {
      GemmConfig c = *row;
      c.kind = kind;
      c.pointwise = true;
      if (!library::why_invalid(c)) k.pointwise.push_back(c);
    }
  auto fixed = [](const GemmConfig& c) { return c.fixed_channels; };
  if (s.iterator_algorithm == IteratorAlgorithm::FixedChannels &&
      std::none_of(k.primary.begin(), k.primary.end(), fixed) && std::none_of(k.fallback.begin(), k.fallback.end(), fixed))
    throw InvalidArgumentError(fmt::format(
        "iterator_algorithm fixed_channels: no fixed-channel kernel of this plan computes A {} x B {} into D {}{} (see "
        "`cuforge list --op fprop --filter '*fixedchannels*'`)",
        to_string(t.element_a), to_string(t.element_b), to_string(t.element_d),
        s.opclass == OpcodeClass::Simt ? " on the CUDA cores (fixed-channel kernels are tensor-op kernels)"
        : s.tile                       ? " with its pinned tile (SM80's fixed-channel kernels run no SM90 tile)" : ""));
  return k;
}

std::vector<TileDescription> tile_descriptions(const GemmKernels& k) {
  std::vector<TileDescription> out;
  for (const auto* c : k.family) {
    if (library::why_invalid(*c, k.target_cc)) continue;  // over the plan's GPU's shared memory
    TileDescription tile = c->tile;
    // The builder's own schedules on SM90 are listed as automatic, as the CUTLASS Python interface listed
    // them (one kernel either way: the description's automatic schedules resolve to it).
    if (k.arch >= 90 && tile.kernel_schedule == builders_schedule(tile) &&
        tile.epilogue_schedule == library::epilogue_for(tile.kernel_schedule))
      tile.kernel_schedule = KernelSchedule::Auto, tile.epilogue_schedule = EpilogueSchedule::Auto;
    if (!contains(out, tile)) out.push_back(tile);
  }
  return out;
}

std::vector<Activation> activations(const GemmKernels& k) {
  // Floating-point epilogues fuse every activation (CUTLASS 3.x fusion callbacks; 2.x generic
  // epilogues); integer ones (s32 D) relu only.
  return accepted<Activation>(k.family, with_activation);
}

std::vector<TileScheduler> tile_schedulers(const GemmKernels& k) {
  return accepted<TileScheduler>(k.family, with_tile_scheduler);
}

namespace {

std::optional<std::string> simt_fallback_warning(const GemmKernels& kernels, const GemmSettings& settings,
                                                 KernelKind kind, Layout layout_a, Layout layout_b) {
  const library::GemmConfig& first = *kernels.family.front();  // a plan's family is never empty
  if (settings.opclass || first.opclass != OpcodeClass::Simt) return std::nullopt;
  library::GemmFilter tensor_op;  // of either family: fp8's are SM90's only
  tensor_op.kind = kind;
  tensor_op.element_a = first.element_a;
  tensor_op.element_b = first.element_b;
  tensor_op.element_accumulator = first.element_accumulator;
  tensor_op.opclass = OpcodeClass::TensorOp;
  if (library::find_gemms(tensor_op).empty()) return std::nullopt;
  // The kernels' layouts (a column-major D runs the transposed problem), with any math operation.
  tensor_op.layout_a = first.layout_a;
  tensor_op.layout_b = first.layout_b;
  const bool layouts = library::find_gemms(tensor_op).empty();
  tensor_op.arch = first.arch;
  const std::string why =
      layouts ? fmt::format("with A {}- and B {}-major", to_string(layout_a), to_string(layout_b))
      : library::find_gemms(tensor_op).empty()
          ? fmt::format("on this GPU (sm{} kernels; SM90's tensor cores take these types)", first.arch)
          : fmt::format("with math {}", settings.math ? to_string(*settings.math) : "default");
  return fmt::format("no tensor-op kernel computes {} x {} {}: this plan runs SIMT kernels on the CUDA cores, far "
                     "slower (opclass=Simt asks for them; `cuforge list --opclass tensorop` names what the tensor "
                     "cores take)",
                     to_string(first.element_a), to_string(first.element_b), why);
}

}  // namespace

std::vector<std::string> kernel_set_warnings(const GemmKernels& kernels, const GemmSettings& settings,
                                             KernelKind kind, Layout layout_a, Layout layout_b) {
  std::vector<std::string> out;
  if (auto simt = simt_fallback_warning(kernels, settings, kind, layout_a, layout_b)) out.push_back(*simt);
  // A pinned tile's kernels share its schedule and shape: the first says whether they spill.
  if (settings.tile && !kernels.primary.empty() && library::spills_registers(kernels.primary.front()))
    out.push_back(fmt::format("tile description ({}) spills fp8's two accumulators to local memory (more than 2 x 96 "
                              "registers a thread; 2 x 128 ran at about a third of the speed of 128x128x128 "
                              "cooperative): it builds and runs; fp8_fast_accum keeps one accumulator",
                              settings.tile->describe()));
  return out;
}

}  // namespace cuforge::select
