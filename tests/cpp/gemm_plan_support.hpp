// What the GEMM plan's CPU tests share (test_select.cpp, test_gemm_plan_choice.cpp, test_tie_order.cpp,
// test_precision_choice.cpp, test_swap_ab.cpp): a plan's options, its pick for a problem, a change of its
// settings, whether a configuration is a catalog row, and the cost model's estimate of one.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuforge/library/catalog.hpp"
#include "cuforge/op/gemm.hpp"
#include "cuforge/select/gemm_cost.hpp"

namespace cuforge::test {

inline constexpr Layout R = Layout::RowMajor, C = Layout::ColumnMajor;

inline library::GemmConfig pick(const Gemm& g, int64_t m, int64_t n, int64_t k, int64_t batch = 1,
                                bool bias = false) {
  return g.select(g.shape(m, n, k, batch, bias)).config;
}

// The plan's settings with `change` applied.
template <class F>
void change(Gemm& g, F&& f) {
  select::GemmSettings s = g.settings();
  f(s);
  g.set_settings(s);
}

inline GemmOptions plan_of(DataType t, Layout a, Layout b, Layout c, int kernel_cc = 0) {
  GemmOptions o;
  o.element_a = o.element_b = o.element_c = o.element_d = t;
  o.element_accumulator = DataType::f32;
  o.layout_a = a;
  o.layout_b = b;
  o.layout_c = c;
  o.kernel_cc = kernel_cc;
  o.cc = 90;  // the H200's, whether or not this machine has a GPU
  return o;
}

// The cost model's estimate of one data-parallel run (K order, `sms` SMs: the H200's by default).
inline double estimate(const library::GemmConfig& c, const GemmShape& p, int sms = 132) {
  return select::estimated_time_us(c, p, 1, true, sms);
}

inline bool in_catalog(const library::GemmConfig& c) {
  const auto& catalog = library::gemm_catalog(c.arch);
  return std::find(catalog.begin(), catalog.end(), c) != catalog.end();
}

}  // namespace cuforge::test
