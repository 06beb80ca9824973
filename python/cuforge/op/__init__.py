"""Operations: declare once (types and layouts), run many times."""

from .gemm import Gemm

__all__ = ["Gemm"]
