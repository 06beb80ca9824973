// Holding a stream: a host function queued on it waits until release() (or a time limit), so that
// the work queued behind it meanwhile is launched but does not run. runtime::time_launches times
// the GPU on launches queued so, with no host time between them; bench/host_overhead.cpp times the
// host's calls so, with no kernel running beside them.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace cuforge::runtime {

class StreamHold {
 public:
  // The limit bounds the wait of a call that waits for the held stream itself (a full launch
  // queue, a staging buffer still in use, a synchronizing copy). Throws DeviceError when the host
  // function cannot be queued.
  explicit StreamHold(cudaStream_t stream, std::chrono::milliseconds limit = std::chrono::milliseconds(100));
  ~StreamHold();  // unless release() did: releases the stream and waits for it (its host function reads *this)
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;

  // Lets the stream go on and waits for all that is queued on it. Whether the stream was held until
  // now (false: the limit ran out first). Throws DeviceError when the stream reports an error.
  bool release();

 private:
  static void CUDART_CB wait(void* self);
  void let_go();

  cudaStream_t stream_;
  std::chrono::milliseconds limit_;
  std::mutex mutex_;
  std::condition_variable released_cv_;
  bool released_ = false;
  bool expired_ = false;
  bool waited_ = false;  // release() waited for the stream: the host function has run
};

}  // namespace cuforge::runtime
