// A compiled kernel library loaded into the process: its C ABI entry points, resolved once.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "cuforge/abi.h"
#include "cuforge/compile/cache.hpp"

namespace cuforge::runtime {

class GemmModule {
 public:
  // Loads the entry's library, or returns the copy already loaded for its key.
  static std::shared_ptr<const GemmModule> load(const compile::CacheEntry& entry);

  const std::string& name() const { return name_; }
  bool can_implement(const cuforge_gemm_arguments& args) const { return can_implement_(&args) == 0; }
  size_t workspace_size(const cuforge_gemm_arguments& args) const { return workspace_size_(&args); }
  // Launches on the stream; throws DeviceError if the kernel refuses or the launch fails.
  void run(const cuforge_gemm_arguments& args, void* workspace, size_t workspace_bytes, cudaStream_t stream) const;

  ~GemmModule();
  GemmModule(const GemmModule&) = delete;
  GemmModule& operator=(const GemmModule&) = delete;

 private:
  GemmModule() = default;
  void* handle_ = nullptr;
  std::string name_;
  decltype(&cuforge_gemm_can_implement) can_implement_ = nullptr;
  decltype(&cuforge_gemm_workspace_size) workspace_size_ = nullptr;
  decltype(&cuforge_gemm_run) run_ = nullptr;
};

}  // namespace cuforge::runtime
