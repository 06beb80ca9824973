// GEMM plans on the CPU that cannot be, or cannot be used: a moved-from plan, enum values outside their
// enumerators, impossible types and targets, extents past what the kernels index; each an error that says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cuforge/library/catalog.hpp"
#include "cuforge/op/gemm.hpp"
#include "cuforge/op/gemm_check.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/select/gemm_choice.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "gemm_plan_support.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

using library::GemmConfig;
using namespace test;

// A plan moved from holds nothing: using it is an error that says so (it dereferenced a null state).
TEST(GemmPlan, AMovedFromPlanIsAClearError) {
  Gemm a(plan_of(DataType::f16, R, R, R));
  Gemm b(std::move(a));
  const std::string error = message_of<InvalidArgumentError>([&] { (void)a.settings(); });
  EXPECT_TRUE(contains(error, "this plan was moved from")) << error;
  EXPECT_THROW((void)a.select(GemmShape{64, 64, 64}), InvalidArgumentError);
  // Its check of a run's operands too, though it reads no kernels or settings.
  const auto m = [](uintptr_t at) {
    return TensorRef::matrix(reinterpret_cast<const void*>(at), DataType::f16, 64, 64, Layout::RowMajor);
  };
  const std::string checked =
      message_of<InvalidArgumentError>([&] { (void)a.check(m(1 << 20), m(2 << 20), {}, m(3 << 20), 1, 0); });
  EXPECT_TRUE(contains(checked, "this plan was moved from")) << checked;
  EXPECT_EQ(b.settings().splits, GemmOptions{}.settings.splits);
  a = std::move(b);  // assigned a plan again, it runs
  EXPECT_NO_THROW((void)a.select(GemmShape{64, 64, 64}));
}

// A C++ caller may cast any integer to an enum: each setting outside its enumerators is named.
TEST(GemmPlan, ValuesOutsideAnEnumAreRefused) {
  auto refusal = [](auto&& make) -> std::string {
    try {
      make();
    } catch (const InvalidArgumentError& e) {
      return e.what();
    }
    return "not refused";
  };
  GemmOptions layout = plan_of(DataType::f16, R, R, R);
  layout.layout_b = static_cast<Layout>(9);
  EXPECT_NE(refusal([&] { Gemm{layout}; }).find("layout_B: 9 is not a value of enum Layout"), std::string::npos);
  GemmOptions type = plan_of(DataType::f16, R, R, R);
  type.element_accumulator = static_cast<DataType>(-1);
  EXPECT_NE(refusal([&] { Gemm{type}; }).find("element_accumulator: -1 is not a value of enum DataType"), std::string::npos);
  Gemm plan(plan_of(DataType::f16, R, R, R));
  select::GemmSettings activation = plan.settings();
  activation.activation = static_cast<Activation>(42);
  EXPECT_NE(refusal([&] { plan.set_settings(activation); }).find("activation: 42 is not a value of enum Activation"),
            std::string::npos);
  select::GemmSettings tile = plan.settings();
  tile.tile = TileDescription{};
  tile.tile->epilogue_schedule = static_cast<EpilogueSchedule>(7);
  EXPECT_NE(refusal([&] { plan.set_settings(tile); }).find("epilogue_schedule: 7"), std::string::npos);
  select::GemmSettings first_run = plan.settings();
  first_run.first_run = static_cast<select::FirstRun>(2);
  EXPECT_NE(refusal([&] { plan.set_settings(first_run); }).find("first_run: 2"), std::string::npos);
  EXPECT_EQ(plan.settings().activation, Activation::identity) << "a refused setting changes nothing";
}

