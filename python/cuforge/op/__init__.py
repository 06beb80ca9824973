"""Operations: declare once (types and layouts), run many times."""

from .conv2d import Conv2d, Conv2dDgrad, Conv2dFprop, Conv2dWgrad
from .gemm import Gemm
from .grouped_gemm import GroupedGemm
from .plan import Plan as OperationBase  # the CUTLASS Python interface's name of the operations' base class

__all__ = ["Conv2d", "Conv2dDgrad", "Conv2dFprop", "Conv2dWgrad", "Gemm", "GroupedGemm", "OperationBase"]
