#include "cuforge/runtime/workspace.hpp"

#include <map>
#include <mutex>
#include <utility>

#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {
namespace {

struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
};

}  // namespace

void* workspace(int device, cudaStream_t stream, size_t bytes) {
  if (bytes == 0) return nullptr;
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, Buffer> pool;  // lives as long as the process
  std::lock_guard lock(mutex);
  Buffer& b = pool[{device, stream}];
  if (b.bytes < bytes) {
    if (b.data) {
      // The old buffer may still be read by work queued on this stream.
      check(cudaStreamSynchronize(stream), "synchronizing before growing the workspace");
      check(cudaFree(b.data), "cudaFree(workspace)");
      b = {};
    }
    size_t grown = bytes + bytes / 2;  // headroom so that slowly growing problems settle quickly
    check(cudaMalloc(&b.data, grown), "allocating the kernel workspace");
    b.bytes = grown;
  }
  return b.data;
}

}  // namespace cuforge::runtime
