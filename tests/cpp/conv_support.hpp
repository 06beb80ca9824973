// What the Conv2d CPU tests share (test_conv.cpp, test_conv_plan.cpp): the kinds, a plan's options,
// fake NHWC tensors, two ResNet-50 layers, and a refusal's check by its words.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "cuforge/op/conv2d.hpp"
#include "test_support.hpp"

namespace cuforge::test {

inline constexpr uintptr_t kBase = 0x10000000;  // fake device addresses: nothing is dereferenced
inline constexpr KernelKind kFprop = KernelKind::Conv2dFprop, kDgrad = KernelKind::Conv2dDgrad,
                            kWgrad = KernelKind::Conv2dWgrad;

inline GemmOptions options(DataType t) {
  GemmOptions o;
  o.element_a = o.element_b = o.element_c = o.element_d = t;
  o.layout_a = o.layout_b = o.layout_c = Layout::TensorNHWC;
  o.cc = 90;
  return o;
}

// A dense NHWC tensor at `slot` (each 256 MiB apart) on cuda:0.
inline TensorRef nhwc(int slot, int64_t n, int64_t h, int64_t w, int64_t c, DataType t = DataType::f16) {
  return TensorRef::nhwc(reinterpret_cast<const void*>(kBase + (uintptr_t(slot) << 28)), t, n, h, w, c);
}

inline Conv2dSize resnet_layer() {  // ResNet-50's 56 x 56 x 64 -> 64 3 x 3 layer, N = 32
  Conv2dSize z;
  z.n = 32, z.h = z.w = 56, z.c = 64, z.k = 64, z.r = z.s = 3, z.pad_h = z.pad_w = 1, z.p = z.q = 56;
  return z;
}

// ResNet-50's stem: 224 x 224 x 3 (padded to 8) -> 64, 7 x 7 stride 2, N = 32.
inline Conv2dSize stem_layer() {
  Conv2dSize stem;
  stem.n = 32, stem.h = stem.w = 224, stem.c = 8, stem.k = 64, stem.r = stem.s = 7;
  stem.pad_h = stem.pad_w = 3, stem.stride_h = stem.stride_w = 2;
  stem.p = stem.q = 112;
  return stem;
}

// What `call` throws as a cuforge::Error ("" when it throws none).
#define REFUSAL(call) ::cuforge::test::message_of<::cuforge::Error>([&] { call; })
#define EXPECT_REFUSED(call, words) \
  EXPECT_NE(REFUSAL(call).find(words), std::string::npos) << "refused with: '" << REFUSAL(call) << "'"

}  // namespace cuforge::test
