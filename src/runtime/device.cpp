#include "cuforge/runtime/device.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "cuforge/core/error.hpp"

namespace cuforge::runtime {
namespace {
constexpr int kMaxDevices = 64;
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw DeviceError(fmt::format("{}: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status)));
}

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no device" error
      return 0;
    }
    return n;
  }();
  return count;
}

int driver_cuda_version() {
  int version = 0;
  if (cudaDriverGetVersion(&version) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return version;
}

int default_device() {
  if (const char* id = std::getenv("CUTLASS_CUDA_DEVICE_ID"); id && *id) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(id, &end, 10);
    // Digits alone: strtol also takes leading blanks and a sign (' 1' was device 1, where '1 ' was refused).
    if (!std::isdigit(static_cast<unsigned char>(id[0])) || *end != '\0' || v >= kMaxDevices || errno == ERANGE)
      throw DeviceError(
          fmt::format("CUTLASS_CUDA_DEVICE_ID is '{}', expected a device ordinal (0 to {})", id, kMaxDevices - 1));
    return int(v);
  }
  int d = 0;
  if (device_count() > 0) check(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

void use_device(int ordinal) {
  device_info(ordinal);  // a clear error when there is no GPU or no such device
  int current = 0;
  check(cudaGetDevice(&current), "cudaGetDevice");
  if (current != ordinal) check(cudaSetDevice(ordinal), "cudaSetDevice");
}

int default_target_cc() { return device_count() > 0 ? device_info(default_device()).cc : 90; }

const DeviceInfo& device_info(int ordinal) {
  static std::array<std::unique_ptr<DeviceInfo>, kMaxDevices> infos;
  static std::mutex mutex;
  int count = device_count();
  if (count == 0)
    throw DeviceError("no CUDA GPU was found (cudaGetDeviceCount reports none): cuforge can emit and compile "
                      "kernels here, but running them needs a GPU");
  if (ordinal < 0 || ordinal >= count || ordinal >= kMaxDevices)
    throw DeviceError(fmt::format("CUDA device {} does not exist: this machine has {} (0 to {})", ordinal, count,
                                  count - 1));
  std::lock_guard lock(mutex);
  if (!infos[ordinal]) {
    auto info = std::make_unique<DeviceInfo>();
    info->ordinal = ordinal;
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
    info->cc = prop.major * 10 + prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->name = prop.name;
    infos[ordinal] = std::move(info);
  }
  return *infos[ordinal];
}

}  // namespace cuforge::runtime
