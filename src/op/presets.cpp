#include "cuforge/op/presets.hpp"

#include <fmt/format.h>

#include <array>
#include <set>

#include "cuforge/core/error.hpp"
#include "cuforge/op/gemm.hpp"

namespace cuforge::op {
namespace {

using Shape = std::array<int64_t, 3>;  // M, N, K
using Layouts = std::array<Layout, 3>;  // A, B, C

constexpr Layout R = Layout::RowMajor, C = Layout::ColumnMajor;

// The problems of transformer layers: tokens (decode to prefill) times the projections of 7B-class
// (hidden 4096, FFN 14336) and 70B-class (hidden 8192, FFN 28672) models, both ways round.
std::vector<Shape> llm_shapes() {
  std::vector<Shape> out;
  for (int64_t m : {16, 128, 1024, 4096, 8192})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {6144, 4096}, {14336, 4096}, {4096, 14336},
                        {8192, 8192}, {10240, 8192}, {28672, 8192}, {8192, 28672}})
      out.push_back({m, n, k});
  return out;
}

// DESIGN.md's standard shapes (bench/gemm.py).
const std::vector<Shape> kStandardShapes = {{8192, 8192, 8192}, {4096, 4096, 4096},  {2048, 2048, 2048},
                                            {1024, 1024, 1024}, {16, 4096, 4096},    {128, 14336, 4096},
                                            {4096, 14336, 4096}, {8192, 1024, 8192}};

struct Entry {
  Preset preset;
  DataType type;                // A, B, C and D (f32 accumulation)
  std::vector<Layouts> layouts;  // torch.matmul's row-major operands; nn.Linear's column-major weight
  std::vector<Shape> shapes;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {{"llm-bf16", "bf16 transformer projections (x @ W and x @ W^T), 16 to 8192 tokens"},
       DataType::bf16, {{R, R, R}, {R, C, R}}, llm_shapes()},
      {{"llm-fp16", "fp16 transformer projections (x @ W and x @ W^T), 16 to 8192 tokens"},
       DataType::f16, {{R, R, R}, {R, C, R}}, llm_shapes()},
      {{"standard-bf16", "bf16 row-major GEMMs of the standard benchmark shapes"}, DataType::bf16, {{R, R, R}},
       kStandardShapes},
      {{"standard-fp16", "fp16 row-major GEMMs of the standard benchmark shapes"}, DataType::f16, {{R, R, R}},
       kStandardShapes},
  };
  return table;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> out = [] {
    std::vector<Preset> p;
    for (const auto& e : entries()) p.push_back(e.preset);
    return p;
  }();
  return out;
}

std::vector<KernelSource> preset_kernels(std::string_view name, int cc) {
  for (const auto& e : entries()) {
    if (e.preset.name != name) continue;
    std::vector<KernelSource> sources;
    std::set<std::string> seen;
    for (const auto& [la, lb, lc] : e.layouts) {
      GemmOptions o;
      o.element_a = o.element_b = o.element_c = o.element_d = e.type;
      o.layout_a = la;
      o.layout_b = lb;
      o.layout_c = lc;
      o.cc = cc;
      Gemm plan(o);
      for (const auto& [m, n, k] : e.shapes) {
        auto config = plan.select(plan.shape(m, n, k)).config;
        if (seen.insert(config.name()).second) sources.push_back(plan.kernel_source(config));
      }
    }
    return sources;
  }
  std::string known;
  for (const auto& p : presets()) known += fmt::format("{}{} ({})", known.empty() ? "" : "; ", p.name, p.description);
  throw InvalidArgumentError(fmt::format("no preset named '{}': the presets are {}", name, known));
}

}  // namespace cuforge::op
