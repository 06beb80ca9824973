// This thread's latest run of a kernel's entry point, kept so that a repeat (a loop over one
// problem) launches with the state prepared for it (CUTLASS's parameters: on SM90 the TMA
// descriptors, the larger part of a small run's host time) instead of preparing it again.
#pragma once

#include <cstddef>
#include <cstring>
#include <initializer_list>

#include "cuforge/abi.h"

namespace cuforge_kernel {

// Bytes that are part of what identifies a run: a struct's fields (not its tail padding, which a
// copy need not keep), a pointer, a size.
struct KeyBytes {
  const void* data;
  size_t size;
};

// State: what preparing a run makes. kKeySize: the sizes of the key's parts, summed.
template <class State, size_t kKeySize>
class KeptRun {
 public:
  // Makes `state()` this run's: the kept one when `key` equals the latest run's, else made anew by
  // `prepare(State&)` (returning a CUFORGE_STATUS), and kept when that succeeds.
  template <class Prepare>
  int prepare_unless_kept(std::initializer_list<KeyBytes> key, Prepare&& prepare) {
    unsigned char bytes[kKeySize];
    size_t size = 0;
    for (const KeyBytes& part : key) {
      if (size + part.size > kKeySize) return CUFORGE_STATUS_INTERNAL_ERROR;
      std::memcpy(bytes + size, part.data, part.size);
      size += part.size;
    }
    if (size != kKeySize) return CUFORGE_STATUS_INTERNAL_ERROR;
    if (valid_ && std::memcmp(bytes, key_, kKeySize) == 0) return CUFORGE_STATUS_SUCCESS;
    valid_ = false;
    const int status = prepare(state_);
    if (status == CUFORGE_STATUS_SUCCESS) {
      std::memcpy(key_, bytes, kKeySize);
      valid_ = true;
    }
    return status;
  }

  State& state() { return state_; }

 private:
  unsigned char key_[kKeySize] = {};
  bool valid_ = false;
  State state_{};
};

}  // namespace cuforge_kernel
