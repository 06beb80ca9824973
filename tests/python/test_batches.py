"""Batched operands on the CPU: several leading batch dimensions fold into one (as the CUTLASS Python
interface takes them; a batch over one B folding into the rows of one GEMM is the core's:
tests/cpp/test_validation.cpp)."""

from __future__ import annotations

import numpy as np
import pytest

import cuforge
from fake_arrays import BASE, FakeDeviceArray, no_gpu

RowMajor = cuforge.LayoutType.RowMajor


@no_gpu
def test_several_batch_dimensions_fold_into_one():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A = FakeDeviceArray((2, 3, 64, 32), np.float16, ptr=BASE["A"])
    B = FakeDeviceArray((32, 16), np.float16, ptr=BASE["B"])
    D = FakeDeviceArray((2, 3, 64, 16), np.float16, ptr=BASE["D"])
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan.run(A, B, None, D)
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):  # B batched like D, 5 dimensions
        plan.run(FakeDeviceArray((2, 1, 3, 64, 32), np.float16, ptr=BASE["A"]),
                 FakeDeviceArray((2, 1, 3, 32, 16), np.float16, ptr=BASE["B"]), None,
                 FakeDeviceArray((2, 1, 3, 64, 16), np.float16, ptr=BASE["D"]))
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^A: batch shape \(3, 2\) is not D's \(2, 3\)"):
        plan.run(FakeDeviceArray((3, 2, 64, 32), np.float16, ptr=BASE["A"]), B, None, D)
    permuted = FakeDeviceArray((2, 3, 64, 32), np.float16, strides=(2048, 4096, 32, 1), ptr=BASE["A"])
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^A: batch dimensions \(2, 3\) .* do not fold"):
        plan.run(permuted, B, None, D)


@no_gpu
def test_a_b_of_no_matrices_is_refused_not_read_as_one():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A = FakeDeviceArray((2, 64, 32), np.float16, ptr=BASE["A"])
    D = FakeDeviceArray((2, 64, 16), np.float16, ptr=BASE["D"])
    with pytest.raises(cuforge.InvalidArgumentError, match="^B: "):
        plan.run(A, FakeDeviceArray((0, 32, 16), np.float16, ptr=BASE["B"]), None, D)


def test_arrays_of_another_byte_order_are_refused():
    plan = cuforge.op.Gemm(element=np.float32, layout=RowMajor)
    A = np.ones((16, 16), np.float32)
    swapped = A.astype(A.dtype.newbyteorder(">" if A.dtype.byteorder != ">" and np.little_endian else "<"))
    with pytest.raises(cuforge.DataTypeError, match="a byte order other than this machine's"):
        plan.run(swapped, A, None, np.zeros((16, 16), np.float32))
    with pytest.raises(cuforge.DataTypeError, match="a byte order other than this machine's"):
        plan.run(A, A, None, FakeDeviceArray((16, 16), swapped.dtype, ptr=BASE["D"]))
