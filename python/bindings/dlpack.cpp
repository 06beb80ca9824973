// DLPack capsules (JAX's arrays, and any other producer of __dlpack__) as the descriptors the Python layer
// passes the core, their fields checked where nanobind takes them on trust.
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuforge/core/error.hpp"
#include "cuforge/core/tensor.hpp"
#include "cuforge/core/types.hpp"
#include "operands.hpp"

namespace cuforge::python {
namespace {

// DLPack's element type codes and device types (dlpack.h), as numbers: nanobind's names for the
// 8-bit floats vary by version.
constexpr uint8_t kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLFloat8E4M3FN = 10, kDLFloat8E5M2 = 12;
constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3;

// DLPack's managed tensors (dlpack.h), as the capsules named "dltensor" and "dltensor_versioned" hold them
// (version 1 of the latter: a later major version may lay it out otherwise; only its version comes first).
struct DLManagedTensor {
  nb::dlpack::dltensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLManagedTensorVersioned {
  uint32_t major, minor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  nb::dlpack::dltensor dl_tensor;
};
constexpr uint64_t kDLFlagReadOnly = 1;

}  // namespace

// The descriptor of an array that speaks DLPack (JAX, and any other producer of __dlpack__), from
// the capsule its __dlpack__() returned. Only an unused capsule is read (nanobind renames it used):
// a producer handing out one capsule twice would otherwise have its tensor freed under the second.
// What nanobind takes on trust is checked first: a shape for every dimension, and D's memory writable
// (a versioned capsule's read-only flag, as the __cuda_array_interface__ path checks its own).
nb::tuple dlpack_descriptor(nb::handle capsule, const char* name) {
  const bool versioned = PyCapsule_IsValid(capsule.ptr(), "dltensor_versioned");
  if (!versioned && !PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
    std::string got = "a " + std::string(nb::inst_name(capsule).c_str());
    if (PyCapsule_CheckExact(capsule.ptr())) {
      const char* label = PyCapsule_GetName(capsule.ptr());
      const std::string capsule_name = label ? label : "";
      got = capsule_name.rfind("used_dltensor", 0) == 0 ? "a DLPack capsule already used"
                                                        : "a capsule named '" + capsule_name + "'";
    }
    throw InvalidArgumentError(std::string(name) + ": its __dlpack__() returned " + got +
                               ", not a fresh DLPack capsule");
  }
  const nb::dlpack::dltensor* raw = nullptr;
  bool read_only = false;
  if (versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor_versioned"));
    if (m && m->major != 1)  // nanobind would read it as version 1
      throw InvalidArgumentError(std::string(name) + ": its DLPack capsule is of version " + std::to_string(m->major) +
                                 "." + std::to_string(m->minor) + "; cuforge reads 1.x");
    if (m) raw = &m->dl_tensor, read_only = (m->flags & kDLFlagReadOnly) != 0;
  } else if (auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"))) {
    raw = &m->dl_tensor;
  }
  if (raw && raw->ndim > 0 && !raw->shape)
    throw InvalidArgumentError(std::string(name) + ": its DLPack tensor has " + std::to_string(raw->ndim) +
                               " dimensions but no shape (a null shape pointer)");
  // Extents are never negative; a tensor without strides is compact (row-major): its strides, the products of
  // its extents from the last one back as nanobind computes them (in int64_t), must not wrap.
  for (int32_t i = 0; raw && i < raw->ndim; ++i)
    if (raw->shape[i] < 0)
      throw InvalidArgumentError(std::string(name) + ": its DLPack tensor's extent " + std::to_string(i) + " is " +
                                 std::to_string(raw->shape[i]) + "; extents are never negative");
  int64_t stride = 1;
  for (int32_t i = raw && !raw->strides ? raw->ndim - 1 : 0; i > 0; --i)
    if (__builtin_mul_overflow(stride, raw->shape[i], &stride))
      throw InvalidArgumentError(std::string(name) + ": its DLPack tensor's strides (the products of its extents) "
                                 "pass 64 bits");
  if (read_only && name[0] == 'D')
    throw InvalidArgumentError(std::string(name) + ": the array is read-only (its DLPack capsule says so), and the "
                               "result would be written into it");
  nb::ndarray<nb::ro> a;
  if (!nb::try_cast(capsule, a))
    throw InvalidArgumentError(std::string(name) + ": its DLPack capsule holds no tensor nanobind can read");
  const auto t = a.dtype();
  std::optional<DataType> dtype;
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 16) dtype = DataType::f16;
    if (t.code == kDLBfloat && t.bits == 16) dtype = DataType::bf16;
    if (t.code == kDLFloat && t.bits == 32) dtype = DataType::f32;
    if (t.code == kDLFloat && t.bits == 64) dtype = DataType::f64;
    if (t.code == kDLInt && t.bits == 8) dtype = DataType::s8;
    if (t.code == kDLUInt && t.bits == 8) dtype = DataType::u8;
    if (t.code == kDLInt && t.bits == 32) dtype = DataType::s32;
    if (t.code == kDLFloat8E4M3FN && t.bits == 8) dtype = DataType::e4m3;
    if (t.code == kDLFloat8E5M2 && t.bits == 8) dtype = DataType::e5m2;
  }
  if (!dtype)
    throw DataTypeError("cuforge has no element type for DLPack type code " +  // describe() names the operand
                        std::to_string(t.code) + " of " + std::to_string(t.bits) + " bits (x" +
                        std::to_string(t.lanes) + ")");
  int device = 0;
  switch (a.device_type()) {
    case kDLCUDA:
      device = a.device_id();
      if (device < 0)  // negative ids mean host memory to the callers: a CUDA tensor never has one
        throw InvalidArgumentError(std::string(name) + ": a DLPack CUDA array of device id " + std::to_string(device) +
                                   ": CUDA devices are numbered from 0");
      break;
    case kDLCPU:
    case kDLCUDAHost: device = TensorRef::kHost; break;
    default:
      throw InvalidArgumentError(std::string(name) + ": a DLPack array on device type " +
                                 std::to_string(a.device_type()) + ": cuforge runs on CUDA devices");
  }
  nb::list shape, strides;
  std::vector<int64_t> compact(a.ndim());
  uint64_t step = 1;  // as nanobind's strides: checked above
  for (size_t i = a.ndim(); i-- > 0; step *= uint64_t(a.shape(i))) compact[i] = int64_t(step);
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape.append(int64_t(a.shape(i)));
    strides.append(a.stride_ptr() ? a.stride(i) : compact[i]);
  }
  uintptr_t data = 0;
  if (__builtin_add_overflow(reinterpret_cast<uintptr_t>(a.data_handle()), uintptr_t(a.byte_offset()), &data))
    throw InvalidArgumentError(std::string(name) + ": its DLPack tensor's data pointer plus byte_offset (" +
                               std::to_string(a.byte_offset()) + ") wraps past the address space");
  return nb::make_tuple(data, *dtype, nb::tuple(shape), nb::tuple(strides), device);
}

}  // namespace cuforge::python
