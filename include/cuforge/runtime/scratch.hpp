// Device scratch memory for one launch (stream-K partials, split-K slices, the zeros of a K = 0
// product), held from before the launch until it has been queued.
//
// Outside CUDA graph capture it comes from a buffer kept per device and stream, grown on demand
// with stream-ordered allocations (so an old buffer is freed only after the work queued on its
// stream), and locked while held: two host threads sharing a stream never hand one buffer to two
// launches at once. While the stream is being captured it is a stream-ordered allocation of the
// graph's own, allocated and freed by nodes of the graph (every replay gets its memory).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>

namespace cuforge::runtime {

class Scratch {
 public:
  Scratch(int device, cudaStream_t stream, size_t bytes);  // throws DeviceError
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
  bool captured_ = false;            // a graph's allocation, freed by a node of the graph
  std::unique_lock<std::mutex> hold_;  // the pool buffer's, while held
};

}  // namespace cuforge::runtime
