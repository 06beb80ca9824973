// Template and header texts compiled into the library (generated from src/emit/templates and
// include/cuforge/abi.h by cmake/embed.cmake).
#pragma once

#include <string_view>

namespace cuforge::emit::embedded {

extern const std::string_view gemm_sm90;
extern const std::string_view gemm_sm80;
extern const std::string_view gemm_entry;
extern const std::string_view gemm_split_k;
extern const std::string_view split_k_reduce;
extern const std::string_view gemm_staging;
extern const std::string_view sm90_fp8_promotion;
extern const std::string_view kept_run;
extern const std::string_view launch;
extern const std::string_view sm90_launch;
extern const std::string_view sm80_launch;
extern const std::string_view grouped_sm90;
extern const std::string_view grouped_sm80;
extern const std::string_view grouped_entry;
extern const std::string_view conv_sm90;
extern const std::string_view conv_sm80;
extern const std::string_view conv_entry;
extern const std::string_view conv_split_k;
extern const std::string_view conv_split_k_sm80;
extern const std::string_view conv_split_k_sm90;
extern const std::string_view conv_pointwise;
extern const std::string_view pytorch_common;
extern const std::string_view pytorch_gemm;
extern const std::string_view pytorch_grouped;
extern const std::string_view pytorch_conv;
extern const std::string_view abi_h;

}  // namespace cuforge::emit::embedded
