// GEMM runs on fake device pointers for the boundary check's tests (test_validation.cpp, test_batches.cpp): a
// valid f16 row-major 64 x 32 x 48 problem by default, and views of matrices and batches.
#pragma once

#include <climits>
#include <cstdint>

#include "cuforge/op/gemm_check.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

constexpr int64_t kBig = int64_t(INT32_MAX) + 1;  // 2^31: one past what the kernels index

// Fake device addresses, 1 MiB apart and 256-byte aligned: nothing is dereferenced.
constexpr uintptr_t kA = 0x10000000, kB = 0x10100000, kC = 0x10200000, kD = 0x10300000;

using test::tensor;

inline TensorRef row_major(uintptr_t address, int64_t rows, int64_t cols, DataType dtype = DataType::f16) {
  return tensor(address, {rows, cols}, {cols, 1}, dtype);
}

inline TensorRef col_major(uintptr_t address, int64_t rows, int64_t cols, DataType dtype = DataType::f16) {
  return tensor(address, {rows, cols}, {1, rows}, dtype);
}

inline TensorRef batch_of(uintptr_t address, int64_t batch, int64_t rows, int64_t cols,
                          DataType dtype = DataType::f16) {
  return tensor(address, {batch, rows, cols}, {rows * cols, cols, 1}, dtype);
}

// One run: plan, operands, beta. The defaults are a valid f16 row-major 64 x 32 x 48 problem.
struct GemmRun {
  GemmTypes plan;
  TensorRef a = row_major(kA, 64, 48);
  TensorRef b = row_major(kB, 48, 32);
  TensorRef c;  // none
  TensorRef d = row_major(kD, 64, 32);
  double alpha = 1.0, beta = 0.0;

  GemmProblem check() const { return op::check_gemm(plan, 0, a, b, c, d, alpha, beta); }
};

inline GemmRun with_c() {
  GemmRun r;
  r.c = row_major(kC, 64, 32);
  r.beta = 1.0;
  return r;
}

inline GemmRun all(DataType t) {
  GemmRun r;
  r.plan.element_a = r.plan.element_b = r.plan.element_c = r.plan.element_d = t;
  r.a.dtype = r.b.dtype = r.d.dtype = t;
  return r;
}

inline GemmRun batched(int64_t batch) {
  GemmRun r;
  r.a = batch_of(kA, batch, 64, 48);
  r.b = batch_of(kB, batch, 48, 32);
  r.d = batch_of(kD, batch, 64, 32);
  return r;
}

}  // namespace
}  // namespace cuforge
