#include "cuforge/runtime/device_buffer.hpp"

#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_);
}

void* DeviceBuffer::reserve(int device, size_t bytes) {
  // The run's device made current (as the run itself makes it): the allocation and the copy queued on the
  // stream next (its legacy default stream is the current device's) are then that device's.
  use_device(device);  // a clear error when there is no GPU or no such device
  if (data_ && bytes <= bytes_ && device == device_) return data_;
  if (data_) {
    check(cudaFree(data_), "cudaFree(staging buffer)");
    data_ = nullptr;
  }
  check(cudaMalloc(&data_, bytes ? bytes : 1), "allocating a device copy of a host array");
  bytes_ = bytes;
  device_ = device;
  return data_;
}

void DeviceBuffer::copy_from_host(const void* host, size_t bytes, cudaStream_t stream) {
  check(cudaMemcpyAsync(data_, host, bytes, cudaMemcpyHostToDevice, stream), "copying a host array to the GPU");
}

void DeviceBuffer::copy_to_host(void* host, size_t bytes, cudaStream_t stream) const {
  check(cudaMemcpyAsync(host, data_, bytes, cudaMemcpyDeviceToHost, stream), "copying D back to the host");
}

}  // namespace cuforge::runtime
