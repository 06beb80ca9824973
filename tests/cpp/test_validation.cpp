// op/gemm_problem: the boundary check of a GEMM run, on the CPU with fake device pointers.
//
// A table of bad inputs across A, B, C and D: each must raise the right exception type with a
// message that starts with the operand's name and says what was expected (and what was given).
// Then the accepted cases: the canonical problem the kernels are given.
#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cuforge/op/gemm_check.hpp"
#include "cuforge/op/grouped_check.hpp"
#include "gemm_run_support.hpp"

namespace cuforge {
namespace {


enum class Kind { InvalidArgument, DataType };

struct BadInput {
  const char* what;
  GemmRun run;
  Kind kind;
  const char* operand;                // the message starts with "<operand>: "
  std::vector<std::string> mentions;  // what was expected and what was given
};

std::vector<BadInput> bad_inputs() {
  using D = DataType;
  using K = Kind;
  const GemmRun base;
  return {
      // Element types.
      {"A is bf16", test::changed(base, [](GemmRun& r) { r.a.dtype = D::bf16; }), K::DataType, "A",
       {"expected element type f16", "element_A", "got bf16"}},
      {"B is f32", test::changed(base, [](GemmRun& r) { r.b.dtype = D::f32; }), K::DataType, "B",
       {"expected element type f16", "element_B", "got f32"}},
      {"C is bf16", test::changed(with_c(), [](GemmRun& r) { r.c.dtype = D::bf16; }), K::DataType, "C",
       {"expected element type f16", "element_C", "got bf16"}},
      {"D is f32", test::changed(base, [](GemmRun& r) { r.d.dtype = D::f32; }), K::DataType, "D",
       {"expected element type f16", "element_D", "got f32"}},
      {"A is f16 in a bf16 plan", test::changed(all(D::bf16), [](GemmRun& r) { r.a.dtype = D::f16; }), K::DataType, "A",
       {"expected element type bf16", "got f16"}},
      {"D is s8", test::changed(base, [](GemmRun& r) { r.d.dtype = D::s8; }), K::DataType, "D", {"got s8"}},

      // Presence and rank.
      {"no A", test::changed(base, [](GemmRun& r) { r.a = TensorRef{}; }), K::InvalidArgument, "A", {"no tensor was given"}},
      {"no B", test::changed(base, [](GemmRun& r) { r.b = TensorRef{}; }), K::InvalidArgument, "B", {"no tensor was given"}},
      {"no D", test::changed(base, [](GemmRun& r) { r.d = TensorRef{}; }), K::InvalidArgument, "D", {"no output tensor"}},
      {"A has a null pointer", test::changed(base, [](GemmRun& r) { r.a.data = nullptr; }), K::InvalidArgument, "A",
       {"its data pointer is null"}},
      {"A is a vector", test::changed(base, [](GemmRun& r) { r.a = tensor(kA, {48}, {1}); }), K::InvalidArgument, "A",
       {"expected a matrix (rank 2) or a batch of matrices (rank 3)", "got rank 1"}},
      // A C++ caller's rank beyond the shape's entries: no extent is read (it crashed, or threw length_error).
      {"A of rank INT_MAX", test::changed(base, [](GemmRun& r) { r.a.rank = INT_MAX; }), K::InvalidArgument, "A",
       {"got rank 2147483647", "(ranks go to 4)"}},
      {"B of rank -1", test::changed(base, [](GemmRun& r) { r.b.rank = -1; }), K::InvalidArgument, "B",
       {"got rank -1"}},
      {"D of rank 1000", test::changed(base, [](GemmRun& r) { r.d.rank = 1000; }), K::InvalidArgument, "D",
       {"got rank 1000"}},
      // A leading dimension near 2^62 (one matrix's span past int64: the batches overlapped unseen), or a stride of
      // 2^40 bytes or more, past what SM90's TMA descriptors take (the kernel chosen was one of them).
      {"D's leading dimension past int64's matrix", test::changed(base, [](GemmRun& r) {
         r.a = batch_of(kA, 2, 2, 48);
         r.d = tensor(kD, {2, 2, 32}, {16, int64_t(1) << 62, 1});
       }), K::InvalidArgument, "D", {"a leading dimension of 4611686018427387904 elements is 2^40 bytes or more"}},
      {"A's leading dimension of 2^40 bytes", test::changed(base, [](GemmRun& r) {
         r.a = tensor(kA, {64, 48}, {int64_t(1) << 39, 1});
       }), K::InvalidArgument, "A", {"a leading dimension of 549755813888 elements is 2^40 bytes or more"}},
      {"D's batch stride of 2^40 bytes", test::changed(base, [](GemmRun& r) {
         r.a = batch_of(kA, 2, 64, 48);
         r.d = tensor(kD, {2, 64, 32}, {int64_t(1) << 39, 32, 1});
       }), K::InvalidArgument, "D", {"a batch stride of 549755813888 elements is 2^40 bytes or more"}},
      {"B is a vector", test::changed(base, [](GemmRun& r) { r.b = tensor(kB, {48}, {1}); }), K::InvalidArgument, "B",
       {"expected a matrix", "got rank 1"}},
      {"D is a scalar", test::changed(base, [](GemmRun& r) { r.d = tensor(kD, {}, {}); }), K::InvalidArgument, "D",
       {"expected a matrix", "got rank 0"}},

      // Shapes.
      {"K of B differs from K of A", test::changed(base, [](GemmRun& r) { r.b = row_major(kB, 40, 32); }), K::InvalidArgument,
       "B", {"expected 48 rows (K, the columns of A), got 40"}},
      {"D has one row too many", test::changed(base, [](GemmRun& r) { r.d = row_major(kD, 65, 32); }), K::InvalidArgument, "D",
       {"expected shape (M, N) = (64, 32)", "got (65, 32)"}},
      {"D has one column too few", test::changed(base, [](GemmRun& r) { r.d = row_major(kD, 64, 31); }), K::InvalidArgument,
       "D", {"expected shape (M, N) = (64, 32)", "got (64, 31)"}},
      {"D is transposed", test::changed(base, [](GemmRun& r) { r.d = row_major(kD, 32, 64); }), K::InvalidArgument, "D",
       {"(64, 32)", "got (32, 64)"}},
      {"C has the wrong shape", test::changed(with_c(), [](GemmRun& r) { r.c = row_major(kC, 64, 31); }), K::InvalidArgument,
       "C", {"expected shape (M, N) = (64, 32)", "got (64, 31)"}},
      {"negative extent", test::changed(base, [](GemmRun& r) { r.a = tensor(kA, {-1, 48}, {48, 1}); }), K::InvalidArgument, "A",
       {"negative extent", "(-1, 48)"}},

      // Strides against the plan's layouts.
      {"column-major A in a row-major plan", test::changed(base, [](GemmRun& r) { r.a = col_major(kA, 64, 48); }),
       K::InvalidArgument, "A", {"expected a row-major matrix", "layout_A", "strides (1, 64)"}},
      {"B with a column stride of 2", test::changed(base, [](GemmRun& r) { r.b = tensor(kB, {48, 32}, {64, 2}); }),
       K::InvalidArgument, "B", {"expected a row-major matrix", "unit stride along the columns", "strides (64, 2)"}},
      {"column-major D in a row-major plan", test::changed(base, [](GemmRun& r) { r.d = col_major(kD, 64, 32); }),
       K::InvalidArgument, "D", {"expected a row-major matrix", "layout_C"}},
      {"column-major C in a row-major plan", test::changed(with_c(), [](GemmRun& r) { r.c = col_major(kC, 64, 32); }),
       K::InvalidArgument, "C", {"expected a row-major matrix", "layout_C"}},
      {"row-major A in a column-major-A plan", test::changed(base, [](GemmRun& r) { r.plan.layout_a = Layout::ColumnMajor; }),
       K::InvalidArgument, "A", {"expected a column-major matrix", "unit stride along the rows"}},
      {"row-major D in a column-major-C plan", test::changed(base, [](GemmRun& r) { r.plan.layout_c = Layout::ColumnMajor; }),
       K::InvalidArgument, "D", {"expected a column-major matrix"}},
      {"rows of A overlap (ld 40 < K 48)", test::changed(base, [](GemmRun& r) { r.a = tensor(kA, {64, 48}, {40, 1}); }),
       K::InvalidArgument, "A", {"leading dimension of at least 48", "strides (40, 1)"}},
      {"rows of B overlap (ld 16 < N 32)", test::changed(base, [](GemmRun& r) { r.b = tensor(kB, {48, 32}, {16, 1}); }),
       K::InvalidArgument, "B", {"leading dimension of at least 32"}},
      {"columns of a column-major A overlap",
       test::changed(base, [](GemmRun& r) {
         r.plan.layout_a = Layout::ColumnMajor;
         r.a = tensor(kA, {64, 48}, {1, 32});
       }),
       K::InvalidArgument, "A", {"expected a column-major matrix", "leading dimension of at least 64"}},
      {"A broadcast along K (stride 0)", test::changed(base, [](GemmRun& r) { r.a = tensor(kA, {64, 48}, {48, 0}); }),
       K::InvalidArgument, "A", {"unit stride"}},
      {"negative row stride", test::changed(base, [](GemmRun& r) { r.a = tensor(kA, {64, 48}, {-48, 1}); }), K::InvalidArgument,
       "A", {"negative strides are not supported", "(-48, 1)"}},
      {"negative column stride", test::changed(base, [](GemmRun& r) { r.b = tensor(kB, {48, 32}, {32, -1}); }),
       K::InvalidArgument, "B", {"negative strides are not supported"}},

      // Devices.
      {"A in host memory", test::changed(base, [](GemmRun& r) { r.a.device = TensorRef::kHost; }), K::InvalidArgument, "A",
       {"expected a tensor on cuda:0", "host memory"}},
      {"B in host memory", test::changed(base, [](GemmRun& r) { r.b.device = TensorRef::kHost; }), K::InvalidArgument, "B",
       {"expected a tensor on cuda:0", "host memory"}},
      {"C in host memory", test::changed(with_c(), [](GemmRun& r) { r.c.device = TensorRef::kHost; }), K::InvalidArgument, "C",
       {"host memory"}},
      {"D in host memory", test::changed(base, [](GemmRun& r) { r.d.device = TensorRef::kHost; }), K::InvalidArgument, "D",
       {"host memory"}},
      {"A on another GPU", test::changed(base, [](GemmRun& r) { r.a.device = 1; }), K::InvalidArgument, "A",
       {"expected a tensor on cuda:0", "got one on cuda:1"}},
      {"D on another GPU", test::changed(base, [](GemmRun& r) { r.d.device = 3; }), K::InvalidArgument, "D",
       {"cuda:0", "got one on cuda:3"}},

      // Pointers not aligned to whole elements.
      {"A misaligned", test::changed(base, [](GemmRun& r) { r.a.data = reinterpret_cast<const void*>(kA + 1); }),
       K::InvalidArgument, "A", {"0x10000001", "not aligned to its 2-byte elements"}},
      {"B misaligned", test::changed(base, [](GemmRun& r) { r.b.data = reinterpret_cast<const void*>(kB + 3); }),
       K::InvalidArgument, "B", {"not aligned to its 2-byte elements"}},
      {"C misaligned", test::changed(with_c(), [](GemmRun& r) { r.c.data = reinterpret_cast<const void*>(kC + 1); }),
       K::InvalidArgument, "C", {"not aligned to its 2-byte elements"}},
      {"D misaligned", test::changed(base, [](GemmRun& r) { r.d.data = reinterpret_cast<const void*>(kD + 1); }),
       K::InvalidArgument, "D", {"not aligned to its 2-byte elements"}},
      {"f32 A aligned to 2 bytes only",
       test::changed(all(DataType::f32), [](GemmRun& r) { r.a.data = reinterpret_cast<const void*>(kA + 2); }),
       K::InvalidArgument, "A", {"not aligned to its 4-byte elements"}},

      // 32-bit limits: refused, never wrapped.
      {"M past 32 bits", test::changed(base, [](GemmRun& r) { r.a = tensor(kA, {kBig, 48}, {48, 1}); }), K::InvalidArgument,
       "A", {"2147483648 rows exceed the 32-bit range", "2147483647"}},
      {"K past 32 bits", test::changed(base, [](GemmRun& r) { r.a = tensor(kA, {64, kBig}, {kBig, 1}); }), K::InvalidArgument,
       "A", {"2147483648 columns exceed the 32-bit range"}},
      {"N past 32 bits", test::changed(base, [](GemmRun& r) { r.b = tensor(kB, {48, kBig}, {kBig, 1}); }), K::InvalidArgument,
       "B", {"columns exceed the 32-bit range"}},
      {"D rows past 32 bits", test::changed(base, [](GemmRun& r) { r.d = tensor(kD, {kBig, 32}, {32, 1}); }), K::InvalidArgument,
       "D", {"rows exceed the 32-bit range"}},
      {"batch past 32 bits", test::changed(batched(2), [](GemmRun& r) { r.a = tensor(kA, {kBig, 64, 48}, {3072, 48, 1}); }),
       K::InvalidArgument, "A", {"batches exceed the 32-bit range"}},

      // C and beta.
      {"beta != 0 with no C", test::changed(base, [](GemmRun& r) { r.beta = 2.0; }), K::InvalidArgument, "C",
       {"beta is 2", "no C was given", "beta=0"}},

      // Overlap of the output with the inputs.
      {"D overlaps A", test::changed(base, [](GemmRun& r) { r.d.data = reinterpret_cast<const void*>(kA + 64); }),
       K::InvalidArgument, "D", {"overlaps input A"}},
      {"D is B", test::changed(base, [](GemmRun& r) {
         r.b = row_major(kB, 48, 32);
         r.d = tensor(kB, {64, 32}, {32, 1});
       }),
       K::InvalidArgument, "D", {"overlaps input B"}},
      {"D ends inside A", test::changed(base, [](GemmRun& r) { r.d.data = reinterpret_cast<const void*>(kA - 64 * 32 * 2 + 2); }),
       K::InvalidArgument, "D", {"overlaps input A"}},
      {"C partly overlaps D (one row apart)",
       test::changed(with_c(), [](GemmRun& r) { r.c.data = reinterpret_cast<const void*>(kD + 32 * 2); }), K::InvalidArgument,
       "D", {"partly overlaps C", "same tensor or not overlap"}},
      {"C at D's address with other strides",
       test::changed(with_c(), [](GemmRun& r) { r.c = tensor(kD, {64, 32}, {64, 1}); }), K::InvalidArgument, "D",
       {"partly overlaps C"}},
      {"D's second batch past the end of the address space",  // its address would wrap onto A (f16: 2^63 elements)
       test::changed(batched(2), [](GemmRun& r) {
         r.d = tensor(kD, {2, 64, 32}, {std::numeric_limits<int64_t>::max() - int64_t((kD - kA) / 2) + 1, 32, 1});
       }),
       K::InvalidArgument, "D", {"reach past the end of the address space"}},
      {"a bias row that is D's first row",  // every row of D would read it after row 0 is written
       test::changed(with_c(), [](GemmRun& r) { r.c = tensor(kD, {1, 32}, {32, 1}); }), K::InvalidArgument, "D",
       {"lies under a bias row", "same tensor or not overlap"}},
      {"one C for every batch that is D's first batch",
       test::changed(batched(3), [](GemmRun& r) {
         r.c = tensor(kD, {64, 32}, {32, 1});
         r.beta = 1.0;
       }),
       K::InvalidArgument, "D", {"one C for every batch"}},

      // Batches.
      {"batch counts differ", test::changed(batched(3), [](GemmRun& r) { r.a = batch_of(kA, 2, 64, 48); }), K::InvalidArgument,
       "A", {"expected a batch of 3 like D", "(2, 64, 48)"}},
      {"batched inputs into one D", test::changed(batched(2), [](GemmRun& r) { r.d = row_major(kD, 64, 32); }),
       K::InvalidArgument, "A", {"expected a batch of 1 like D"}},
      {"batched C with unbatched operands", test::changed(with_c(), [](GemmRun& r) { r.c = batch_of(kC, 2, 64, 32); }),
       K::InvalidArgument, "C", {"expected a batch of 1 like D"}},
      {"D's batches on the same memory (stride 0)",
       test::changed(batched(2), [](GemmRun& r) { r.d = tensor(kD, {2, 64, 32}, {0, 32, 1}); }), K::InvalidArgument, "D",
       {"batch stride of 0", "same memory"}},

      // Bias vectors (C broadcast over the rows of D).
      {"bias of the wrong length", test::changed(with_c(), [](GemmRun& r) { r.c = tensor(kC, {31}, {1}); }),
       K::InvalidArgument, "C", {"bias of N = 32", "(31)"}},
      {"bias with a column-major D", test::changed(with_c(), [](GemmRun& r) {
         r.plan.layout_c = Layout::ColumnMajor;
         r.d = col_major(kD, 64, 32);
         r.c = tensor(kC, {32}, {1});
       }), K::InvalidArgument, "C", {"bias vector C needs a row-major D"}},
      {"strided bias", test::changed(with_c(), [](GemmRun& r) { r.c = tensor(kC, {32}, {2}); }), K::InvalidArgument, "C",
       {"unit stride along the columns"}},
      {"a vector A", test::changed(base, [](GemmRun& r) { r.a = tensor(kA, {48}, {1}); }), K::InvalidArgument, "A",
       {"expected a matrix (rank 2)", "rank 1"}},
      {"batches of B overlap", test::changed(batched(2), [](GemmRun& r) { r.b = tensor(kB, {2, 48, 32}, {100, 32, 1}); }),
       K::InvalidArgument, "B", {"batches overlap", "batch stride of 100", "1536"}},
      {"negative batch stride", test::changed(batched(2), [](GemmRun& r) { r.d = tensor(kD, {2, 64, 32}, {-2048, 32, 1}); }),
       K::InvalidArgument, "D", {"negative strides"}},
  };
}

TEST(Validation, BadInputsAreRefusedNamingTheOperand) {
  auto cases = bad_inputs();
  EXPECT_GE(cases.size(), 40u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    try {
      c.run.check();
      ADD_FAILURE() << "accepted";
      continue;
    } catch (const Error& e) {
      std::string message = e.what();
      bool data_type = dynamic_cast<const DataTypeError*>(&e) != nullptr;
      bool invalid = dynamic_cast<const InvalidArgumentError*>(&e) != nullptr;
      if (c.kind == Kind::DataType)
        EXPECT_TRUE(data_type) << "expected a DataTypeError, got: " << message;
      else
        EXPECT_TRUE(invalid) << "expected an InvalidArgumentError, got: " << message;
      if (*c.operand) {
        EXPECT_EQ(message.rfind(std::string(c.operand) + ": ", 0), 0u) << "does not start with the operand: " << message;
      } else {
        EXPECT_TRUE(message.size() > 3 && message[1] == ':' && std::string("ABCD").find(message[0]) != std::string::npos)
            << "does not start with an operand: " << message;
      }
      for (const auto& m : c.mentions)
        EXPECT_NE(message.find(m), std::string::npos) << "'" << m << "' missing from: " << message;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a cuforge::Error: " << e.what();
    }
  }
}

TEST(Validation, TheBaseCaseOfTheTableIsAccepted) {
  GemmProblem g = GemmRun{}.check();
  EXPECT_EQ(g.shape.m, 64);
  EXPECT_EQ(g.shape.n, 32);
  EXPECT_EQ(g.shape.k, 48);
  EXPECT_EQ(g.shape.batch, 1);
  EXPECT_EQ(g.a, reinterpret_cast<const void*>(kA));
  EXPECT_EQ(g.b, reinterpret_cast<const void*>(kB));
  EXPECT_EQ(g.d, reinterpret_cast<void*>(kD));
  EXPECT_EQ(g.c, reinterpret_cast<const void*>(kD)) << "with no C, the kernel is given D (never read)";
  EXPECT_EQ(g.lda, 48);
  EXPECT_EQ(g.ldb, 32);
  EXPECT_EQ(g.ldc, 32);
  EXPECT_EQ(g.ldd, 32);
  EXPECT_EQ(g.shape.align_a, 8);
  EXPECT_EQ(g.shape.align_b, 8);
  EXPECT_EQ(g.shape.align_c, 8);
  EXPECT_NO_THROW(with_c().check());
}

TEST(Validation, ColumnMajorDIsTheTransposedProblem) {
  GemmRun r;
  r.plan.layout_c = Layout::ColumnMajor;
  r.d = col_major(kD, 64, 32);
  GemmProblem g = r.check();
  // D^T (32 x 64, row-major) = B^T (32 x 48) A^T (48 x 64).
  EXPECT_EQ(g.shape.m, 32);
  EXPECT_EQ(g.shape.n, 64);
  EXPECT_EQ(g.shape.k, 48);
  EXPECT_EQ(g.a, reinterpret_cast<const void*>(kB));
  EXPECT_EQ(g.b, reinterpret_cast<const void*>(kA));
  EXPECT_EQ(g.lda, 32);
  EXPECT_EQ(g.ldb, 48);
  EXPECT_EQ(g.ldd, 64);
  EXPECT_EQ(g.ldc, 64);

  GemmTypes t;
  t.element_a = DataType::f16;
  t.element_b = DataType::bf16;
  t.layout_a = Layout::RowMajor;
  t.layout_b = Layout::ColumnMajor;
  t.layout_c = Layout::ColumnMajor;
  GemmTypes k = t.canonical();
  EXPECT_EQ(k.element_a, DataType::bf16);
  EXPECT_EQ(k.element_b, DataType::f16);
  EXPECT_EQ(k.layout_a, Layout::RowMajor);     // B^T of a column-major B
  EXPECT_EQ(k.layout_b, Layout::ColumnMajor);  // A^T of a row-major A
  EXPECT_EQ(k.layout_c, Layout::RowMajor);
  GemmTypes row = t;
  row.layout_c = Layout::RowMajor;
  EXPECT_EQ(row.canonical().element_a, DataType::f16) << "a row-major D is already canonical";
}

TEST(Validation, AlignmentFollowsPointersExtentsLeadingDimensionsAndBatchStrides) {
  auto aligned = [](GemmRun r) { return r.check(); };
  GemmRun r;
  r.a = row_major(kA, 64, 262);
  r.b = row_major(kB, 262, 32);
  EXPECT_EQ(aligned(r).shape.align_a, 2) << "ld 262 of f16: 4-byte aligned rows";
  EXPECT_EQ(aligned(r).shape.align_b, 8);

  r.a = row_major(kA, 64, 260);
  r.b = row_major(kB, 260, 32);
  EXPECT_EQ(aligned(r).shape.align_a, 4);

  r.a = row_major(kA, 64, 261);
  r.b = row_major(kB, 261, 32);
  EXPECT_EQ(aligned(r).shape.align_a, 1);

  GemmRun p;
  p.a.data = reinterpret_cast<const void*>(kA + 4);  // two f16 elements in
  EXPECT_EQ(aligned(p).shape.align_a, 2);
  p.a.data = reinterpret_cast<const void*>(kA + 8);
  EXPECT_EQ(aligned(p).shape.align_a, 4);

  GemmRun d;
  d.d = tensor(kD, {64, 32}, {36, 1});  // padded D: 36 % 8 = 4
  EXPECT_EQ(aligned(d).shape.align_c, 4);
  GemmRun dc = with_c();
  dc.c = tensor(kC, {64, 32}, {34, 1});  // C's alignment lowers the output's
  EXPECT_EQ(aligned(dc).shape.align_c, 2);

  GemmRun f = all(DataType::f32);
  f.a = row_major(kA, 64, 48, DataType::f32);
  f.b = row_major(kB, 48, 30, DataType::f32);
  f.d = row_major(kD, 64, 30, DataType::f32);
  EXPECT_EQ(aligned(f).shape.align_a, 4) << "16 bytes of f32";
  EXPECT_EQ(aligned(f).shape.align_b, 2);

  GemmRun b = batched(2);
  b.a = tensor(kA, {2, 64, 48}, {64 * 48 + 2, 48, 1});  // batch stride of 3074 elements
  EXPECT_EQ(aligned(b).shape.align_a, 2);
  EXPECT_EQ(aligned(b).batch_stride_a, 3074);

  GemmRun e;  // a padded view: lda = 56 is aligned, but K = 50 columns are not whole 8-element vectors
  e.a = tensor(kA, {64, 50}, {56, 1});
  e.b = row_major(kB, 50, 32);
  EXPECT_EQ(aligned(e).shape.align_a, 2) << "the contiguous extent counts too";
  EXPECT_EQ(aligned(e).shape.align_b, 8) << "B's contiguous extent is N = 32";
}

TEST(Validation, SingleRowsAndColumnsAcceptAnyLeadingStride) {
  GemmRun r;
  r.a = tensor(kA, {1, 48}, {7, 1});
  r.d = tensor(kD, {1, 32}, {3, 1});
  GemmProblem g = r.check();
  EXPECT_EQ(g.shape.m, 1);
  EXPECT_EQ(g.lda, 48) << "an unused leading dimension is tidied to the row length";
  EXPECT_EQ(g.ldd, 32);

  r.a = tensor(kA, {1, 48}, {0, 1});
  EXPECT_NO_THROW(r.check());

  GemmRun n1;  // N = 1: B is a column, D a column
  n1.b = tensor(kB, {48, 1}, {5, 3});
  n1.d = tensor(kD, {64, 1}, {1, 1});
  EXPECT_EQ(n1.check().shape.n, 1);
}

TEST(Validation, ABiasRowIsBroadcastOverTheRowsOfD) {
  GemmRun r = with_c();
  r.c = tensor(kC, {32}, {1});
  GemmProblem g = r.check();
  EXPECT_TRUE(g.shape.bias);
  EXPECT_EQ(g.c, reinterpret_cast<const void*>(kC));
  EXPECT_EQ(g.ldc, 0);
  EXPECT_EQ(g.shape.align_c, 8);

  r.c = tensor(kC, {1, 32}, {32, 1});  // a 1 x N matrix is the same bias
  EXPECT_TRUE(r.check().shape.bias);

  GemmRun b = batched(2);              // one bias row per batch
  b.c = tensor(kC, {2, 1, 32}, {32, 32, 1});
  b.beta = 1.0;
  g = b.check();
  EXPECT_TRUE(g.shape.bias);
  EXPECT_EQ(g.batch_stride_c, 32);

  GemmRun one_row = with_c();          // with M = 1, a 1 x N C is simply D-shaped
  one_row.a = row_major(kA, 1, 48);
  one_row.c = row_major(kC, 1, 32);
  one_row.d = row_major(kD, 1, 32);
  EXPECT_FALSE(one_row.check().shape.bias);
}

TEST(Validation, CMayAliasD) {
  GemmRun r = with_c();
  r.c = r.d;
  GemmProblem g = r.check();
  EXPECT_EQ(g.c, g.d);
  EXPECT_EQ(g.ldc, g.ldd);
}

TEST(Validation, EmptyProblemsAreAccepted) {
  GemmRun m0;
  m0.a = row_major(kA, 0, 48);
  m0.d = row_major(kD, 0, 32);
  GemmProblem g = m0.check();
  EXPECT_EQ(g.shape.m, 0);
  EXPECT_TRUE(g.shape.empty_output());

  GemmRun n0;
  n0.b = row_major(kB, 48, 0);
  n0.d = row_major(kD, 64, 0);
  EXPECT_TRUE(n0.check().shape.empty_output());

  GemmRun k0;
  k0.a = row_major(kA, 64, 0);
  k0.b = row_major(kB, 0, 32);
  GemmProblem gk = k0.check();
  EXPECT_EQ(gk.shape.k, 0);
  EXPECT_FALSE(gk.shape.empty_output()) << "K = 0 still writes D";

  // With beta != 0, K = 0 asks for D = beta * C (the plan runs it over zero operands).
  GemmRun k0c = k0;
  k0c.c = row_major(kC, 64, 32);
  k0c.beta = 2.0;
  GemmProblem gkc = k0c.check();
  EXPECT_EQ(gkc.shape.k, 0);
  EXPECT_EQ(gkc.c, reinterpret_cast<const void*>(kC));

  GemmRun b0 = batched(0);
  b0.c = batch_of(kC, 0, 64, 32);
  b0.beta = 1.0;
  EXPECT_TRUE(b0.check().shape.empty_output());
}

// A C++ caller's GemmTypes of void (or a value past the enum) was divided by its size (SIGFPE).
TEST(Validation, ElementTypesWithoutASizeAreRefused) {
  GemmTypes t;
  t.element_a = DataType::void_;
  EXPECT_THROW(op::packed_shape(t, 8, 8, 8), InvalidArgumentError);
  EXPECT_THROW(op::check_gemm(t, 0, row_major(kA, 8, 8), row_major(kB, 8, 8), {}, row_major(kD, 8, 8), 1, 0),
               InvalidArgumentError);
  t = GemmTypes{};
  t.element_d = static_cast<DataType>(99);
  EXPECT_THROW(op::grouped_shape(t, 2, 8, 8, 8, {8, 8, 8}, false, false), InvalidArgumentError);
  EXPECT_THROW(op::operand_alignment(DataType::void_, 16, 8, 8, 0), InvalidArgumentError);
  // nhwc's strides of extents whose product passes int64 saturate, and the checks refuse them; no signed overflow.
  const TensorRef huge = TensorRef::nhwc(reinterpret_cast<const void*>(kA), DataType::f16, 1, INT64_MAX, 4, 4);
  EXPECT_EQ(huge.strides[0], INT64_MAX);
}

TEST(Validation, LargeStridesAreKeptNotWrapped) {
  GemmRun r;
  const int64_t ld = int64_t(1) << 33;
  r.a = tensor(kA, {2, 48}, {ld, 1});
  r.d = row_major(kD + (uint64_t(1) << 36), 2, 32);
  GemmProblem g = r.check();
  EXPECT_EQ(g.lda, ld);
}

}  // namespace
}  // namespace cuforge
