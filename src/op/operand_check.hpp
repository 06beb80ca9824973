// What the boundary checks of every operation (gemm_check, grouped_check, conv_check) share: how an
// operand is refused, and the output that would overwrite an input.
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "cuforge/core/error.hpp"
#include "cuforge/core/tensor.hpp"

namespace cuforge::op {

// Refuses an operand or an argument: "<what>: <why>" (what: "D", "offsets", "group 3").
[[noreturn]] inline void fail(std::string_view what, std::string_view why) {
  throw InvalidArgumentError(fmt::format("{}: {}", what, why));
}

// Refuses an output D that overlaps `input` (named `name`): the kernel would read what it has written.
inline void check_output_apart(const TensorRef& d, std::string_view name, const TensorRef& input) {
  if (overlaps(d, input))
    fail("D", fmt::format("the output overlaps input {}: the kernel would read what it has written", name));
}

}  // namespace cuforge::op
