"""cuforge: pick, emit, compile (once, cached) and run CUTLASS kernels from Python.

``import cuforge as cutlass`` runs code written for the CUTLASS Python interface::

    plan = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    plan.run(A, B, C, D)
"""

from __future__ import annotations

import atexit
import logging

from . import _core, emit, epilogue, op, shape, swizzle
from ._core import (
    Activation,
    CacheError,
    CompilationError,
    DataType,
    DataTypeError,
    Decomposition,
    DeviceError,
    EpilogueScheduleType,
    KernelKind,
    Error,
    InvalidArgumentError,
    IteratorAlgorithm,
    KernelScheduleType,
    LayoutType,
    MathInstruction,
    MathOperation,
    OpcodeClass,
    TileDescription,
    TileSchedulerType,
    ToolchainError,
    device_count,
    toolchain,
    tuning_record,
    tuning_record_clear,
)
from .build import build
from .messages import shown
from .cutlass_headers import cutlass_path
from .environment import (check_cuda_versions, cuda_install_path, device_cc, device_id, device_sm_count,
                          initialize_cuda_context, nvcc_version)
from .memory import MemoryPool, create_memory_pool, get_memory_pool, use_rmm
from . import arguments as _arguments
from .arguments import capability, enum_value, text
from .shape import ConvMode
from .op import Conv2d, Conv2dDgrad, Conv2dFprop, Conv2dWgrad, Gemm, GroupedGemm  # the interface's top-level names
from .emit import pytorch
from .op import OperationBase
from . import seed as _seed

__version__ = "0.1.0"

# A tile description made by hand names no instruction; a plan's tile_descriptions() fill these in.
TileDescription.math_instruction = None
TileDescription.instruction_shape = None
_arguments.write_through_triples(TileDescription)  # td.cluster_shape[0] = 2 changes td, as the interface's lists do
_seed.register()  # the interface's module paths: cuforge.utils.datatypes, cuforge.backend.utils.device ...

#: The CUTLASS tree cuforge compiles against (CUTLASS_PATH, else the nvidia-cutlass wheel's headers); also as
#: the interface's other name of it, source_path.
CUTLASS_PATH = source_path = cutlass_path()
_core.set_default_cutlass_path(CUTLASS_PATH)

#: What the core decides and notices (a kernel chosen, a cache entry rebuilt) goes to this logger.
logger = logging.getLogger("cuforge")
_LEVELS = (logging.DEBUG, logging.INFO, logging.WARNING)
_core.set_log_sink(lambda level, message: logger.log(_LEVELS[level], message))
atexit.register(_core.set_log_sink, None)  # the core lets go of the Python callable before shutdown


def set_log_level(level) -> None:
    """How much of what cuforge decides is logged: a logging level (logging.INFO shows each kernel
    chosen for a problem class, each nvcc build and its time, the tuning record's and autotuning's
    choices; logging.WARNING only what went wrong) or its name ("INFO"). Messages go to the "cuforge"
    logger."""
    if isinstance(level, str) and isinstance(logging.getLevelName(level.upper()), int):
        level = logging.getLevelName(level.upper())  # a name's number (getLevelNamesMapping is 3.11's)
    if isinstance(level, bool) or not isinstance(level, int):
        raise InvalidArgumentError(f"set_log_level: expected a logging level (logging.INFO) or its name, got {shown(level)}")
    logger.setLevel(level)


def __getattr__(name: str):
    # cuforge.ops (PyTorch custom operators) imports torch: only when it is asked for.
    if name == "ops":
        import importlib

        return importlib.import_module(".ops", __name__)
    if name == "Tensor":  # the interface's visitor-tree tensors
        raise epilogue.not_offered(epilogue.visitor_trees("cuforge.Tensor"))
    if name == "get_option_registry":  # the interface's tables of default kernels (its library_defaults)
        raise epilogue.not_offered("cuforge.get_option_registry: " + _seed.NOT_OFFERED["library_defaults"])
    raise AttributeError(f"module 'cuforge' has no attribute {name!r}")


def compile_statistics() -> dict:
    """What this process asked of nvcc so far: requests, cache_hits, builds (nvcc runs) and failures."""
    return _core.compile_statistics()


def cache_verify() -> list[dict]:
    """Every kernel cache entry (key, name) with what is wrong with it ('' when sound). Unsound
    entries are rebuilt when next used; this removes nothing. Raises CacheError when the cache
    itself is unusable."""
    return _core.cache_verify()


def cache_info() -> dict:
    """The kernel cache: its root, published entries and bytes, builds in progress or left by dead
    builds (staging), kept failed builds, and the PyTorch modules emit.pytorch built (torch_modules,
    torch_bytes)."""
    return _core.cache_info()


def cache_clear() -> None:
    """Removes every kernel the cache holds (waiting for builds in progress) and the PyTorch modules
    ``emit.pytorch(jit=True)`` built from them, as ``cuforge cache clear`` does; the tuning record stays
    (``cuforge cache clear-tuning`` removes it)."""
    _core.cache_clear()


def list_gemms(arch: int | None = None, glob: str = "", kind: KernelKind | None = None) -> list[str]:
    """Names of the catalog's kernels, optionally of one architecture (80, 90), a name glob and one
    kind (KernelKind.Gemm, Grouped, Conv2dFprop, Conv2dDgrad or Conv2dWgrad; default: every kind)."""
    if arch is not None and capability(arch, "arch") == 0:
        raise InvalidArgumentError("arch: expected a kernel family such as 90, got 0")
    glob = text(glob, "glob", "a shell pattern on kernel names")
    return _core.list_gemms(arch, glob, None if kind is None else enum_value(kind, KernelKind, "kind"))


def cache_dir() -> str:
    """The kernel cache in use: the format's directory (v1) under CUFORGE_CACHE_DIR (a relative one taken
    against the working directory once), else under the user's cache directory ($XDG_CACHE_HOME/cuforge
    where that is absolute, or ~/.cache/cuforge)."""
    return _core.cache_dir()


__all__ = [
    "Activation", "build", "cache_clear", "cache_dir", "cache_info", "cache_verify", "CacheError",
    "check_cuda_versions", "CompilationError", "compile_statistics", "Conv2d", "Conv2dDgrad", "Conv2dFprop",
    "Conv2dWgrad", "ConvMode", "create_memory_pool", "cuda_install_path", "CUTLASS_PATH", "cutlass_path",
    "DataType", "DataTypeError", "Decomposition", "device_cc", "device_count", "device_id", "device_sm_count", "DeviceError", "emit",
    "epilogue", "EpilogueScheduleType", "Error", "Gemm", "get_memory_pool", "GroupedGemm", "InvalidArgumentError",
    "initialize_cuda_context", "IteratorAlgorithm", "KernelKind", "KernelScheduleType", "LayoutType", "list_gemms",
    "logger",
    "MathInstruction", "MathOperation", "MemoryPool", "nvcc_version", "op", "OpcodeClass", "OperationBase", "pytorch",
    "set_log_level", "shape", "source_path", "swizzle", "TileDescription", "TileSchedulerType", "toolchain", "ToolchainError",
    "tuning_record", "tuning_record_clear", "use_rmm",
]
