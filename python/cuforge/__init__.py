"""cuforge: pick, emit, compile (once, cached) and run CUTLASS kernels from Python.

``import cuforge as cutlass`` runs code written for the CUTLASS Python interface::

    plan = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    plan.run(A, B, C, D)
"""

from __future__ import annotations

from . import _core, epilogue, op, swizzle
from ._core import (
    Activation,
    CacheError,
    CompilationError,
    DataType,
    DataTypeError,
    Decomposition,
    DeviceError,
    EpilogueScheduleType,
    Error,
    InvalidArgumentError,
    KernelScheduleType,
    LayoutType,
    MathOperation,
    OpcodeClass,
    TileDescription,
    TileSchedulerType,
    ToolchainError,
    device_count,
    emit,
    toolchain,
)
from .build import build
from .cutlass_headers import cutlass_path

__version__ = "0.1.0"

_core.set_default_cutlass_path(cutlass_path())


def list_gemms(arch: int | None = None, glob: str = "") -> list[str]:
    """Names of the catalog's GEMM kernels, optionally for one architecture (80, 90) and a name glob."""
    return _core.list_gemms(arch, glob)


def cache_dir() -> str:
    """The kernel cache in use (CUFORGE_CACHE_DIR, else the user's cache directory)."""
    return _core.cache_dir()


__all__ = [
    "Activation", "CacheError", "CompilationError", "DataType", "DataTypeError", "Decomposition", "DeviceError",
    "EpilogueScheduleType", "Error", "InvalidArgumentError", "KernelScheduleType", "LayoutType", "MathOperation",
    "OpcodeClass", "TileDescription", "TileSchedulerType", "ToolchainError", "build", "cache_dir", "cutlass_path",
    "device_count", "emit", "epilogue", "list_gemms", "op", "swizzle", "toolchain",
]
