// Host time of one small run from C++: cuforge::Gemm::run on raw device pointers (checks, the
// plan's lookup, the kernel library's launch, the handle's event), and its parts: the check, the
// kernel library's run alone (its prepared launch), the CUDA calls every run makes, and the floor
// any launch pays on this machine (an empty kernel, plainly and as a cluster launch, which SM90
// GEMM kernels use, then with a GEMM's parameter bytes and shared memory). 64x64x64 bf16,
// microseconds per call: the median of 9 rounds of 200 calls, each round queued behind a host
// function that holds the stream, so that no kernel runs while the calls are timed (a loop that
// lets the GPU run them measures its rate once the queue fills).
//   cmake --build build --target cuforge_bench_host_overhead && ./build/cuforge_bench_host_overhead
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cuforge/cuforge.hpp"
#include "cuforge/runtime/gemm_kernel.hpp"
#include "cuforge/runtime/stream_hold.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using cuforge::runtime::StreamHold;

template <class Call>
double host_us(Call&& call, int calls = 200, int rounds = 9) {
  for (int i = 0; i < 200; ++i) call();
  cudaDeviceSynchronize();
  std::vector<double> times;
  for (int r = 0; r <= rounds; ++r) {  // the first round held too, discarded: pools grow to its needs
    StreamHold hold(0);
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) call();
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / calls;
    if (!hold.release()) return std::nan("");
    if (r) times.push_back(us);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void print(const char* name, double us) {
  if (std::isnan(us))
    std::printf("%-34s (the queue filled and the host waited for the GPU: time fewer calls)\n", name);
  else
    std::printf("%-34s %6.2f us\n", name, us);
}

// Empty kernels, loaded from PTX (no device code in this file): one without parameters, one with
// 1 KB of them (an SM90 GEMM's parameters, TMA descriptors included, are of that order).
constexpr char kEmptyKernels[] = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry empty() { ret; }
.visible .entry empty_1kb(.param .align 64 .b8 p[1024]) { ret; }
)";

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

  // The dynamic shared memory of a large SM90 GEMM tile, or what the device allows.
  int shared_bytes = 0;
  cudaDeviceGetAttribute(&shared_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  shared_bytes = std::min(shared_bytes, 200 * 1024);
  cudaLibrary_t library;
  cudaKernel_t empty, empty_1kb;
  if (cudaLibraryLoadData(&library, kEmptyKernels, nullptr, nullptr, 0, nullptr, nullptr, 0) != cudaSuccess ||
      cudaLibraryGetKernel(&empty, library, "empty") != cudaSuccess ||
      cudaLibraryGetKernel(&empty_1kb, library, "empty_1kb") != cudaSuccess ||
      cudaFuncSetAttribute(reinterpret_cast<const void*>(empty_1kb), cudaFuncAttributeMaxDynamicSharedMemorySize,
                           shared_bytes) != cudaSuccess) {
    std::printf("could not load the empty kernels' PTX\n");
    return 1;
  }
  alignas(64) char params_1kb[1024] = {};
  void* args_1kb[] = {params_1kb};
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim = {1, 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(128);
  config.attrs = &cluster;
  config.numAttrs = cuforge::runtime::device_info(0).cc >= 90 ? 1 : 0;  // clusters from SM90 on

  print("empty kernel, cudaLaunchKernel", host_us([&] {
          cudaLaunchKernel(reinterpret_cast<const void*>(empty), dim3(1), dim3(128), nullptr, 0, nullptr);
        }));
  print(config.numAttrs ? "empty kernel, cluster launch" : "empty kernel, cudaLaunchKernelExC", host_us([&] {
          cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(empty), nullptr);
        }));
  print("  + 1 KB of parameters", host_us([&] {
          cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(empty_1kb), args_1kb);
        }));
  config.dynamicSmemBytes = shared_bytes;
  const std::string with_shared = "  + " + std::to_string(shared_bytes / 1024) + " KB of shared memory";
  print(with_shared.c_str(), host_us([&] {
          cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(empty_1kb), args_1kb);
        }));
  print("cudaEventRecord", host_us([&] { cudaEventRecord(event, 0); }));
  print("cudaStreamIsCapturing", host_us([&] { cudaStreamIsCapturing(0, &capture); }));
  print("Gemm::check", host_us([&] { gemm.check(A, B, TensorRef{}, D, 1.0, 0.0); }));
  print("GemmKernel::run (prepared launch)", host_us([&] { kernel->run(problem, launch, nullptr, 0, 0); }));
  print("Gemm::run", host_us([&] { gemm.run(A, B, TensorRef{}, D); }));
  cudaEventDestroy(event);
  cudaLibraryUnload(library);
  for (void* p : {a, b, d}) cudaFree(p);
  return 0;
}
