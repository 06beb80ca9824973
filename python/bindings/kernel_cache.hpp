// The bindings of the kernel cache, its tuning record and the toolchain it is keyed by.
#pragma once

#include <nanobind/nanobind.h>

namespace cuforge::python {

void bind_kernel_cache(nanobind::module_& m);

}  // namespace cuforge::python
