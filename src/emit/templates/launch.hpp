// Kernel launches of a kernel library, through the driver. The runtime's launch of a kernel by its
// host stub (cudaLaunchKernelExC) looks the stub's function up on every call: an SM90 GEMM kernel's
// launch took 5.6-5.8 µs so on the H200, and 3.5-4.2 µs as the driver's launch of the function
// itself (cuLaunchKernelEx), what an empty kernel's launch costs (2026-12-04, bench/NOTES.md). Each
// thread keeps the functions it launched, per context; anything unusual (no current context, a
// driver without these entry points, a refused launch) takes the runtime's launch, which reports
// the error.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuforge/abi.h"

namespace cuforge_kernel {

// The CUDA error behind the calling thread's latest CUFORGE_STATUS_LAUNCH_FAILED, for
// cuforge_last_cuda_error; cudaSuccess where the failure named none.
inline thread_local cudaError_t last_launch_error = cudaSuccess;

// CUFORGE_STATUS_LAUNCH_FAILED, with `error` kept for cuforge_last_cuda_error.
inline int launch_failed(cudaError_t error) {
  last_launch_error = error;
  return CUFORGE_STATUS_LAUNCH_FAILED;
}

// CUFORGE_STATUS_SUCCESS for cudaSuccess, else launch_failed(error).
inline int launch_status(cudaError_t error) { return error == cudaSuccess ? CUFORGE_STATUS_SUCCESS : launch_failed(error); }

// Whether a kernel is launched in clusters (SM90 kernels), whose sizes may then go beyond the portable ones.
enum class Clusters { None, NonPortable };

// A kernel's attributes, set once per device where CUTLASS's adapters set them on every call: the
// dynamic shared memory it takes, and for cluster kernels, cluster sizes beyond the portable ones.
class KernelAttributes {
 public:
  // cudaSuccess once set; else the runtime's error.
  cudaError_t set_once(const void* kernel, int device, int shared_bytes, Clusters clusters) {
    const uint64_t bit = uint64_t(1) << (device & 63);
    if (set_.load(std::memory_order_relaxed) & bit) return cudaSuccess;
    cudaError_t error = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes);
    if (error == cudaSuccess && clusters == Clusters::NonPortable)
      error = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (error == cudaSuccess) set_.fetch_or(bit);
    return error;
  }

 private:
  std::atomic<uint64_t> set_{0};  // one bit per device ordinal
};

namespace driver {

static_assert(sizeof(CUlaunchAttribute) == sizeof(cudaLaunchAttribute) &&
                  int(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) == int(cudaLaunchAttributeClusterDimension) &&
                  int(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) ==
                      int(cudaLaunchAttributePreferredSharedMemoryCarveout) &&
                  int(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) ==
                      int(cudaLaunchAttributeProgrammaticStreamSerialization),
              "the runtime's launch attributes are the driver's");

struct Entries {
  CUresult (*current_context)(CUcontext*) = nullptr;
  CUresult (*context_id)(CUcontext, unsigned long long*) = nullptr;
  CUresult (*launch)(const CUlaunchConfig*, CUfunction, void**, void**) = nullptr;
};

inline void* entry(const char* name) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  const cudaError_t status = cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t status = cudaGetDriverEntryPoint(name, &function, cudaEnableDefault, &found);
#endif
  return status == cudaSuccess && found == cudaDriverEntryPointSuccess ? function : nullptr;
}

inline const Entries& entries() {
  static const Entries found = [] {
    Entries e;
    e.current_context = reinterpret_cast<decltype(e.current_context)>(entry("cuCtxGetCurrent"));
    e.context_id = reinterpret_cast<decltype(e.context_id)>(entry("cuCtxGetId"));
    e.launch = reinterpret_cast<decltype(e.launch)>(entry("cuLaunchKernelEx"));
    if (!e.current_context || !e.context_id || !e.launch) e = Entries{};
    return e;
  }();
  return found;
}

// The function of `kernel` (a host stub) in the current context, kept by this thread for the last
// few kernels it launched (a library launches one to three); null where there is none.
inline CUfunction function_of(const void* kernel) {
  struct Kept {
    const void* kernel;
    unsigned long long context;  // the context's id, unique in the process (an address may be reused)
    CUfunction function;
  };
  constexpr int kKept = 4;
  thread_local Kept kept[kKept] = {};
  thread_local int next = 0;
  const Entries& d = entries();
  CUcontext context = nullptr;
  unsigned long long id = 0;
  if (!d.launch || d.current_context(&context) != CUDA_SUCCESS || !context || d.context_id(context, &id) != CUDA_SUCCESS)
    return nullptr;
  for (const Kept& k : kept)
    if (k.kernel == kernel && k.context == id) return k.function;
  cudaFunction_t function = nullptr;
  if (cudaGetFuncBySymbol(&function, kernel) != cudaSuccess) return nullptr;
  kept[next] = {kernel, id, reinterpret_cast<CUfunction>(function)};
  next = (next + 1) % kKept;
  return reinterpret_cast<CUfunction>(function);
}

}  // namespace driver

// cudaLaunchKernelExC(&config, kernel, args), through the driver where it can.
inline cudaError_t launch_kernel(const void* kernel, const cudaLaunchConfig_t& config, void** args) {
  constexpr unsigned kMaxAttributes = 4;
  if (config.numAttrs <= kMaxAttributes) {
    if (CUfunction function = driver::function_of(kernel)) {
      CUlaunchAttribute attributes[kMaxAttributes];
      if (config.numAttrs) std::memcpy(attributes, config.attrs, config.numAttrs * sizeof(CUlaunchAttribute));
      CUlaunchConfig c{};
      c.gridDimX = config.gridDim.x;
      c.gridDimY = config.gridDim.y;
      c.gridDimZ = config.gridDim.z;
      c.blockDimX = config.blockDim.x;
      c.blockDimY = config.blockDim.y;
      c.blockDimZ = config.blockDim.z;
      c.sharedMemBytes = unsigned(config.dynamicSmemBytes);
      c.hStream = config.stream;
      c.attrs = attributes;
      c.numAttrs = config.numAttrs;
      if (driver::entries().launch(&c, function, args, nullptr) == CUDA_SUCCESS) return cudaSuccess;
    }
  }
  return cudaLaunchKernelExC(&config, kernel, args);
}

// A kernel's arguments as a launch takes them: converted to the kernel's parameter types, as a <<<>>>
// launch converts them, and a pointer to each in order (one slot more, for a kernel of none).
template <class... Params>
class KernelArguments {
 public:
  template <class... Args>
  explicit KernelArguments(Args&&... args) : values_(std::forward<Args>(args)...) {
    static_assert(sizeof...(Params) == sizeof...(Args), "one argument per kernel parameter");
    std::apply([this](auto&... value) { pointers_ = {static_cast<void*>(&value)...}; }, values_);
  }
  KernelArguments(const KernelArguments&) = delete;  // the pointers point into this object
  KernelArguments& operator=(const KernelArguments&) = delete;

  void** pointers() { return pointers_.data(); }

 private:
  std::tuple<std::remove_cv_t<Params>...> values_;
  std::array<void*, sizeof...(Params) + 1> pointers_{};
};

// kernel<<<config>>>(args...) through launch_kernel; the launch's own error, where <<<>>> then
// cudaGetLastError() would also report (and clear) an earlier one.
template <class... Params, class... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), const cudaLaunchConfig_t& config, Args&&... args) {
  KernelArguments<Params...> arguments(std::forward<Args>(args)...);
  return launch_kernel(reinterpret_cast<const void*>(kernel), config, arguments.pointers());
}

}  // namespace cuforge_kernel
