// A loaded GEMM kernel: the C ABI of cuforge/abi.h behind a problem (core/gemm_problem.hpp) and
// how it is launched. The ABI struct exists only at this boundary.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "cuforge/abi.h"
#include "cuforge/core/gemm_problem.hpp"
#include "cuforge/runtime/kernel_library.hpp"

namespace cuforge::runtime {

class GemmKernel {
 public:
  // The kernel of the library at `path` (loaded once per process).
  static std::shared_ptr<const GemmKernel> load(const std::filesystem::path& path);

  const std::string& name() const { return library_->name(); }
  bool can_implement(const GemmProblem& problem, const GemmLaunch& launch) const;
  // Bytes of device scratch memory the launch needs; throws DeviceError when the kernel refuses.
  size_t workspace_size(const GemmProblem& problem, const GemmLaunch& launch) const;
  // Launches on the stream; throws DeviceError if the kernel refuses or the launch fails.
  void run(const GemmProblem& problem, const GemmLaunch& launch, void* workspace, size_t workspace_bytes,
           cudaStream_t stream) const;

 private:
  std::shared_ptr<const KernelLibrary> library_;
  decltype(&cuforge_gemm_can_implement) can_implement_ = nullptr;
  decltype(&cuforge_gemm_workspace_size) workspace_size_ = nullptr;
  decltype(&cuforge_gemm_run) run_ = nullptr;
};

}  // namespace cuforge::runtime
