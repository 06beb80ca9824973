// op/gemm_check's check_scales: fp8 plans' per-tensor scales, on the CPU with host memory as the
// device's (nothing is dereferenced).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "cuforge/op/gemm_check.hpp"

namespace cuforge {
namespace {

// fp8 scales: one f32 value each on the plan's device; refused for other plans, naming the scale.
TEST(Validation, Fp8ScalesAreOneF32ValueOnThePlansDevice) {
  GemmTypes fp8;
  fp8.element_a = fp8.element_b = DataType::e4m3;
  fp8.element_c = fp8.element_d = DataType::bf16;
  fp8.layout_b = Layout::ColumnMajor;
  alignas(16) static float values[4];
  alignas(16) static uint16_t output[64];
  const TensorRef d = TensorRef::matrix(output, DataType::bf16, 8, 8, Layout::RowMajor);
  const TensorRef one = TensorRef::vector(&values[0], DataType::f32, 1);
  const auto none = op::check_scales(fp8, 0, {}, d);
  EXPECT_EQ(none.first, nullptr);
  EXPECT_EQ(none.second, nullptr);
  auto [a, b] = op::check_scales(fp8, 0, {one, {}}, d);
  EXPECT_EQ(a, &values[0]);
  EXPECT_EQ(b, nullptr);
  TensorRef scalar = one;  // a 0-d tensor
  scalar.rank = 0;
  EXPECT_EQ(op::check_scales(fp8, 0, {{}, scalar}, d).second, &values[0]);

  auto refused = [&](const GemmTypes& plan, const op::Fp8Scales& scales, const std::string& words) {
    try {
      op::check_scales(plan, 0, scales, d);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  GemmTypes bf16 = fp8;
  bf16.element_a = bf16.element_b = DataType::bf16;
  refused(bf16, {one, one}, "per-tensor scales apply to fp8 (e4m3, e5m2) operands; this plan multiplies bf16 x bf16");
  refused(fp8, {TensorRef::vector(&values[0], DataType::f32, 2), {}}, "scale_a: expected one f32 value on the device (per-tensor");
  refused(fp8, {{}, TensorRef::vector(&values[0], DataType::bf16, 1)}, "scale_b: expected one f32 value");
  TensorRef host = one;
  host.device = TensorRef::kHost;
  refused(fp8, {host, {}}, "scale_a: expected a tensor on cuda:0");
  refused(fp8, {{}, TensorRef::vector(&values[0], DataType::f32, 1, 1)}, "scale_b: expected a tensor on cuda:0");
  refused(fp8, {TensorRef::vector(reinterpret_cast<const char*>(&values[0]) + 2, DataType::f32, 1), {}},
          "scale_a: expected a 4-byte aligned f32 value");
  refused(fp8, {{}, TensorRef::vector(&output[8], DataType::f32, 1)}, "scale_b: the scale lies in D");
  TensorRef unranked = one;
  unranked.rank = -1;
  refused(fp8, {unranked, {}}, "scale_a: expected one f32 value on the device (per-tensor scaling), got a tensor of "
                               "rank -1");
  TensorRef two_negatives = one;  // extents of -1 and -1: a product of one element
  two_negatives.rank = 2;
  two_negatives.shape = {-1, -1};
  two_negatives.strides = {-7, -9};
  refused(fp8, {two_negatives, {}}, "scale_a: expected one f32 value on the device (per-tensor scaling)");
}

}  // namespace
}  // namespace cuforge
