// library/: kernel names that are malformed or carry an epilogue, and the enum names they are built from.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuforge/library/catalog.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

// --- Malformed names. ---

TEST(CatalogNames, MalformedNamesAreRefused) {
  const std::string good = library::gemm_catalog(90).front().name();
  ASSERT_NO_THROW(library::parse_gemm_name(good));
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  const std::vector<std::string> bad = {
      "",
      "cuforge",
      "not_a_kernel_name",
      good.substr(0, good.rfind('_')),                  // alignment part missing
      good + "_extra",                                  // one part too many
      replace("cuforge_", "cutlass_"),                  // wrong prefix
      replace("_gemm_", "_conv_"),                      // wrong operation
      replace("cuforge_sm90", "cuforge_xx90"),          // no "sm"
      replace("cuforge_sm90", "cuforge_smXY"),          // arch not a number
      replace("_tensorop_", "_wmma_"),                  // unknown opclass
      replace("_mma_", "_fma_"),                        // unknown math
      replace("_f16_f16_f32_", "_f17_f16_f32_"),        // unknown data type
      replace("_rcr_", "_rxr_"),                        // bad layout letter
      replace("_rcr_", "_rc_"),                         // two layout letters
      replace("_128x", "_128xx"),                       // malformed tile
      replace("_c1x1x1_", "_w1x1x1_"),                  // warp shape on sm90
      replace("_c1x1x1_", "_c1x1_"),                    // two-part cluster
      replace("_s0_", "_t0_"),                          // stages without s
      replace("_s0_", "_s_"),                           // stages without a number
      replace("_s0_", "_s99999999999_"),                // stages out of range
      replace("_coop_", "_cooperative_"),               // unknown kernel schedule
      replace("_tmacoop_", "_tmax_"),                   // unknown epilogue schedule
      replace("_default_a", "_splitk_a"),               // unknown tile scheduler
      good.substr(0, good.rfind("_a")) + "_b8x8x8",     // alignment without a
      good.substr(0, good.rfind("_a")) + "_a8x8",       // two alignments
      good.substr(0, good.rfind("_a")) + "_a8x-x8",     // alignment not a number
  };
  for (const auto& name : bad) {
    SCOPED_TRACE(name);
    EXPECT_THROW(library::parse_gemm_name(name), InvalidArgumentError);
  }
  // The message says what a name looks like, or which part is wrong.
  try {
    library::parse_gemm_name("not_a_kernel_name");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("not a cuforge kernel name"), std::string::npos) << e.what();
  }
  try {
    library::parse_gemm_name(replace("_f16_f16_f32_", "_f17_f16_f32_"));
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("f17"), std::string::npos) << e.what();
  }
  // One spelling per kernel: a leading zero names the same kernel, and is refused naming the canonical name.
  try {
    library::parse_gemm_name(replace("_s0_", "_s00_"));
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("is spelled '" + good + "'"), std::string::npos) << e.what();
  }
  // A name of 100 KB is not echoed whole (`cuforge emit <name>`).
  const std::string huge = library::gemm_catalog(90).front().name() + std::string(100000, 'x');
  try {
    library::parse_gemm_name(huge);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u) << "a short message";
    EXPECT_NE(std::string(e.what()).find("a kernel name of 100"), std::string::npos) << e.what();
  }
}

TEST(CatalogNames, WgradTakesNoBias) {
  // dw's C has dw's shape: a bias name parsed (and emitted) once, then failed in nvcc (SM90) or read R·S·C
  // values of a row of K (SM80's split reduction).
  for (const std::string name :
       {"cuforge_sm90_wgrad_tensorop_mma_f16_f16_f32_f16_f16_crr_64x64x64_c1x1x1_s0_tmaws_tma_default_a8x8x8",
        "cuforge_sm80_wgrad_tensorop_mma_f16_f16_f32_f16_f16_crr_64x64x32_w2x2x1_s3_multistage_default_default_a8x8x8"}) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(library::parse_gemm_name(name));
    try {
      library::parse_gemm_name(name + "_bias");
      ADD_FAILURE() << "a wgrad bias kernel was accepted";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("wgrad's C has dw's shape"), std::string::npos) << e.what();
    }
  }
}

TEST(CatalogNames, TheEpilogueIsASuffix) {
  const std::string base =
      "cuforge_sm90_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x128x64_c1x1x1_s0_coop_tmacoop_default_a8x8x8";
  auto plain = library::parse_gemm_name(base);
  EXPECT_EQ(plain.activation, Activation::identity);
  EXPECT_FALSE(plain.bias);
  auto fused = library::parse_gemm_name(base + "_leaky_relu_bias");
  EXPECT_EQ(fused.activation, Activation::leaky_relu);
  EXPECT_TRUE(fused.bias);
  EXPECT_EQ(fused.name(), base + "_leaky_relu_bias");
  EXPECT_TRUE(library::parse_gemm_name(base + "_bias").bias);
  EXPECT_EQ(library::parse_gemm_name(base + "_gelu").activation, Activation::gelu);
  EXPECT_THROW(library::parse_gemm_name(base + "_identity"), InvalidArgumentError) << "one spelling per kernel";
  EXPECT_THROW(library::parse_gemm_name(base + "_softmax"), InvalidArgumentError);
  EXPECT_THROW(library::parse_gemm_name(base + "_bias_relu"), InvalidArgumentError);
  // Parallel split-K comes first.
  auto split = library::parse_gemm_name(base + "_splitk_relu_bias");
  EXPECT_TRUE(split.parallel_split_k);
  EXPECT_EQ(split.activation, Activation::relu);
  EXPECT_EQ(split.name(), base + "_splitk_relu_bias");
  EXPECT_TRUE(library::parse_gemm_name(base + "_splitk").parallel_split_k);
  EXPECT_FALSE(library::parse_gemm_name(base + "_relu").parallel_split_k);
  EXPECT_THROW(library::parse_gemm_name(base + "_relu_splitk"), InvalidArgumentError);
}

TEST(CatalogNames, SM80NamesCarryWarpsNotClusters) {
  const auto& c = library::gemm_catalog(80).front();
  std::string name = c.name();
  EXPECT_NE(name.find("_w"), std::string::npos) << name;
  std::string as_cluster = name;
  as_cluster.replace(as_cluster.find("_w") + 1, 1, "c");
  EXPECT_THROW(library::parse_gemm_name(as_cluster), InvalidArgumentError);
}

TEST(CoreTypes, EnumNamesRoundTrip) {
  for (const auto& [v, n] : EnumNames<DataType>::table) EXPECT_EQ(parse<DataType>(n), v);
  for (const auto& [v, n] : EnumNames<KernelSchedule>::table) EXPECT_EQ(parse<KernelSchedule>(n), v);
  try {
    parse<DataType>("f17");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("expected one of: f16, bf16"), std::string::npos) << e.what();
  }
  EXPECT_EQ(size_bits(DataType::bf16), 16);
  EXPECT_EQ(size_bits(DataType::e4m3), 8);
  EXPECT_EQ(size_bits(DataType::f64), 64);
  EXPECT_EQ(cutlass_type(DataType::bf16), "cutlass::bfloat16_t");
  EXPECT_EQ(transposed(Layout::RowMajor), Layout::ColumnMajor);
}

}  // namespace
}  // namespace cuforge
