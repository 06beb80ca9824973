"""Batched operands on the CPU: several leading batch dimensions fold into one, and a batch over one
B folds into the rows of one GEMM (as the CUTLASS Python interface runs them)."""

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


def _view(desc, base):
    """The elements a descriptor addresses, read from `base` (a NumPy array holding them)."""
    ptr, _, shape, strides, _ = desc
    offset = (ptr - base.ctypes.data) // base.itemsize
    flat = base.reshape(-1)[offset:]
    return np.lib.stride_tricks.as_strided(flat, shape, [s * base.itemsize for s in strides])


def test_a_batch_over_one_b_folds_into_the_rows_of_one_gemm():
    from cuforge.arrays import host_descriptor
    from cuforge.op.gemm import fold_batch_into_rows

    rng = np.random.default_rng(0)
    A, B = rng.random((4, 16, 32)), rng.random((32, 8))
    C, D = rng.random((4, 16, 8)), np.zeros((4, 16, 8))
    descs = [host_descriptor(x, 0, name) for x, name in zip((A, B, C, D), "ABCD")]
    a, b, c, d = fold_batch_into_rows(descs)
    assert a[2] == (64, 32) and d[2] == (64, 8) and c[2] == (64, 8) and b == descs[1]
    for folded, x in ((a, A), (c, C), (d, D)):
        assert np.array_equal(_view(folded, x), x.reshape(64, -1))
    # A batch of one row each, a broadcast (stride-0) B, a bias row C.
    A1, Bb = rng.random((5, 1, 32)), np.broadcast_to(B, (5, 32, 8))
    bias_case = (A1, Bb, np.ones(8), np.zeros((5, 1, 8)))
    a, b, c, d = fold_batch_into_rows([host_descriptor(x, 0, n) for x, n in zip(bias_case, "ABCD")])
    assert a[2] == (5, 32) and np.array_equal(_view(a, A1), A1.reshape(5, 32))
    assert b[2] == (32, 8) and np.array_equal(_view(b, B), B) and c[2] == (8,)
    # What cannot fold stays as it is: a batched B, a C shared by every batch, rows padded between
    # batches, a column-major A.
    padded = np.zeros((4, 17, 32))[:, :16]
    for operands in ((A, rng.random((4, 32, 8)), C, D), (A, B, rng.random((16, 8)), D), (padded, B, C, D),
                     (np.ascontiguousarray(A.transpose(0, 2, 1)).transpose(0, 2, 1), B, C, D)):
        descs = [host_descriptor(x, 0, n) for x, n in zip(operands, "ABCD")]
        assert fold_batch_into_rows(descs) == descs
    # Nor a B of no matrices, or of a batch other than D's (even broadcast): the checks then name the mismatch.
    for b_batch in (np.zeros((0, 32, 8)), np.broadcast_to(B, (5, 32, 8))):
        descs = [host_descriptor(x, 0, n) for x, n in zip((A, b_batch, C, D), "ABCD")]
        assert fold_batch_into_rows(descs) == descs
    # Nor a batch whose rows together pass the kernels' 32-bit extents.
    huge = [(0, None, (2**16, 2**16, 8), (2**19, 8, 1), 0), (0, None, (8, 8), (8, 1), 0), None,
            (0, None, (2**16, 2**16, 8), (2**19, 8, 1), 0)]
    assert fold_batch_into_rows(huge) == huge


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
