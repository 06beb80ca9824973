// The result of an asynchronous run: an event recorded on the run's stream after its kernel.
// sync() waits for that run only, not for the whole device.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>

namespace cuforge::runtime {

class RunHandle {
 public:
  RunHandle() = default;  // a run that needed no GPU work: already complete

  // Records an event on the stream; `on_complete` (e.g. a copy back to host memory) runs once
  // in sync(), after the event. On a stream being captured into a CUDA graph, records nothing:
  // the run happens when the graph is replayed, and sync() returns at once.
  static RunHandle record(int device, cudaStream_t stream, std::function<void()> on_complete = {});

  void sync();
  bool done() const;  // true once the run finished on the GPU (never blocks); throws if it failed

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace cuforge::runtime
