#include "cuforge/runtime/kernel_library.hpp"

#include <dlfcn.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "cuforge/abi.h"
#include "cuforge/core/error.hpp"

namespace cuforge::runtime {

std::shared_ptr<const KernelLibrary> KernelLibrary::load(const std::filesystem::path& path) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::shared_ptr<const KernelLibrary>> loaded;  // kept for the process
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;

  std::shared_ptr<KernelLibrary> library(new KernelLibrary());
  library->path_ = path;
  library->handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library->handle_)
    throw DeviceError(fmt::format("cannot load the kernel library {}: {}", path.string(), ::dlerror()));
  auto abi_version = reinterpret_cast<decltype(&cuforge_abi_version)>(library->entry("cuforge_abi_version"));
  if (abi_version() != CUFORGE_ABI_VERSION)
    throw DeviceError(fmt::format("the kernel library {} has ABI version {}, expected {}", path.string(),
                                  abi_version(), CUFORGE_ABI_VERSION));
  library->name_ = reinterpret_cast<decltype(&cuforge_kernel_name)>(library->entry("cuforge_kernel_name"))();
  library->last_cuda_error_ =
      reinterpret_cast<decltype(&cuforge_last_cuda_error)>(library->entry("cuforge_last_cuda_error"));
  loaded.emplace(path, library);
  return library;
}

void* KernelLibrary::entry(const char* symbol) const {
  void* s = ::dlsym(handle_, symbol);
  if (!s) throw DeviceError(fmt::format("the kernel library {} lacks {}", path_.string(), symbol));
  return s;
}

void KernelLibrary::check(int status) const {
  if (status == CUFORGE_STATUS_SUCCESS) return;  // every run's: nothing made for it
  std::string words = "the kernel library failed inside (an exception in CUTLASS's host code)";
  switch (status) {
    case CUFORGE_STATUS_NOT_SUPPORTED: words = "the kernel cannot run this problem"; break;
    case CUFORGE_STATUS_WORKSPACE_TOO_SMALL: words = "the workspace is too small"; break;
    // The library links its own CUDA runtime (nvcc's static default), whose last error this process's
    // cudaGetLastError() does not read: the library keeps its launch's error for cuforge_last_cuda_error.
    case CUFORGE_STATUS_LAUNCH_FAILED:
      if (const auto error = cudaError_t(last_cuda_error_()); error != cudaSuccess)
        words = fmt::format("a CUDA launch failed: {} ({})", cudaGetErrorName(error), cudaGetErrorString(error));
      else
        words = "a CUDA launch failed (CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer name the error)";
      break;
  }
  throw DeviceError(fmt::format("{}: {}", name_, words));
}

KernelLibrary::~KernelLibrary() {
  if (handle_) ::dlclose(handle_);
}

}  // namespace cuforge::runtime
