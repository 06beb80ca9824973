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
    with pytest.raises(cuforge.InvalidArgumentError, match="^D: NumPy reads this DLPackOnly's memory .* as read-only"):
        host_descriptor(DLPackOnly(a), 0, "D", output=True)
    with pytest.raises(cuforge.InvalidArgumentError, match="^D: the NumPy array is read-only"):
        host_descriptor(a, 0, "D", output=True)


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


class RawDLPack:
    """A DLPack producer written by hand (ctypes): a 2-D f16 tensor on CUDA device 0 at a made-up address,
    in a versioned capsule with `flags` or an unversioned one, its shape pointer null where asked."""

    def __init__(self, versioned=False, flags=0, null_shape=False):
        import ctypes

        class Tensor(ctypes.Structure):
            _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                        ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                        ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                        ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]

        class Managed(ctypes.Structure):
            _fields_ = [("tensor", Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

        class Versioned(ctypes.Structure):
            _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                        ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("tensor", Tensor)]

        self._shape = (ctypes.c_int64 * 2)(64, 32)
        tensor = Tensor(0x10000000, 2, 0, 2, 2, 16, 1, None if null_shape else self._shape, None, 0)
        self._managed = Versioned(1, 0, None, None, flags, tensor) if versioned else Managed(tensor, None, None)
        self._name = b"dltensor_versioned" if versioned else b"dltensor"
        self._new = ctypes.pythonapi.PyCapsule_New
        self._new.restype, self._new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self._address = ctypes.addressof(self._managed)

    def __dlpack__(self, *args, **kwargs):
        return self._new(self._address, self._name, None)

    def __dlpack_device__(self):
        return (2, 0)


def test_what_a_dlpack_producer_may_get_wrong_is_refused_by_name():
    assert describe(RawDLPack(), "A")[2] == (64, 32)
    # A null shape pointer for two dimensions (the interpreter died of SIGSEGV on it).
    for versioned in (False, True):
        with pytest.raises(cuforge.InvalidArgumentError, match="^A: its DLPack tensor has 2 dimensions but no shape"):
            describe(RawDLPack(versioned=versioned, null_shape=True), "A")
    # Read-only memory: an operand read may be, the output may not.
    assert describe(RawDLPack(versioned=True, flags=1), "A")[2] == (64, 32)
    assert describe(RawDLPack(versioned=True, flags=0), "D")[2] == (64, 32)
    with pytest.raises(cuforge.InvalidArgumentError, match="^D: the array is read-only \\(its DLPack capsule says so\\)"):
        describe(RawDLPack(versioned=True, flags=1), "D")

    class Both(RawDLPack):  # a producer of both capsules: the versioned one is asked for, and its flag read
        def __init__(self):
            self.versioned, self.unversioned = RawDLPack(versioned=True, flags=1), RawDLPack()

        def __dlpack__(self, *args, max_version=None, **kwargs):
            return (self.versioned if max_version else self.unversioned).__dlpack__()

    with pytest.raises(cuforge.InvalidArgumentError, match="^D: the array is read-only"):
        describe(Both(), "D")
    # A CUDA tensor of a negative device id (a fault probe's) was taken for host memory.
    negative = RawDLPack()
    negative._managed.tensor.device_id = -5
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: a DLPack CUDA array of device id -5"):
        describe(negative, "A")
    # A capsule of another major version than 1 may lay its tensor out otherwise: refused, not read as version 1.
    later = RawDLPack(versioned=True, null_shape=True)
    later._managed.major = 2
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: its DLPack capsule is of version 2.0; cuforge reads 1"):
        describe(later, "A")


def test_a_producer_breaking_its_protocol_is_named():
    """A __dlpack__ that refuses, is not callable so, or an __array_interface__ NumPy cannot read: an error naming
    the operand, not the producer's own exception from inside cuforge (a failure of its own, a RuntimeError, say,
    named with the operand too, the producer's exception its cause)."""

    class Raises:
        def __dlpack__(self, *args, **kwargs):
            raise ValueError("cannot export a strided view")

    class NeedsAStream:
        def __dlpack__(self, stream):
            return None

    class NotCallable:
        __dlpack__ = 5

    for producer in (Raises(), NeedsAStream(), NotCallable()):
        with pytest.raises(cuforge.InvalidArgumentError, match="^A: its __dlpack__\\(\\) exports no DLPack capsule"):
            describe(producer, "A")

    class BadInterface:
        __array_interface__ = {"shape": (2, 2), "typestr": "zz", "data": (0, False), "version": 3}

    with pytest.raises(cuforge.InvalidArgumentError, match="^B: NumPy cannot read it as an array"):
        host_descriptor(BadInterface(), 0, "B")

    class Fails:
        def __dlpack__(self, *args, **kwargs):
            raise RuntimeError("device lost")

    with pytest.raises(cuforge.InvalidArgumentError, match="^A: reading it raised RuntimeError: "
                                                          "'device lost'") as raised:
        describe(Fails(), "A")
    assert isinstance(raised.value.__cause__, RuntimeError)
