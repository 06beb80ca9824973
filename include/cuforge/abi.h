/* The C ABI every emitted cuforge kernel library exports.
 *
 * One shared library holds one kernel. Its entry points follow CUTLASS's device-level protocol
 * (can_implement, get_workspace_size, run) one level up, with plain C types so that libraries
 * built by any compiler load into any process. Problems are given in the kernel's own terms:
 * D (M x N) = activation(alpha * A (M x K) * B (K x N) + beta * C), each operand with the layout
 * the kernel was built for, leading dimensions and batch strides counted in elements (a batch
 * stride of 0 broadcasts the operand across the batch; a bias kernel reads C as one row of N).
 * Every entry point returns a cuforge_status and lets no C++ exception escape.
 */
#ifndef CUFORGE_ABI_H
#define CUFORGE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUFORGE_ABI_VERSION 9

/* Kernel libraries are built with hidden visibility; only these entry points are exported. */
#define CUFORGE_EXPORT __attribute__((visibility("default")))

typedef struct cuforge_gemm_arguments {
  int64_t m, n, k, batch;
  const void* a;
  const void* b;
  const void* c; /* may be null when beta == 0 (a bias kernel, _bias, then adds zeros on SM90) */
  void* d;
  int64_t lda, ldb, ldc, ldd;
  int64_t batch_stride_a, batch_stride_b, batch_stride_c, batch_stride_d;
  double alpha, beta;
  double activation_argument; /* leaky_relu's negative slope; other activations ignore it */
  /* fp8 kernels: per-tensor scales of A and B, one float each on the device, multiplying alpha
   * (null: 1); other kernels ignore them. */
  const float* scale_a;
  const float* scale_b;
  int splits;        /* K slices (split-K, parallel split-K); 1 for none */
  int decomposition; /* a cuforge_decomposition, for stream-K kernels */
  int deterministic; /* stream-K kernels: 1 reduces partial tiles in K order, 0 in arrival order */
  int device;   /* CUDA ordinal the launch targets */
  int sm_count; /* multiprocessors of that device, for persistent schedulers */
  /* SM90's persistent and stream-K schedulers: the order tiles are handed out in, a cuforge_raster, in groups of
   * `swizzle` (1, 2, 4 or 8) tiles across it; other kernels ignore them. */
  int raster;
  int swizzle;
} cuforge_gemm_arguments;

/* CUTLASS's RasterOrderOptions, in its order. */
typedef enum cuforge_raster {
  CUFORGE_RASTER_HEURISTIC = 0, /* along M where the problem has more tiles along N, else along N */
  CUFORGE_RASTER_ALONG_M = 1,
  CUFORGE_RASTER_ALONG_N = 2
} cuforge_raster;

/* How a kernel divides the work: CUTLASS's DecompositionMode, in its order, for stream-K kernels;
 * parallel split-K kernels (a reduction kernel after the slices) take no other. */
typedef enum cuforge_decomposition {
  CUFORGE_DECOMPOSITION_HEURISTIC = 0,
  CUFORGE_DECOMPOSITION_DATA_PARALLEL = 1,
  CUFORGE_DECOMPOSITION_SPLIT_K = 2,
  CUFORGE_DECOMPOSITION_STREAM_K = 3,
  CUFORGE_DECOMPOSITION_PARALLEL_SPLIT_K = 4
} cuforge_decomposition;

typedef enum cuforge_status {
  CUFORGE_STATUS_SUCCESS = 0,
  CUFORGE_STATUS_NOT_SUPPORTED = 1, /* the kernel cannot run this problem */
  CUFORGE_STATUS_WORKSPACE_TOO_SMALL = 2,
  CUFORGE_STATUS_LAUNCH_FAILED = 3,
  CUFORGE_STATUS_INTERNAL_ERROR = 4
} cuforge_status;

/* Grouped kernels: G problems of their own sizes in one launch, each D_g (M_g x N_g) =
 * activation(alpha * A_g (M_g x K_g) * B_g (K_g x N_g) + beta * C_g) in the kernel's layouts. The
 * groups come from one of two places:
 * - descriptors: G of these on the device, written by the caller (the list form);
 * - offsets (when descriptors is null): one A of m_total rows and one D (and C) cut into groups by G
 *   row offsets on the device (group g's rows end at offsets[g], start where g - 1's end, the first
 *   at 0; the mixture-of-experts form), B a batch of G matrices batch_stride_b apart, every group
 *   K x N. Rows past m_total or before the previous group's end are never touched.
 * Descriptors are turned into CUTLASS's own arrays on the device, so a run needs no host copy of
 * the sizes. */
