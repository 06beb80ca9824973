// Grouped GEMM on the CPU: the plan's kernel set and choice, the boundary checks of both forms
// (lists of groups, and offsets), each refusal naming the group and operand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuforge/library/gemm_config.hpp"
#include "cuforge/op/grouped_check.hpp"
#include "cuforge/op/grouped_gemm.hpp"
#include "cuforge/select/gemm_cost.hpp"
#include "test_support.hpp"

namespace cuforge {
namespace {

constexpr Layout R = Layout::RowMajor, C = Layout::ColumnMajor;
constexpr uintptr_t kBase = 0x10000000;  // fake device addresses: nothing is dereferenced

GemmOptions options(DataType t, int kernel_cc = 0) {
  GemmOptions o;
  o.element_a = o.element_b = o.element_c = o.element_d = t;
  o.layout_a = o.layout_b = o.layout_c = R;
  o.kernel_cc = kernel_cc;
  o.cc = 90;
  return o;
}

TensorRef matrix(uintptr_t address, int64_t rows, int64_t cols, DataType t = DataType::bf16, Layout l = R) {
  return TensorRef::matrix(reinterpret_cast<const void*>(address), t, rows, cols, l);
}

// Group g of a list: A (m x k), B (k x n), D (m x n), each 1 MiB apart.
struct Lists {
  std::vector<TensorRef> a, b, c, d;
  void add(int64_t m, int64_t n, int64_t k, DataType t = DataType::bf16) {
    uintptr_t at = kBase + (uintptr_t(a.size()) << 24);
    a.push_back(matrix(at, m, k, t));
    b.push_back(matrix(at + (1 << 20), k, n, t));
    d.push_back(matrix(at + (2 << 20), m, n, t));
  }
  GroupedProblem check(const GemmOptions& o, double beta = 0.0) const {
    return op::check_grouped(o, 0, a, b, c, d, 1.0, beta);
  }
};

TEST(GroupedPlan, ChoosesGroupedKernelsOfEachFamily) {
  GroupedGemm sm90(options(DataType::bf16));
  EXPECT_EQ(sm90.kernel_cc(), 90);
  auto name = sm90.select(sm90.shape(8, 1024, 4096, 4096)).config.name();
  EXPECT_EQ(name.rfind("cuforge_sm90_grouped_", 0), 0u) << name;
  GroupedGemm sm80(options(DataType::f16, 80));
  name = sm80.select(sm80.shape(64, 128, 2048, 2048)).config.name();
  EXPECT_EQ(name.rfind("cuforge_sm80_grouped_", 0), 0u) << name;
  auto s = sm80.settings();
  s.set_activation(Activation::relu);
  sm80.set_settings(s);
  EXPECT_EQ(sm80.select(sm80.shape(4, 256, 256, 256)).config.activation, Activation::relu);
  EXPECT_FALSE(sm80.tile_descriptions().empty());
  // A mean extent past 2^30 rounds up to the kernels' largest, not to 2^31 (refused as a class beyond them).
  EXPECT_EQ(sm90.shape(2, 1, 1, (int64_t(1) << 30) + 8).k, kMaxExtent);
  EXPECT_NO_THROW(sm90.select(sm90.shape(2, 1, 1, (int64_t(1) << 30) + 8)));
}

// Groups of differing M each end in a partly empty tile: for a mixture-of-experts split (64 groups
// of 256 rows on average) the model then prefers tiles of fewer rows than for 64 equal groups.
TEST(GroupedPlan, RaggedGroupsFavourTilesOfFewerRows) {
  GroupedGemm g(options(DataType::bf16));
  const auto rows = [&](bool ragged) {
    return g.select(g.shape(64, 256, 4096, 2048, {}, ragged)).config.tile.threadblock_shape[0];
  };
  EXPECT_EQ(rows(false), 256);
  EXPECT_LT(rows(true), 256);
  EXPECT_FALSE(g.shape(64, 256, 4096, 2048) == g.shape(64, 256, 4096, 2048, {}, true)) << "two classes";
}

// A memory-bound mix pays for operands its tiles re-read (CostModel::panel_bytes_per_second):
// 64 groups of 128 x 2048 x 2048 in the offsets form take tiles of 128 rows, as measured on the
// H200 (bench/grouped.py --sweep G=64: 128x256 159 µs, the 64x256 tiles the ragged rows alone
// favoured 200 µs, every 64-row tile 200-253 µs).
TEST(GroupedPlan, TilesThatReReadOperandsCostAMemoryBoundMix) {
  GroupedGemm g(options(DataType::bf16));
  const auto tile = g.select(g.shape(64, 128, 2048, 2048, {}, /*ragged=*/true)).config.tile.threadblock_shape;
  EXPECT_EQ(tile[0], 128);
  EXPECT_EQ(tile[1], 256);
  select::CostModel off;
  off.panel_bytes_per_second = 1e18;
  const GemmShape shape = g.shape(64, 128, 2048, 2048, {}, true);
  const auto estimate = [&](const std::string& name, const select::CostModel& model) {
    return select::estimated_time_us(library::parse_gemm_name(name), shape, 1, true, 132, model);
  };
  const std::string rows64 =
      "cuforge_sm90_grouped_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_64x64x64_c1x1x1_s0_pingpong_tma_default_a8x8x8";
  EXPECT_GT(estimate(rows64, select::CostModel{}), 1.2 * estimate(rows64, off))
      << "64x64 tiles load 2.1 GB of panels here, 3.5 times the operands";
}

TEST(GroupedPlan, WhatTheCatalogDoesNotGroupIsRefusedByName) {
  try {
    GroupedGemm f32(options(DataType::f32));
    FAIL() << "an f32 grouped plan was built";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("grouped GEMM"), std::string::npos) << e.what();
  }
  GroupedGemm g(options(DataType::bf16));
  auto s = g.settings();
  s.set_split_k_slices(4);
  EXPECT_THROW(g.set_settings(s), InvalidArgumentError) << "grouped kernels do not split K";
  s = g.settings();
  s.tile_scheduler = TileScheduler::StreamK;
  EXPECT_THROW(g.set_settings(s), InvalidArgumentError);
  EXPECT_THROW(g.shape(0, 64, 64, 64), InvalidArgumentError);
  EXPECT_THROW(g.shape(4, -1, 64, 64), InvalidArgumentError);
}

// Groups without outputs need no kernel: selecting, listing candidates or building for such a class is refused
// (as for a GEMM of an empty output), and a run of them launches nothing (GroupedProblem::empty_output), in the
// list form also where some groups have no rows and the others no columns.
TEST(GroupedCheck, GroupsWithoutOutputsNeedNoKernel) {
  GroupedGemm g(options(DataType::bf16));
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{0, 256}, {64, 0}}) {
    const GemmShape empty = g.shape(4, m, n, 64);
    EXPECT_NE(test::message_of<InvalidArgumentError>([&] { g.select(empty); }).find("need no kernel"),
              std::string::npos);
    EXPECT_THROW(g.candidates(empty), InvalidArgumentError);
    EXPECT_THROW(g.compile({g.shape(4, 64, 64, 64), empty}), InvalidArgumentError);
  }
  EXPECT_NO_THROW(g.select(g.shape(4, 1, 256, 64)));
  const GemmOptions o = options(DataType::bf16);
  Lists none;
  none.add(0, 256, 64);
  none.add(64, 0, 64);
  EXPECT_TRUE(none.check(o).empty_output());
  Lists one;
  one.add(0, 256, 64);
  one.add(1, 8, 0);  // K = 0: D = beta * C, a kernel's epilogue
  EXPECT_FALSE(one.check(o).empty_output());
}

