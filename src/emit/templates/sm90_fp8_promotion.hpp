// Promoted fp8 accumulation that keeps the tensor cores busy while it adds (emitted kernels include
// it as "cuforge/sm90_fp8_promotion.hpp" where library::overlaps_fp8_promotion holds).
//
// CUTLASS's fp8 mainloop adds its partial accumulator into the f32 one after every k-tile (a promotion
// interval of 4 wgmma k-steps of 32, the accumulation torch._scaled_mm's default has), each time first
// waiting for every wgmma in flight, so the tensor cores idle while it adds. Here each k-tile's wgmma
// run as two halves of the tile's N, and each half is added while the other half's wgmma run: the same
// sums in the same order (the same error as cuBLASLt's default to four digits), in the same two
// accumulator fragments. Each promotion's adds are fenced (warpgroup_fence_operand on the half and on
// the accumulator after them): unfenced, nvcc 13.0 moved a half's adds in among the next wgmma's issue
// and gave that wgmma fresh registers, so the 128x128 tile's consumer reached R201 (R143 fenced, CUTLASS's
// loop R145) and spilled in clusters of two, and 128x192 spilled and serialized its wgmma (ptxas C7512).
// H100 (bench/fp8_promotion.cu, bench/results/h100-2026-12-06-fp8-fenced-probe.txt, bench/fp8.py's four
// shapes): 128x128 in 1x2 clusters 0.79, 0.90, 0.87, 0.95x cuBLASLt where CUTLASS's loop ran it 0.75,
// 0.81, 0.80, 0.75x; 128x192 (96-wide halves, R208) in 2x1 0.90, 0.91, 0.97, 0.80x where CUTLASS's ran
// 0.82, 0.77, 0.82, 0.82x. 256x96 split by its 64-row atoms spills (2 x 96 accumulator registers and the
// loop's own do not fit), so the 128x128 and 128x192 tiles take it.
#pragma once

namespace cuforge_fp8 {

template <class BuiltPolicy, int KTilesPerTurn>
struct OverlappedPromotionPolicy : BuiltPolicy {};

// OverlappedPromotion<CUTLASS's fp8 CollectiveMma>::type: the same collective with this consumer loop,
// which waits for every wgmma in flight once per turn of KTilesPerTurn k-tiles.
template <class Collective, int KTilesPerTurn = 4>
struct OverlappedPromotion;

template <class TiledMma>
struct AtomLayoutOf;
template <class Atom, class Layout, class Permutation>
struct AtomLayoutOf<cute::TiledMMA<Atom, Layout, Permutation>> {
  using type = Layout;  // the warpgroups' tiling of the tile
};

template <class Policy, class Tile, class EA, class SA, class EB, class SB, class Mma, class GA, class LA, class CA,
          class TA, class GB, class LB, class CB, class TB, int KTilesPerTurn>
struct OverlappedPromotion<
    cutlass::gemm::collective::CollectiveMma<Policy, Tile, EA, SA, EB, SB, Mma, GA, LA, CA, TA, GB, LB, CB, TB>,
    KTilesPerTurn> {
  using type =
      cutlass::gemm::collective::CollectiveMma<OverlappedPromotionPolicy<Policy, KTilesPerTurn>,
                                               Tile, EA, SA, EB, SB, Mma, GA, LA, CA, TA, GB, LB, CB, TB>;
};

}  // namespace cuforge_fp8

