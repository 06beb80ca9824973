#include "plans.hpp"

#include <nanobind/stl/array.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>

#include "cuforge/cuforge.hpp"
#include "cuforge/select/gemm_settings.hpp"
#include "log_sink.hpp"
#include "operands.hpp"

namespace cuforge::python {
namespace {

using namespace nb::literals;

// Python's True or False (anything else leaves a one-call run to the Python layer, which names it).
bool is_bool(nb::handle h) { return h.ptr() == Py_True || h.ptr() == Py_False; }

// An exact Python int of at least `low` (nullopt for anything else, which the Python layer names).
std::optional<int64_t> python_int(PyObject* x, int64_t low) {
  if (!PyLong_CheckExact(x)) return std::nullopt;
  const long long v = PyLong_AsLongLong(x);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  return v >= low ? std::optional<int64_t>(v) : std::nullopt;
}

// A convolution's stride, padding or dilation as Python writes it: an int, or a tuple or list of
// two (height, width), each at least `low`.
bool python_pair(nb::handle h, int64_t low, std::array<int64_t, 2>& out) {
  PyObject* x = h.ptr();
  if (auto v = python_int(x, low)) {
    out = {*v, *v};
    return true;
  }
  if (!(PyTuple_CheckExact(x) || PyList_CheckExact(x)) || PySequence_Fast_GET_SIZE(x) != 2) return false;
  auto height = python_int(PySequence_Fast_GET_ITEM(x, 0), low);
  auto width = python_int(PySequence_Fast_GET_ITEM(x, 1), low);
  if (!height || !width) return false;
  out = {*height, *width};
  return true;
}

// The seed's split_k: None (the plan's settings), or ('serial' | 'parallel', slices).
std::optional<ConvSplitK> python_split_k(nb::handle h) {
  PyObject* x = h.ptr();
  if (x == Py_None) return ConvSplitK{};
  if (!(PyTuple_CheckExact(x) || PyList_CheckExact(x)) || PySequence_Fast_GET_SIZE(x) != 2) return std::nullopt;
  PyObject* mode = PySequence_Fast_GET_ITEM(x, 0);
  auto slices = python_int(PySequence_Fast_GET_ITEM(x, 1), 1);
  if (!PyUnicode_CheckExact(mode) || !slices || *slices > INT32_MAX) return std::nullopt;
  const bool parallel = PyUnicode_CompareWithASCIIString(mode, "parallel") == 0;
  if (!parallel && PyUnicode_CompareWithASCIIString(mode, "serial") != 0) return std::nullopt;
  return ConvSplitK{int(*slices), parallel};
}

// The core's run (and, when `sync`, the wait for it) without the GIL: a problem class's first run may
// build its kernel (nvcc, tens of seconds), and other Python threads go on meanwhile, as they do while
// Python waits for a subprocess. `run` touches no Python object (its operands are C++ values by now).
template <class Run>
runtime::RunHandle without_gil(Run&& run, bool sync = false) {
  WithoutGil released;
  runtime::RunHandle handle = run();
  if (sync) handle.sync();
  return handle;
}

// Plan::profile on a checked problem, without the GIL, as Python rows (cuforge.profiler.COLUMNS,
// less what the Python layer derives).
template <class Plan, class Problem>
nb::list profile_rows(Plan& g, const Problem& problem, double beta, int top, const std::string& filter, int jobs,
                      uintptr_t stream, const std::function<void(size_t, size_t, size_t, std::string)>& progress) {
  op::ProfileOptions options{top, filter, jobs, {}};
  if (progress)
    options.progress = [&](const compile::BuildProgress& p) {  // nanobind's std::function takes the GIL
      progress(p.done, p.total, p.failed, p.last_name ? *p.last_name : std::string());
    };
  std::vector<op::ProfileRow> rows;
  {
    WithoutGil released;
    rows = g.profile(problem, options, reinterpret_cast<cudaStream_t>(stream), beta);
  }
  nb::list out;
  for (const auto& r : rows) {
    nb::dict row;
    row["kernel"] = r.candidate.config.name();
    row["splits"] = r.candidate.splits;
    row["decomposition"] = r.candidate.decomposition;
    row["predicted_rank"] = r.predicted_rank;
    row["predicted_us"] = r.candidate.estimated_us;
    row["measured_us"] = r.measured_us;
    row["error"] = r.error;
    out.append(row);
  }
  return out;
}

// What the GEMM-family plans share (op/plan.hpp): construction, types, settings, the kernel set.
template <class Plan>
nb::class_<Plan> bind_plan(nb::module_& m, const char* name, const char* doc) {
  nb::class_<Plan> cls(m, name, doc);
  cls.def("__init__",
          [](Plan* self, DataType a, DataType b, DataType c, DataType d, std::optional<DataType> acc, Layout la,
             Layout lb, Layout lc, int cc, int kernel_cc, int device, std::optional<select::GemmSettings> settings,
             std::optional<KernelKind> kind) {
            GemmOptions o;
            o.element_a = a;
            o.element_b = b;
            o.element_c = c;
            o.element_d = d;
            o.element_accumulator = acc;
            o.layout_a = la;
            o.layout_b = lb;
            o.layout_c = lc;
            o.cc = cc;
            o.kernel_cc = kernel_cc;
            o.device = device;
            if (settings) o.settings = *settings;
            if constexpr (std::is_same_v<Plan, Conv2d>) {
              new (self) Conv2d(kind.value_or(KernelKind::Conv2dFprop), o);
            } else {
              if (kind) throw InvalidArgumentError("kind: only convolution plans take a kind");
              new (self) Plan(o);
            }
          },
          "element_a"_a, "element_b"_a, "element_c"_a, "element_d"_a, "element_accumulator"_a.none(), "layout_a"_a,
          "layout_b"_a, "layout_c"_a, "cc"_a = 0, "kernel_cc"_a = 0, "device"_a = -1,
          "settings"_a.none() = nb::none(), "kind"_a.none() = nb::none())
      .def_prop_ro("cc", &Plan::cc)
      .def_prop_ro("kernel_cc", &Plan::kernel_cc)
      .def_prop_ro("device", &Plan::device)
      .def_prop_ro("element_a", [](const Plan& g) { return g.options().element_a; })
      .def_prop_ro("element_b", [](const Plan& g) { return g.options().element_b; })
      .def_prop_ro("element_c", [](const Plan& g) { return g.options().element_c; })
      .def_prop_ro("element_d", [](const Plan& g) { return g.options().element_d; })
      .def_prop_ro("element_accumulator", [](const Plan& g) { return g.options().accumulator(); })
      .def_prop_ro("layout_a", [](const Plan& g) { return g.options().layout_a; })
      .def_prop_ro("layout_b", [](const Plan& g) { return g.options().layout_b; })
      .def_prop_ro("layout_c", [](const Plan& g) { return g.options().layout_c; })
      .def_prop_rw("settings", &Plan::settings, &Plan::set_settings,
                   "A copy of the settings; assigning checks them as a whole and leaves the plan as it was when "
                   "refused.")
      .def("tile_descriptions", &Plan::tile_descriptions)
      .def("math_instruction", &Plan::math_instruction)
      .def("activations", &Plan::activations)
      .def("tile_schedulers", &Plan::tile_schedulers)
      .def_prop_ro("last_kernel", &Plan::last_kernel, "The kernel the latest run launched.")
      .def_prop_ro("last_splits", &Plan::last_splits, "The split-K slices of the latest run.")
      .def("pytorch_binding", &Plan::pytorch_binding, "chosen"_a, "module"_a, "settings"_a,
           "The C++ source registering a chosen kernel, run with `settings`, as torch.ops.<module> operators.");
  return cls;
}

// A query of a Conv2d plan about the class of a convolution of (N, H, W, C, K, R, S) and its geometry
// (dense tensors), as Python asks it: `query(plan, class)`.
template <class Query>
auto conv_class_query(Query query) {
  return [query](const Conv2d& g, const ConvExtents& extents, const Pair& stride, const Pair& padding,
                 const Pair& dilation, bool bias, const Alignments& alignments) {
    return query(g, g.shape(op::conv_size(extents, {stride, padding, dilation}), bias, caps(alignments)));
  };
}

}  // namespace

void bind_plans(nb::module_& m) {
  auto settings = nb::class_<select::GemmSettings>(
      m, "GemmSettings", "A GEMM plan's settings as one value (the C++ core checks it as a whole).");
  settings.def(nb::init<>())
      .def_rw("activation", &select::GemmSettings::activation)
      .def_rw("activation_argument", &select::GemmSettings::activation_argument, "leaky_relu's negative slope")
      .def_rw("tile_scheduler", &select::GemmSettings::tile_scheduler, nb::arg().none())
      .def_rw("decomposition", &select::GemmSettings::decomposition)
      .def_rw("splits", &select::GemmSettings::splits)
      .def_rw("deterministic", &select::GemmSettings::deterministic)
      .def_rw("tile", &select::GemmSettings::tile, nb::arg().none())
      .def_rw("opclass", &select::GemmSettings::opclass, nb::arg().none())
      .def_rw("math", &select::GemmSettings::math, nb::arg().none())
      .def_rw("iterator_algorithm", &select::GemmSettings::iterator_algorithm, nb::arg().none())
      .def_rw("autotune", &select::GemmSettings::autotune,
              "Time the cost model's best candidates for each new problem class and keep the fastest")
      .def_rw("first_run", &select::GemmSettings::first_run)
      .def("set_activation", &select::GemmSettings::set_activation, "activation"_a, "argument"_a.none() = nb::none(),
           "The activation and its argument (None: its default, 0.2 for leaky_relu).")
      .def("set_decomposition", &select::GemmSettings::set_decomposition, "decomposition"_a)
      .def("set_split_k_slices", &select::GemmSettings::set_split_k_slices, "slices"_a);
  def_checked<&select::GemmSettings::autotune_candidates>(settings, "autotune_candidates", "autotune_candidates",
                                                          "an integer of 32 bits");

  nb::class_<select::GemmCandidate>(m, "Candidate", "A kernel chosen for a problem class, with how it divides the work.")
      .def_prop_ro("name", [](const select::GemmCandidate& c) { return c.config.name(); })
      .def_ro("splits", &select::GemmCandidate::splits)
      .def_ro("decomposition", &select::GemmCandidate::decomposition)
      .def_ro("estimated_us", &select::GemmCandidate::estimated_us)
      .def("__repr__", [](const select::GemmCandidate& c) { return "Candidate(" + c.config.name() + ")"; });

  auto gemm = bind_plan<Gemm>(m, "Gemm", "A GEMM plan of the C++ core (cuforge.op.Gemm wraps it).");
  gemm.def_prop_ro_static("default_problem", [](nb::handle) { return Gemm::kDefaultProblem; },
                          "(M, N, K) that compile() and construct() take where none is given.")
      .def("select",
           [](const Gemm& g, int64_t m, int64_t n, int64_t k, int64_t batch, bool bias, const Alignments& alignments) {
             return g.select(g.shape(m, n, k, batch, bias, caps(alignments)));
           },
           "m"_a, "n"_a, "k"_a, "batch"_a = 1, "bias"_a = false, "alignments"_a = Alignments{})
      .def("candidates",
           [](const Gemm& g, int64_t m, int64_t n, int64_t k, int64_t batch, bool bias, const Alignments& alignments) {
             return g.candidates(g.shape(m, n, k, batch, bias, caps(alignments)));
           },
           "m"_a, "n"_a, "k"_a, "batch"_a = 1, "bias"_a = false, "alignments"_a = Alignments{},
           "The selection's candidates for (M, N, K, batch, bias), best estimated first. Compiles nothing.")
      .def("compile",
           [](Gemm& g, const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, bool>>& problems,
              const Alignments& alignments, int jobs) {
             std::vector<GemmShape> shapes;
             for (auto [m, n, k, batch, bias] : problems)
               shapes.push_back(g.shape(m, n, k, batch, bias, caps(alignments)));
             return compile_results([&] { return g.compile(shapes, jobs); });
           },
           "problems"_a, "alignments"_a, "jobs"_a = 0,
           "Build the kernels chosen for (M, N, K, batch, bias) problems, in parallel; later runs use them.")
      .def("run",
           [](Gemm& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, double alpha, double beta,
              uintptr_t stream, std::function<void()> on_complete, nb::handle scale_a, nb::handle scale_b) {
             const TensorRef ta = to_tensor_ref(a, "A"), tb = to_tensor_ref(b, "B"), tc = to_tensor_ref(c, "C"),
                             td = to_tensor_ref(d, "D");
             const op::Fp8Scales scales{to_tensor_ref(scale_a, "scale_a"), to_tensor_ref(scale_b, "scale_b")};
             return without_gil([&] {
               return g.run(ta, tb, tc, td, alpha, beta, reinterpret_cast<cudaStream_t>(stream),
                            std::move(on_complete), scales);
             });
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "alpha"_a, "beta"_a, "stream"_a,
           "on_complete"_a.none(), "scale_a"_a.none() = nb::none(), "scale_b"_a.none() = nb::none())
      .def("run_tensors",
           [](Gemm& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, nb::handle alpha, nb::handle beta,
              nb::handle sync, nb::handle stream) -> std::optional<runtime::RunHandle> {
             if (!is_bool(sync)) return std::nullopt;
             auto ta = torch_tensor_ref(a), tb = torch_tensor_ref(b), td = torch_tensor_ref(d);
             // Matrices and batches of them (the core folds a batch over one B into rows); more batch
             // dimensions are the Python layer's to fold.
             auto matrices = [](const std::optional<TensorRef>& t) { return t && t->rank >= 2 && t->rank <= 3; };
             if (!matrices(ta) || !matrices(tb) || !matrices(td)) return std::nullopt;
             std::optional<TensorRef> tc = TensorRef{};
             if (!c.is_none() && (!(tc = torch_tensor_ref(c)) || tc->rank > 3)) return std::nullopt;
             auto al = python_real(alpha), be = python_real(beta);
             auto s = run_stream(stream, ta->device);
             if (!al || !be || !s) return std::nullopt;
             return without_gil([&] { return g.run(*ta, *tb, *tc, *td, *al, *be, reinterpret_cast<cudaStream_t>(*s)); },
                                sync.ptr() == Py_True);
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "alpha"_a.none(), "beta"_a.none(), "sync"_a.none(),
           "stream"_a.none() = nb::none(),
           "run() on CUDA torch tensors of rank 2 or 3 (C None, a matrix, a batch or a bias row), real alpha and beta, on torch's "
           "current stream or a stream given as run() reads one, in one call; None (nothing done) for any other "
           "arguments, which the Python layer then runs.")
      .def("profile",
           [](Gemm& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, double alpha, double beta, int top,
              const std::string& filter, int jobs, uintptr_t stream,
              std::function<void(size_t, size_t, size_t, std::string)> progress) {
             auto problem = g.check(to_tensor_ref(a, "A"), to_tensor_ref(b, "B"), to_tensor_ref(c, "C"),
                                    to_tensor_ref(d, "D"), alpha, beta);
             return profile_rows(g, problem, beta, top, filter, jobs, stream, progress);
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "alpha"_a, "beta"_a, "top"_a, "filter"_a,
           "jobs"_a, "stream"_a, "progress"_a.none(),
           "Build and time the model's best candidates on these operands (D untouched), best measured first.")
      .def("check",
           [](const Gemm& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, double alpha, double beta,
              nb::handle scale_a, nb::handle scale_b) {
             g.check(to_tensor_ref(a, "A"), to_tensor_ref(b, "B"), to_tensor_ref(c, "C"), to_tensor_ref(d, "D"),
                     alpha, beta, {to_tensor_ref(scale_a, "scale_a"), to_tensor_ref(scale_b, "scale_b")});
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "alpha"_a, "beta"_a,
           "scale_a"_a.none() = nb::none(), "scale_b"_a.none() = nb::none(), "The checks of run(), without running.")
      .def("compile_tensors",
           [](Gemm& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, double alpha, double beta, int jobs) {
             auto problem = g.check(to_tensor_ref(a, "A"), to_tensor_ref(b, "B"), to_tensor_ref(c, "C"),
                                    to_tensor_ref(d, "D"), alpha, beta);
             return compile_results([&] { return g.compile({problem.shape}, jobs); });
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "alpha"_a, "beta"_a, "jobs"_a = 0,
           "Build the kernel a run of these operands' descriptors would choose: their own class.");

  auto grouped = bind_plan<GroupedGemm>(m, "GroupedGemm",
                                        "A grouped GEMM plan of the C++ core (cuforge.op.GroupedGemm wraps it).");
  grouped
      .def_prop_ro_static("default_problem", [](nb::handle) { return GroupedGemm::kDefaultProblem; },
                          "(groups, M, N, K) that compile() and construct() take where none is given.")
      .def("select",
           [](const GroupedGemm& g, int64_t groups, int64_t m, int64_t n, int64_t k, const Alignments& alignments,
              bool ragged, bool bias) { return g.select(g.shape(groups, m, n, k, caps(alignments), ragged, bias)); },
           "groups"_a, "m"_a, "n"_a, "k"_a, "alignments"_a = Alignments{}, "ragged"_a = false, "bias"_a = false,
           "The kernel `groups` groups of packed operands of these mean sizes (M differing between groups where "
           "`ragged`, as in the offsets form; C a bias row per group where `bias`) would run.")
      .def("candidates",
           [](const GroupedGemm& g, int64_t groups, int64_t m, int64_t n, int64_t k, const Alignments& alignments,
              bool ragged, bool bias) { return g.candidates(g.shape(groups, m, n, k, caps(alignments), ragged, bias)); },
           "groups"_a, "m"_a, "n"_a, "k"_a, "alignments"_a = Alignments{}, "ragged"_a = false, "bias"_a = false,
           "The selection's candidates for those groups, best estimated first. Compiles nothing.")
      .def("compile",
           [](GroupedGemm& g, const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>& problems,
              const Alignments& alignments, int jobs, bool ragged, bool bias) {
             std::vector<GemmShape> shapes;
             for (auto [groups, m, n, k] : problems)
               shapes.push_back(g.shape(groups, m, n, k, caps(alignments), ragged, bias));
             return compile_results([&] { return g.compile(shapes, jobs); });
           },
           "problems"_a, "alignments"_a, "jobs"_a = 0, "ragged"_a = false, "bias"_a = false,
           "Build the kernels chosen for (groups, M, N, K) classes (M differing between groups where `ragged`; C a "
           "bias row per group where `bias`), in parallel; later runs use them.")
      .def("compile_lists",
           [](GroupedGemm& g, const std::vector<nb::handle>& a, const std::vector<nb::handle>& b,
              const std::vector<nb::handle>& c, const std::vector<nb::handle>& d, double alpha, double beta, int jobs) {
             auto problem = g.check(tensor_refs(a, "A"), tensor_refs(b, "B"), tensor_refs(c, "C"),
                                    tensor_refs(d, "D"), alpha, beta);
             return compile_results([&] { return g.compile({problem.shape}, jobs); });
           },
           "a"_a, "b"_a, "c"_a, "d"_a, "alpha"_a, "beta"_a, "jobs"_a = 0,
           "Build the kernel a run of these lists (the list form's descriptors) would choose: their own class.")
      .def("run",
           [](GroupedGemm& g, const std::vector<nb::handle>& a, const std::vector<nb::handle>& b,
              const std::vector<nb::handle>& c, const std::vector<nb::handle>& d, double alpha, double beta,
              uintptr_t stream, std::function<void()> on_complete) {
             const auto ta = tensor_refs(a, "A"), tb = tensor_refs(b, "B"), tc = tensor_refs(c, "C"),
                        td = tensor_refs(d, "D");
             return without_gil([&] {
               return g.run(g.check(ta, tb, tc, td, alpha, beta), alpha, beta, reinterpret_cast<cudaStream_t>(stream),
                            std::move(on_complete));
             });
           },
           "a"_a, "b"_a, "c"_a, "d"_a, "alpha"_a, "beta"_a, "stream"_a, "on_complete"_a.none(),
           "The list form: one operand descriptor per group (C may be an empty list when beta == 0).")
      .def("run_tensors",
           [](GroupedGemm& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, nb::handle alpha,
              nb::handle beta, nb::handle sync, nb::handle stream) -> std::optional<runtime::RunHandle> {
             if (!is_bool(sync)) return std::nullopt;
             auto as = torch_tensor_refs(a), bs = torch_tensor_refs(b), ds = torch_tensor_refs(d);
             auto cs = c.is_none() ? std::optional(std::vector<TensorRef>{}) : torch_tensor_refs(c);
             auto al = python_real(alpha), be = python_real(beta);
             if (!as || !bs || !cs || !ds || as->empty() || !al || !be) return std::nullopt;
             auto s = run_stream(stream, as->front().device);
             if (!s) return std::nullopt;
             return without_gil(
                 [&] {
                   return g.run(g.check(*as, *bs, *cs, *ds, *al, *be), *al, *be, reinterpret_cast<cudaStream_t>(*s));
                 },
                 sync.ptr() == Py_True);
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "alpha"_a.none(), "beta"_a.none(), "sync"_a.none(),
           "stream"_a.none() = nb::none(),
           "The list form on lists of CUDA torch tensors with real alpha and beta, on torch's current stream or a "
           "stream given as run() reads one, in one call; None (nothing done) for any other arguments, which the "
           "Python layer then runs.")
      .def("run_offsets",
           [](GroupedGemm& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, nb::handle offsets,
              double alpha, double beta, uintptr_t stream) {
             const TensorRef ta = to_tensor_ref(a, "A"), tb = to_tensor_ref(b, "B"), tc = to_tensor_ref(c, "C"),
                             td = to_tensor_ref(d, "D"), to = to_tensor_ref(offsets, "offsets");
             return without_gil([&] {
               return g.run(g.check_offsets(ta, tb, tc, td, to, alpha, beta), alpha, beta,
                            reinterpret_cast<cudaStream_t>(stream));
             });
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "offsets"_a.none(), "alpha"_a, "beta"_a,
           "stream"_a, "The offsets form: A and D cut into groups of rows by device offsets, B one matrix per group.")
      .def("profile",
           [](GroupedGemm& g, const std::vector<nb::handle>& a, const std::vector<nb::handle>& b,
              const std::vector<nb::handle>& c, const std::vector<nb::handle>& d, double alpha, double beta, int top,
              const std::string& filter, int jobs, uintptr_t stream,
              std::function<void(size_t, size_t, size_t, std::string)> progress) {
             auto problem = g.check(tensor_refs(a, "A"), tensor_refs(b, "B"), tensor_refs(c, "C"),
                                    tensor_refs(d, "D"), alpha, beta);
             return profile_rows(g, problem, beta, top, filter, jobs, stream, progress);
           },
           "a"_a, "b"_a, "c"_a, "d"_a, "alpha"_a, "beta"_a, "top"_a, "filter"_a, "jobs"_a, "stream"_a,
           "progress"_a.none(),
           "The list form: build and time the model's best candidates on these operands (D untouched), best "
           "measured first.")
      .def("profile_offsets",
           [](GroupedGemm& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, nb::handle offsets,
              double alpha, double beta, int top, const std::string& filter, int jobs, uintptr_t stream,
              std::function<void(size_t, size_t, size_t, std::string)> progress) {
             auto problem = g.check_offsets(to_tensor_ref(a, "A"), to_tensor_ref(b, "B"), to_tensor_ref(c, "C"),
                                            to_tensor_ref(d, "D"), to_tensor_ref(offsets, "offsets"), alpha, beta);
             return profile_rows(g, problem, beta, top, filter, jobs, stream, progress);
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "offsets"_a.none(), "alpha"_a, "beta"_a, "top"_a,
           "filter"_a, "jobs"_a, "stream"_a, "progress"_a.none(),
           "The offsets form: build and time the model's best candidates (D untouched), best measured first.")
      .def("check",
           [](const GroupedGemm& g, const std::vector<nb::handle>& a, const std::vector<nb::handle>& b,
              const std::vector<nb::handle>& c, const std::vector<nb::handle>& d, double alpha, double beta) {
             g.check(tensor_refs(a, "A"), tensor_refs(b, "B"), tensor_refs(c, "C"), tensor_refs(d, "D"), alpha,
                     beta);
           },
           "a"_a, "b"_a, "c"_a, "d"_a, "alpha"_a, "beta"_a, "The checks of run(), without running.");

  m.attr("max_split_k_slices") = kMaxSplits;  // the most slices a plan's split-K takes
  m.def("conv_output_size",
        [](const ConvExtents& extents, const Pair& stride, const Pair& padding, const Pair& dilation) {
          const Conv2dSize z = op::conv_size(extents, {stride, padding, dilation});
          return nb::make_tuple(z.p, z.q);
        },
        "extents"_a, "stride"_a, "padding"_a, "dilation"_a,
        "(P, Q), the output's height and width, of a convolution of (N, H, W, C, K, R, S) and this geometry, "
        "checked as a plan checks them.");
  auto conv = bind_plan<Conv2d>(m, "Conv2d", "A Conv2d plan of the C++ core (cuforge.op.Conv2d wraps it).");
  conv.def_prop_ro("kind", &Conv2d::kind)
      .def_prop_ro_static(
          "default_problem",
          [](nb::handle) {
            const Conv2dSize z = Conv2d::default_problem();
            return nb::make_tuple(nb::make_tuple(z.n, z.h, z.w, z.c, z.k, z.r, z.s), nb::make_tuple(z.stride_h, z.stride_w),
                                  nb::make_tuple(z.pad_h, z.pad_w), nb::make_tuple(z.dilation_h, z.dilation_w));
          },
          "((N, H, W, C, K, R, S), stride, padding, dilation) that compile() and construct() take where none is given.")
      .def("select", conv_class_query([](const Conv2d& g, const GemmShape& s) { return g.select(s); }),
           "extents"_a, "stride"_a, "padding"_a, "dilation"_a, "bias"_a = false, "alignments"_a = Alignments{},
           "The kernel a convolution of (N, H, W, C, K, R, S) would run (dense tensors; alignments capped).")
      .def(
          "serves",
          [](const Conv2d& g, const std::string& kernel, int splits, const select::GemmSettings& settings,
             const ConvExtents& extents, const Pair& stride, const Pair& padding, const Pair& dilation, int slices,
             bool parallel) {
            const select::GemmCandidate candidate{library::parse_gemm_name(kernel), std::max(splits, 1)};
            const GemmShape s = g.shape(op::conv_size(extents, {stride, padding, dilation}), candidate.config.bias,
                                        {}, ConvSplitK{slices, parallel});
            return select::serves(candidate, settings, s);
          },
          "kernel"_a, "splits"_a, "settings"_a, "extents"_a, "stride"_a, "padding"_a, "dilation"_a, "slices"_a,
          "parallel"_a,
          "Whether the kernel (of this plan's types, built under `settings`) run in `splits` slices serves a "
          "convolution of (N, H, W, C, K, R, S) on dense tensors that asks for `slices` (0: none asked) split as "
          "`parallel` says: an exported module's kernel, or a plan's.")
      .def("candidates", conv_class_query([](const Conv2d& g, const GemmShape& s) { return g.candidates(s); }),
           "extents"_a, "stride"_a, "padding"_a, "dilation"_a, "bias"_a = false, "alignments"_a = Alignments{},
           "The selection's candidates for that convolution, best estimated first. Compiles nothing.")
      .def("compile",
           [](Conv2d& g, const std::vector<std::tuple<ConvExtents, Pair, Pair, Pair>>& problems, int jobs, bool bias,
              const Alignments& alignments) {
             std::vector<GemmShape> shapes;
             for (const auto& [extents, stride, padding, dilation] : problems)
               shapes.push_back(g.shape(op::conv_size(extents, {stride, padding, dilation}), bias, caps(alignments)));
             return compile_results([&] { return g.compile(shapes, jobs); });
           },
           "problems"_a, "jobs"_a = 0, "bias"_a = false, "alignments"_a = Alignments{},
           "Build the kernels chosen for ((N, H, W, C, K, R, S), stride, padding, dilation) problems (C a bias of "
           "one value per channel where `bias`; alignments capped), in parallel.")
      .def("run",
           [](Conv2d& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, const Pair& stride,
              const Pair& padding, const Pair& dilation, double alpha, double beta, int splits, bool parallel,
              uintptr_t stream, std::function<void()> on_complete) {
             const TensorRef ta = to_tensor_ref(a, "A"), tb = to_tensor_ref(b, "B"), tc = to_tensor_ref(c, "C"),
                             td = to_tensor_ref(d, "D");
             // The check too: it reads the plan's settings, under the lock a first run holds while it builds.
             return without_gil([&] {
               return g.run(g.check(ta, tb, tc, td, {stride, padding, dilation}, alpha, beta, {splits, parallel}), alpha,
                            beta, reinterpret_cast<cudaStream_t>(stream), std::move(on_complete));
             });
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "stride"_a, "padding"_a, "dilation"_a, "alpha"_a,
           "beta"_a, "splits"_a, "parallel"_a, "stream"_a, "on_complete"_a.none(),
           "NHWC operand descriptors (A, B, D per the kind; C of D's shape, a bias vector, or None).")
      .def("run_tensors",
           [](Conv2d& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, nb::handle stride, nb::handle padding,
              nb::handle dilation, nb::handle alpha, nb::handle beta, nb::handle split_k,
              nb::handle sync, nb::handle stream) -> std::optional<runtime::RunHandle> {
             op::ConvGeometry geometry;
             auto split = python_split_k(split_k);
             if (!is_bool(sync) || !split || !python_pair(stride, 1, geometry.stride) ||
                 !python_pair(padding, 0, geometry.padding) || !python_pair(dilation, 1, geometry.dilation))
               return std::nullopt;
             auto ta = torch_tensor_ref(a), tb = torch_tensor_ref(b), td = torch_tensor_ref(d);
             if (!ta || !tb || !td || ta->rank != 4 || tb->rank != 4 || td->rank != 4) return std::nullopt;
             std::optional<TensorRef> tc = TensorRef{};
             if (!c.is_none() && !(tc = torch_tensor_ref(c))) return std::nullopt;
             auto al = python_real(alpha), be = python_real(beta);
             auto s = run_stream(stream, ta->device);
             if (!al || !be || !s || !torch_nhwc_views({&*ta, &*tb, &*tc, &*td})) return std::nullopt;
             return without_gil(
                 [&] {
                   return g.run(g.check(*ta, *tb, *tc, *td, geometry, *al, *be, *split), *al, *be,
                                reinterpret_cast<cudaStream_t>(*s));
                 },
                 sync.ptr() == Py_True);
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "stride"_a.none(), "padding"_a.none(),
           "dilation"_a.none(), "alpha"_a.none(), "beta"_a.none(), "split_k"_a.none(), "sync"_a.none(),
           "stream"_a.none() = nb::none(),
           "run() on 4-D CUDA torch tensors (channels_last N, C, H, W or plain N, H, W, C; C None, of D's shape or "
           "a bias vector), int geometry, real alpha and beta, split_k None or (mode, slices), on torch's current "
           "stream or a stream given as run() reads one, in one call; None (nothing done) for any other arguments, "
           "which the Python layer then runs.")
      .def("check",
           [](const Conv2d& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, const Pair& stride,
              const Pair& padding, const Pair& dilation, double alpha, double beta, int splits, bool parallel) {
             g.check(to_tensor_ref(a, "A"), to_tensor_ref(b, "B"), to_tensor_ref(c, "C"), to_tensor_ref(d, "D"),
                     {stride, padding, dilation}, alpha, beta, {splits, parallel});
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "stride"_a, "padding"_a, "dilation"_a, "alpha"_a,
           "beta"_a, "splits"_a, "parallel"_a, "The checks of run(), without running.")
      .def("profile",
           [](Conv2d& g, nb::handle a, nb::handle b, nb::handle c, nb::handle d, const Pair& stride,
              const Pair& padding, const Pair& dilation, double beta, int top, const std::string& filter, int jobs,
              uintptr_t stream, std::function<void(size_t, size_t, size_t, std::string)> progress) {
             auto problem = g.check(to_tensor_ref(a, "A"), to_tensor_ref(b, "B"), to_tensor_ref(c, "C"),
                                    to_tensor_ref(d, "D"), {stride, padding, dilation}, 1.0, beta, {});
             return profile_rows(g, problem, beta, top, filter, jobs, stream, progress);
           },
           "a"_a.none(), "b"_a.none(), "c"_a.none(), "d"_a.none(), "stride"_a, "padding"_a, "dilation"_a, "beta"_a,
           "top"_a, "filter"_a, "jobs"_a, "stream"_a, "progress"_a.none(),
           "Build and time the model's best candidates on these operands (D untouched), best measured first.");
}

}  // namespace cuforge::python
