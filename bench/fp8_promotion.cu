// A probe of CUTLASS's SM90 promoted fp8 mainloop (not of cuforge): bf16 D = A B of e4m3, A row-major,
// B column-major, one CUTLASS 3.x cooperative kernel per binary, run with each promotion interval
// (wgmma k-steps of 32 accumulated in the second fragment before it is added into the first; CUTLASS
// waits for every wgmma in flight at each promotion), timed beside cuBLASLt's fp8 matmul with and
// without fast accumulation (what torch._scaled_mm runs) on the same random operands (CUDA events, the
// best of five interleaved rounds) on bench/fp8.py's shapes, and cuforge's consumer loop that overlaps
// the promotion (src/emit/templates/sm90_fp8_promotion.hpp) on the same tile, also in other tile orders
// (swizzle, raster) and with turns of 8 k-tiles. The relative error of each against a double-precision
// product over K = 16384 shows what each keeps. One configuration:
//
//   nvcc -std=c++17 -O3 -DNDEBUG -arch=sm_90a --expt-relaxed-constexpr -I$CUTLASS_PATH/include \
//     -I$CUTLASS_PATH/tools/util/include -DNAME='"128x128_c1"' -D_TM=_128 -D_TN=_128 -D_CM=_1 -D_CN=_1 \
//     bench/fp8_promotion.cu -lcublasLt -o p && ./p [shape index]
//
// (_TM, _TN: the CTA tile, K 128; _CM, _CN: the cluster along M and N. A _TN whose halves are not among
// wgmma's standard N (8, 16, 32, 64, 96, 128, 192, 256), such as _144, needs
// -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED: without it CUTLASS's builder tiles N with 64x16 wgmma.)
// -DNDEBUG as cuforge builds its kernels: without it CUTLASS's device asserts are function calls, and
// ptxas serializes the wgmma pipeline around them (warning C7510).
#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

using namespace cute;
using Fp8 = cutlass::float_e4m3_t;
using Out = cutlass::bfloat16_t;
using TileShape = Shape<_TM, _TN, _128>;
using ClusterShape = Shape<_CM, _CN, _1>;
using Epi = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, Out, cutlass::layout::RowMajor, 8, Out,
    cutlass::layout::RowMajor, 8, cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;
using Main = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Fp8, cutlass::layout::RowMajor, 16, Fp8,
    cutlass::layout::ColumnMajor, 16, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epi::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Main, Epi>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
// cuforge's loop for promoted fp8: each k-tile in two halves of N, each added while the other runs.
#include "../src/emit/templates/sm90_fp8_promotion.hpp"
using KernelPipelined = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>,
                                                             cuforge_fp8::OverlappedPromotion<Main>::type, Epi>;
using GemmPipelined = cutlass::gemm::device::GemmUniversalAdapter<KernelPipelined>;
// The same loop waiting for the wgmma in flight once every 8 k-tiles instead of 4.
using KernelPipelined8 = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>,
                                                              cuforge_fp8::OverlappedPromotion<Main, 8>::type, Epi>;
using GemmPipelined8 = cutlass::gemm::device::GemmUniversalAdapter<KernelPipelined8>;

#define CHECK(x)                                                         \
  do {                                                                   \
    if (auto s = (x); s != 0) {                                          \
      printf("%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, int(s)); \
      return 1;                                                          \
    }                                                                    \
  } while (0)

// cuBLASLt's row-major D = A B (A row-major, B column-major) as column-major D^T = B^T A^T: its "TN".
struct Lt {
  cublasLtHandle_t h{};
  cublasLtMatmulDesc_t desc{};
  cublasLtMatrixLayout_t la{}, lb{}, ld{};
  cublasLtMatmulHeuristicResult_t algo{};
  int setup(int M, int N, int K, bool fast, const float* one, size_t ws_bytes) {
    CHECK(cublasLtCreate(&h));
    CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    int8_t f = fast;
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n));
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &f, sizeof f));
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &one, sizeof one));
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &one, sizeof one));
    CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K));
    CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, M, K));
    CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, N, M, N));
    cublasLtMatmulPreference_t pref;
    CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                               sizeof ws_bytes));
    int found = 0;
    CHECK(cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, ld, ld, pref, 1, &algo, &found));
    return found == 1 ? 0 : 1;
  }
  void run(const Fp8* A, const Fp8* B, Out* D, void* ws, size_t ws_bytes) const {
    const float alpha = 1, beta = 0;
    cublasLtMatmul(h, desc, &alpha, B, la, A, lb, &beta, D, ld, D, ld, &algo.algo, ws, ws_bytes, nullptr);
  }
};

