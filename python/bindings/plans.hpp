// The bindings of the core's plans (Gemm, GroupedGemm, Conv2d) and their settings.
#pragma once

#include <nanobind/nanobind.h>

namespace cuforge::python {

void bind_plans(nanobind::module_& m);

}  // namespace cuforge::python
