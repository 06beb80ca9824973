// A loaded convolution kernel: the convolution C ABI of cuforge/abi.h behind a ConvProblem
// (core/conv_problem.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "cuforge/abi.h"
#include "cuforge/core/conv_problem.hpp"
#include "cuforge/runtime/kernel_library.hpp"

namespace cuforge::runtime {

class ConvKernel {
 public:
  static std::shared_ptr<const ConvKernel> load(const std::filesystem::path& path);

  const std::string& name() const { return library_->name(); }
  bool can_implement(const ConvProblem& problem, const GemmLaunch& launch) const;
  // Bytes of device scratch memory a run needs (serial split-K's semaphores); throws DeviceError
  // when the kernel refuses.
  size_t workspace_size(const ConvProblem& problem, const GemmLaunch& launch) const;
  // Launches on the stream; throws DeviceError if the kernel refuses or the launch fails.
  void run(const ConvProblem& problem, const GemmLaunch& launch, void* workspace, size_t workspace_bytes,
           cudaStream_t stream) const;

 private:
  std::shared_ptr<const KernelLibrary> library_;
  decltype(&cuforge_conv2d_can_implement) can_implement_ = nullptr;
  decltype(&cuforge_conv2d_workspace_size) workspace_size_ = nullptr;
  decltype(&cuforge_conv2d_run) run_ = nullptr;
};

}  // namespace cuforge::runtime
