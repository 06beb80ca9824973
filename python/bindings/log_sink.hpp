// The core's messages into Python's logging (cuforge._core.set_log_sink), without deadlocking on the GIL.
#pragma once

#include <nanobind/nanobind.h>

namespace cuforge::python {

void bind_log(nanobind::module_& m);

}  // namespace cuforge::python