TEST(GemmPlan, ImpossiblePlansAreRefused) {
  GemmOptions mixed = plan_of(DataType::f16, R, R, R);
  mixed.element_d = DataType::bf16;
  EXPECT_THROW(Gemm{mixed}, InvalidArgumentError);
  try {
    Gemm{mixed};
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("cuforge list"), std::string::npos) << e.what();
  }
  GemmOptions s8 = plan_of(DataType::s8, R, C, R);
  EXPECT_THROW(Gemm{s8}, InvalidArgumentError);
  EXPECT_THROW(Gemm(plan_of(DataType::f16, R, R, R, 70)), InvalidArgumentError);
  GemmOptions old = plan_of(DataType::f16, R, R, R);
  old.cc = 75;
  EXPECT_THROW(Gemm{old}, DeviceError);
  const auto refusal = [&] { return test::message_of<InvalidArgumentError>([&] { Gemm{old}; }); };
  old.cc = -5;  // read as 0.-5 before
  EXPECT_EQ(refusal(), "cc: expected a compute capability such as 90 (or 0: the GPU's), got -5");
  old.cc = 0, old.device = -7;  // taken as the default device before
  EXPECT_EQ(refusal(), "device: expected a CUDA device ordinal (or -1: the default), got -7");
  GemmOptions ampere = plan_of(DataType::f16, R, R, R, 90);
  ampere.cc = 80;
  EXPECT_THROW(Gemm{ampere}, InvalidArgumentError) << "sm_90a kernels do not run on 8.0";
  GemmOptions ada = plan_of(DataType::f16, R, R, R);
  ada.cc = 89;
  EXPECT_EQ(Gemm(ada).kernel_cc(), 80);
  // Its kernels fit its 99 KB of shared memory: the catalog's f64 256x32x16, 32x256x16, 256x64x16 and 64x256x16
  // tiles (108-120 KB, within an A100's 163) are left out, and not listed.
  GemmOptions f64 = plan_of(DataType::f64, C, C, R);
  f64.element_accumulator = DataType::f64;
  f64.cc = 89;
  Gemm on_ada(f64);
  for (int64_t size : {256, 4096}) {
    const auto ranked = on_ada.candidates(on_ada.shape(size, size, size));
    ASSERT_FALSE(ranked.empty());
    for (const auto& c : ranked) EXPECT_LE(library::shared_memory_bytes(c.config), 99 * 1024) << c.config.name();
  }
  const auto tiles = on_ada.tile_descriptions();
  ASSERT_FALSE(tiles.empty());
  for (const TileDescription& t : tiles)  // each one listed can be pinned there
    EXPECT_NO_THROW(change(on_ada, [&](auto& s) { s.tile = t; })) << t.describe();
}

// Sizes a run may not ask for are refused by name, never a crash (a division by a zero tile count
// once killed the process); K = 0 selects the kernel that writes activation(beta * C).
TEST(GemmPlan, ExtentsAreCheckedBeforeSelection) {
  for (int family : {90, 80}) {
    Gemm g(plan_of(DataType::bf16, R, R, R, family));
    const int64_t huge = int64_t(1) << 40;
    struct Case {
      int64_t m, n, k, batch;
      const char* says;
    };
    for (const Case& c : {Case{0, 0, 0, 1, "empty output"}, Case{0, 64, 64, 1, "empty output"},
                          Case{64, 0, 64, 1, "empty output"}, Case{64, 64, 64, 0, "empty output"},
                          Case{-1, 5, 5, 1, "M: expected a size of 0 or more, got -1"},
                          Case{8, -8, 8, 1, "N: expected"}, Case{64, 64, 64, -3, "batch: expected"},
                          Case{huge, 8, 8, 1, "M: 1099511627776 exceeds the 32-bit range"},
                          Case{huge, huge, huge, 1, "exceeds the 32-bit range"}}) {
      auto message = test::message_of<InvalidArgumentError>([&] { pick(g, c.m, c.n, c.k, c.batch); });
      EXPECT_NE(message.find(c.says), std::string::npos) << c.m << "x" << c.n << "x" << c.k << "x" << c.batch
                                                          << ": " << message;
    }
    EXPECT_NO_THROW(pick(g, 64, 64, 0)) << "K = 0 runs a kernel over zeros when beta != 0";
    EXPECT_NO_THROW(pick(g, int64_t(INT32_MAX), 8, 8));
  }
  // Mixed inputs: K = 0 runs over one 16-byte vector of s8 (16 elements), the zeros sized for the wider B.
  GemmOptions mixed = plan_of(DataType::s8, R, C, R, 80);
  mixed.element_b = DataType::f16;
  mixed.element_c = mixed.element_d = DataType::f16;
  mixed.element_accumulator.reset();
  Gemm w8(mixed);
  EXPECT_EQ(pick(w8, 64, 96, 0).math, MathOperation::MultiplyAddMixedInputUpcast);
  GemmTypes t = mixed;
  size_t bytes = 0;
  EXPECT_EQ(op::over_zeros(t, GemmShape{64, 96, 0}, bytes).k, 16);
  EXPECT_EQ(bytes, 16u * 96 * 2) << "B (K x N f16, column-major) is the larger";
  // An operand no kernel takes is named with what each operand needs (B, f16, in 16-byte vectors here).
  auto message =
      test::message_of<InvalidArgumentError>([&] { w8.select(w8.shape(64, 96, 64, 1, false, {16, 4, 8})); });
  EXPECT_NE(message.find("A allows 16, B 4, C/D 8 elements"), std::string::npos) << message;
  EXPECT_NE(message.find("need at least A 16, B 8, C/D 8"), std::string::npos) << message;
}

}  // namespace
}  // namespace cuforge