namespace cutlass::gemm::collective {

// CUTLASS's fp8 collective (loads, shared storage, parameters, mma_tail) with its own consumer loop.
template <class Policy, class Tile, class EA, class SA, class EB, class SB, class Mma, class GA, class LA, class CA,
          class TA, class GB, class LB, class CB, class TB, int KTilesPerTurn>
struct CollectiveMma<cuforge_fp8::OverlappedPromotionPolicy<Policy, KTilesPerTurn>, Tile, EA, SA, EB,
                     SB, Mma, GA, LA, CA, TA, GB, LB, CB, TB>
    : CollectiveMma<Policy, Tile, EA, SA, EB, SB, Mma, GA, LA, CA, TA, GB, LB, CB, TB> {
  using Base = CollectiveMma<Policy, Tile, EA, SA, EB, SB, Mma, GA, LA, CA, TA, GB, LB, CB, TB>;
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::TensorStorage;
  using typename Base::TiledMma;
  static_assert(Base::K_PIPE_MMAS == 1, "mma_tail releases the stage of the last k-tile");

  // The builder's warpgroup tiles, half as wide: the wgmma of each half of N.
  using AtomLayout = typename cuforge_fp8::AtomLayoutOf<TiledMma>::type;
  static constexpr int kWarpGroupsM = decltype(cute::size<0>(AtomLayout{}))::value;
  using HalfOp = decltype(cute::SM90::GMMA::ss_op_selector<
                          typename TiledMma::ValTypeA, typename TiledMma::ValTypeB, typename TiledMma::ValTypeC,
                          cute::Shape<cute::Int<decltype(cute::size<0>(Tile{}))::value / kWarpGroupsM>,
                                      cute::Int<decltype(cute::size<1>(Tile{}))::value / 2>,
                                      cute::Int<decltype(cute::size<2>(Tile{}))::value>>>());
  using HalfMma = decltype(cute::make_tiled_mma(HalfOp{}, AtomLayout{}));

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx, TensorStorage& shared_tensors, Params const&) {
    using namespace cute;
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
    Layout warp_group_thread_layout = make_layout(Int<kWarpGroupsM>{}, Int<NumThreadsPerWarpGroup>{});
    const int warp_group_idx = __shfl_sync(0xFFFFFFFF, thread_idx / NumThreadsPerWarpGroup, 0);
    HalfMma half_mma;
    auto thread_mma = half_mma.get_slice(warp_group_thread_layout(warp_group_idx));
    Tensor tCrA = thread_mma.make_fragment_A(thread_mma.partition_A(sA));  // (MMA,1,MMA_K,PIPE)
    Tensor tCrB = thread_mma.make_fragment_B(thread_mma.partition_B(sB));  // (MMA,2,MMA_K,PIPE)
    // The partial sums, (MMA,1,2): in registers in the order of accum's (MMA,1,1), half after half.
    Tensor partial = partition_fragment_C(half_mma, take<0, 2>(Tile{}));
    static_assert(decltype(size(partial))::value == decltype(size(accum))::value);
    constexpr int kHalf = decltype(size(partial))::value / 2;
    clear(accum);
    PipelineState smem_pipe_release = smem_pipe_read;
    int read_stage = 0;

    // Issues half h of the current k-tile's wgmma into its half of `partial`, overwriting it.
    auto issue = [&](auto h) {
      Tensor d = partial(_, 0, h);
      half_mma.accumulate_ = GMMA::ScaleOut::Zero;
      warpgroup_fence_operand(d);
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
        cute::gemm(half_mma, tCrA(_, 0, k_block, read_stage), tCrB(_, h, k_block, read_stage), d);
        half_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
    };
    // Adds half h of `partial` (its wgmma complete) into the f32 accumulator.
    auto promote = [&](auto h) {
      Tensor d = partial(_, 0, h);
      warpgroup_fence_operand(d);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kHalf; ++i) accum(h * kHalf + i) += partial(h * kHalf + i);
      warpgroup_fence_operand(d);  // the adds stay here, not among the next wgmma's issue
      warpgroup_fence_operand(accum);
    };
    auto acquire = [&] {
      auto barrier_token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, barrier_token);
      read_stage = smem_pipe_read.index();
      ++smem_pipe_read;
    };
    // Hands a k-tile's stage back to the producer; the last k-tile's is mma_tail's.
    auto release = [&](bool last) {
      if (!last) pipeline.consumer_release(smem_pipe_release);
      ++smem_pipe_release;
    };

    // KTilesPerTurn k-tiles a turn; within it each half's sums are added while the next half's wgmma
    // run, and the pipeline drains once a turn (no wgmma in flight across the loop's edges, where the
    // compiler would copy in-flight accumulators and serialize every wgmma).
    auto tile = [&](bool first, bool last_of_turn, bool last) {
      acquire();
      issue(Int<0>{});
      if (!first) {  // the previous k-tile's second half
        warpgroup_wait<1>();
        promote(Int<1>{});
        release(false);
      }
      issue(Int<1>{});
      warpgroup_wait<1>();
      promote(Int<0>{});
      if (last_of_turn) {
        warpgroup_wait<0>();
        promote(Int<1>{});
        release(last);
      }
    };
    int k = 0;
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k + KTilesPerTurn <= k_tile_count; k += KTilesPerTurn) {
      CUTLASS_PRAGMA_UNROLL
      for (int t = 0; t < KTilesPerTurn; ++t)
        tile(t == 0, t == KTilesPerTurn - 1, t == KTilesPerTurn - 1 && k + KTilesPerTurn == k_tile_count);
    }
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k < k_tile_count; ++k) tile(true, true, k + 1 == k_tile_count);
    warpgroup_fence_operand(accum);
  }
};

}  // namespace cutlass::gemm::collective
