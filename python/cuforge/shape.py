"""Problem shapes of the CUTLASS Python interface: ``cutlass.shape.Conv2DProblemSize``."""

from __future__ import annotations

import enum

from . import _core
from ._core import InvalidArgumentError
from .op.arguments import integer


class ConvMode(enum.Enum):
    """How the filter is applied: cross-correlation (what deep-learning frameworks call convolution,
    and what cuforge's kernels compute) or the mathematical convolution (the filter flipped)."""

    CrossCorrelation = "cross_correlation"
    Convolution = "convolution"


class Conv2DProblemSize:
    """A 2-D convolution's sizes as the CUTLASS Python interface spells them:
    ``Conv2DProblemSize(N, H, W, C, K, R, S, C, pad_h, pad_w, stride_h, stride_w, dilation_h,
    dilation_w)``; P and Q, the output's height and width, follow. The second C is the filter's
    channels (equal to the input's: grouped convolutions are not offered)."""

    def __init__(self, N, H, W, C, K, R, S, C_filter, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w,
                 mode=ConvMode.CrossCorrelation, split_k_slices=1, groups=1):
        for name, value, low in (("N", N, 1), ("H", H, 1), ("W", W, 1), ("C", C, 1), ("K", K, 1), ("R", R, 1),
                                 ("S", S, 1), ("pad_h", pad_h, 0), ("pad_w", pad_w, 0), ("stride_h", stride_h, 1),
                                 ("stride_w", stride_w, 1), ("dilation_h", dilation_h, 1),
                                 ("dilation_w", dilation_w, 1), ("split_k_slices", split_k_slices, 1)):
            setattr(self, name, integer(value, name, low))
        if integer(C_filter, "C (the filter's)", 1) != self.C:
            raise InvalidArgumentError(f"C: the filter's channels ({C_filter}) must equal the input's ({C}): grouped "
                                       f"convolutions are not offered")
        if integer(groups, "groups", 1) != 1:
            raise InvalidArgumentError(f"groups: grouped convolutions are not offered (groups must be 1, got {groups})")
        # The interface's mode is cutlass_library's ConvMode, or a name of it.
        spelt = mode.name if isinstance(mode, enum.Enum) else mode
        if mode is not ConvMode.CrossCorrelation and not (isinstance(spelt, str) and
                                                          spelt in ("CrossCorrelation", "cross_correlation")):
            raise InvalidArgumentError(f"mode: cuforge's kernels compute cross-correlation (ConvMode.CrossCorrelation), "
                                       f"got {mode!r}")
        mode = ConvMode.CrossCorrelation
        self.mode, self.groups = mode, 1
        self.P, self.Q = _core.conv_output_size(
            (self.N, self.H, self.W, self.C, self.K, self.R, self.S), self.stride, self.padding, self.dilation)

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


def __getattr__(name: str):
    # The interface's GEMM coordinates: cuforge's plans take M, N, K (and a batch) as integers.
    if name in ("GemmCoord", "MatrixCoord"):
        from .epilogue import NotOfferedError

        raise NotOfferedError(f"cuforge.shape.{name} is not offered: plans take M, N and K as integers "
                              "(plan.construct(M=, N=, K=), plan.select(M, N, K))")
    raise AttributeError(f"module 'cuforge.shape' has no attribute {name!r}")
