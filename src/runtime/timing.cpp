#include "cuforge/runtime/timing.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "cuforge/core/error.hpp"
#include "cuforge/runtime/device.hpp"
#include "cuforge/runtime/stream_hold.hpp"

namespace cuforge::runtime {
namespace {

constexpr int kMaxLaunchesPerRound = 200;

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

struct Round {
  double ms = 0;      // of all `count` launches
  bool held = false;  // whether they were all queued before the stream went on
};

// `count` launches between two events, queued behind a hold.
Round round_of(const std::function<void()>& launch, cudaStream_t stream, int count, Event& start, Event& stop) {
  StreamHold hold(stream);
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int i = 0; i < count; ++i) launch();
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  const bool held = hold.release();
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  return {ms, held};
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

Timing time_round(const std::function<void()>& launch, cudaStream_t stream, int count) {
  if (count < 1) throw InvalidArgumentError("time_round: expected 1 launch or more, got " + std::to_string(count));
  Event start, stop;
  // Behind holds of at most kMaxLaunchesPerRound launches each (a hold's time limit bounds how many the host
  // queues meanwhile), their GPU times summed.
  double ms = 0;
  for (int done = 0; done < count; done += kMaxLaunchesPerRound)
    ms += round_of(launch, stream, std::min(kMaxLaunchesPerRound, count - done), start, stop).ms;
  return {ms * 1e3 / count, count};
}

}  // namespace cuforge::runtime