TEST(GroupedCheck, ListsAreCheckedGroupByGroup) {
  const GemmOptions o = options(DataType::bf16);
  Lists l;
  l.add(128, 256, 64);
  l.add(1, 512, 192);
  l.add(0, 256, 64);   // an empty group
  l.add(96, 256, 0);   // K = 0
  GroupedProblem p = l.check(o);
  EXPECT_EQ(p.groups, 4);
  ASSERT_EQ(p.list.size(), 4u);
  EXPECT_EQ(p.list[1].shape.m, 1);
  EXPECT_EQ(p.shape.batch, 4);
  EXPECT_EQ(p.shape.m, 64) << "the mean M (56.25) rounded up to a power of two";
  EXPECT_EQ(p.shape.align_a, 8);
  EXPECT_TRUE(p.shape.ragged) << "groups of 128, 1 and 96 rows";
  Lists even;
  even.add(128, 256, 64);
  even.add(0, 256, 64);  // an empty group does not make the others ragged
  even.add(128, 256, 64);
  EXPECT_FALSE(even.check(o).shape.ragged);

  auto says = [&](Lists bad, const std::string& part, double beta = 0.0) {
    auto message = test::message_of<Error>([&] { bad.check(o, beta); });
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  };
  Lists shorter = l;
  shorter.b.pop_back();
  says(shorter, "B: 3 tensors where A and D hold 4: one tensor per group in each list (A 4, B 3, D 4)");
  Lists one_d = l;  // the short list is named, not the first that differs from D (A was, "expected 1 tensors")
  one_d.d.resize(1);
  says(one_d, "D: 1 tensor where A and B hold 4: one tensor per group in each list (A 4, B 4, D 1)");
  Lists all_differ = one_d;  // no length most lists share: D's is the measure
  all_differ.b.resize(3);
  says(all_differ, "A: 4 tensors where D holds 1: one tensor per group in each list (A 4, B 3, D 1)");
  says(Lists{}, "D: expected a list of one output per group, got an empty list");
  Lists k_mismatch = l;
  k_mismatch.b[1] = matrix(kBase + (1 << 24) + (1 << 20), 191, 512);
  says(k_mismatch, "group 1: B: expected 192 rows");
  Lists dtype = l;
  dtype.a[2] = matrix(kBase + (2 << 24), 0, 64, DataType::f16);
  says(dtype, "group 2: A: expected element type bf16");
  Lists device = l;
  device.d[0].device = 1;
  says(device, "group 0: D: expected a tensor on cuda:0");
  Lists no_c = l;
  says(no_c, "group 0: C: beta is 2 but no C was given", 2.0);
  Lists bias = l;
  for (size_t g = 0; g < bias.d.size(); ++g) {
    TensorRef row = bias.d[g];
    row.rank = 1;
    row.shape = {bias.d[g].shape[1], 0, 0};
    row.strides = {1, 0, 0};
    row.data = reinterpret_cast<const void*>(kBase + (uintptr_t(g) << 24) + (3 << 20));
    bias.c.push_back(row);
  }
  // A bias row per group (the group of one row reads its row either way); a kernel runs them all, so C is
  // a bias row in every group or a matrix in every group.
  const GroupedProblem biased = bias.check(o, 1.0);
  EXPECT_TRUE(biased.shape.bias);
  EXPECT_EQ(biased.list[0].ldc, 0);
  Lists mixed = bias;
  mixed.c[3] = matrix(kBase + (3 << 24) + (3 << 20), 96, 256, DataType::bf16);
  says(mixed, "group 3: C: expected a bias row like group 0's, got (96, 256)", 1.0);
  Lists batched = l;
  batched.a[0].rank = 3;
  batched.a[0].shape = {1, 128, 64};
  batched.a[0].strides = {128 * 64, 64, 1};
  says(batched, "group 0: expected matrices (rank 2)");
  // One launch runs every group: an output overlapping another group's operands or output is a race.
  Lists reads_written = l;
  reads_written.d[1] = matrix(kBase, 1, 512);  // on group 0's A
  says(reads_written, "D: group 1's output overlaps group 0's A");
  Lists one_output = even;
  one_output.d[2] = one_output.d[0];
  says(one_output, "D: group 0's output overlaps group 2's");
  Lists own_c = l;  // C and D one tensor within a group stays allowed
  for (const TensorRef& d : own_c.d) own_c.c.push_back(d);
  EXPECT_NO_THROW(own_c.check(o, 1.0));
}

