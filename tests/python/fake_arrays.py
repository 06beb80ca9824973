"""Device arrays without a device: objects that speak ``__cuda_array_interface__`` (as CuPy and
Numba arrays do) around a made-up pointer, so that cuforge's validation can be driven on a machine
with no GPU. Nothing ever dereferences the pointers: a run that passes validation stops at the
device check with cuforge.DeviceError.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import cuforge

# Marks a test of what a machine without a GPU does.
no_gpu = pytest.mark.skipif(cuforge.device_count() > 0, reason="checks the behaviour of a machine without a GPU")

# Fake device addresses, 256 MiB apart and 256-byte aligned.
BASE = {"A": 0x1_0000_0000, "B": 0x2_0000_0000, "C": 0x3_0000_0000, "D": 0x4_0000_0000}


class FakeDeviceArray:
    """A strided device array view, as CuPy presents one (``__cuda_array_interface__``, ``dtype``,
    ``strides`` in bytes, ``device.id``). Give ``strides`` in elements (None: C-contiguous) or
    ``byte_strides``."""

    def __init__(self, shape, dtype=np.float16, strides=None, ptr=BASE["A"], device=0, byte_strides=None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.device = SimpleNamespace(id=device)
        if byte_strides is None and strides is not None:
            byte_strides = tuple(int(s) * self.dtype.itemsize for s in strides)
        self.__cuda_array_interface__ = {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (int(ptr), False),
            "strides": byte_strides,
            "version": 3,
        }

    @property
    def strides(self):
        """Byte strides, as CuPy reports them."""
        given = self.__cuda_array_interface__["strides"]
        if given is not None:
            return given
        strides, step = [], self.dtype.itemsize
        for extent in reversed(self.shape):
            strides.insert(0, step)
            step *= extent
        return tuple(strides)

    @property
    def data_ptr(self):
        return self.__cuda_array_interface__["data"][0]

    def __repr__(self):
        cai = self.__cuda_array_interface__
        return f"FakeDeviceArray(shape={self.shape}, dtype={self.dtype}, strides={cai['strides']}, ptr={cai['data'][0]:#x})"


def row_major(rows, cols, dtype=np.float16, name="A", ld=None, **kw):
    ld = cols if ld is None else ld
    return FakeDeviceArray((rows, cols), dtype, strides=(ld, 1), ptr=BASE[name], **kw)


def col_major(rows, cols, dtype=np.float16, name="A", ld=None, **kw):
    ld = rows if ld is None else ld
    return FakeDeviceArray((rows, cols), dtype, strides=(1, ld), ptr=BASE[name], **kw)


def operands(M, N, K, dtype=np.float16, layouts="rrr", with_c=True):
    """Packed A (M x K), B (K x N), C and D (M x N) in the given layouts (letters r/c for A, B, C/D)."""
    make = {"r": row_major, "c": col_major}
    A = make[layouts[0]](M, K, dtype, "A")
    B = make[layouts[1]](K, N, dtype, "B")
    C = make[layouts[2]](M, N, dtype, "C") if with_c else None
    D = make[layouts[2]](M, N, dtype, "D")
    return A, B, C, D
