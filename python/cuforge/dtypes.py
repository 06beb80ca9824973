"""Element types of NumPy, PyTorch and CuPy arrays as cuforge DataTypes."""

from __future__ import annotations

import enum
import numbers

from ._core import DataType, DataTypeError

# NumPy dtype names (CuPy shares them; ml_dtypes adds bfloat16 and the fp8 types).
_NUMPY_NAMES = {
    "float16": DataType.f16,
    "bfloat16": DataType.bf16,
    "float32": DataType.f32,
    "float64": DataType.f64,
    "int8": DataType.s8,
    "uint8": DataType.u8,
    "int32": DataType.s32,
    "float8_e4m3fn": DataType.e4m3,
    "float8_e5m2": DataType.e5m2,
}

# Spellings accepted as strings, besides the DataType member names.
_ALIASES = {"half": DataType.f16, "float": DataType.f32, "double": DataType.f64, "tfloat32": DataType.tf32}

_TORCH: dict = {}  # torch.dtype -> DataType, filled on first use so importing cuforge never imports torch


def _torch_table(torch) -> dict:
    if not _TORCH:
        for name, dt in _NUMPY_NAMES.items():
            if hasattr(torch, name):
                _TORCH[getattr(torch, name)] = dt
    return _TORCH


def to_datatype(element) -> DataType:
    """DataType of a cuforge DataType, a NumPy/CuPy dtype or scalar type, a torch dtype, or a name."""
    if isinstance(element, DataType):
        return element
    # cutlass_library's members, which the CUTLASS Python interface's DataType is.
    if isinstance(element, enum.Enum) and not type(element).__module__.startswith("cuforge") and \
            element.name in DataType.__members__:
        return DataType.__members__[element.name]
    if isinstance(element, str):
        if element in DataType.__members__:
            return DataType.__members__[element]
        if element in _ALIASES:
            return _ALIASES[element]
        if element in _NUMPY_NAMES:
            return _NUMPY_NAMES[element]
    elif type(element).__module__ == "torch":
        import torch

        if element in _torch_table(torch):
            return _TORCH[element]
    else:
        try:
            import numpy as np

            dtype = np.dtype(element)
        except TypeError:
            dtype = None
        if dtype is not None and dtype.name in _NUMPY_NAMES:
            if not dtype.isnative:  # its name drops the byte order: the bytes would be read swapped
                raise DataTypeError(f"{dtype.str}: a byte order other than this machine's; pass the array's "
                                    f"x.astype(x.dtype.newbyteorder('='))")
            return _NUMPY_NAMES[dtype.name]
    raise DataTypeError(f"cuforge has no element type for {element!r} (known: {', '.join(DataType.__members__)})")


def is_bool(value) -> bool:
    """Python's bool or NumPy's (numpy.bool_, named numpy.bool since NumPy 2)."""
    return isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"))


def bool_or_complex(value) -> bool:
    """A bool or a complex number, NumPy's too (numpy.bool_, numpy.complex64, ...): not what a real-valued
    argument (alpha, beta, a slope) may be."""
    return is_bool(value) or (isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real))


def torch_datatype(dtype) -> DataType:
    """Fast path for a torch.dtype (no module inspection)."""
    dt = _TORCH.get(dtype)
    if dt is None:
        return to_datatype(dtype)
    return dt
