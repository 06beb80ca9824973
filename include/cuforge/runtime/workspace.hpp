// Device scratch memory for kernels that need it (stream-K partials, split-K), kept per device
// and stream and grown on demand, so that repeated runs allocate nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cuforge::runtime {

// A buffer of at least `bytes` on `device`, private to `stream` (work queued on one stream runs
// in order, so the buffer is never used by two kernels at once). Valid until the next call for
// the same device and stream asks for more.
void* workspace(int device, cudaStream_t stream, size_t bytes);

}  // namespace cuforge::runtime
