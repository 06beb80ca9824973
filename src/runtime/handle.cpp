#include "cuforge/runtime/handle.hpp"

#include <map>
#include <mutex>
#include <vector>

#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {
namespace {

// Events are reused: creating one costs more than the rest of a small run's host work.
class EventPool {
 public:
  cudaEvent_t take(int device) {
    {
      std::lock_guard lock(mutex_);
      auto& free = free_[device];
      if (!free.empty()) {
        cudaEvent_t e = free.back();
        free.pop_back();
        return e;
      }
    }
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    return e;
  }
  void give(int device, cudaEvent_t e) {
    std::lock_guard lock(mutex_);
    free_[device].push_back(e);
  }

 private:
  std::mutex mutex_;
  std::map<int, std::vector<cudaEvent_t>> free_;
};

EventPool& event_pool() {
  static auto* pool = new EventPool();  // never destroyed: handles may outlive static teardown
  return *pool;
}

}  // namespace

struct RunHandle::State {
  int device = 0;
  cudaEvent_t event = nullptr;
  std::function<void()> on_complete;
  ~State() {
    if (event) event_pool().give(device, event);
  }
};

RunHandle RunHandle::record(int device, cudaStream_t stream, std::function<void()> on_complete) {
  // A run captured into a CUDA graph happens when the graph is replayed: there is nothing to wait for.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone) return RunHandle();
  RunHandle h;
  h.state_ = std::make_shared<State>();
  h.state_->device = device;
  h.state_->event = event_pool().take(device);
  check(cudaEventRecord(h.state_->event, stream), "cudaEventRecord");
  h.state_->on_complete = std::move(on_complete);
  return h;
}

void RunHandle::sync() {
  if (!state_) return;
  check(cudaEventSynchronize(state_->event), "waiting for the GEMM to finish");
  if (auto f = std::move(state_->on_complete)) {
    state_->on_complete = nullptr;
    f();
  }
}

bool RunHandle::done() const {
  if (!state_) return true;
  const cudaError_t status = cudaEventQuery(state_->event);
  if (status == cudaErrorNotReady) return false;
  check(status, "asking whether the GEMM has finished");  // a failed run raises, never reads as running
  return true;
}

}  // namespace cuforge::runtime
