// A compiled kernel library loaded into the process (dlopen) with its ABI version checked; the
// entry points of each operation are looked up by name (gemm_kernel.hpp, grouped_kernel.hpp,
// conv_kernel.hpp).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace cuforge::runtime {

class KernelLibrary {
 public:
  // Loads the library at `path`, or returns the copy this process already loaded from there.
  // Throws DeviceError naming the library when it cannot be loaded or has another ABI version.
  static std::shared_ptr<const KernelLibrary> load(const std::filesystem::path& path);

  const std::string& name() const { return name_; }  // the kernel's, as it reports it
  const std::filesystem::path& path() const { return path_; }
  // The entry point `symbol`; throws DeviceError when the library lacks it.
  void* entry(const char* symbol) const;
  template <class Function>
  Function entry(const char* symbol) const {
    return reinterpret_cast<Function>(entry(symbol));
  }
  // Returns on CUFORGE_STATUS_SUCCESS; else throws DeviceError naming the kernel and what the
  // status means.
  void check(int status) const;

  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

 private:
  KernelLibrary() = default;
  void* handle_ = nullptr;
  std::filesystem::path path_;
  std::string name_;
  int (*last_cuda_error_)() = nullptr;  // cuforge_last_cuda_error
};

// The kernel object (GemmKernel, GroupedGemmKernel, ConvKernel) of the library at `path`, made by
// `make` from the loaded library once per process.
template <class Kernel, class Make>
std::shared_ptr<const Kernel> load_kernel(const std::filesystem::path& path, Make make) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::shared_ptr<const Kernel>> kernels;
  std::lock_guard lock(mutex);
  auto& kernel = kernels[path];
  if (!kernel) kernel = make(KernelLibrary::load(path));
  return kernel;
}

}  // namespace cuforge::runtime
