// Kernel names: GemmConfig::name() and its inverse, parse_gemm_name.
#include "cuforge/library/gemm_config.hpp"

#include <fmt/format.h>

#include <charconv>
#include <vector>

namespace cuforge::library {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

int to_int(std::string_view s, std::string_view name) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size())
    throw InvalidArgumentError(fmt::format("kernel name '{}': '{}' is not a number", name, s));
  return v;
}

std::array<int, 3> to_triple(std::string_view s, std::string_view name) {
  auto parts = split(s, 'x');
  if (parts.size() != 3)
    throw InvalidArgumentError(fmt::format("kernel name '{}': expected AxBxC, got '{}'", name, s));
  return {to_int(parts[0], name), to_int(parts[1], name), to_int(parts[2], name)};
}

Layout from_letter(char c, std::string_view name) {
  if (c == 'r') return Layout::RowMajor;
  if (c == 'c') return Layout::ColumnMajor;
  throw InvalidArgumentError(fmt::format("kernel name '{}': layout letter '{}' is not r or c", name, c));
}

}  // namespace

char layout_letter(Layout l) { return l == Layout::RowMajor ? 'r' : 'c'; }

std::string GemmConfig::name() const {
  const auto& t = tile.threadblock_shape;
  const auto& shape2 = arch >= 90 ? tile.cluster_shape : tile.warp_count;
  std::string epilogue = tile.swap_ab ? "_swapab" : "";
  if (pointwise) epilogue += "_pointwise";
  if (fixed_channels) epilogue += "_fixedchannels";
  if (parallel_split_k) epilogue += "_splitk";
  if (activation != Activation::identity) epilogue += fmt::format("_{}", to_string(activation));
  if (bias) epilogue += "_bias";
  return fmt::format("cuforge_sm{}_{}_{}_{}_{}_{}_{}_{}_{}_{}{}{}_{}x{}x{}_{}{}x{}x{}_s{}_{}_{}_{}_a{}x{}x{}{}", arch,
                     to_string(kind), to_string(opclass), to_string(math), to_string(element_a), to_string(element_b),
                     to_string(element_accumulator), to_string(element_c), to_string(element_d),
                     layout_letter(layout_a), layout_letter(layout_b), layout_letter(layout_c), t[0], t[1],
                     t[2], arch >= 90 ? 'c' : 'w', shape2[0], shape2[1], shape2[2], tile.stages,
                     to_string(tile.kernel_schedule), to_string(tile.epilogue_schedule),
                     to_string(tile.tile_scheduler), alignment_a, alignment_b, alignment_c, epilogue);
}

bool GemmConfig::operator==(const GemmConfig& o) const {
  const auto& shape2 = arch >= 90 ? tile.cluster_shape : tile.warp_count;
  const auto& other2 = o.arch >= 90 ? o.tile.cluster_shape : o.tile.warp_count;
  return kind == o.kind && arch == o.arch && opclass == o.opclass && math == o.math && element_a == o.element_a &&
         element_b == o.element_b && element_accumulator == o.element_accumulator && element_c == o.element_c &&
         element_d == o.element_d && layout_a == o.layout_a && layout_b == o.layout_b && layout_c == o.layout_c &&
         tile.threadblock_shape == o.tile.threadblock_shape && shape2 == other2 && tile.stages == o.tile.stages &&
         tile.kernel_schedule == o.tile.kernel_schedule && tile.epilogue_schedule == o.tile.epilogue_schedule &&
         tile.tile_scheduler == o.tile.tile_scheduler && alignment_a == o.alignment_a &&
         alignment_b == o.alignment_b && alignment_c == o.alignment_c && activation == o.activation &&
         bias == o.bias && parallel_split_k == o.parallel_split_k && pointwise == o.pointwise &&
         fixed_channels == o.fixed_channels && tile.swap_ab == o.tile.swap_ab;
}

