// cuforge from C++: a bf16 convolution (NHWC, 3 x 3, padding 1) with a fused relu and a per-channel
// bias, on raw device pointers, checked against a host reference.
//   cmake -B build && cmake --build build && ./build/cuforge_example_conv2d
#include <cuda_runtime_api.h>

#include <algorithm>
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
  const int64_t N = 2, H = 14, W = 14, C = 32, K = 64, R = 3, S = 3;  // "same" padding: P = H, Q = W
  const cuforge::op::ConvGeometry geometry{{1, 1}, {1, 1}, {1, 1}};   // stride, padding, dilation
  cuforge::GemmOptions options;
  options.element_a = options.element_b = options.element_c = options.element_d = cuforge::DataType::bf16;
  cuforge::Conv2d conv(cuforge::KernelKind::Conv2dFprop, options);
  auto settings = conv.settings();
  settings.set_activation(cuforge::Activation::relu);
  conv.set_settings(settings);
  cuforge::Conv2dSize size{N, H, W, C, K, R, S, H, W, 1, 1, 1, 1, 1, 1};
  std::printf("kernel: %s\n", conv.select(conv.shape(size, /*bias=*/true)).config.name().c_str());

  if (cuforge::runtime::device_count() == 0) {
    std::printf("no CUDA GPU found: compiling the kernel only\n");
    auto built = conv.compile({conv.shape(size, true)}).front();
    std::printf("%s: %s\n", built.cache_hit ? "cached" : "compiled", built.entry.library().c_str());
    return 0;
  }

  std::vector<uint16_t> x(N * H * W * C), w(K * R * S * C), bias(K), y(N * H * W * K);
  for (size_t i = 0; i < x.size(); ++i) x[i] = to_bf16(float(int(i % 5) - 2));
  for (size_t i = 0; i < w.size(); ++i) w[i] = to_bf16(float(int(i % 3) - 1));
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = to_bf16(float(int(i % 7) - 3));
  void *dx, *dw, *db, *dy;
  cudaMalloc(&dx, x.size() * 2);
  cudaMalloc(&dw, w.size() * 2);
  cudaMalloc(&db, bias.size() * 2);
  cudaMalloc(&dy, y.size() * 2);
  cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dw, w.data(), w.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, bias.data(), bias.size() * 2, cudaMemcpyHostToDevice);

  using cuforge::TensorRef;
  auto bf16 = cuforge::DataType::bf16;
  conv.run(TensorRef::nhwc(dx, bf16, N, H, W, C), TensorRef::nhwc(dw, bf16, K, R, S, C),
           TensorRef::vector(db, bf16, K), TensorRef::nhwc(dy, bf16, N, H, W, K), geometry, 1.0, 1.0)
      .sync();
  cudaMemcpy(y.data(), dy, y.size() * 2, cudaMemcpyDeviceToHost);

  int64_t wrong = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < H; ++p)
      for (int64_t q = 0; q < W; ++q)
        for (int64_t k = 0; k < K; ++k) {
          float acc = from_bf16(bias[k]);
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s) {
              const int64_t h = p + r - 1, ww = q + s - 1;
              if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
              for (int64_t c = 0; c < C; ++c)
                acc += from_bf16(x[((n * H + h) * W + ww) * C + c]) * from_bf16(w[((k * R + r) * S + s) * C + c]);
            }
          wrong += from_bf16(to_bf16(std::max(acc, 0.0f))) != from_bf16(y[((n * H + p) * W + q) * K + k]);
        }
  std::printf("%s: %lld of %lld elements differ from the reference\n", wrong ? "FAILED" : "PASSED",
              (long long)wrong, (long long)y.size());
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(db);
  cudaFree(dy);
  return wrong ? 1 : 0;
} catch (const cuforge::Error& e) {  // a refusal, a toolchain or cache problem: said, not an abort
  std::fprintf(stderr, "cuforge: %s\n", e.what());
  return 2;
} catch (const std::exception& e) {  // out of memory, say
  std::fprintf(stderr, "error: %s\n", e.what());
  return 2;
}
