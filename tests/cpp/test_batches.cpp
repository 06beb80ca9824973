// op/gemm_check: batches on the CPU with fake device pointers: inputs broadcast across D's batches, strides of
// padded batches, and a batch over one B folded into the rows of one GEMM.
#include <gtest/gtest.h>

#include "gemm_run_support.hpp"

namespace cuforge {
namespace {

TEST(Batches, InputsWithOneBatchAreBroadcastAcrossD) {
  GemmRun r = batched(3);
  r.a = row_major(kA, 64, 48);                     // a matrix: the same A for every batch
  r.b = tensor(kB, {3, 48, 32}, {0, 32, 1});       // stride 0: also the same B for every batch
  GemmProblem g = r.check();
  EXPECT_EQ(g.shape.batch, 3);
  EXPECT_EQ(g.batch_stride_a, 0);
  EXPECT_EQ(g.batch_stride_b, 0);
  EXPECT_EQ(g.batch_stride_d, 64 * 32);
}

// A batch over one B runs as one GEMM of the batch's rows (as the CUTLASS Python interface runs it); what cannot
// fold stays a batch.
TEST(Batches, ABatchOverOneBFoldsIntoTheRowsOfOneGemm) {
  GemmRun r = batched(4);
  r.a = batch_of(kA, 4, 16, 32);
  r.b = row_major(kB, 32, 8);
  r.c = batch_of(kC, 4, 16, 8);
  r.d = batch_of(kD, 4, 16, 8);
  r.beta = 1.0;
  GemmProblem g = r.check();
  EXPECT_EQ(g.shape.m, 64);
  EXPECT_EQ(g.shape.batch, 1);
  EXPECT_FALSE(g.shape.bias);
  EXPECT_EQ(g.lda, 32);
  EXPECT_EQ(g.ldc, 8);
  EXPECT_EQ(g.ldd, 8);
  EXPECT_EQ(g.batch_stride_a + g.batch_stride_b + g.batch_stride_c + g.batch_stride_d, 0);

  // A batch of one row each, batches apart by a padded stride; a broadcast (stride-0) B; a bias vector, which
  // the rows of every batch read.
  GemmRun rows = batched(5);
  rows.a = tensor(kA, {5, 1, 32}, {40, 40, 1});
  rows.b = tensor(kB, {5, 32, 8}, {0, 8, 1});
  rows.c = tensor(kC, {8}, {1});
  rows.d = batch_of(kD, 5, 1, 8);
  rows.beta = 1.0;
  g = rows.check();
  EXPECT_EQ(g.shape.m, 5);
  EXPECT_EQ(g.shape.batch, 1);
  EXPECT_TRUE(g.shape.bias);
  EXPECT_EQ(g.lda, 40);
  EXPECT_EQ(g.ldc, 0);
  EXPECT_EQ(g.ldd, 8);

  // What stays a batch: a batched B, a C shared by every batch, rows padded between batches, a column-major A,
  // rows past the kernels' 32-bit extents together.
  GemmRun batched_b = r, shared_c = r, bias_per_batch = r, padded = r, column = r, huge = batched(1 << 16);
  batched_b.b = batch_of(kB, 4, 32, 8);
  shared_c.c = row_major(kC, 16, 8);
  bias_per_batch.c = batch_of(kC, 4, 1, 8);  // each batch's own bias row, read by its 16 rows
  padded.a = tensor(kA, {4, 16, 32}, {17 * 32, 32, 1});
  column.plan.layout_a = Layout::ColumnMajor;
  column.a = tensor(kA, {4, 16, 32}, {16 * 32, 1, 16});
  huge.a = tensor(kA, {1 << 16, 1 << 16, 8}, {int64_t(1) << 19, 8, 1});
  huge.b = row_major(kB, 8, 8);
  huge.d = tensor(kA + (uintptr_t(1) << 37), {1 << 16, 1 << 16, 8}, {int64_t(1) << 19, 8, 1});  // past A's 2^36 bytes
  for (const GemmRun* kept : {&batched_b, &shared_c, &bias_per_batch, &padded, &column, &huge}) {
    GemmProblem k = kept->check();
    EXPECT_GT(k.shape.batch, 1) << kept->a.describe();
    EXPECT_EQ(k.shape.m, kept->d.shape[1]);
  }
  const GemmProblem per_batch = bias_per_batch.check();
  EXPECT_TRUE(per_batch.shape.bias);
  EXPECT_EQ(per_batch.ldc, 0);
  EXPECT_EQ(per_batch.batch_stride_c, 8);
  // K = 0 (D = beta C) stays a batch: its zero operands are sized by M.
  GemmRun empty_k = r;
  empty_k.a = batch_of(kA, 4, 16, 0);
  empty_k.b = row_major(kB, 0, 8);
  EXPECT_EQ(empty_k.check().shape.batch, 4);
}

// An empty batch with no C is accepted too (nothing to compute).
TEST(Batches, EmptyBatchWithoutC) {
  GemmRun b0 = batched(0);
  EXPECT_TRUE(b0.check().shape.empty_output());
}

TEST(Batches, BatchesAndTransposedOperands) {
  GemmRun r = batched(4);
  GemmProblem g = r.check();
  EXPECT_EQ(g.shape.batch, 4);
  EXPECT_EQ(g.batch_stride_a, 64 * 48);
  EXPECT_EQ(g.batch_stride_b, 48 * 32);
  EXPECT_EQ(g.batch_stride_d, 64 * 32);

  GemmRun padded = batched(3);
  padded.b = tensor(kB, {3, 48, 32}, {48 * 40, 40, 1});  // padded rows and batches
  GemmProblem gp = padded.check();
  EXPECT_EQ(gp.ldb, 40);
  EXPECT_EQ(gp.batch_stride_b, 48 * 40);

  GemmRun t;  // column-major A and B plans take transposed views
  t.plan.layout_a = Layout::ColumnMajor;
  t.plan.layout_b = Layout::ColumnMajor;
  t.a = col_major(kA, 64, 48);
  t.b = tensor(kB, {48, 32}, {1, 56});  // padded column-major B
  GemmProblem gt = t.check();
  EXPECT_EQ(gt.lda, 64);
  EXPECT_EQ(gt.ldb, 56);
}

}  // namespace
}  // namespace cuforge