int main(int argc, char** argv) {
  const int only = argc > 1 ? std::atoi(argv[1]) : -1;  // one shape's index, for ncu
  const int shapes[][3] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {4096, 14336, 4096}, {8192, 1024, 8192},
                           {256, 256, 16384}};
  const int intervals[] = {4, 8};
  const size_t elems = size_t(8192) * 16384;
  std::vector<Fp8> host(elems);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (auto& x : host) x = Fp8(u(rng));
  Fp8 *A, *B;
  Out* D;
  float* one;
  void* ws;
  const size_t ws_bytes = 64 << 20;
  CHECK(cudaMalloc(&A, elems));
  CHECK(cudaMalloc(&B, elems));
  CHECK(cudaMalloc(&D, size_t(8192) * 14336 * sizeof(Out)));
  CHECK(cudaMalloc(&one, sizeof(float)));
  CHECK(cudaMalloc(&ws, ws_bytes));
  const float h_one = 1;
  CHECK(cudaMemcpy(one, &h_one, sizeof h_one, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(A, host.data(), elems, cudaMemcpyHostToDevice));
  std::shuffle(host.begin(), host.end(), rng);
  CHECK(cudaMemcpy(B, host.data(), elems, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  printf("kernel %s: stages %d\n", NAME, int(Main::DispatchPolicy::Stages));
  for (int index = 0; index < int(std::size(shapes)); ++index) {
    if (only >= 0 && index != only) continue;
    const int M = shapes[index][0], N = shapes[index][1], K = shapes[index][2];
    Lt promoted, fast;
    if (promoted.setup(M, N, K, false, one, ws_bytes) || fast.setup(M, N, K, true, one, ws_bytes)) {
      printf("%dx%dx%d: no cuBLASLt algorithm\n", M, N, K);
      continue;
    }
    std::vector<std::pair<std::string, std::function<void()>>> calls = {
        {"cublasLt", [&] { promoted.run(A, B, D, ws, ws_bytes); }},
        {"cublasLt_fast", [&] { fast.run(A, B, D, ws, ws_bytes); }}};
    // CUTLASS's kernel at each promotion interval, then cuforge's pipelined promotion (every k-tile).
    using Raster = cutlass::gemm::kernel::detail::RasterOrderOptions;
    auto arguments = [&](auto& gemm, int interval, int swizzle = 1, Raster raster = Raster::Heuristic) {
      typename std::remove_reference_t<decltype(gemm)>::Arguments args{};
      using Kern = typename std::remove_reference_t<decltype(gemm)>::GemmKernel;
      args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
      args.problem_shape = {M, N, K, 1};
      args.mainloop.ptr_A = A;
      args.mainloop.dA = cutlass::make_cute_packed_stride(typename Kern::StrideA{}, {M, K, 1});
      args.mainloop.ptr_B = B;
      args.mainloop.dB = cutlass::make_cute_packed_stride(typename Kern::StrideB{}, {N, K, 1});
      args.mainloop.mma_promotion_interval = interval;
      args.epilogue.thread.alpha = 1;
      args.epilogue.thread.beta = 0;
      args.epilogue.ptr_C = D;
      args.epilogue.dC = cutlass::make_cute_packed_stride(typename Kern::StrideC{}, {M, N, 1});
      args.epilogue.ptr_D = D;
      args.epilogue.dD = cutlass::make_cute_packed_stride(typename Kern::StrideD{}, {M, N, 1});
      args.hw_info.device_id = 0;
      args.hw_info.sm_count = 132;
      args.scheduler.max_swizzle_size = swizzle;
      args.scheduler.raster_order = raster;
      return gemm.can_implement(args) == cutlass::Status::kSuccess && gemm.initialize(args, ws) == cutlass::Status::kSuccess;
    };
    std::vector<Gemm> gemms(std::size(intervals));
    for (size_t i = 0; i < std::size(intervals); ++i) {
      if (arguments(gemms[i], intervals[i]))
        calls.push_back({"interval" + std::to_string(intervals[i]), [&, i] { gemms[i].run(); }});
      else
        printf("%dx%dx%d interval %d: cannot implement\n", M, N, K, intervals[i]);
    }
    GemmPipelined pipelined;
    if (arguments(pipelined, 4))
      calls.push_back({"pipelined", [&] { pipelined.run(); }});
    else
      printf("%dx%dx%d pipelined: cannot implement\n", M, N, K);
    // The tile scheduler's order (CUTLASS's default: swizzle 1, the raster its heuristic picks): the
    // operand panels a wave of tiles shares in L2.
    const std::vector<std::tuple<int, Raster, std::string>> orders = {
        {2, Raster::Heuristic, "swizzle2"}, {4, Raster::Heuristic, "swizzle4"}, {8, Raster::Heuristic, "swizzle8"},
        {1, Raster::AlongM, "alongM"},      {1, Raster::AlongN, "alongN"},      {8, Raster::AlongM, "swizzle8_alongM"},
        {8, Raster::AlongN, "swizzle8_alongN"}};
    std::vector<GemmPipelined> ordered(orders.size());
    for (size_t i = 0; i < orders.size(); ++i)
      if (arguments(ordered[i], 4, std::get<0>(orders[i]), std::get<1>(orders[i])))
        calls.push_back({"pipelined_" + std::get<2>(orders[i]), [&, i] { ordered[i].run(); }});
    GemmPipelined8 pipelined8;
    if (arguments(pipelined8, 4))
      calls.push_back({"pipelined8", [&] { pipelined8.run(); }});
    else
      printf("%dx%dx%d pipelined8: cannot implement\n", M, N, K);
    // Accuracy over the long-K shape: each call's D against a double-precision product of 64 rows.
    if (K == 16384) {
      std::vector<Fp8> ha(size_t(64) * K), hb(size_t(N) * K);
      CHECK(cudaMemcpy(ha.data(), A, ha.size(), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(hb.data(), B, hb.size(), cudaMemcpyDeviceToHost));
      std::vector<double> ref(size_t(64) * N);
      for (int m = 0; m < 64; ++m)
        for (int n = 0; n < N; ++n) {
          double acc = 0;
          for (int k = 0; k < K; ++k) acc += double(float(ha[size_t(m) * K + k])) * double(float(hb[size_t(n) * K + k]));
          ref[size_t(m) * N + n] = acc;
        }
      std::vector<Out> hd(size_t(64) * N);
      for (auto& [name, call] : calls) {
        call();
        CHECK(cudaMemcpy(hd.data(), D, hd.size() * sizeof(Out), cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (size_t i = 0; i < hd.size(); ++i) {
          num += std::pow(double(float(hd[i])) - ref[i], 2);
          den += ref[i] * ref[i];
        }
        printf("%s %dx%dx%d %s relative error %.3e\n", NAME, M, N, K, name.c_str(), std::sqrt(num / den));
      }
      continue;
    }
    std::vector<float> best(calls.size(), 1e9f);
    const int reps = std::max(3, int(2e13 / (2.0 * M * N * K)));
    for (int round = 0; round < 5; ++round)
      for (size_t c = 0; c < calls.size(); ++c) {
        calls[c].second();
        cudaEventRecord(e0);
        for (int i = 0; i < reps; ++i) calls[c].second();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        best[c] = std::min(best[c], ms / reps);
      }
    const double flops = 2.0 * M * N * K;
    for (size_t c = 0; c < calls.size(); ++c)
      printf("%s %dx%dx%d %s %.0f TFLOP/s, %.3fx cublasLt\n", NAME, M, N, K, calls[c].first.c_str(),
             flops / best[c] / 1e9, best[0] / best[c]);
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  }
}
