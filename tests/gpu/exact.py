"""Integer-valued GEMM operands and the reference they must match bit for bit.

Inputs are small random integers, so every product and every fp32 partial sum is an exact integer
(far below 2^24); the only rounding is the final conversion to the output type, which the
reference does the same way (round to nearest even). Results must therefore be equal bit for bit
(torch.equal), whatever the tile shape, the K split or the order of accumulation, and whatever
the magnitude of the result.
"""

import cuforge
import torch

ROW, COL = "row", "col"
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def layout(name):
    return cuforge.LayoutType.RowMajor if name == ROW else cuforge.LayoutType.ColumnMajor


def _matrix(fill, rows, cols, lay, batch, ld):
    """A rows×cols view (batch×rows×cols when `batch` is given) in layout `lay` of an allocation
    made by `fill`, `ld` elements between rows (columns when column-major): packed by default."""
    inner, outer = (cols, rows) if lay == ROW else (rows, cols)
    shape = (outer, ld or inner) if batch is None else (batch, outer, ld or inner)
    t = fill(shape)[..., :inner]
    return t if lay == ROW else t.transpose(-1, -2)


def rand_int(rows, cols, dtype, lay, gen=None, batch=None, ld=None):
    """Integers in [-3, 3]; column-major is the transpose of a row-major allocation."""
    return _matrix(lambda s: torch.randint(-3, 4, s, device="cuda", generator=gen).to(dtype), rows, cols, lay,
                   batch, ld)


def poisoned(rows, cols, dtype, lay, batch=None, ld=None):
    """NaN everywhere, so that an element a kernel fails to write shows up."""
    return _matrix(lambda s: torch.full(s, float("nan"), device="cuda", dtype=dtype), rows, cols, lay, batch, ld)


def reference(A, B, C, alpha, beta, dtype):
    ref = alpha * (A.double() @ B.double())
    if beta != 0.0:
        ref = ref + beta * C.double()
    return ref.to(dtype)


def assert_exact(D, ref):
    assert D.shape == ref.shape
    if not torch.equal(D, ref):
        mismatch = D.double() != ref.double()  # NaN (never written) counts as a mismatch
        diff = (D.double() - ref.double()).abs()
        first = tuple(int(i) for i in mismatch.nonzero()[0])
        raise AssertionError(
            f"{int(mismatch.sum())} of {D.numel()} elements differ from the reference "
            f"({int(torch.isnan(D).sum())} NaN); first at {first}: got {float(D[first])}, "
            f"expected {float(ref[first])}; max finite |diff| {float(diff.nan_to_num(nan=0.0).max())}"
        )
