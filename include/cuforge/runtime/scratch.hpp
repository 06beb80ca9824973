// Device scratch memory for one launch (stream-K partials, split-K slices, the zeros of a K = 0
// product), held from before the launch until it has been queued.
//
// While the stream is being captured it is a stream-ordered allocation of the graph's own,
// allocated and freed by nodes of the graph (every replay gets its memory). Otherwise a workspace
// of more than kPooledWorkspaceBytes comes from the workspace allocator a front end installed
// (Python: torch's caching allocator, an RMM pool); smaller ones (a grouped run's arrays, CUTLASS's
// tensor maps), and every one where none is installed, from cuforge's pool: a buffer kept per device
// and stream (and thread, for cudaStreamPerThread), grown on demand with stream-ordered allocations
// (so an old buffer is freed only after the work queued on its stream), and locked while held: two
// host threads sharing a stream never hand one buffer to two launches at once.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

namespace cuforge::runtime {

// Another owner of workspace memory, so that a process keeps one pool of device memory. Both calls
// are stream-ordered, as torch's caching allocator and RMM are for the stream an allocation was
// made on: `free` is called once the launch is queued, and the memory may be handed out again only
// to work queued after it on `stream`. They are called with `device` current. `allocate` returns
// null to leave this workspace to cuforge's pool, and throws DeviceError when it cannot allocate.
struct WorkspaceAllocator {
  std::function<void*(int device, size_t bytes, cudaStream_t stream)> allocate;
  std::function<void(void* data, int device, size_t bytes, cudaStream_t stream)> free;
};

// Workspaces up to this size always come from cuforge's pool: a front end's allocator costs a
// call into Python each way (13 µs of a grouped run's host time on the H200), and a buffer this
// small per stream is not worth sharing.
inline constexpr size_t kPooledWorkspaceBytes = size_t(256) << 10;

// The allocator of later workspaces larger than kPooledWorkspaceBytes (null: cuforge's pool). A
// workspace already held goes back to the allocator that gave it.
void set_workspace_allocator(std::shared_ptr<const WorkspaceAllocator> allocator);

class Scratch {
 public:
  Scratch(int device, cudaStream_t stream, size_t bytes);  // throws DeviceError
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

  // Bytes cuforge's pool holds now, over every device and stream.
  static size_t pooled_bytes();

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  bool captured_ = false;                                // a graph's allocation, freed by a node of the graph
  std::shared_ptr<const WorkspaceAllocator> allocator_;  // the allocator's memory, given back to it
  std::unique_lock<std::mutex> hold_;                    // the pool buffer's, while held
};

}  // namespace cuforge::runtime
