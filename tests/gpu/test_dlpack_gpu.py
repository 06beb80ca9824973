"""On the GPU: operands from JAX (DLPack, or its __cuda_array_interface__) and CuPy arrays offered
only through DLPack, exact on integer data against a float64 reference, beside torch tensors."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402

M, N, K = 264, 200, 136


class DLPackOnly:
    """An array seen through DLPack alone (so that CuPy takes the DLPack path, not its CAI)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def plan():
    return cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor, element_accumulator=np.float32)


def integers(shape, seed):
    return np.random.default_rng(seed).integers(-3, 4, shape).astype(np.float16)


def test_jax_inputs():
    jnp = pytest.importorskip("jax.numpy")
    a, b = integers((M, K), 1), integers((K, N), 2)
    A, B = jnp.asarray(a), jnp.asarray(b)  # on the default (GPU) device, immutable
    assert "cuda" in str(A.devices()).lower() or "gpu" in str(A.devices()).lower()
    D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    A.block_until_ready()
    plan().run(A, B, None, D)
    assert np.array_equal(D.cpu().numpy(), (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16))


def test_cupy_through_dlpack():
    cp = pytest.importorskip("cupy")
    a, b = integers((M, K), 3), integers((K, N), 4)
    A, B = cp.asarray(a), cp.asarray(b)
    D = cp.full((M, N), np.nan, dtype=np.float16)
    cp.cuda.Device().synchronize()
    plan().run(DLPackOnly(A), DLPackOnly(B), None, DLPackOnly(D))
    assert np.array_equal(cp.asnumpy(D), (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16))
