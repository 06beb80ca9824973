// GPU time of launches, measured with CUDA events on the launches' own stream (the profiler's and
// autotuning's measure): one warm-up launch, then rounds of launches queued while the stream is
// held (so that they run back to back, with no host time between them: a run whose host work
// outlasts its kernels is timed by its kernels), each round as many launches as fill about
// `round_ms` of the GPU; the fastest round's mean.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace cuforge::runtime {

struct Timing {
  double microseconds = 0;  // per launch
  int launches = 0;         // timed, over all rounds
};

// `launch` queues one run on `stream`. Throws DeviceError when a CUDA call fails.
Timing time_launches(const std::function<void()>& launch, cudaStream_t stream, int rounds = 3, double round_ms = 2.0);

// Exactly `count` launches queued behind holds (200 at most each), with no warm-up (the CUTLASS Python
// interface's profiler, whose caller runs its own and names the count): their GPU time per launch. Where a
// hold's limit ran out first, the launches the host queued after it ran as it queued them, host time included.
Timing time_round(const std::function<void()>& launch, cudaStream_t stream, int count);

}  // namespace cuforge::runtime
