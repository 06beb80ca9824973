// A probe of CUTLASS's SM90 TF32 mainloops (not of cuforge): f32 D = A B, A row-major, B as LAYOUT_B,
// one CUTLASS 3.x kernel per binary, timed beside cublasSgemm in TF32 mode on the same zeroed operands
// (CUDA events, the best of five rounds) on bench/gemm.py's shapes. A row-major B takes the builder's
// register-sourced mainloop (B through registers), a column-major B the shared-memory one
// (bench/NOTES.md, "CUTLASS's own MN-major TF32 mainloop"). One configuration:
//
//   nvcc -std=c++17 -O3 -DNDEBUG -arch=sm_90a --expt-relaxed-constexpr -I$CUTLASS_PATH/include \
//     -I$CUTLASS_PATH/tools/util/include -DNAME='"rs_128x128_c1"' -DLAYOUT_B=RowMajor -D_TM=_128 \
//     -D_TN=_128 -D_TK=_32 -D_CM=_1 -DCOOP=1 bench/tf32_mainloops.cu -lcublas -o rs_128x128 && ./rs_128x128
//
// (_TM, _TN, _TK: the CTA tile; _CM: the cluster along M; COOP: cooperative, else ping-pong.)
// -DNDEBUG as cuforge builds its kernels: without it CUTLASS's device asserts are function calls, and
// ptxas serializes the wgmma pipeline around them (warning C7510).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <type_traits>
#include <cublas_v2.h>
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/util/packed_stride.hpp"
using namespace cute;
using LayoutA = cutlass::layout::RowMajor;
using LayoutB = cutlass::layout::LAYOUT_B;
using LayoutC = cutlass::layout::RowMajor;
using TileShape = Shape<_TM, _TN, _TK>;
using ClusterShape = Shape<_CM, _1, _1>;
#if COOP
using KS = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using ES = cutlass::epilogue::TmaWarpSpecializedCooperative;
#else
using KS = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using ES = cutlass::epilogue::TmaWarpSpecialized;
#endif
using Epi = typename cutlass::epilogue::collective::CollectiveBuilder<cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    TileShape, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto, float, float, float, LayoutC, 4, float, LayoutC, 4,
    ES>::CollectiveOp;
using Main = typename cutlass::gemm::collective::CollectiveBuilder<cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    float, LayoutA, 4, float, LayoutB, 4, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epi::SharedStorage))>, KS>::CollectiveOp;
using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Main, Epi>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

int main() {
  const int shapes[][3] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {2048, 2048, 2048}, {1024, 1024, 1024},
                           {128, 14336, 4096}, {4096, 14336, 4096}, {8192, 1024, 8192}};
  cublasHandle_t h; cublasCreate(&h);
  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
  float *A, *B, *D; size_t n = size_t(8192) * 14336;
  cudaMalloc(&A, n * 4); cudaMalloc(&B, n * 4); cudaMalloc(&D, n * 4);
  cudaMemset(A, 0, n * 4); cudaMemset(B, 0, n * 4);
  void* ws; cudaMalloc(&ws, 64 << 20);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  printf("kernel %s: smem stages %d\n", NAME, int(Main::DispatchPolicy::Stages));
  for (auto& s : shapes) {
    int M = s[0], N = s[1], K = s[2];
    typename Gemm::Arguments args{};
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {M, N, K, 1};
    args.mainloop.ptr_A = A; args.mainloop.dA = cutlass::make_cute_packed_stride(typename Kernel::StrideA{}, {M, K, 1});
    args.mainloop.ptr_B = B; args.mainloop.dB = cutlass::make_cute_packed_stride(typename Kernel::StrideB{}, {N, K, 1});
    args.epilogue.thread.alpha = 1; args.epilogue.thread.beta = 0;
    args.epilogue.ptr_C = D; args.epilogue.dC = cutlass::make_cute_packed_stride(typename Kernel::StrideC{}, {M, N, 1});
    args.epilogue.ptr_D = D; args.epilogue.dD = cutlass::make_cute_packed_stride(typename Kernel::StrideD{}, {M, N, 1});
    cutlass::KernelHardwareInfo hw; hw.device_id = 0; hw.sm_count = 132; args.hw_info = hw;
    Gemm g;
    if (g.can_implement(args) != cutlass::Status::kSuccess) { printf("%dx%dx%d cannot implement\n", M, N, K); continue; }
    if (g.initialize(args, ws) != cutlass::Status::kSuccess) { printf("init failed\n"); continue; }
    float one = 1, zero = 0;
    bool bcol = std::is_same_v<LayoutB, cutlass::layout::ColumnMajor>;
    auto cub = [&] { // row-major D = A B: column-major D^T = B^T A^T
      cublasSgemm(h, bcol ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, bcol ? K : N, A, K, &zero, D, N); };
    auto cut = [&] { g.run(); };
    float best_c = 1e9, best_k = 1e9;
    for (int round = 0; round < 5; ++round) {
      for (int w = 0; w < 2; ++w) {
        auto f = w ? std::function<void()>(cut) : std::function<void()>(cub);
        f();
        int reps = std::max(3, int(2e12 / (2.0 * M * N * K)));
        cudaEventRecord(e0);
        for (int i = 0; i < reps; ++i) f();
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= reps;
        (w ? best_k : best_c) = std::min(w ? best_k : best_c, ms);
      }
    }
    double fl = 2.0 * M * N * K;
    printf("%s %dx%dx%d cublas %.0f TFLOP/s cutlass %.0f ratio %.3f err %s\n", NAME, M, N, K, fl / best_c / 1e9,
           fl / best_k / 1e9, best_c / best_k, cudaGetErrorString(cudaGetLastError()));
  }
}
