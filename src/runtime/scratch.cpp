#include "cuforge/runtime/scratch.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <thread>
#include <tuple>
#include <utility>

#include "cuforge/core/error.hpp"
#include "cuforge/core/log.hpp"
#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {
namespace {

constexpr uintptr_t kAlignment = 256;  // what the launches assume of a workspace

struct Buffer {
  std::mutex in_use;
  void* data = nullptr;
  size_t bytes = 0;
  unsigned long long stream_id = 0;  // cudaStreamGetId of the stream that used it last (ids are never reused)
};

std::atomic<size_t> g_pooled_bytes{0};

// One buffer per (device, stream handle), for the life of the process. cudaStreamPerThread names another
// stream in every thread: its buffers are per thread too. A handle (or a thread's id) may be reused by
// another stream once the first is destroyed (or its thread has exited), with its runs perhaps still
// queued: the buffer's stream id tells (Scratch waits for the device before such a buffer changes hands).
Buffer& buffer_of(int device, cudaStream_t stream) {
  static std::mutex mutex;
  static std::map<std::tuple<int, cudaStream_t, std::thread::id>, std::unique_ptr<Buffer>> pool;
  std::lock_guard lock(mutex);
  const std::thread::id thread = stream == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id();
  auto& b = pool[{device, stream, thread}];
  if (!b) b = std::make_unique<Buffer>();
  return *b;
}

std::mutex g_allocator_mutex;
std::shared_ptr<const WorkspaceAllocator> g_allocator;  // copied out under the lock, called outside it

std::shared_ptr<const WorkspaceAllocator> workspace_allocator() {
  std::lock_guard lock(g_allocator_mutex);
  return g_allocator;
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream, &status), "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

void set_workspace_allocator(std::shared_ptr<const WorkspaceAllocator> allocator) {
  std::lock_guard lock(g_allocator_mutex);
  g_allocator = std::move(allocator);
}

size_t Scratch::pooled_bytes() { return g_pooled_bytes; }

Scratch::Scratch(int device, cudaStream_t stream, size_t bytes) : bytes_(bytes), device_(device), stream_(stream) {
  if (bytes == 0) return;
  if (capturing(stream)) {  // never another allocator's: the memory must be a node of the graph
    check(cudaMallocAsync(&data_, bytes, stream), "allocating the kernel workspace in the captured graph");
    captured_ = true;
    return;
  }
  if (auto allocator = bytes > kPooledWorkspaceBytes ? workspace_allocator() : nullptr) {
    data_ = allocator->allocate(device, bytes, stream);
    if (data_ && reinterpret_cast<uintptr_t>(data_) % kAlignment != 0) {
      allocator->free(data_, device, bytes, stream);
      throw DeviceError(fmt::format("the workspace allocator returned {} for {} bytes: expected an address aligned "
                                    "to {} bytes", data_, bytes, kAlignment));
    }
    if (data_) {
      allocator_ = std::move(allocator);
      return;
    }
  }
  unsigned long long stream_id = 0;
  check(cudaStreamGetId(stream, &stream_id), "cudaStreamGetId");
  Buffer& b = buffer_of(device, stream);
  hold_ = std::unique_lock(b.in_use);
  if (b.data && b.stream_id != stream_id)  // rare: no stream orders this one after the last user's runs
    check(cudaDeviceSynchronize(), "waiting for the runs of a destroyed stream that shared this stream's handle");
  b.stream_id = stream_id;
  if (b.bytes < bytes) {
    if (b.data) check(cudaFreeAsync(b.data, stream), "freeing the outgrown kernel workspace");
    g_pooled_bytes -= b.bytes;
    b.data = nullptr;
    b.bytes = 0;
    size_t grown = bytes + bytes / 2;  // headroom so that slowly growing problems settle quickly
    check(cudaMallocAsync(&b.data, grown, stream), "allocating the kernel workspace");
    b.bytes = grown;
    g_pooled_bytes += grown;
  }
  data_ = b.data;
}

Scratch::~Scratch() {
  if (captured_) cudaFreeAsync(data_, stream_);  // a node of the graph: freed after the launch in every replay
  if (!allocator_) return;
  try {
    allocator_->free(data_, device_, bytes_, stream_);
  } catch (const std::exception& e) {  // a destructor cannot raise: the memory stays the allocator's
    log(LogLevel::warning, fmt::format("giving a kernel workspace of {} bytes back failed: {}", bytes_, e.what()));
  }
}

}  // namespace cuforge::runtime
