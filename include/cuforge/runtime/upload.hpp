// Host data a launch reads on the device (a grouped run's group descriptors), copied on the run's
// stream without waiting for it: through pinned staging buffers kept per device and stream, each
// reused only once its last copy has finished (an event), and another added while all are in flight
// (up to 64), so the host does not block on the stream's earlier work as a copy from pageable
// memory would.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cuforge::runtime {

// Copies `bytes` from `host` to `device_destination` on `stream`. Throws DeviceError; refuses
// (InvalidArgumentError) while the stream is being captured into a CUDA graph, where the copy would
// read the staging buffer again at every replay.
void upload(int device, cudaStream_t stream, const void* host, size_t bytes, void* device_destination);

}  // namespace cuforge::runtime
