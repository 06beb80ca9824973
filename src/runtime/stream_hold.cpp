#include "cuforge/runtime/stream_hold.hpp"

#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {

StreamHold::StreamHold(cudaStream_t stream, std::chrono::milliseconds limit) : stream_(stream), limit_(limit) {
  check(cudaLaunchHostFunc(stream, &StreamHold::wait, this), "holding the stream (cudaLaunchHostFunc)");
}

StreamHold::~StreamHold() {
  if (waited_) return;  // release() has let the stream go and waited for it
  let_go();
  cudaStreamSynchronize(stream_);
}

void StreamHold::let_go() {
  {
    std::lock_guard lock(mutex_);
    released_ = true;
  }
  released_cv_.notify_all();
}

bool StreamHold::release() {
  let_go();
  check(cudaStreamSynchronize(stream_), "waiting for a held stream");
  waited_ = true;
  std::lock_guard lock(mutex_);
  return !expired_;
}

void CUDART_CB StreamHold::wait(void* self) {
  auto* h = static_cast<StreamHold*>(self);
  std::unique_lock lock(h->mutex_);
  if (!h->released_cv_.wait_for(lock, h->limit_, [h] { return h->released_; })) h->expired_ = true;
}

}  // namespace cuforge::runtime
