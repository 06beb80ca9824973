#include "kernel_cache.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>

#include "cuforge/compile/cache.hpp"
#include "cuforge/compile/compiler.hpp"
#include "cuforge/compile/toolchain.hpp"
#include "cuforge/compile/tuning_record.hpp"
#include "log_sink.hpp"
#include "operands.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace cuforge::python {
namespace {

// `with _core.cache_hold():` the kernel cache held as a kernel build holds it (cache clear waits).
struct CacheHold {
  std::unique_ptr<compile::KernelCache::Hold> hold;
};

}  // namespace

void bind_kernel_cache(nb::module_& m) {
  m.def("cache_dir", [] { return path_text(compile::KernelCache::user_cache().root()); });
  m.def("cache_subdirectory", [](const std::string& name) {
          return path_text(compile::KernelCache::user_cache().directory(name));
        }, "name"_a, "A private directory of the kernel cache's own (torch: the exported modules), made where needed.");
  nb::class_<CacheHold>(m, "CacheHold",
                        "The kernel cache held as a kernel build holds it, in a with block: `cache clear` waits for it.")
      .def("__enter__", [](CacheHold& self) { self.hold = compile::KernelCache::user_cache().hold(); },
           nb::call_guard<python::WithoutGil>())
      .def("__exit__", [](CacheHold& self, nb::args) { self.hold.reset(); });
  m.def("cache_hold", [] { return CacheHold{}; },
        "A with block in which the kernel cache is held as a kernel build holds it (cache clear waits for it).");
  m.def("cache_clear", [] { compile::KernelCache::user_cache().clear(compile::interrupt_check()); },
        nb::call_guard<python::WithoutGil>());
  m.def("tuning_record", [] {
    compile::TuningRecord record;
    nb::list entries;
    for (const auto& [key, t] : record.entries()) {
      nb::dict e;
      e["key"] = text(key);
      e["kernel"] = text(t.kernel);
      e["splits"] = t.splits;
      e["decomposition"] = t.decomposition;
      e["us"] = t.microseconds;
      e["measured"] = t.measured;
      e["candidates"] = t.candidates;
      entries.append(e);
    }
    return nb::make_tuple(path_text(record.path()), entries);
  }, "The tuning record's path and its entries.");
  m.def("tuning_record_clear", [] { return compile::TuningRecord().clear(); },
        "Remove the tuning record; returns how many entries it held.");
  m.def("cache_info", [] {
    auto i = compile::KernelCache::user_cache().info();
    nb::dict d;
    d["root"] = path_text(i.root);
    d["entries"] = i.entries;
    d["bytes"] = i.bytes;
    d["staging"] = i.staging;
    d["staging_bytes"] = i.staging_bytes;
    d["failed"] = i.failed;
    d["failed_bytes"] = i.failed_bytes;
    d["torch_modules"] = i.torch_modules;
    d["torch_bytes"] = i.torch_bytes;
    return d;
  }, "The kernel cache's entries, builds in progress (or left by dead builds), kept failures and the PyTorch modules "
     "emit.pytorch built.");
  m.def("cache_verify", [] {
    nb::list out;
    for (const auto& c : compile::KernelCache::user_cache().verify()) {
      nb::dict d;
      d["key"] = path_text(c.key);  // an entry's directory name, any bytes; its entry.json's fields too
      d["name"] = text(c.name);
      d["problem"] = text(c.problem);
      out.append(d);
    }
    return out;
  }, "Every cache entry with what is wrong with it ('' when sound); removes nothing.");
  m.def("toolchain", [] {
    const auto& t = compile::Toolchain::get();
    nb::dict d;
    d["nvcc"] = path_text(t.nvcc);
    d["cuda_version"] = t.cuda_version;
    d["cutlass"] = path_text(t.cutlass);
    d["cutlass_version"] = t.cutlass_version;
    return d;
  }, "The nvcc and CUTLASS headers cuforge compiles with (found on first use).");
}

}  // namespace cuforge::python
