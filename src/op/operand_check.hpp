// What the boundary checks of every operation (gemm_check, grouped_check, conv_check) share: how an
// operand is refused, the epilogue's scalars, and the output that would overwrite an input.
#pragma once

#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "cuforge/core/error.hpp"
#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/core/tensor.hpp"

namespace cuforge::op {

// Refuses an operand or an argument: "<what>: <why>" (what: "D", "offsets", "group 3").
[[noreturn]] inline void fail(std::string_view what, std::string_view why) {
  throw InvalidArgumentError(fmt::format("{}: {}", what, why));
}

// Refuses an operand of another element type than the plan's `role` (a DataTypeError naming it `label`, else
// `name`) or on another device than the plan's (`device`; host memory named as such).
inline void check_type_and_device(std::string_view name, const TensorRef& t, DataType dtype, std::string_view role,
                                  int device, std::string_view label = {}) {
  if (t.dtype != dtype)
    throw DataTypeError(fmt::format("{}: expected element type {} (the plan's {}), got {}",
                                    label.empty() ? name : label, to_string(dtype), role, to_string(t.dtype)));
  if (t.device == TensorRef::kHost)
    fail(name, fmt::format("expected a tensor on cuda:{}, got one in host memory (a CPU torch tensor? move it with "
                           ".cuda(); NumPy arrays are copied to the GPU automatically)", device));
  if (t.device != device)
    fail(name, fmt::format("expected a tensor on cuda:{} (the plan's device), got one on cuda:{}", device, t.device));
}

// Refuses negative strides, and extents and strides that reach past the end of the address space (the last
// element's address would wrap onto other memory). `t` is of a valid rank.
inline void check_strides(std::string_view name, const TensorRef& t) {
  for (int i = 0; i < t.rank; ++i)
    if (t.strides[i] < 0) fail(name, fmt::format("negative strides are not supported: {}", t.describe()));
  if (t.beyond_address_space())
    fail(name, fmt::format("its extents and strides reach past the end of the address space: {}", t.describe()));
}

// Refuses an alpha or beta the epilogue cannot hold: an int32 epilogue (s32 D, exact at any K) takes whole numbers,
// or would truncate them; the others compute in f32 but for f64 accumulation, and would take a finite number beyond
// f32's range as infinity. Infinities and NaN are taken as given. (SM80's all-f16 kernels compute in f16, which the
// selection may or may not take for a plan: their exported operators check its range, library::epilogue_compute_type.)
inline void check_scalars(const GemmTypes& plan, double alpha, double beta) {
  for (auto [name, v] : {std::pair{"alpha", alpha}, {"beta", beta}}) {
    if (plan.element_d == DataType::s32 && (v != std::trunc(v) || std::abs(v) > double(INT32_MAX)))
      fail(name, fmt::format("s32 outputs are computed in int32: expected a whole number{}, got {}",
                             v == std::trunc(v) ? fmt::format(" of int32 (at most {} in magnitude)", INT32_MAX) : "", v));
    if (plan.accumulator() != DataType::f64 && std::isfinite(v) && std::abs(v) > double(FLT_MAX))
      fail(name, fmt::format("the epilogue computes in f32: expected a number within its range (±{}), got {}",
                             double(FLT_MAX), v));
  }
}

// Refuses an output D that overlaps `input` (named `name`): the kernel would read what it has written.
inline void check_output_apart(const TensorRef& d, std::string_view name, const TensorRef& input) {
  if (overlaps(d, input))
    fail("D", fmt::format("the output overlaps input {}: the kernel would read what it has written", name));
}

}  // namespace cuforge::op