TEST(GroupedCheck, MisalignedGroupsFallBackToLowerAlignment) {
  GroupedGemm g(options(DataType::bf16));
  Lists l;
  l.add(128, 256, 64);
  l.add(64, 256, 66);  // K = 66: rows of A 4-byte aligned
  GroupedProblem p = op::check_grouped(g.options(), 0, l.a, l.b, l.c, l.d, 1.0, 0.0);
  EXPECT_EQ(p.shape.align_a, 2);
  auto kernel = g.select(p.shape).config;
  EXPECT_EQ(kernel.arch, 80) << kernel.name();
  EXPECT_LE(kernel.alignment_a, 2) << kernel.name();
}

struct Offsets {
  TensorRef a = matrix(kBase, 1000, 256);
  TensorRef b;
  TensorRef c;
  TensorRef d = matrix(kBase + (2 << 24), 1000, 512);
  TensorRef offsets;
  Offsets() {
    b.data = reinterpret_cast<const void*>(kBase + (1 << 24));
    b.dtype = DataType::bf16;
    b.rank = 3;
    b.shape = {8, 256, 512};
    b.strides = {256 * 512, 512, 1};
    b.device = 0;
    offsets.data = reinterpret_cast<const void*>(kBase + (3 << 24));
    offsets.dtype = DataType::s32;
    offsets.rank = 1;
    offsets.shape = {8, 0, 0};
    offsets.strides = {1, 0, 0};
    offsets.device = 0;
  }
  GroupedProblem check(const GemmOptions& o) const {
    return op::check_grouped_offsets(o, 0, a, b, c, d, offsets, 1.0, 0.0);
  }
};

