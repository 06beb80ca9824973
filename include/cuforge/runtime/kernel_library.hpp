// A compiled kernel library loaded into the process (dlopen) with its ABI version checked; the
// entry points of each operation are looked up by name (gemm_kernel.hpp).
#pragma once

#include <filesystem>
#include <memory>
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

  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

 private:
  KernelLibrary() = default;
  void* handle_ = nullptr;
  std::filesystem::path path_;
  std::string name_;
};

}  // namespace cuforge::runtime
