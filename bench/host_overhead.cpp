// Host time of one small run from C++: cuforge::Gemm::run on raw device pointers (checks, the
// plan's lookup, the kernel library's launch, the handle's event), and its parts: the check, the
// kernel library's run alone (its prepared launch), and the CUDA calls every run makes.
// 64x64x64 bf16, microseconds per call (median of 5 rounds of 20000 calls).
//   cmake --build build --target cuforge_bench_host_overhead && ./build/cuforge_bench_host_overhead
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "cuforge/cuforge.hpp"
#include "cuforge/runtime/gemm_kernel.hpp"

namespace {

template <class Call>
double per_call_us(Call&& call, int calls = 20000, int rounds = 5) {
  for (int i = 0; i < 1000; ++i) call();
  cudaDeviceSynchronize();
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    cudaDeviceSynchronize();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
                    calls);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
  if (cuforge::runtime::device_count() == 0) {
    std::printf("no CUDA GPU found: nothing to time\n");
    return 0;
  }
  const int64_t n = 64;
  cuforge::GemmOptions options;
  options.element_a = options.element_b = options.element_c = options.element_d = cuforge::DataType::bf16;
  options.layout_a = options.layout_b = options.layout_c = cuforge::Layout::RowMajor;
  cuforge::Gemm gemm(options);
  void *a, *b, *d;
  for (void** p : {&a, &b, &d}) cudaMalloc(p, n * n * 2);
  using cuforge::TensorRef;
  const auto A = TensorRef::matrix(a, cuforge::DataType::bf16, n, n, cuforge::Layout::RowMajor);
  const auto B = TensorRef::matrix(b, cuforge::DataType::bf16, n, n, cuforge::Layout::RowMajor);
  const auto D = TensorRef::matrix(d, cuforge::DataType::bf16, n, n, cuforge::Layout::RowMajor);
  gemm.run(A, B, TensorRef{}, D).sync();  // builds or loads the kernel
  std::printf("kernel: %s\n", gemm.last_kernel()->c_str());
  const auto chosen = gemm.select(gemm.shape(n, n, n));
  auto kernel = cuforge::runtime::GemmKernel::load(
      cuforge::compile::compile(gemm.kernel_source(chosen.config)).entry.library());
  const auto problem = gemm.check(A, B, TensorRef{}, D, 1.0, 0.0);
  const cuforge::GemmLaunch launch{1.0, 0.0, 0.0, 1, chosen.decomposition, true, 0,
                                   cuforge::runtime::device_info(0).sm_count};
  cudaEvent_t event;
  cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  cudaStreamCaptureStatus capture;
  std::printf("Gemm::check              %6.2f us\n", per_call_us([&] { gemm.check(A, B, TensorRef{}, D, 1.0, 0.0); }));
  std::printf("GemmKernel::run          %6.2f us\n", per_call_us([&] { kernel->run(problem, launch, nullptr, 0, 0); }));
  std::printf("cudaEventRecord          %6.2f us\n", per_call_us([&] { cudaEventRecord(event, 0); }));
  std::printf("cudaStreamIsCapturing    %6.2f us\n", per_call_us([&] { cudaStreamIsCapturing(0, &capture); }));
  std::printf("Gemm::run                %6.2f us\n", per_call_us([&] { gemm.run(A, B, TensorRef{}, D); }));
  cudaEventDestroy(event);
  for (void* p : {a, b, d}) cudaFree(p);
  return 0;
}
