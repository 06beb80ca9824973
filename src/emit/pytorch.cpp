#include "cuforge/emit/pytorch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <string_view>

#include "cuforge/core/error.hpp"
#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/emit/template.hpp"
#include "embedded.hpp"

namespace cuforge::emit {
namespace {

std::string torch_type(DataType t) {
  switch (t) {
    case DataType::f16: return "at::kHalf";
    case DataType::bf16: return "at::kBFloat16";
    case DataType::tf32:  // TF32 kernels read f32 tensors
    case DataType::f32: return "at::kFloat";
    case DataType::f64: return "at::kDouble";
    case DataType::s8: return "at::kChar";
    case DataType::u8: return "at::kByte";
    case DataType::s32: return "at::kInt";
    case DataType::e4m3: return "at::kFloat8_e4m3fn";
    case DataType::e5m2: return "at::kFloat8_e5m2";
    case DataType::void_: break;
  }
  throw InvalidArgumentError(fmt::format("no torch dtype holds {}", to_string(t)));
}

const char* boolean(bool b) { return b ? "true" : "false"; }

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
  // Python's keywords (keyword.kwlist) name no module that `import` can take.
  static constexpr std::string_view kKeywords[] = {
      "False", "None",   "True",     "and",   "as",     "assert", "async", "await",  "break",
      "class", "continue", "def",    "del",   "elif",   "else",   "except", "finally", "for",
      "from",  "global", "if",       "import", "in",    "is",     "lambda", "nonlocal", "not",
      "or",    "pass",   "raise",    "return", "try",   "while",  "with",  "yield"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), s) == std::end(kKeywords);
}

// The operand types, layouts and alignments in the operator's terms (A M x K, B K x N), which are
// the kernel's B and A swapped when it computes the transposed problem.
Holes operand_holes(const TorchExport& e) {
  const library::GemmConfig& c = e.config;
  const bool t = e.transposed;
  return {
      {"type_a", torch_type(t ? c.element_b : c.element_a)},
      {"type_b", torch_type(t ? c.element_a : c.element_b)},
      {"type_c", torch_type(c.element_c)},
      {"type_d", torch_type(c.element_d)},
      {"align_a", std::to_string(t ? c.alignment_b : c.alignment_a)},
      {"align_b", std::to_string(t ? c.alignment_a : c.alignment_b)},
      {"align_c", std::to_string(c.alignment_c)},
      {"activation_argument", fmt::format("{:.17g}", e.launch.activation_argument)},
  };
}

// The operators' implementations: `op` on CUDA tensors, `op_meta` on Meta ones (for torch.compile).
void add_operators(Holes& common, std::initializer_list<std::string_view> ops) {
  std::string cuda, meta, names;
  for (std::string_view op : ops) {
    cuda += fmt::format("  m.impl(\"{0}\", &{0});\n", op);
    meta += fmt::format("  m.impl(\"{0}\", &{0}_meta);\n", op);
    names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", op);
  }
  common["cuda_impls"] = std::move(cuda);
  common["meta_impls"] = std::move(meta);
  common["op_names"] = std::move(names);
}

// A GEMM: A row-major when the kernel reads it so (or, transposed, reads its transpose
// column-major).
std::string gemm_body(const TorchExport& e, Holes& common) {
  const library::GemmConfig& c = e.config;
  Holes h = operand_holes(e);
  const Layout user_a = e.transposed ? transposed(c.layout_b) : c.layout_a;
  const Layout user_b = e.transposed ? transposed(c.layout_a) : c.layout_b;
  h["row_major_a"] = boolean(user_a == Layout::RowMajor);
  h["row_major_b"] = boolean(user_b == Layout::RowMajor);
  h["transposed"] = boolean(e.transposed);
  h["bias"] = boolean(c.bias);
  h["c_per_d"] = std::to_string(std::max(1, size_bits(c.element_d) / size_bits(c.element_c)));
  h["splits"] = std::to_string(e.launch.splits);
  h["decomposition"] = std::to_string(int(e.launch.decomposition));
  h["deterministic"] = boolean(e.launch.deterministic);
  common["schemas"] = "  m.def(\"run(Tensor A, Tensor B, Tensor? C=None, float alpha=1.0, float beta=0.0) -> Tensor\");\n";
  add_operators(common, {"run"});
  return render(embedded::pytorch_gemm, h);
}

std::string grouped_body(const TorchExport& e, Holes& common) {
  const library::GemmConfig& c = e.config;
  Holes h = operand_holes(e);
  h["row_major_a"] = boolean(c.layout_a == Layout::RowMajor);
  h["row_major_b"] = boolean(c.layout_b == Layout::RowMajor);
  common["schemas"] =
      "  m.def(\"run(Tensor[] A, Tensor[] B, Tensor[]? C=None, float alpha=1.0, float beta=0.0) -> Tensor[]\");\n"
      "  m.def(\"run_offsets(Tensor A, Tensor B, Tensor offsets, Tensor? C=None, float alpha=1.0, float beta=0.0) "
      "-> Tensor\");\n";
  add_operators(common, {"run", "run_offsets"});
  return render(embedded::pytorch_grouped, h);
}

