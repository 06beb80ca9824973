// An experiment of bench/fp8_promotion.cu, not in cuforge's kernels: promoted fp8 accumulation that
// drains the wgmma pipeline a quarter as often. CUTLASS's fp8 mainloop adds its partial accumulator into
// the f32 one after every k-tile (a promotion interval of 4 wgmma k-steps, the accumulation
// torch._scaled_mm's default has), each time first waiting for every wgmma in flight, so the tensor
// cores idle while it adds. Here two partial accumulators take the k-tiles in turn: k-tile i's wgmma run
// into one while k-tile i-1's, complete, is added into the f32 accumulator. The same sums in the same
// order, but three accumulator fragments in registers instead of two: 128x128 tiles spill (and ptxas
// serializes their wgmma), and the 128x96 tile that fits ran 15-20% faster than CUTLASS's loop on it yet
// slower than CUTLASS's 128x128 and 128x192 tiles (bench/NOTES.md).
#pragma once

namespace cuforge_fp8 {

template <class BuiltPolicy>
struct PipelinedPromotionPolicy : BuiltPolicy {};

template <class Collective>
struct PipelinedPromotion;

template <class Policy, class Tile, class EA, class SA, class EB, class SB, class Mma, class GA, class LA, class CA,
          class TA, class GB, class LB, class CB, class TB>
struct PipelinedPromotion<
    cutlass::gemm::collective::CollectiveMma<Policy, Tile, EA, SA, EB, SB, Mma, GA, LA, CA, TA, GB, LB, CB, TB>> {
  using type = cutlass::gemm::collective::CollectiveMma<PipelinedPromotionPolicy<Policy>, Tile, EA, SA, EB, SB, Mma,
                                                        GA, LA, CA, TA, GB, LB, CB, TB>;
};

}  // namespace cuforge_fp8

namespace cutlass::gemm::collective {

// CUTLASS's fp8 collective (loads, shared storage, parameters, mma_tail) with its own consumer loop.
template <class Policy, class Tile, class EA, class SA, class EB, class SB, class Mma, class GA, class LA, class CA,
          class TA, class GB, class LB, class CB, class TB>
struct CollectiveMma<cuforge_fp8::PipelinedPromotionPolicy<Policy>, Tile, EA, SA, EB, SB, Mma, GA, LA, CA, TA, GB, LB,
                     CB, TB> : CollectiveMma<Policy, Tile, EA, SA, EB, SB, Mma, GA, LA, CA, TA, GB, LB, CB, TB> {
  using Base = CollectiveMma<Policy, Tile, EA, SA, EB, SB, Mma, GA, LA, CA, TA, GB, LB, CB, TB>;
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::TensorStorage;
  using typename Base::TiledMma;
  static_assert(Base::K_PIPE_MMAS == 1, "mma_tail releases the stage of the last k-tile");

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx, TensorStorage& shared_tensors, Params const&) {
    using namespace cute;
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
    constexpr int kMmaWarpGroups = size(TiledMma{}) / NumThreadsPerWarpGroup;
    Layout warp_group_thread_layout = make_layout(Int<kMmaWarpGroups>{}, Int<NumThreadsPerWarpGroup>{});
    const int warp_group_idx = __shfl_sync(0xFFFFFFFF, thread_idx / NumThreadsPerWarpGroup, 0);
    TiledMma tiled_mma;
    auto thread_mma = tiled_mma.get_slice(warp_group_thread_layout(warp_group_idx));
    Tensor tCrA = thread_mma.make_fragment_A(thread_mma.partition_A(sA));  // (MMA,MMA_M,MMA_K,PIPE)
    Tensor tCrB = thread_mma.make_fragment_B(thread_mma.partition_B(sB));  // (MMA,MMA_N,MMA_K,PIPE)

    Tensor even = make_fragment_like(accum);  // the partial sums of even k-tiles
    Tensor odd = make_fragment_like(accum);   // and of odd ones
    clear(accum);
    clear(even);
    clear(odd);
    PipelineState smem_pipe_release = smem_pipe_read;

    // Waits for the next k-tile's operands and issues its wgmma into `partial`, overwriting it.
    auto issue = [&](auto& partial) {
      auto barrier_token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, barrier_token);
      const int read_stage = smem_pipe_read.index();
      tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
      warpgroup_fence_operand(partial);
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
        cute::gemm(tiled_mma, tCrA(_, _, k_block, read_stage), tCrB(_, _, k_block, read_stage), partial);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      ++smem_pipe_read;
    };
    // Adds a completed partial into the f32 accumulator.
    auto promote = [&](auto& partial) {
      warpgroup_fence_operand(partial);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < size(accum); ++i) accum(i) += partial(i);
    };
    // Hands a promoted k-tile's stage back to the producer; the last k-tile's is mma_tail's.
    auto release = [&](bool last) {
      if (!last) pipeline.consumer_release(smem_pipe_release);
      ++smem_pipe_release;
    };

    // Four k-tiles a turn, the partials in turn: each is added while the next k-tile's wgmma run, and
    // the pipeline drains once a turn (no wgmma is in flight across the loop's edges, where the
    // compiler would copy in-flight accumulators and serialize every wgmma).
    int k = 0;
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k + 4 <= k_tile_count; k += 4) {
      issue(even);
      issue(odd);
      warpgroup_wait<1>();
      promote(even);
      release(false);
      issue(even);
      warpgroup_wait<1>();
      promote(odd);
      release(false);
      issue(odd);
      warpgroup_wait<1>();
      promote(even);
      release(false);
      warpgroup_wait<0>();
      promote(odd);
      release(k + 4 == k_tile_count);
    }
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k < k_tile_count; ++k) {
      issue(even);
      warpgroup_wait<0>();
      promote(even);
      release(k + 1 == k_tile_count);
    }
    warpgroup_fence_operand(accum);
  }
};

}  // namespace cutlass::gemm::collective
