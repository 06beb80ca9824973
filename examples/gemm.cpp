// cuforge from C++: a bf16 GEMM on raw device pointers, checked against a host reference.
//   cmake -B build && cmake --build build && ./build/cuforge_example_gemm
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "cuforge/cuforge.hpp"

namespace {

// bf16 is the top half of an IEEE float, rounded to nearest even.
uint16_t to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
float from_bf16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

int main() try {
  const int64_t M = 512, N = 384, K = 256;
  cuforge::GemmOptions options;
  options.element_a = options.element_b = options.element_c = options.element_d = cuforge::DataType::bf16;
  options.layout_a = options.layout_b = options.layout_c = cuforge::Layout::RowMajor;
  cuforge::Gemm gemm(options);
  std::printf("kernel for %lldx%lldx%lld: %s\n", (long long)M, (long long)N, (long long)K,
              gemm.select(gemm.shape(M, N, K)).config.name().c_str());

  if (cuforge::runtime::device_count() == 0) {
    std::printf("no CUDA GPU found: compiling the kernel only\n");
    auto built = gemm.compile({gemm.shape(M, N, K)}).front();
    std::printf("%s: %s\n", built.cache_hit ? "cached" : "compiled", built.entry.library().c_str());
    return 0;
  }

  std::vector<uint16_t> a(M * K), b(K * N), d(M * N);
  for (int64_t i = 0; i < M * K; ++i) a[i] = to_bf16(float(int(i % 7) - 3));
  for (int64_t i = 0; i < K * N; ++i) b[i] = to_bf16(float(int(i % 5) - 2));
  void *da, *db, *dd;
  cudaMalloc(&da, a.size() * 2);
  cudaMalloc(&db, b.size() * 2);
  cudaMalloc(&dd, d.size() * 2);
  cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice);

  using cuforge::TensorRef;
  auto bf16 = cuforge::DataType::bf16;
  auto row = cuforge::Layout::RowMajor;
  gemm.run(TensorRef::matrix(da, bf16, M, K, row), TensorRef::matrix(db, bf16, K, N, row), TensorRef{},
           TensorRef::matrix(dd, bf16, M, N, row))
      .sync();
  cudaMemcpy(d.data(), dd, d.size() * 2, cudaMemcpyDeviceToHost);

  int64_t wrong = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += from_bf16(a[i * K + k]) * from_bf16(b[k * N + j]);
      wrong += from_bf16(to_bf16(ref)) != from_bf16(d[i * N + j]);
    }
  std::printf("%s: %lld of %lld elements differ from the reference\n", wrong ? "FAILED" : "PASSED", (long long)wrong,
              (long long)(M * N));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dd);
  return wrong ? 1 : 0;
} catch (const cuforge::Error& e) {  // a refusal, a toolchain or cache problem: said, not an abort
  std::fprintf(stderr, "cuforge: %s\n", e.what());
  return 2;
} catch (const std::exception& e) {  // out of memory, say
  std::fprintf(stderr, "error: %s\n", e.what());
  return 2;
}
