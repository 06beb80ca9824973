"""Problem shapes of the CUTLASS Python interface: ``cutlass.shape.Conv2DProblemSize``."""

from __future__ import annotations

import enum
from typing import NamedTuple

from ._core import InvalidArgumentError, LayoutType
from .arguments import fixed_items, integer
from .messages import shown


class ConvMode(enum.IntEnum):
    """How the filter is applied: cross-correlation (what deep-learning frameworks call convolution,
    and what cuforge's kernels compute) or the mathematical convolution (the filter flipped). Numbered as
    cutlass_library's ConvMode (an IntEnum too), whose members equal these and key its tables alike."""

    CrossCorrelation = 0
    Convolution = 1


class _Extents(NamedTuple):
    row: int
    column: int


class MatrixCoord(_Extents):
    """A matrix's rows and columns, ``.row`` and ``.column``; made as the CUTLASS Python interface's,
    ``MatrixCoord(row, col)``, or with ``column=``."""

    __slots__ = ()

    def __new__(cls, row, col=None, *, column=None):
        if (col is None) == (column is None):
            raise InvalidArgumentError("MatrixCoord: give the columns once, as col or column")
        return super().__new__(cls, row, column if col is None else col)

    def leading_dimension(self, layout) -> int:
        """The leading dimension of a dense matrix of these extents in ``layout``."""
        if layout == LayoutType.RowMajor:
            return self.column
        if layout == LayoutType.ColumnMajor:
            return self.row
        raise InvalidArgumentError(f"leading_dimension: expected LayoutType.RowMajor or ColumnMajor, got {shown(layout)}")


class GemmCoord(NamedTuple):
    """A GEMM's extents M x N x K, as the CUTLASS Python interface's Conv2DProblemSize.implicit_gemm_size
    returns them (cuforge's plans take them as integers)."""

    m: int
    n: int
    k: int

    mk = property(lambda self: MatrixCoord(self.m, self.k), doc="A's extents.")
    mn = property(lambda self: MatrixCoord(self.m, self.n), doc="C's and D's extents.")
    kn = property(lambda self: MatrixCoord(self.k, self.n), doc="B's extents.")


class Conv2DProblemSize:
    """A 2-D convolution's sizes as the CUTLASS Python interface spells them:
    ``Conv2DProblemSize(n, h, w, c, k, r, s, c_, pad_h, pad_w, stride_h, stride_w, dilation_h,
    dilation_w)``, kept as N, H, W, C, K, R, S, pad_h ...; P and Q, the output's height and width, follow
    ((H + 2 pad_h - dilation_h (R - 1) - 1) // stride_h + 1). ``c_`` is the filter's channels, C / ``groups``
    (kept as groups). Sizes no convolution has (a P or Q below 1, a ``c_`` that is not C / groups) are kept as the
    interface kept them: its test lists hold some, and skip them by comparing P and Q with that formula. A
    plan's run reads its tensors' extents, never a problem size."""

    def __init__(self, n, h, w, c, k, r, s, c_, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w,
                 mode=ConvMode.CrossCorrelation, split_k_slices=1, groups=1):
        for name, value, low in (("N", n, 0), ("H", h, 0), ("W", w, 0), ("C", c, 0), ("K", k, 0), ("R", r, 1),
                                 ("S", s, 1), ("pad_h", pad_h, 0), ("pad_w", pad_w, 0), ("stride_h", stride_h, 1),
                                 ("stride_w", stride_w, 1), ("dilation_h", dilation_h, 1),
                                 ("dilation_w", dilation_w, 1), ("split_k_slices", split_k_slices, 1),
                                 ("groups", groups, 1)):
            setattr(self, name, integer(value, name, low))
            if getattr(self, name) > 2**31 - 1:
                raise InvalidArgumentError(f"{name}: {value} exceeds the 32-bit range the kernels index")
        integer(c_, "c_ (the filter's channels)", 0)
        # The interface's mode is cutlass_library's ConvMode (an IntEnum: 0 is cross-correlation), or a name of it.
        spelt = mode.name if isinstance(mode, enum.Enum) else mode
        if not (isinstance(spelt, str) and spelt in ("CrossCorrelation", "cross_correlation") or
                (type(mode) is int or isinstance(mode, enum.IntEnum)) and mode == ConvMode.CrossCorrelation):
            raise InvalidArgumentError(f"mode: cuforge's kernels compute cross-correlation (ConvMode.CrossCorrelation), "
                                       f"got {shown(mode)}")
        self.mode = ConvMode.CrossCorrelation
        self.P = (self.H + 2 * self.pad_h - self.dilation_h * (self.R - 1) - 1) // self.stride_h + 1
        self.Q = (self.W + 2 * self.pad_w - self.dilation_w * (self.S - 1) - 1) // self.stride_w + 1

    @staticmethod
    def from_sizes(input_size, weight_size) -> Conv2DProblemSize:
        """The problem of an input of (N, H, W, C) and filters of (K, R, S, C), padded by half the filter
        (R // 2, S // 2), unit stride and dilation (the interface's from_sizes)."""
        sizes = [fixed_items(v, (4,)) for v in (input_size, weight_size)]
        if None in sizes:
            raise InvalidArgumentError(f"from_sizes: expected input_size (N, H, W, C) and weight_size (K, R, S, C), "
                                       f"got {shown(input_size)} and {shown(weight_size)}")
        _, r, s, _ = sizes[1]
        r, s = integer(r, "R", 1), integer(s, "S", 1)
        return Conv2DProblemSize(*sizes[0], *sizes[1], r // 2, s // 2, 1, 1, 1, 1)

    def implicit_gemm_size(self, kind) -> GemmCoord:
        """The implicit GEMM's M x N x K of the convolution pass ``kind`` ('fprop', 'dgrad', 'wgrad', or
        cutlass_library's ConvKind member)."""
        if self.P < 1 or self.Q < 1:
            raise InvalidArgumentError(f"implicit_gemm_size: the output of {shown(self)} has no pixels (the filter spans "
                                       "more than the padded input)")
        name = getattr(kind, "name", kind)
        name = name.lower() if isinstance(name, str) else name
        if name == "fprop":
            return GemmCoord(self.N * self.P * self.Q, self.K, self.R * self.S * self.C // self.groups)
        if name == "dgrad":
            return GemmCoord(self.N * self.H * self.W, self.C, self.R * self.S * self.K)
        if name == "wgrad":
            return GemmCoord(self.K, self.R * self.S * self.C, self.N * self.P * self.Q)
        raise InvalidArgumentError(f"implicit_gemm_size: expected 'fprop', 'dgrad' or 'wgrad', got {shown(kind)}")

    @property
    def stride(self) -> tuple[int, int]:
        return (self.stride_h, self.stride_w)

    @property
    def padding(self) -> tuple[int, int]:
        return (self.pad_h, self.pad_w)

    @property
    def dilation(self) -> tuple[int, int]:
        return (self.dilation_h, self.dilation_w)

    def __repr__(self):
        return (f"Conv2DProblemSize(N={self.N}, H={self.H}, W={self.W}, C={self.C}, K={self.K}, R={self.R}, "
                f"S={self.S}, P={self.P}, Q={self.Q}, padding={self.padding}, stride={self.stride}, "
                f"dilation={self.dilation})")

