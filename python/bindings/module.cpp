// cuforge._core: the C++ core, bound. This file converts and forwards; behaviour lives in the core.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuforge/cuforge.hpp"
#include "cuforge/compile/toolchain.hpp"
#include "cuforge/emit/gemm.hpp"
#include "cuforge/runtime/scratch.hpp"
#include "cuforge/runtime/timing.hpp"
#include "core_types.hpp"
#include "cost_model.hpp"
#include "kernel_cache.hpp"
#include "log_sink.hpp"
#include "operands.hpp"
#include "plans.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using namespace cuforge;
using cuforge::python::compile_result;
using cuforge::python::path_text;
using cuforge::python::text;

namespace {

PyObject* g_error = nullptr;  // the Python exception classes, created at import
PyObject* g_invalid_argument = nullptr;
PyObject* g_data_type = nullptr;
PyObject* g_toolchain = nullptr;
PyObject* g_device = nullptr;
PyObject* g_cache = nullptr;
PyObject* g_compilation = nullptr;
// The exception a signal handler raised during a build (the interrupt check's, below): only the main thread runs
// handlers. Never destroyed: the interpreter may be finalized by then.
auto& g_interruption = *new std::optional<nb::python_error>();

PyObject* new_exception(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
  std::string qualified = std::string("cuforge.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  m.attr(name) = nb::handle(cls);
  return cls;
}

// Calls a Python workspace callback: what it raises (or an address that is not one) reaches the core
// as a DeviceError, the only errors the core expects of a workspace.
template <typename Call>
auto workspace_call(const char* what, size_t bytes, Call&& call) {
  try {
    return call();
  } catch (const nb::python_error& e) {
    nb::gil_scoped_acquire acquire;
    throw DeviceError(std::string(what) + " a kernel workspace of " + std::to_string(bytes) +
                      " bytes: " + nb::repr(e.value()).c_str());
  } catch (const nb::cast_error&) {
    throw DeviceError(std::string(what) + " a kernel workspace of " + std::to_string(bytes) +
                      " bytes: the allocator returned something other than an address (an int)");
  }
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "cuforge's C++ core: catalog, emission, compilation cache and GEMM plans";

  g_error = new_exception(m, "Error", PyExc_Exception, "Base class of every cuforge error.");
  auto bases = [](PyObject* a, PyObject* b) { return PyTuple_Pack(2, a, b); };
  g_invalid_argument = new_exception(m, "InvalidArgumentError", bases(g_error, PyExc_ValueError),
                                     "A shape, stride, alignment or setting the operation cannot accept.");
  g_data_type = new_exception(m, "DataTypeError", bases(g_error, PyExc_TypeError),
                              "An operand whose element type differs from the plan's.");
  g_toolchain = new_exception(m, "ToolchainError", bases(g_error, PyExc_RuntimeError),
                              "nvcc, CUDA or the CUTLASS headers are missing or of the wrong version.");
  g_device = new_exception(m, "DeviceError", bases(g_error, PyExc_RuntimeError),
                           "No GPU, a GPU the plan cannot target, or a failed CUDA call.");
  g_cache = new_exception(m, "CacheError", bases(g_error, PyExc_RuntimeError), "The kernel cache is unusable.");
  g_compilation = new_exception(m, "CompilationError", bases(g_error, PyExc_RuntimeError),
                                "nvcc rejected a kernel; .log holds its output, .source_path the kept source.");

  // A Ctrl-C during a build (cuforge.build, a plan's compile or profile, a first run's build) stops it: the thread
  // waiting for the builds checks Python's signals (the main thread's: other threads see none) and the build
  // raises KeyboardInterrupt, where it otherwise ran every kernel before the interpreter saw the signal.
  // The handler's exception (KeyboardInterrupt, or whatever a handler of the program's raised) is kept for the
  // thread that asked, and raised from compile::Interrupted there. The check takes the GIL, which a core thread
  // must not wait for while holding a lock of the core's (log_sink.hpp): compile_many holds none when it asks,
  // nor a first run when it builds its kernel (the plan's lock let go; a fallback's stand-in, built under it, is
  // built without the check).
  compile::set_interrupt_check([] {
    if (!Py_IsInitialized()) return false;
    nb::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() == 0) return false;
    g_interruption.emplace();  // takes the raised exception
    return true;
  });

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    // The message as a str, whatever its bytes: nvcc's and gcc's output may be in another encoding.
    auto raise = [](PyObject* type, const std::string& message) { PyErr_SetObject(type, text(message).ptr()); };
    try {
      std::rethrow_exception(p);
    } catch (const nb::python_error&) {
      throw;  // a Python exception (from a callback): nanobind restores it
    } catch (const nb::builtin_exception&) {
      throw;
    } catch (const CompilationError& e) {
      nb::object exc = nb::steal(PyObject_CallOneArg(g_compilation, text(e.what()).ptr()));
      if (!exc.is_valid()) return;  // what the exception's construction raised stands
      if (PyObject_SetAttrString(exc.ptr(), "log", text(e.log()).ptr()) == 0 &&
          PyObject_SetAttrString(exc.ptr(), "source_path", path_text(e.source_path()).ptr()) == 0)
        PyErr_SetObject(g_compilation, exc.ptr());
    } catch (const InvalidArgumentError& e) {
      raise(g_invalid_argument, e.what());
    } catch (const DataTypeError& e) {
      raise(g_data_type, e.what());
    } catch (const ToolchainError& e) {
      raise(g_toolchain, e.what());
    } catch (const DeviceError& e) {
      raise(g_device, e.what());
    } catch (const CacheError& e) {
      raise(g_cache, e.what());
    } catch (const Interrupted&) {
      if (!g_interruption) return PyErr_SetNone(PyExc_KeyboardInterrupt);
      g_interruption->restore();  // the signal handler's exception (above)
      g_interruption.reset();
    } catch (const Error& e) {
      raise(g_error, e.what());
    } catch (const std::filesystem::filesystem_error& e) {
      raise(g_cache, e.what());
    } catch (const std::bad_alloc&) {
      throw;  // MemoryError
    } catch (const std::exception& e) {  // never a bare RuntimeError: say it is cuforge's, and what
      raise(g_error, std::string("internal error: ") + e.what());
    }
  });

  python::bind_types(m);

  nb::class_<runtime::RunHandle>(m, "RunHandle", "An asynchronous run: sync() waits for it (its stream's event).")
      .def("sync", &runtime::RunHandle::sync, nb::call_guard<python::WithoutGil>(),
           "Wait for this run to finish (and copy host results back).")
      .def("done", &runtime::RunHandle::done, "True once the run has finished on the GPU (a failed run raises).");

  nb::class_<runtime::DeviceBuffer>(m, "DeviceBuffer",
                                    "A device copy of a host array for one run, allocated and freed on its stream.")
      .def("__init__",
           [](runtime::DeviceBuffer* b, int device, size_t bytes, uintptr_t stream) {
             new (b) runtime::DeviceBuffer(device, bytes, reinterpret_cast<cudaStream_t>(stream));
           },
           "device"_a, "bytes"_a, "stream"_a)
      .def_prop_ro("data", [](const runtime::DeviceBuffer& b) { return reinterpret_cast<uintptr_t>(b.data()); })
      .def("copy_from_host", [](runtime::DeviceBuffer& b, uintptr_t host, size_t bytes) {
             b.copy_from_host(reinterpret_cast<const void*>(host), bytes);
           })
      .def("copy_to_host", [](const runtime::DeviceBuffer& b, uintptr_t host, size_t bytes) {
             b.copy_to_host(reinterpret_cast<void*>(host), bytes);
           });

  python::bind_plans(m);

  m.def("check_glob", &library::check_glob, "glob"_a,
        "Raises InvalidArgumentError unless `glob` is a shell pattern cuforge matches kernel names with.");
  m.def("list_gemms", [](std::optional<int> arch, const std::string& glob, std::optional<KernelKind> kind) {
          library::GemmFilter f;
          f.kind = kind;
          f.arch = arch;
          f.name_glob = glob;
          std::vector<std::string> names;
          for (const auto* c : library::find_gemms(f)) names.push_back(c->name());
          return names;
        }, "arch"_a = nb::none(), "glob"_a = "", "kind"_a.none() = nb::none(),
        "Names of the catalog's kernels (of one kind, or every kind).");
  python::bind_cost_model(m);
  m.def("emit", [](const std::string& name) { return emit::gemm_source(library::parse_gemm_name(name)); },
        "name"_a, "The complete CUDA source of a kernel, by name.");
  m.def("kernel_config",
        [](const std::string& name) {
          const library::GemmConfig c = library::parse_gemm_name(name);
          nb::dict d;
          d["arch"] = int(c.arch);
          d["tile"] = c.tile;
          d["opclass"] = c.opclass;
          d["math"] = c.math;
          d["math_instruction"] = *library::math_instruction(c);
          d["element_accumulator"] = c.element_accumulator;
          d["activation"] = c.activation;
          d["kind"] = c.kind;
          d["A"] = nb::make_tuple(c.element_a, c.layout_a, c.alignment_a);
          d["B"] = nb::make_tuple(c.element_b, c.layout_b, c.alignment_b);
          d["C"] = nb::make_tuple(c.element_c, c.layout_c, c.alignment_c);
          d["element_d"] = c.element_d;
          d["element_epilogue"] = library::epilogue_compute_type(c);
          d["bias"] = c.bias;
          d["parallel_split_k"] = c.parallel_split_k;
          d["pointwise"] = c.pointwise;
          return d;
        },
        "name"_a, "What a kernel's name says of it: arch, kind, tile, opclass, math, math_instruction, "
        "element_accumulator, activation, A, B, C as (element, layout, alignment), element_d, element_epilogue "
        "(the type of alpha, beta and the epilogue's arithmetic), and whether it takes a bias row, splits K in "
        "parallel and is a convolution's GEMM kernel (pointwise).");
  m.def("kernel_build",
        [](const std::string& name, int cc) {
          KernelSource k = emit::gemm_kernel(library::parse_gemm_name(name), cc ? cc : runtime::default_target_cc());
          compile::check_target(k.family, k.target_cc, cc);
          nb::dict d;
          d["source"] = k.source;
          d["headers"] = k.headers;
          d["nvcc_flags"] = compile::Toolchain::get().nvcc_compile_flags(k.family, k.target_cc);
          d["family"] = k.family;
          return d;
        },
        "name"_a, "cc"_a = 0,
        "A kernel as nvcc builds it for compute capability `cc`: source, headers ((path, text)) and the flags that "
        "compile it to an object (no include directories, no linking).");
  m.def("build",
        [](const std::vector<std::string>& names, int jobs, int cc,
           std::function<void(size_t, size_t, size_t, std::string)> progress) {
          std::vector<KernelSource> sources;
          for (const auto& n : names) {
            sources.push_back(emit::gemm_kernel(library::parse_gemm_name(n), cc ? cc : runtime::default_target_cc()));
            compile::check_target(sources.back().family, sources.back().target_cc, cc);
          }
          std::vector<compile::BuildOutcome> outcomes;
          {
            python::WithoutGil released;
            outcomes = compile::compile_many(sources, jobs, [&](const compile::BuildProgress& p) {
              if (!progress) return;
              nb::gil_scoped_acquire acquire;
              progress(p.done, p.total, p.failed, p.last_name ? *p.last_name : "");
            });
          }
          // The toolchain or the cache failing is not a kernel's compile error: raised as what it is.
          // A kernel nvcc rejected is reported in its dict, with nvcc's log and the source kept.
          nb::list out;
          for (const auto& o : outcomes) {
            nb::dict d = o.result ? compile_result(*o.result) : nb::dict();
            d["name"] = o.name;
            d["error"] = text(o.error);
            if (o.exception) try {
                std::rethrow_exception(o.exception);
              } catch (const CompilationError& e) {
                d["log"] = text(e.log());
                d["source_path"] = path_text(e.source_path());
              }
            out.append(d);
          }
          return out;
        },
        "names"_a, "jobs"_a = 0, "cc"_a = 0, "progress"_a.none() = nb::none(),
        "Compile kernels by name into the cache, `jobs` nvcc processes at once.");
  m.def("dlpack_descriptor", &python::dlpack_descriptor, "capsule"_a.none(), "name"_a,
        "(data_ptr, DataType, shape, strides, device) of an array exporting __dlpack__ (device -1: host memory).");
  m.def("set_default_cutlass_path", [](const std::filesystem::path& p) { compile::set_default_cutlass_path(p); });
  m.def("device_count", &runtime::device_count, "CUDA devices visible to this process.");
  m.def("device_id", &runtime::default_device, "The GPU cuforge runs on: CUTLASS_CUDA_DEVICE_ID, else the current one.");
  m.def("driver_cuda_version", &runtime::driver_cuda_version,
        "The CUDA version the driver supports (major * 1000 + minor * 10); 0 without a driver.");
  // A negative ordinal: the default device, as the CUTLASS Python interface's device_cc(-1).
  auto info = [](int device) -> const runtime::DeviceInfo& {
    return runtime::device_info(device < 0 ? runtime::default_device() : device);
  };
  m.def("device_cc", [info](int device) { return info(device).cc; }, "device"_a = -1,
        "Compute capability of a device (default: CUTLASS_CUDA_DEVICE_ID or the current one).");
  m.def("device_sm_count", [info](int device) { return info(device).sm_count; }, "device"_a = -1,
        "Streaming multiprocessors of a device (default: CUTLASS_CUDA_DEVICE_ID or the current one).");
  m.def("default_activation_argument", &default_activation_argument, "activation"_a,
        "The argument an activation takes unless told (leaky_relu: 0.2).");
  python::bind_log(m);
  m.def("set_workspace_allocator",
        [](std::function<uintptr_t(int, size_t, uintptr_t)> allocate,
           std::function<void(uintptr_t, int, size_t, uintptr_t)> free) {
          if (!allocate || !free) return runtime::set_workspace_allocator(nullptr);
          runtime::set_workspace_allocator(std::make_shared<const runtime::WorkspaceAllocator>(
              runtime::WorkspaceAllocator{
                  [allocate](int device, size_t bytes, cudaStream_t stream) {
                    return reinterpret_cast<void*>(workspace_call("allocating", bytes, [&] {
                      return allocate(device, bytes, reinterpret_cast<uintptr_t>(stream));
                    }));
                  },
                  [free](void* data, int device, size_t bytes, cudaStream_t stream) {
                    workspace_call("freeing", bytes, [&] {
                      free(reinterpret_cast<uintptr_t>(data), device, bytes, reinterpret_cast<uintptr_t>(stream));
                    });
                  }}));
        }, "allocate"_a.none(), "free"_a.none(),
        "Kernel workspaces outside graph capture from allocate(device, bytes, stream) -> address (0: leave it to "
        "cuforge's pool), given back with free(address, device, bytes, stream), both stream-ordered; None: cuforge's "
        "pool. A Python exception in either becomes a DeviceError.");
  m.def("time_launches",
        [](const std::function<void()>& launch, uintptr_t stream) {
          nb::gil_scoped_release release;  // each launch takes it back to call into Python
          return runtime::time_launches(launch, reinterpret_cast<cudaStream_t>(stream)).microseconds;
        },
        "launch"_a, "stream"_a,
        "Microseconds of GPU time per launch() (which queues work on `stream`), timed as the profiler times "
        "kernels: the launches queued while the stream is held, the fastest of three rounds.");
  m.def("time_round",
        [](const std::function<void()>& launch, uintptr_t stream, int count) {
          nb::gil_scoped_release release;
          return runtime::time_round(launch, reinterpret_cast<cudaStream_t>(stream), count).microseconds;
        },
        "launch"_a, "stream"_a, "count"_a,
        "Microseconds of GPU time per launch() over `count` launches queued while the stream is held (200 at most "
        "a hold; no warm-up): the CUTLASS Python interface's profiler.");
  m.def("workspace_pool_bytes", &runtime::Scratch::pooled_bytes, "Bytes cuforge's own workspace pool holds now.");
  m.def("compile_statistics", [] {
          auto s = compile::statistics();
          nb::dict d;
          d["requests"] = s.requests;
          d["cache_hits"] = s.cache_hits;
          d["builds"] = s.builds;
          d["failures"] = s.failures;
          return d;
        }, "What this process asked of nvcc: requests, cache hits, builds (nvcc runs) and failures.");
  m.def("size_bits", &size_bits, "type"_a, "Bits of one element of the type.");
  python::bind_kernel_cache(m);
}