TEST(GroupedCheck, TheOffsetsForm) {
  const GemmOptions o = options(DataType::bf16);
  GroupedProblem p = Offsets{}.check(o);
  EXPECT_EQ(p.groups, 8);
  ASSERT_TRUE(p.offsets.has_value());
  EXPECT_EQ(p.offsets->whole.shape.m, 1000);
  EXPECT_EQ(p.offsets->batch_stride_b, 256 * 512);
  EXPECT_EQ(p.shape.m, 128) << "1000 rows over 8 groups: 125, rounded up";
  EXPECT_EQ(p.shape.n, 512);
  EXPECT_TRUE(p.shape.ragged) << "the group sizes stay on the device";

  auto says = [&](Offsets bad, const std::string& part, GemmOptions plan) {
    auto message = test::message_of<Error>([&] { bad.check(plan); });
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  };
  Offsets host;
  host.offsets.device = TensorRef::kHost;
  says(host, "offsets: expected a tensor on cuda:0 (the group sizes stay on the device", o);
  Offsets wide;
  wide.offsets.dtype = DataType::f32;
  says(wide, "offsets: expected int32", o);
  Offsets two_d;
  two_d.b.rank = 2;
  says(two_d, "B: expected one matrix per group, a tensor of shape (8, K, N)", o);
  Offsets batched;  // a rank-3 A was read as a batch: (1, 1000, 256) accepted, (2, 500, 256) blamed on D
  batched.a.rank = 3;
  batched.a.shape = {2, 500, 256};
  batched.a.strides = {500 * 256, 256, 1};
  says(batched, "A: expected the groups' rows as one matrix (total_M, K)", o);
  Offsets fewer;
  fewer.b.shape[0] = 7;
  says(fewer, "B: expected one matrix per group", o);
  Offsets k;
  k.b.shape[1] = 255;
  says(k, "B: expected 256 rows", o);
  Offsets overlapping;
  overlapping.b.strides[0] = 512;
  says(overlapping, "B: the groups' matrices overlap", o);
  GemmOptions column = o;
  column.layout_a = C;
  Offsets col;
  col.a = matrix(kBase, 1000, 256, DataType::bf16, C);
  says(col, "it needs a row-major A and D", column);
  Offsets null_offsets;
  null_offsets.offsets.data = nullptr;
  says(null_offsets, "offsets: expected 4-byte aligned int32 values", o);
  Offsets odd_offsets;
  odd_offsets.offsets.data = reinterpret_cast<const void*>(kBase + (3 << 24) + 1);
  says(odd_offsets, "offsets: expected 4-byte aligned int32 values", o);
  Offsets in_d;  // the group sizes inside the output the same launch writes
  in_d.offsets.data = reinterpret_cast<const void*>(kBase + (2 << 24) + 64);
  says(in_d, "D: the output overlaps the offsets", o);
  Offsets on_b;  // D on the second group's B: the first's (which the whole problem's check sees) is clear of it
  on_b.d = matrix(kBase + (1 << 24) + 256 * 512 * 2, 1000, 512);
  says(on_b, "D: the output overlaps input B (a group's matrix)", o);
  Offsets wrapping;  // D below B, and the second group's B a batch stride past the end of the address space: on D
  wrapping.d = matrix(kBase + (1 << 23), 1000, 512);
  wrapping.b.strides[0] = int64_t((uint64_t(1) << 63) - ((1 << 24) - (1 << 23)) / 2);  // 2^64 - 8 MiB, in bytes
  says(wrapping, "B: its extents and strides reach past the end of the address space", o);
  Offsets backwards;
  backwards.b.strides[0] = -256 * 512;
  says(backwards, "B: negative strides are not supported", o);
  Offsets odd;
  odd.b.strides[0] = 256 * 512 + 2;  // every group's B 4 bytes further: alignment 2
  EXPECT_EQ(odd.check(o).shape.align_b, 2);
}

}  // namespace
}  // namespace cuforge
