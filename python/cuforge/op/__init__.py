"""Operations: declare once (types and layouts), run many times."""

from .gemm import Gemm
from .grouped_gemm import GroupedGemm

__all__ = ["Gemm", "GroupedGemm"]
