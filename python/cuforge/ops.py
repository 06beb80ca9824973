"""cuforge.ops: cuforge's operations as PyTorch custom operators, with nothing to build ahead.

``cuforge.ops.gemm(A, B, C=None, alpha=1.0, beta=0.0)`` returns D = alpha * A @ B + beta * C as
``torch.ops.cuforge.gemm``: a torch.library custom operator with a fake kernel, so that
torch.compile(fullgraph=True) traces through it, and CUDA graphs capture it (it allocates only its
output, from torch's caching allocator, and launches on torch's current stream). Each combination
of dtypes, layouts and device gets one cuforge.op.Gemm plan, kept for the process; the plan chooses and
builds the kernel per problem class as it does for run().
"""

from typing import Optional

import torch

from ._core import DataType
from .dtypes import torch_datatype
from .op.gemm import Gemm
from .arguments import layout_of

_plans: dict[tuple, Gemm] = {}


def _plan(A: torch.Tensor, B: torch.Tensor, D: torch.Tensor) -> Gemm:
    key = (A.dtype, B.dtype, D.dtype, layout_of(A, "A"), layout_of(B, "B"), A.device.index)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = Gemm(element_A=torch_datatype(A.dtype), element_B=torch_datatype(B.dtype),
                                  element_C=torch_datatype(D.dtype), element_D=torch_datatype(D.dtype),
                                  layout_A=key[3], layout_B=key[4], layout_C="RowMajor", device=key[5])
    return plan


def _output(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """D of the batch both operands broadcast to (a batch of one broadcasts, as in torch.matmul), of A's
    dtype, or of the floating-point operand's beside an int8 one (mixed inputs)."""
    batch = torch.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    dtype = B.dtype if torch_datatype(A.dtype) == DataType.s8 != torch_datatype(B.dtype) else A.dtype
    return A.new_empty((*batch, A.shape[-2], B.shape[-1]), dtype=dtype)


@torch.library.custom_op("cuforge::gemm", mutates_args=(), device_types="cuda")
def gemm(A: torch.Tensor, B: torch.Tensor, C: Optional[torch.Tensor] = None, alpha: float = 1.0,
         beta: float = 0.0) -> torch.Tensor:
    """D = alpha * A @ B + beta * C (C D-shaped, or a bias row of N), D of A's dtype (int8 beside a 16-bit
    type: the 16-bit type)."""
    D = _output(A, B)
    _plan(A, B, D).run(A, B, C, D, alpha=alpha, beta=beta, sync=False)
    return D


@gemm.register_fake
def _(A, B, C=None, alpha=1.0, beta=0.0):
    return _output(A, B)


__all__ = ["gemm"]
