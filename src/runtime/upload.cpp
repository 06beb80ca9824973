#include "cuforge/runtime/upload.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "cuforge/core/error.hpp"
#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {
namespace {

// Pinned buffers per (device, stream), used in turn. A run finding the next one still in flight
// (its copy queued behind the stream's earlier work) adds another rather than wait, up to
// kMaxSlots; only a stream that far behind makes the host wait.
struct Ring {
  static constexpr size_t kMaxSlots = 64;
  struct Slot {
    void* host = nullptr;
    size_t bytes = 0;
    cudaEvent_t copied = nullptr;  // recorded after the slot's last copy
  };
  std::mutex mutex;
  std::vector<Slot> slots = std::vector<Slot>(1);
  size_t next = 0;
  // Buffers a slot outgrew, kept for the life of the process: cudaFreeHost may wait for the whole
  // device, which a run must not. Each slot at least doubles, so these hold less than the slots do.
  std::vector<void*> outgrown;
};

Ring& ring_of(int device, cudaStream_t stream) {
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, std::unique_ptr<Ring>> rings;  // for the life of the process
  std::lock_guard lock(mutex);
  auto& r = rings[{device, stream}];
  if (!r) r = std::make_unique<Ring>();
  return *r;
}

}  // namespace

void upload(int device, cudaStream_t stream, const void* host, size_t bytes, void* device_destination) {
  if (bytes == 0) return;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone)
    throw InvalidArgumentError("a run whose group sizes are host data (the list form) cannot be captured into a CUDA "
                               "graph: capture the offsets form, whose sizes stay on the device");
  Ring& ring = ring_of(device, stream);
  std::lock_guard lock(ring.mutex);
  if (Ring::Slot& next = ring.slots[ring.next]; next.copied && ring.slots.size() < Ring::kMaxSlots) {
    const cudaError_t status = cudaEventQuery(next.copied);
    if (status == cudaErrorNotReady)
      ring.slots.insert(ring.slots.begin() + std::ptrdiff_t(ring.next), Ring::Slot{});
    else
      check(status, "cudaEventQuery");
  }
  Ring::Slot& slot = ring.slots[ring.next];
  ring.next = (ring.next + 1) % ring.slots.size();
  if (slot.copied) check(cudaEventSynchronize(slot.copied), "waiting for a staging buffer");
  if (slot.bytes < bytes) {
    size_t grown = bytes * 2;  // and as large as the ring's largest, so that the slots settle at once
    for (const Ring::Slot& other : ring.slots) grown = std::max(grown, other.bytes);
    void* host_buffer = nullptr;
    check(cudaMallocHost(&host_buffer, grown), "allocating pinned staging memory");
    if (slot.host) ring.outgrown.push_back(slot.host);
    slot.host = host_buffer;
    slot.bytes = grown;
  }
  if (!slot.copied) check(cudaEventCreateWithFlags(&slot.copied, cudaEventDisableTiming), "cudaEventCreate");
  std::memcpy(slot.host, host, bytes);
  check(cudaMemcpyAsync(device_destination, slot.host, bytes, cudaMemcpyHostToDevice, stream), "copying to the GPU");
  check(cudaEventRecord(slot.copied, stream), "cudaEventRecord");
}

}  // namespace cuforge::runtime
