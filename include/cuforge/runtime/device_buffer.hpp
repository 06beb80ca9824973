// An owned device allocation that host arrays (NumPy) are staged through, or that holds a plan's
// zero operands. Reused across runs of a plan: it grows only when a larger one is needed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace cuforge::runtime {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    swap(o);
    return *this;
  }

  // Makes room for `bytes` on `device` (reallocating only to grow) and returns the pointer.
  void* reserve(int device, size_t bytes);
  void* data() const { return data_; }
  void copy_from_host(const void* host, size_t bytes, cudaStream_t stream);
  void copy_to_host(void* host, size_t bytes, cudaStream_t stream) const;

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    std::swap(device_, o.device_);
  }

  void* data_ = nullptr;
  size_t bytes_ = 0;
  int device_ = -1;
};

}  // namespace cuforge::runtime
