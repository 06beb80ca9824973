// A probe of CUTLASS's SM90 TF32 mainloops (not of cuforge): f32 D = A B with A row-major, one CUTLASS 3.x
// kernel per binary, timed beside cublasSgemm in TF32 mode on the same zeroed operands (CUDA events, the
// best of five rounds) on the shapes given as arguments (MxNxK, or MxNxK:splits for a stream-K kernel's
// split-K), bench/gemm.py's when none are. A row-major B takes the builder's register-sourced mainloop (B
// through registers), a column-major B the shared-memory one (bench/NOTES.md, "CUTLASS's own MN-major TF32
// mainloop"). With -DSWAP=1 the kernel computes D^T = B^T A^T instead: B^T, an MN-major A, goes through
// registers and A^T is a K-major B, so the tile's N runs over M (a small M fills a 16- to 64-wide wgmma).
//
//   nvcc -std=c++17 -O3 -DNDEBUG -arch=sm_90a --expt-relaxed-constexpr -I$CUTLASS_PATH/include \
//     -I$CUTLASS_PATH/tools/util/include -DNAME='"rs_128x128_c1"' -DLAYOUT_B=RowMajor -D_TM=_128 \
//     -D_TN=_128 -D_TK=_32 -D_CM=_1 -DSCHEDULE=1 bench/tf32_mainloops.cu -lcublas -o rs_128x128 && ./rs_128x128
//
// (_TM, _TN, _TK: the CTA tile of the kernel's own problem (N x M x K when swapped); _CM: the cluster along its
// M; SCHEDULE 0 the non-persistent kernel, 1 cooperative, 2 ping-pong; STREAMK=1 the stream-K scheduler; CARVEOUT
// bytes of shared memory left unused, fewer stages.)
// -DNDEBUG as cuforge builds its kernels: without it CUTLASS's device asserts are function calls, and
// ptxas serializes the wgmma pipeline around them (warning C7510).
#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <type_traits>
#include <vector>
#include <cublas_v2.h>
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/util/packed_stride.hpp"
using namespace cute;
#ifndef SWAP
#define SWAP 0
#endif
#ifndef CARVEOUT
#define CARVEOUT 0
#endif
#ifndef STREAMK
#define STREAMK 0
#endif
#if SWAP
using LayoutA = cutlass::layout::ColumnMajor;  // B^T
using LayoutB = cutlass::layout::ColumnMajor;  // A^T
using LayoutC = cutlass::layout::ColumnMajor;  // D^T
#else
using LayoutA = cutlass::layout::RowMajor;
using LayoutB = cutlass::layout::LAYOUT_B;
using LayoutC = cutlass::layout::RowMajor;
#endif
using TileShape = Shape<_TM, _TN, _TK>;
using ClusterShape = Shape<_CM, _1, _1>;
#if SCHEDULE == 1
using KS = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using ES = cutlass::epilogue::TmaWarpSpecializedCooperative;
#elif SCHEDULE == 2
using KS = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using ES = cutlass::epilogue::TmaWarpSpecialized;
#else
using KS = cutlass::gemm::KernelTmaWarpSpecialized;
using ES = cutlass::epilogue::TmaWarpSpecialized;
#endif
using Epi = typename cutlass::epilogue::collective::CollectiveBuilder<cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    TileShape, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto, float, float, float, LayoutC, 4, float, LayoutC, 4,
    ES>::CollectiveOp;
using Main = typename cutlass::gemm::collective::CollectiveBuilder<cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    float, LayoutA, 4, float, LayoutB, 4, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epi::SharedStorage)) + CARVEOUT>,
    KS>::CollectiveOp;
using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Main, Epi,
    std::conditional_t<STREAMK, cutlass::gemm::StreamKScheduler, void>>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

