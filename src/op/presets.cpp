#include "cuforge/op/presets.hpp"

#include <fmt/format.h>

#include <array>
#include <set>

#include "cuforge/core/error.hpp"
#include "cuforge/op/conv2d.hpp"
#include "cuforge/op/gemm.hpp"
#include "cuforge/op/grouped_gemm.hpp"

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

// The kernels a preset's problems select, each once.
class Kernels {
 public:
  template <class Plan>
  void add(const Plan& plan, const GemmShape& shape) {
    auto config = plan.select(shape).config;
    if (seen_.insert(config.name()).second) sources_.push_back(plan.kernel_source(config));
  }
  std::vector<KernelSource> take() { return std::move(sources_); }

 private:
  std::set<std::string> seen_;
  std::vector<KernelSource> sources_;
};

GemmOptions options(DataType type, int cc, Layouts layouts = {R, R, R}) {
  GemmOptions o;
  o.element_a = o.element_b = o.element_c = o.element_d = type;
  o.layout_a = layouts[0];
  o.layout_b = layouts[1];
  o.layout_c = layouts[2];
  o.cc = cc;
  return o;
}

// GEMMs of row-major operands, and of nn.Linear's column-major weight where `linear`.
std::vector<KernelSource> gemms(DataType type, int cc, const std::vector<Shape>& shapes, bool linear) {
  Kernels kernels;
  std::vector<Layouts> layouts = {{R, R, R}};
  if (linear) layouts.push_back({R, C, R});
  for (const auto& l : layouts) {
    Gemm plan(options(type, cc, l));
    for (const auto& [m, n, k] : shapes) kernels.add(plan, plan.shape(m, n, k));
  }
  return kernels.take();
}

// ResNet-50's convolutions (torchvision's v1.5: the stride on the 3 x 3), 224 x 224 images in
// batches of 32, each pass; the 3-channel stem as it runs, padded to 8 channels.
std::vector<KernelSource> resnet50(DataType type, int cc) {
  struct Layer {
    int64_t h, c, k, r, stride;
  };
  std::vector<Layer> layers = {{224, 8, 64, 7, 2}};
  int64_t h = 56, in = 64;
  for (auto [width, blocks] : {std::pair<int64_t, int>{64, 3}, {128, 4}, {256, 6}, {512, 3}}) {
    const int64_t out = 4 * width, first_stride = width == 64 ? 1 : 2;
    layers.push_back({h, in, out, 1, first_stride});  // the downsampling shortcut
    for (int b = 0; b < blocks; ++b) {
      const int64_t stride = b == 0 ? first_stride : 1, block_in = b == 0 ? in : out;
      layers.push_back({h, block_in, width, 1, 1});
      layers.push_back({h, width, width, 3, stride});
      layers.push_back({h / stride, width, out, 1, 1});
      if (b == 0) h /= stride;
    }
    in = out;
  }
  Kernels kernels;
  for (KernelKind kind : {KernelKind::Conv2dFprop, KernelKind::Conv2dDgrad, KernelKind::Conv2dWgrad}) {
    GemmOptions o = options(type, cc);
    o.element_accumulator = DataType::f32;
    Conv2d plan(kind, o);
    for (const auto& l : layers) {
      Conv2dSize z;
      z.n = 32, z.h = z.w = l.h, z.c = l.c, z.k = l.k, z.r = z.s = l.r;
      z.stride_h = z.stride_w = l.stride;
      z.pad_h = z.pad_w = l.r / 2;
      z.p = z.q = Conv2dSize::output_extent(l.h, l.r, z.pad_h, l.stride, 1);
      kernels.add(plan, plan.shape(z));
    }
  }
  return kernels.take();
}

// Mixture-of-experts layers as torch._grouped_mm runs them (the offsets form: a ragged class):
// Mixtral-style 8 experts of 4096 -> 14336 -> 4096 and 64 experts of 2048 -> 4096 -> 2048 (the
// MoE case of bench/grouped.py), top-2 routing of 1024 to 16384 tokens.
std::vector<KernelSource> moe(DataType type, int cc) {
  Kernels kernels;
  GroupedGemm plan(options(type, cc));
  for (auto [experts, hidden, ffn] : {std::array<int64_t, 3>{8, 4096, 14336}, {64, 2048, 4096}})
    for (int64_t tokens : {1024, 4096, 16384}) {
      const int64_t m = 2 * tokens / experts;
      for (auto [n, k] : {std::pair{ffn, hidden}, {hidden, ffn}})
        kernels.add(plan, plan.shape(experts, m, n, k, {}, /*ragged=*/true));
    }
  return kernels.take();
}

struct Entry {
  Preset preset;
  std::vector<KernelSource> (*kernels)(int cc);
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {{"llm-bf16", "bf16 transformer projections (x @ W and x @ W^T), 16 to 8192 tokens"},
       [](int cc) { return gemms(DataType::bf16, cc, llm_shapes(), true); }},
      {{"llm-fp16", "fp16 transformer projections (x @ W and x @ W^T), 16 to 8192 tokens"},
       [](int cc) { return gemms(DataType::f16, cc, llm_shapes(), true); }},
      {{"standard-bf16", "bf16 row-major GEMMs of the standard benchmark shapes"},
       [](int cc) { return gemms(DataType::bf16, cc, kStandardShapes, false); }},
      {{"standard-fp16", "fp16 row-major GEMMs of the standard benchmark shapes"},
       [](int cc) { return gemms(DataType::f16, cc, kStandardShapes, false); }},
      {{"resnet50-fp16", "fp16 Conv2d fprop, dgrad and wgrad of ResNet-50's layers, batch 32 of 224^2 images"},
       [](int cc) { return resnet50(DataType::f16, cc); }},
      {{"resnet50-bf16", "bf16 Conv2d fprop, dgrad and wgrad of ResNet-50's layers, batch 32 of 224^2 images"},
       [](int cc) { return resnet50(DataType::bf16, cc); }},
      {{"moe-bf16", "bf16 grouped GEMMs of mixture-of-experts layers (offsets form), 8 and 64 experts"},
       [](int cc) { return moe(DataType::bf16, cc); }},
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
  for (const auto& e : entries())
    if (e.preset.name == name) return e.kernels(cc);
  std::string known;
  for (const auto& p : presets()) known += fmt::format("{}{} ({})", known.empty() ? "" : "; ", p.name, p.description);
  throw InvalidArgumentError(fmt::format("no preset named '{}': the presets are {}", name, known));
}

}  // namespace cuforge::op
