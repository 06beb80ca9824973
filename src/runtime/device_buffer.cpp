#include "cuforge/runtime/device_buffer.hpp"

#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {

DeviceBuffer::DeviceBuffer(int device, size_t bytes, cudaStream_t stream) : device_(device), stream_(stream) {
  // The legacy default stream (0) is the current device's: the run's device made current first.
  use_device(device);  // a clear error when there is no GPU or no such device
  check(cudaMallocAsync(&data_, bytes ? bytes : 1, stream), "allocating a device copy of a host array");
}

DeviceBuffer::~DeviceBuffer() {
  // On the buffer's device (its legacy stream is that device's), the caller's current device kept.
  int current = device_;
  cudaGetDevice(&current);
  if (current != device_) cudaSetDevice(device_);
  cudaFreeAsync(data_, stream_);  // a destructor cannot raise: a failure leaves the memory to the pool
  if (current != device_) cudaSetDevice(current);
}

void DeviceBuffer::copy_from_host(const void* host, size_t bytes) {
  check(cudaMemcpyAsync(data_, host, bytes, cudaMemcpyHostToDevice, stream_), "copying a host array to the GPU");
}

void DeviceBuffer::copy_to_host(void* host, size_t bytes) const {
  check(cudaMemcpyAsync(host, data_, bytes, cudaMemcpyDeviceToHost, stream_), "copying D back to the host");
}

}  // namespace cuforge::runtime
