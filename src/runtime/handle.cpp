#include "cuforge/runtime/handle.hpp"

#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {

struct RunHandle::State {
  cudaEvent_t event = nullptr;
  std::function<void()> on_complete;
  ~State() {
    if (event) cudaEventDestroy(event);
  }
};

RunHandle RunHandle::record(cudaStream_t stream, std::function<void()> on_complete) {
  RunHandle h;
  h.state_ = std::make_shared<State>();
  check(cudaEventCreateWithFlags(&h.state_->event, cudaEventDisableTiming), "cudaEventCreate");
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
  return cudaEventQuery(state_->event) == cudaSuccess;
}

}  // namespace cuforge::runtime
