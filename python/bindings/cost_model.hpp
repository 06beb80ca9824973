// The bindings of the selection's cost model: its constants and its estimates by kernel name, which
// bench/refit.py fits to the stored measurements without a GPU.
#pragma once

#include <nanobind/nanobind.h>

namespace cuforge::python {

void bind_cost_model(nanobind::module_& m);

}  // namespace cuforge::python
