#include "cuforge/runtime/scratch.hpp"

#include <map>
#include <memory>
#include <utility>

#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {
namespace {

struct Buffer {
  std::mutex in_use;
  void* data = nullptr;
  size_t bytes = 0;
};

// One buffer per (device, stream), for the life of the process.
Buffer& buffer_of(int device, cudaStream_t stream) {
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, std::unique_ptr<Buffer>> pool;
  std::lock_guard lock(mutex);
  auto& b = pool[{device, stream}];
  if (!b) b = std::make_unique<Buffer>();
  return *b;
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream, &status), "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

Scratch::Scratch(int device, cudaStream_t stream, size_t bytes) : bytes_(bytes), stream_(stream) {
  if (bytes == 0) return;
  if (capturing(stream)) {
    check(cudaMallocAsync(&data_, bytes, stream), "allocating the kernel workspace in the captured graph");
    captured_ = true;
    return;
  }
  Buffer& b = buffer_of(device, stream);
  hold_ = std::unique_lock(b.in_use);
  if (b.bytes < bytes) {
    if (b.data) check(cudaFreeAsync(b.data, stream), "freeing the outgrown kernel workspace");
    b.data = nullptr;
    b.bytes = 0;
    size_t grown = bytes + bytes / 2;  // headroom so that slowly growing problems settle quickly
    check(cudaMallocAsync(&b.data, grown, stream), "allocating the kernel workspace");
    b.bytes = grown;
  }
  data_ = b.data;
}

Scratch::~Scratch() {
  if (captured_) cudaFreeAsync(data_, stream_);  // a node of the graph: freed after the launch in every replay
}

}  // namespace cuforge::runtime