GemmConfig parse_gemm_name(std::string_view name) {
  // Not echoed whole: a message of a megabyte name would bury itself.
  constexpr size_t kLongestName = 512;  // the catalog's are under 200 characters
  if (name.size() > kLongestName)
    throw InvalidArgumentError(fmt::format("a kernel name of {} bytes ('{}...') is not a cuforge kernel name (theirs "
                                           "are under {} characters)", name.size(), name.substr(0, 48), kLongestName));
  auto p = split(name, '_');
  if (p.size() < 18 || p[0] != "cuforge" || !try_parse<KernelKind>(p[2]) || p[1].substr(0, 2) != "sm" ||
      p[10].size() != 3 || p[13].empty())
    throw InvalidArgumentError(fmt::format(
        "'{}' is not a cuforge kernel name (expected cuforge_smXX_<gemm|grouped|fprop|dgrad|wgrad>_<opclass>_<math>_<A>_<B>_"
        "<acc>_<C>_<D>_<layouts>_<tile>_<cluster|warps>_s<stages>_<kernel>_<epilogue>_<scheduler>_a<align>"
        "[_swapab][_pointwise][_fixedchannels][_splitk][_<activation>][_bias])",
        name));
  GemmConfig c;
  c.kind = parse<KernelKind>(p[2]);
  c.arch = to_int(p[1].substr(2), name);
  c.opclass = parse<OpcodeClass>(p[3]);
  c.math = parse<MathOperation>(p[4]);
  c.element_a = parse<DataType>(p[5]);
  c.element_b = parse<DataType>(p[6]);
  c.element_accumulator = parse<DataType>(p[7]);
  c.element_c = parse<DataType>(p[8]);
  c.element_d = parse<DataType>(p[9]);
  c.layout_a = from_letter(p[10][0], name);
  c.layout_b = from_letter(p[10][1], name);
  c.layout_c = from_letter(p[10][2], name);
  c.tile.threadblock_shape = to_triple(p[11], name);
  const char kind = p[12].empty() ? '?' : p[12][0];
  if (kind != (c.arch >= 90 ? 'c' : 'w'))
    throw InvalidArgumentError(fmt::format("kernel name '{}': expected a {} shape, got '{}'", name,
                                           c.arch >= 90 ? "cluster (c...)" : "warp (w...)", p[12]));
  (c.arch >= 90 ? c.tile.cluster_shape : c.tile.warp_count) = to_triple(p[12].substr(1), name);
  if (p[13][0] != 's') throw InvalidArgumentError(fmt::format("kernel name '{}': expected s<stages>", name));
  c.tile.stages = to_int(p[13].substr(1), name);
  c.tile.kernel_schedule = parse<KernelSchedule>(p[14]);
  c.tile.epilogue_schedule = parse<EpilogueSchedule>(p[15]);
  c.tile.tile_scheduler = parse<TileScheduler>(p[16]);
  if (p[17].empty() || p[17][0] != 'a')
    throw InvalidArgumentError(fmt::format("kernel name '{}': expected a<alignments>", name));
  auto align = to_triple(p[17].substr(1), name);
  c.alignment_a = align[0];
  c.alignment_b = align[1];
  c.alignment_c = align[2];
  // The suffix: "swapab", "pointwise", "fixedchannels", "splitk", an activation (whose name may hold
  // '_') and/or "bias".
  std::vector<std::string_view> rest(p.begin() + 18, p.end());
  const auto take = [&rest](std::string_view flag) {
    if (rest.empty() || rest.front() != flag) return false;
    rest.erase(rest.begin());
    return true;
  };
  c.tile.swap_ab = take("swapab");
  c.pointwise = take("pointwise");
  c.fixed_channels = take("fixedchannels");
  c.parallel_split_k = take("splitk");
  if (!rest.empty() && rest.back() == "bias") {
    c.bias = true;
    rest.pop_back();
  }
  if (!rest.empty()) {
    std::string activation(rest.front());
    for (size_t i = 1; i < rest.size(); ++i) activation += "_" + std::string(rest[i]);
    try {
      c.activation = parse<Activation>(activation);
    } catch (const InvalidArgumentError& e) {  // named with the kernel, and what else the suffix may be
      throw InvalidArgumentError(fmt::format("kernel name '{}': its suffix '{}' is not, in this order, swapab, "
                                             "pointwise, fixedchannels, splitk, an activation and bias, each "
                                             "optional: {}",
                                             name, activation, e.what()));
    }
    if (c.activation == Activation::identity)
      throw InvalidArgumentError(fmt::format("kernel name '{}': the identity epilogue is not spelled out", name));
  }
  // Buildable for some GPU (an SM80 kernel's shared memory within a Hopper GPU's); a build checks its own target.
  if (auto why = why_invalid(c, 90))
    throw InvalidArgumentError(fmt::format("kernel '{}' cannot be built: {}", name, *why));
  // One spelling per kernel (a name keys the cache's lookups and the tuning record): not 064x64x64 for 64x64x64.
  if (const std::string canonical = c.name(); canonical != name)
    throw InvalidArgumentError(fmt::format("kernel name '{}' is spelled '{}'", name, canonical));
  return c;
}

}  // namespace cuforge::library
