// The bindings of the core's types: its enums, MathInstruction and TileDescription.
#pragma once

#include <nanobind/nanobind.h>

namespace cuforge::python {

void bind_types(nanobind::module_& m);

}  // namespace cuforge::python
