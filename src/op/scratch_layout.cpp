#include "scratch_layout.hpp"

#include <array>
#include <cstdint>

namespace cuforge::op {

size_t output_bytes(const GemmProblem& p, size_t element) {
  if (p.shape.empty_output()) return 0;
  return scratch_rounded(size_t((p.shape.batch - 1) * p.batch_stride_d + (p.shape.m - 1) * p.ldd + p.shape.n) *
                         element);
}

size_t output_bytes(const ConvProblem& p, size_t element) {
  const Conv2dSize& s = p.size;  // D: fprop y (n, p, q, k); dgrad dx (n, h, w, c); wgrad dw (k, r, s, c)
  const std::array<int64_t, 4> e = p.kind == KernelKind::Conv2dFprop   ? std::array<int64_t, 4>{s.n, s.p, s.q, s.k}
                                   : p.kind == KernelKind::Conv2dDgrad ? std::array<int64_t, 4>{s.n, s.h, s.w, s.c}
                                                                       : std::array<int64_t, 4>{s.k, s.r, s.s, s.c};
  return scratch_rounded(
      size_t((e[0] - 1) * p.stride_d[2] + (e[1] - 1) * p.stride_d[1] + (e[2] - 1) * p.stride_d[0] + e[3]) * element);
}

size_t output_bytes(const GroupedProblem& p, size_t element) {
  if (p.offsets) return output_bytes(p.offsets->whole, element);
  size_t bytes = 0;
  for (const GemmProblem& g : p.list) bytes += output_bytes(g, element);
  return bytes;
}

GemmProblem with_output(GemmProblem p, void* d, size_t) {
  p.d = d;
  return p;
}

ConvProblem with_output(ConvProblem p, void* d, size_t) {
  p.d = d;
  return p;
}

GroupedProblem with_output(GroupedProblem p, void* d, size_t element) {
  if (p.offsets) p.offsets->whole.d = d;
  for (GemmProblem& g : p.list) {
    const size_t bytes = output_bytes(g, element);
    g.d = d;
    d = static_cast<char*>(d) + bytes;
  }
  return p;
}

}  // namespace cuforge::op
