// The GPUs of this process: queried once per device, then read from memory.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace cuforge::runtime {

struct DeviceInfo {
  int ordinal = 0;
  int cc = 0;  // compute capability as major * 10 + minor
  int sm_count = 0;
  std::string name;
};

// Number of usable CUDA devices; 0 when there is no GPU or no driver.
int device_count();

// The CUDA version the installed driver supports, as major * 1000 + minor * 10 (13000 for 13.0);
// 0 when there is no driver.
int driver_cuda_version();

// CUTLASS_CUDA_DEVICE_ID if set, else the calling thread's current device.
int default_device();

// The compute capability kernels are built for when none is given: the default device's, or 90
// (the H100/H200 family) on a machine without a GPU.
int default_target_cc();

// Throws DeviceError naming the device when it does not exist.
const DeviceInfo& device_info(int ordinal);

// Makes `ordinal` the calling thread's current device (after checking that it exists); throws
// DeviceError when there is no GPU or no such device.
void use_device(int ordinal);

// Throws DeviceError("<what>: <CUDA's message>") unless status is cudaSuccess.
void check(cudaError_t status, const char* what);

}  // namespace cuforge::runtime