// The entry points of a convolution kind: dgrad and wgrad take the size of the tensor they make.
constexpr std::string_view kConvEntry = R"(at::Tensor run(${size_parameter}const at::Tensor& A, const at::Tensor& B,
               const std::optional<at::Tensor>& C, at::IntArrayRef stride, at::IntArrayRef padding,
               at::IntArrayRef dilation, double alpha, double beta, c10::string_view split_k_mode,
               int64_t split_k_slices) {
  return launch(A, B, C, ${size_argument}, stride, padding, dilation, alpha, beta, split_k_mode, split_k_slices);
}

at::Tensor run_meta(${size_parameter}const at::Tensor& A, const at::Tensor& B,
                    const std::optional<at::Tensor>& C, at::IntArrayRef stride, at::IntArrayRef padding,
                    at::IntArrayRef dilation, double alpha, double beta, c10::string_view split_k_mode,
                    int64_t split_k_slices) {
  split_slices(split_k_mode, split_k_slices);
  return output(geometry(A, B, ${size_argument}, stride, padding, dilation), A.options());
})";

std::string conv_body(const TorchExport& e, Holes& common) {
  const library::GemmConfig& c = e.config;
  Holes h = operand_holes(e);
  const char* kind = c.kind == KernelKind::Conv2dFprop ? "fprop" : c.kind == KernelKind::Conv2dDgrad ? "dgrad" : "wgrad";
  const char* size = c.kind == KernelKind::Conv2dDgrad ? "input_size" : c.kind == KernelKind::Conv2dWgrad ? "weight_size" : "";
  h["conv_kind"] = kind;
  h["bias"] = boolean(c.bias);
  const char* mode = c.parallel_split_k ? "parallel" : "serial";
  h["split_k_mode"] = mode;
  h["decomposition"] = std::to_string(int(e.launch.decomposition));
  h["deterministic"] = e.launch.deterministic ? "1" : "0";
  h["splits_images"] = boolean(c.parallel_split_k && c.arch >= 90 && !c.pointwise);
  h["split_k_words"] = c.parallel_split_k ? "into f32 slices summed after the kernel" : "serially, in the kernel";
  h["conv_entry"] = render(kConvEntry, {{"size_parameter", *size ? fmt::format("at::IntArrayRef {}, ", size) : ""},
                                        {"size_argument", *size ? size : "at::IntArrayRef{}"}});
  // The CUTLASS Python interface's modules padded by one where a run gave no padding.
  common["schemas"] = fmt::format(
      "  m.def(\"run({}Tensor A, Tensor B, Tensor? C=None, int[2] stride=[1, 1], int[2] padding=[1, 1], "
      "int[2] dilation=[1, 1], float alpha=1.0, float beta=0.0, str split_k_mode=\\\"{}\\\", "
      "int split_k_slices={}) -> Tensor\");\n",
      *size ? fmt::format("int[] {}, ", size) : "", mode, e.launch.splits);
  add_operators(common, {"run"});
  return render(embedded::pytorch_conv, h);
}

}  // namespace

std::string pytorch_binding(const TorchExport& e) {
  if (!is_identifier(e.module))
    throw InvalidArgumentError(fmt::format("name: '{}' is not a Python identifier (letters, digits and _, not starting "
                                           "with a digit, not a keyword); it names the module and its torch.ops "
                                           "namespace",
                                           e.module));
  // Its files are <name>_kernel.cu and the like: no longer than a file name may be (255 bytes on Linux).
  constexpr size_t kLongestName = 200;
  if (e.module.size() > kLongestName)
    throw InvalidArgumentError(fmt::format("name: {} characters, longer than the {} its files' names can hold",
                                           e.module.size(), kLongestName));
  const library::GemmConfig& c = e.config;
  // A C++ caller's kernel and launch: what the binding embeds must build and run (a NaN slope failed only when
  // the binding compiled; slices were taken as given).
  if (auto why = library::why_invalid(c, 90))
    throw InvalidArgumentError(fmt::format("export: kernel '{}' cannot be built: {}", c.name(), *why));
  if (!std::isfinite(e.launch.activation_argument))
    throw InvalidArgumentError(fmt::format("export: leaky_relu's slope must be finite, got {}",
                                           e.launch.activation_argument));
  if (e.launch.splits < 1 || e.launch.splits > kMaxSplits)
    throw InvalidArgumentError(fmt::format("export: expected 1 to {} slices of K, got {}",
                                           kMaxSplits, e.launch.splits));
  if (e.transposed && (c.kind != KernelKind::Gemm || c.bias))
    throw InvalidArgumentError("export: a plan with a column-major C exports only as a GEMM without a bias; give the "
                               "plan a row-major C");
  Holes common = {{"module", e.module}, {"kernel", c.name()}};
  // The epilogue's arithmetic type bounds alpha and beta (an s32 one: its whole numbers, checked by the GEMM's body).
  const DataType compute = library::epilogue_compute_type(c);
  common["compute"] = to_string(compute);
  common["largest_scalar"] = compute == DataType::f16   ? "65504.0"
                             : compute == DataType::f32 ? "3.4028234663852886e+38"
                             : compute == DataType::s32 ? "2147483647.0"
                                                        : "1.7976931348623157e+308";
  common["body"] = c.kind == KernelKind::Gemm      ? gemm_body(e, common)
                   : c.kind == KernelKind::Grouped ? grouped_body(e, common)
                                                   : conv_body(e, common);
  return render(embedded::pytorch_common, common);
}

}  // namespace cuforge::emit