typedef struct cuforge_gemm_group {
  int64_t m, n, k;
  const void* a;
  const void* b;
  const void* c; /* D when beta == 0; a bias kernel's (_bias) row per group, read whatever beta is */
  void* d;
  int64_t lda, ldb, ldc, ldd;
} cuforge_gemm_group;

typedef struct cuforge_grouped_arguments {
  int64_t groups;
  const cuforge_gemm_group* descriptors;
  const int32_t* offsets;
  int64_t m_total, n, k;
  const void* a;
  const void* b;
  const void* c; /* may be null when beta == 0 */
  void* d;
  int64_t lda, ldb, ldc, ldd, batch_stride_b;
  double alpha, beta;
  double activation_argument;
  int device;
  int sm_count;
} cuforge_grouped_arguments;

/* Convolution kernels: a 2-D convolution of NHWC tensors as an implicit GEMM. In forward
 * propagation (fprop) A is the activation x (n, h, w, c), B the filter (k, r, s, c) and D the
 * output y (n, p, q, k); in the input's gradient (dgrad) A is dy (n, p, q, k), B the filter and D
 * dx (n, h, w, c); in the filter's gradient (wgrad) A is dy, B the activation x and D dw
 * (k, r, s, c). C has D's shape (or, with strides of 0, one value per channel: a bias). Each
 * tensor's channels are contiguous; its strides give the elements between neighbours along W, H
 * and N. */
typedef struct cuforge_conv2d_arguments {
  int64_t n, h, w, c, k, r, s, p, q;
  int64_t pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
  const void* ptr_a;
  const void* ptr_b;
  const void* ptr_c; /* D when beta == 0; for a bias kernel (_bias) the bias, or null for none (SM90: zeros) */
  void* ptr_d;
  int64_t stride_a[3], stride_b[3], stride_c[3], stride_d[3]; /* W, H, N */
  double alpha, beta;
  double activation_argument;
  int splits; /* K slices, serial (parallel for a parallel split-K kernel); 1: none */
  int decomposition; /* pointwise kernels (GEMM kernels): as cuforge_gemm_arguments's */
  int deterministic;
  int device;
  int sm_count;
} cuforge_conv2d_arguments;

CUFORGE_EXPORT int cuforge_abi_version(void);
CUFORGE_EXPORT const char* cuforge_kernel_name(void);
/* The cudaError_t behind the calling thread's latest CUFORGE_STATUS_LAUNCH_FAILED from this library
 * (the library links its own CUDA runtime, whose errors the caller's cudaGetLastError() does not
 * read); 0 where the failure named none (CUTLASS's SM80 adapters read and clear their launch's error). */
CUFORGE_EXPORT int cuforge_last_cuda_error(void);
CUFORGE_EXPORT int cuforge_gemm_can_implement(const cuforge_gemm_arguments* args);
/* Writes the device scratch memory the run needs to *bytes. */
CUFORGE_EXPORT int cuforge_gemm_workspace_size(const cuforge_gemm_arguments* args, size_t* bytes);
/* stream is a cudaStream_t; workspace holds workspace_bytes >= what cuforge_gemm_workspace_size wrote. */
CUFORGE_EXPORT int cuforge_gemm_run(const cuforge_gemm_arguments* args, void* workspace, size_t workspace_bytes,
                     void* stream);

CUFORGE_EXPORT int cuforge_grouped_can_implement(const cuforge_grouped_arguments* args);
CUFORGE_EXPORT int cuforge_grouped_workspace_size(const cuforge_grouped_arguments* args, size_t* bytes);
CUFORGE_EXPORT int cuforge_grouped_run(const cuforge_grouped_arguments* args, void* workspace, size_t workspace_bytes,
                                       void* stream);

CUFORGE_EXPORT int cuforge_conv2d_can_implement(const cuforge_conv2d_arguments* args);
CUFORGE_EXPORT int cuforge_conv2d_workspace_size(const cuforge_conv2d_arguments* args, size_t* bytes);
CUFORGE_EXPORT int cuforge_conv2d_run(const cuforge_conv2d_arguments* args, void* workspace, size_t workspace_bytes,
                                      void* stream);

#ifdef __cplusplus
}
#endif

#endif /* CUFORGE_ABI_H */
