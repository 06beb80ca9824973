// A loaded grouped GEMM kernel: the grouped C ABI of cuforge/abi.h behind a GroupedProblem
// (core/grouped_problem.hpp). The list form's group descriptors are written to the device on the
// run's stream; the offsets form needs none (the kernel library cuts the groups on the device).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "cuforge/abi.h"
#include "cuforge/core/grouped_problem.hpp"
#include "cuforge/runtime/kernel_library.hpp"

namespace cuforge::runtime {

class GroupedGemmKernel {
 public:
  static std::shared_ptr<const GroupedGemmKernel> load(const std::filesystem::path& path);

  const std::string& name() const { return library_->name(); }
  bool can_implement(const GroupedProblem& problem, const GemmLaunch& launch) const;
  // Device memory a run needs: the list form's descriptors and the kernel's own workspace.
  size_t workspace_size(const GroupedProblem& problem, const GemmLaunch& launch) const;
  // Writes the list form's descriptors at the start of the workspace (one copy on the stream,
  // runtime/upload.hpp), then launches. Throws DeviceError if the kernel refuses or the launch fails.
  void run(const GroupedProblem& problem, const GemmLaunch& launch, void* workspace, size_t workspace_bytes,
           cudaStream_t stream) const;

 private:
  std::shared_ptr<const KernelLibrary> library_;
  decltype(&cuforge_grouped_can_implement) can_implement_ = nullptr;
  decltype(&cuforge_grouped_workspace_size) workspace_size_ = nullptr;
  decltype(&cuforge_grouped_run) run_ = nullptr;
};

}  // namespace cuforge::runtime
