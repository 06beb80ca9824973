#include "cuforge/runtime/timing.hpp"

#include <algorithm>
#include <limits>

#include "cuforge/runtime/device.hpp"

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

// Milliseconds of `count` launches between two events.
double round_ms(const std::function<void()>& launch, cudaStream_t stream, int count, Event& start, Event& stop) {
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int i = 0; i < count; ++i) launch();
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "timing the launches");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  return ms;
}

}  // namespace

Timing time_launches(const std::function<void()>& launch, cudaStream_t stream, int rounds, double round_target_ms) {
  Event start, stop;
  const double first = round_ms(launch, stream, 1, start, stop);  // the warm-up, and a first estimate
  const int count = std::clamp(int(round_target_ms / std::max(first, 1e-3)), 1, kMaxLaunchesPerRound);
  Timing t;
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(rounds, 1); ++r) {
    best = std::min(best, round_ms(launch, stream, count, start, stop) / count);
    t.launches += count;
  }
  t.microseconds = best * 1e3;
  return t;
}

}  // namespace cuforge::runtime
