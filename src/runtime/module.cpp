#include "cuforge/runtime/module.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "cuforge/core/error.hpp"

namespace cuforge::runtime {

std::shared_ptr<const GemmModule> GemmModule::load(const compile::CacheEntry& entry) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const GemmModule>> loaded;  // kept for the process
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(entry.key); it != loaded.end()) return it->second;

  std::shared_ptr<GemmModule> m(new GemmModule());
  std::string path = entry.library().string();
  m->handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle_)
    throw DeviceError(fmt::format("cannot load the kernel library {}: {}", path, ::dlerror()));
  auto symbol = [&](const char* name) {
    void* s = ::dlsym(m->handle_, name);
    if (!s) throw DeviceError(fmt::format("the kernel library {} lacks {}", path, name));
    return s;
  };
  auto abi_version = reinterpret_cast<decltype(&cuforge_abi_version)>(symbol("cuforge_abi_version"));
  if (abi_version() != CUFORGE_ABI_VERSION)
    throw DeviceError(fmt::format("the kernel library {} has ABI version {}, expected {}", path, abi_version(),
                                  CUFORGE_ABI_VERSION));
  m->name_ = reinterpret_cast<decltype(&cuforge_kernel_name)>(symbol("cuforge_kernel_name"))();
  m->can_implement_ = reinterpret_cast<decltype(m->can_implement_)>(symbol("cuforge_gemm_can_implement"));
  m->workspace_size_ = reinterpret_cast<decltype(m->workspace_size_)>(symbol("cuforge_gemm_workspace_size"));
  m->run_ = reinterpret_cast<decltype(m->run_)>(symbol("cuforge_gemm_run"));
  loaded.emplace(entry.key, m);
  return m;
}

GemmModule::~GemmModule() {
  if (handle_) ::dlclose(handle_);
}

void GemmModule::run(const cuforge_gemm_arguments& args, void* workspace, size_t workspace_bytes,
                     cudaStream_t stream) const {
  int status = run_(&args, workspace, workspace_bytes, stream);
  if (status == CUFORGE_STATUS_SUCCESS) return;
  cudaError_t last = cudaGetLastError();
  const char* why = status == CUFORGE_STATUS_NOT_SUPPORTED        ? "the kernel cannot run this problem"
                    : status == CUFORGE_STATUS_WORKSPACE_TOO_SMALL ? "the workspace is too small"
                                                                   : "the launch failed";
  throw DeviceError(fmt::format("{}: {} (last CUDA error: {})", name_, why, cudaGetErrorString(last)));
}

}  // namespace cuforge::runtime
