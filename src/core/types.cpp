#include "cuforge/core/types.hpp"

namespace cuforge {

int size_bits(DataType t) {
  switch (t) {
    case DataType::f16:
    case DataType::bf16: return 16;
    case DataType::tf32:
    case DataType::f32:
    case DataType::s32: return 32;
    case DataType::f64: return 64;
    case DataType::s8:
    case DataType::u8:
    case DataType::e4m3:
    case DataType::e5m2: return 8;
    case DataType::void_: return 0;
  }
  return 0;
}

std::string_view cutlass_type(DataType t) {
  switch (t) {
    case DataType::f16: return "cutlass::half_t";
    case DataType::bf16: return "cutlass::bfloat16_t";
    case DataType::tf32: return "cutlass::tfloat32_t";
    case DataType::f32: return "float";
    case DataType::f64: return "double";
    case DataType::s8: return "int8_t";
    case DataType::u8: return "uint8_t";
    case DataType::s32: return "int32_t";
    case DataType::e4m3: return "cutlass::float_e4m3_t";
    case DataType::e5m2: return "cutlass::float_e5m2_t";
    case DataType::void_: return "void";
  }
  return "?";
}

DataType default_accumulator(DataType element_a, DataType element_b) {
  if (size_bits(element_a) != size_bits(element_b)) return DataType::f32;  // s8 beside f16 or bf16
  switch (element_a) {
    case DataType::s8:
    case DataType::u8: return DataType::s32;
    case DataType::f64: return DataType::f64;
    default: return DataType::f32;
  }
}

}  // namespace cuforge
