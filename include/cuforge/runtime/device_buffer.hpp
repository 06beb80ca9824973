// An owned device allocation that host arrays (NumPy) are staged through. Reused across runs of
// a plan: it grows only when a larger operand arrives.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cuforge::runtime {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Makes room for `bytes` on `device` (reallocating only to grow) and returns the pointer.
  void* reserve(int device, size_t bytes);
  void* data() const { return data_; }
  void copy_from_host(const void* host, size_t bytes, cudaStream_t stream);
  void copy_to_host(void* host, size_t bytes, cudaStream_t stream) const;

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  int device_ = -1;
};

}  // namespace cuforge::runtime