int main(int argc, char** argv) {
  std::vector<std::array<int, 4>> shapes;
  for (int i = 1; i < argc; ++i) {
    std::array<int, 4> s{0, 0, 0, 1};
    if (sscanf(argv[i], "%dx%dx%d:%d", &s[0], &s[1], &s[2], &s[3]) >= 3) shapes.push_back(s);
  }
  if (shapes.empty())
    shapes = {{8192, 8192, 8192, 1}, {4096, 4096, 4096, 1}, {2048, 2048, 2048, 1}, {1024, 1024, 1024, 1},
              {128, 14336, 4096, 1}, {4096, 14336, 4096, 1}, {8192, 1024, 8192, 1}};
  cublasHandle_t h; cublasCreate(&h);
  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
  float *A, *B, *D; size_t n = size_t(8192) * 14336;
  cudaMalloc(&A, n * 4); cudaMalloc(&B, n * 4); cudaMalloc(&D, n * 4);
  cudaMemset(A, 0, n * 4); cudaMemset(B, 0, n * 4);
  void* ws; size_t ws_bytes = size_t(256) << 20; cudaMalloc(&ws, ws_bytes);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  printf("kernel %s: smem stages %d\n", NAME, int(Main::DispatchPolicy::Stages));
  for (auto& s : shapes) {
    int M = s[0], N = s[1], K = s[2];
    int KM = SWAP ? N : M, KN = SWAP ? M : N;  // the kernel's own problem
    typename Gemm::Arguments args{};
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {KM, KN, K, 1};
    args.mainloop.ptr_A = SWAP ? B : A;
    args.mainloop.dA = cutlass::make_cute_packed_stride(typename Kernel::StrideA{}, {KM, K, 1});
    args.mainloop.ptr_B = SWAP ? A : B;
    args.mainloop.dB = cutlass::make_cute_packed_stride(typename Kernel::StrideB{}, {KN, K, 1});
    args.epilogue.thread.alpha = 1; args.epilogue.thread.beta = 0;
    args.epilogue.ptr_C = D; args.epilogue.dC = cutlass::make_cute_packed_stride(typename Kernel::StrideC{}, {KM, KN, 1});
    args.epilogue.ptr_D = D; args.epilogue.dD = cutlass::make_cute_packed_stride(typename Kernel::StrideD{}, {KM, KN, 1});
    cutlass::KernelHardwareInfo hw; hw.device_id = 0; hw.sm_count = 132; args.hw_info = hw;
#if STREAMK
    args.scheduler.splits = s[3];
    args.scheduler.decomposition_mode = s[3] > 1 ? cutlass::gemm::kernel::detail::DecompositionMode::SplitK
                                                 : cutlass::gemm::kernel::detail::DecompositionMode::Heuristic;
#endif
    Gemm g;
    if (g.can_implement(args) != cutlass::Status::kSuccess || Gemm::get_workspace_size(args) > ws_bytes) {
      printf("%dx%dx%d cannot implement\n", M, N, K); continue; }
    if (g.initialize(args, ws) != cutlass::Status::kSuccess) { printf("init failed\n"); continue; }
    float one = 1, zero = 0;
    bool bcol = std::is_same_v<LayoutB, cutlass::layout::ColumnMajor> && !SWAP;
    auto cub = [&] { // row-major D = A B: column-major D^T = B^T A^T
      cublasSgemm(h, bcol ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, bcol ? K : N, A, K, &zero, D, N); };
    auto cut = [&] { g.run(); };
    float best_c = 1e9, best_k = 1e9;
    for (int round = 0; round < 5; ++round) {
      for (int w = 0; w < 2; ++w) {
        auto f = w ? std::function<void()>(cut) : std::function<void()>(cub);
        f();
        int reps = std::max(20, int(2e12 / (2.0 * M * N * K)));
        cudaEventRecord(e0);
        for (int i = 0; i < reps; ++i) f();
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= reps;
        (w ? best_k : best_c) = std::min(w ? best_k : best_c, ms);
      }
    }
    double fl = 2.0 * M * N * K;
    printf("%s %dx%dx%d:%d cublas %.2f us cutlass %.2f us (%.0f TFLOP/s) ratio %.3f err %s\n", NAME, M, N, K, s[3],
           best_c * 1e3, best_k * 1e3, fl / best_k / 1e9, best_c / best_k, cudaGetErrorString(cudaGetLastError()));
  }
}
