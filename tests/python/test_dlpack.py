"""Arrays that speak DLPack (JAX, and any producer of __dlpack__): described through nanobind's
DLPack import, with shape, strides in elements, element type and device as they are."""

from __future__ import annotations

import numpy as np
import pytest

import cuforge
from cuforge.arrays import describe, host_descriptor
from fake_arrays import no_gpu


class DLPackOnly:
    """An array that offers nothing but DLPack, as a JAX array on the host does to a consumer that
    asks for it."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_the_descriptor_of_a_dlpack_array():
    a = np.zeros((6, 10), np.float16)[:, 2:8].T  # a strided, transposed view
    ptr, dtype, shape, strides, device = cuforge._core.dlpack_descriptor(a.__dlpack__(), "A")
    assert (ptr, dtype, shape, strides, device) == (a.ctypes.data, cuforge.DataType.f16, (6, 6), (1, 10), -1)
    for np_type, dt in ((np.float32, "f32"), (np.float64, "f64"), (np.int8, "s8"), (np.uint8, "u8"), (np.int32, "s32")):
        assert cuforge._core.dlpack_descriptor(np.zeros(3, np_type).__dlpack__(), "A")[1] == cuforge.DataType.__members__[dt]
    with pytest.raises(cuforge.DataTypeError, match="^B: cuforge has no element type for DLPack type code 0 of 16"):
        describe(DLPackOnly(np.zeros(3, np.int16)), "B")


def test_host_dlpack_arrays_are_staged_like_numpy():
    a = np.arange(12, dtype=np.float16).reshape(3, 4)
    assert describe(DLPackOnly(a), "A") is None, "host memory: copied to the GPU"
    _, dtype, shape, strides, device = host_descriptor(DLPackOnly(a), 0, "A")
    assert (dtype, tuple(shape), tuple(strides), device) == (cuforge.DataType.f16, (3, 4), (4, 1), 0)
    # Read-only memory: NumPy 2 exports it only as a versioned capsule.
    a.flags.writeable = False
    assert describe(DLPackOnly(a), "A") is None
    assert host_descriptor(DLPackOnly(a), 0, "A")[2] == (3, 4)
    with pytest.raises(cuforge.InvalidArgumentError, match="^D: the NumPy array is read-only"):
        host_descriptor(DLPackOnly(a), 0, "D", output=True)


@no_gpu
def test_a_run_on_dlpack_arrays_is_checked_then_stops_at_the_device():
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    A, B, D = (DLPackOnly(np.zeros(s, np.float16)) for s in ((64, 32), (32, 16), (64, 16)))
    with pytest.raises(cuforge.InvalidArgumentError, match="^B: expected 32 rows"):
        plan.run(A, DLPackOnly(np.zeros((31, 16), np.float16)), None, D)
    with pytest.raises(cuforge.DeviceError):
        plan.run(A, B, None, D)


class OneCapsule:
    """A producer breaking the protocol: one capsule handed out on every call (a second consumer of it
    would read a tensor the first one's deleter freed), or no capsule at all."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)


def test_a_capsule_handed_out_twice_is_refused_not_read_again():
    reused = OneCapsule(np.zeros((16, 16), np.float16).__dlpack__())
    assert describe(reused, "A") is None
    with pytest.raises(cuforge.InvalidArgumentError, match="^B: its __dlpack__\\(\\) returned a DLPack capsule already used"):
        describe(reused, "B")
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: its __dlpack__\\(\\) returned a NoneType, not a fresh"):
        describe(OneCapsule(None), "A")
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="already used"):
        plan.run(OneCapsule(np.zeros((16, 16), np.float16).__dlpack__()), reused, None, reused)
