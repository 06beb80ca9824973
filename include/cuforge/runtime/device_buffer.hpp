// A device copy of a host array (NumPy) for one run, or a profiler's operand: allocated on the run's
// stream and freed on it (stream-ordered: after the work queued there before the free), so that no two
// runs share one and none is freed under a kernel still reading it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cuforge::runtime {

class DeviceBuffer {
 public:
  // `bytes` on `device` (made current, as the run it serves makes it), ordered on `stream`.
  DeviceBuffer(int device, size_t bytes, cudaStream_t stream);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  // Queued on the buffer's stream. A copy into pageable host memory returns once done (CUDA's rule).
  void copy_from_host(const void* host, size_t bytes);
  void copy_to_host(void* host, size_t bytes) const;

 private:
  void* data_ = nullptr;
  int device_;
  cudaStream_t stream_;
};

}  // namespace cuforge::runtime
