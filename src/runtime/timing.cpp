#include "cuforge/runtime/timing.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>

#include "cuforge/runtime/device.hpp"

namespace cuforge::runtime {
namespace {

constexpr int kMaxLaunchesPerRound = 200;
// How long a hold waits for its release at most: a launch that waits for the held stream (a full
// launch queue, a staging buffer still in use, a synchronizing copy) must not wait for it forever.
constexpr std::chrono::milliseconds kHoldLimit{100};

class Event {
 public:
  Event() { check(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Holds a stream until release(): a host function queued on it waits for the release (at most
// kHoldLimit), so the work queued behind it meanwhile runs back to back once released.
class Hold {
 public:
  explicit Hold(cudaStream_t stream) : stream_(stream) {
    check(cudaLaunchHostFunc(stream, &Hold::wait, this), "holding the stream (cudaLaunchHostFunc)");
  }
  ~Hold() {  // the host function reads *this: it must have run before this goes
    release();
    cudaStreamSynchronize(stream_);
  }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

  void release() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    released_cv_.notify_all();
  }
  // Whether the stream stayed held until release(); read once the stream has passed the hold.
  bool held_throughout() {
    std::lock_guard lock(mutex_);
    return !expired_;
  }

 private:
  static void CUDART_CB wait(void* self) {
    auto* h = static_cast<Hold*>(self);
    std::unique_lock lock(h->mutex_);
    if (!h->released_cv_.wait_for(lock, kHoldLimit, [h] { return h->released_; })) h->expired_ = true;
  }

  cudaStream_t stream_;
  std::mutex mutex_;
  std::condition_variable released_cv_;
  bool released_ = false;
  bool expired_ = false;
};

struct Round {
  double ms = 0;      // of all `count` launches
  bool held = false;  // whether they were all queued before the stream went on
};

// `count` launches between two events, queued behind a hold.
Round round_of(const std::function<void()>& launch, cudaStream_t stream, int count, Event& start, Event& stop) {
  Hold hold(stream);
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int i = 0; i < count; ++i) launch();
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  hold.release();
  check(cudaEventSynchronize(stop), "timing the launches");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  return {ms, hold.held_throughout()};
}

}  // namespace

Timing time_launches(const std::function<void()>& launch, cudaStream_t stream, int rounds, double round_target_ms) {
  Event start, stop;
  launch();  // the warm-up
  const double first = round_of(launch, stream, 1, start, stop).ms;  // a first estimate
  int count = std::clamp(int(round_target_ms / std::max(first, 1e-3)), 1, kMaxLaunchesPerRound);
  Timing t;
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(rounds, 1);) {
    const Round round = round_of(launch, stream, count, start, stop);
    t.launches += count;
    if (!round.held && count > 1) {  // a launch waited for the held stream: fewer launches a round
      count = std::max(1, count / 4);
      continue;
    }
    // A single launch that waits for its stream (a synchronizing copy) is timed as it runs.
    best = std::min(best, round.ms / count);
    ++r;
  }
  t.microseconds = best * 1e3;
  return t;
}

}  // namespace cuforge::runtime
