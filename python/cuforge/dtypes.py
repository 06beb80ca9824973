"""Element types of NumPy, PyTorch and CuPy arrays as cuforge DataTypes (and the CUTLASS Python interface's
conversions between them, its ``cutlass.utils.datatypes``)."""

from __future__ import annotations

import enum
import numbers
import sys

from ._core import DataType, DataTypeError, InvalidArgumentError, LayoutType, size_bits
from .messages import shown

#: Bits of an element of each type (cutlass_library's table of the name, which the interface's scripts read).
DataTypeSize = {t: size_bits(t) for t in DataType}

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
#: The 8-bit floating-point types (per-tensor scales and fast accumulation apply to their plans).
FP8 = frozenset({DataType.e4m3, DataType.e5m2})

_ALIASES = {"half": DataType.f16, "float": DataType.f32, "double": DataType.f64, "tfloat32": DataType.tf32}

_TORCH: dict = {}  # torch.dtype -> DataType, filled on first use so importing cuforge never imports torch


def torch_table(torch) -> dict:
    """torch's dtypes (the module given: never imported here) and their element types; the core's one-call path
    reads this table too, so that torch's types are named in one place."""
    if not _TORCH:
        for name, dt in _NUMPY_NAMES.items():
            if hasattr(torch, name):
                _TORCH[getattr(torch, name)] = dt
    return _TORCH


# cutlass_library's enums (the CUTLASS Python interface's) whose members stand for a cuforge enum of another name.
_INTERFACE_ENUMS = {"TileSchedulerType": "SwizzlingFunctor", "StridedDgradSwizzle": "SwizzlingFunctor"}


def interface_member(value, enum_name: str | None = None) -> bool:
    """Whether `value` is a member of another library's enum (cutlass_library's, the interface's enums): of the enum
    named `enum_name`, or the one the interface used for it, where one is named."""
    if not isinstance(value, enum.Enum) or type(value).__module__.startswith("cuforge"):
        return False
    return enum_name is None or type(value).__name__ in (enum_name, _INTERFACE_ENUMS.get(enum_name))


def interface_instruction(value) -> bool:
    """Whether `value` is cutlass_library's MathInstruction (the interface's tile descriptions held one), whose
    fields compare with cuforge's as its enums' members do."""
    return type(value).__name__ == "MathInstruction" and type(value).__module__.startswith("cutlass_library")


# The NumPy dtypes to_datatype has named, each native (a byte-swapped dtype is another key, and refused).
_BY_NUMPY_DTYPE: dict = {}


def to_datatype(element) -> DataType:
    """DataType of a cuforge DataType, a NumPy/CuPy dtype or scalar type, a torch dtype, or a name."""
    if isinstance(element, DataType):
        return element
    # cutlass_library's members, which the CUTLASS Python interface's DataType is.
    if interface_member(element) and element.name in DataType.__members__:
        return DataType.__members__[element.name]
    if isinstance(element, str):
        if element in DataType.__members__:
            return DataType.__members__[element]
        if element in _ALIASES:
            return _ALIASES[element]
        if element in _NUMPY_NAMES:
            return _NUMPY_NAMES[element]
    elif element is None:  # NumPy's np.dtype(None) is float64
        pass
    elif type(element).__module__ == "torch":
        import torch

        if element in torch_table(torch):
            return _TORCH[element]
    else:
        try:
            import numpy as np

            dtype = np.dtype(element)
        except (TypeError, ValueError, OverflowError):  # no dtype (10**5000 raises ValueError)
            dtype = None
        known = _BY_NUMPY_DTYPE.get(dtype)  # NumPy computes a dtype's name in Python (microseconds a run)
        if known is not None:
            return known
        if dtype is not None and dtype.name in _NUMPY_NAMES:
            if not dtype.isnative:  # its name drops the byte order: the bytes would be read swapped
                raise DataTypeError(f"{dtype.str}: a byte order other than this machine's; pass the array's "
                                    f"x.astype(x.dtype.newbyteorder('='))")
            _BY_NUMPY_DTYPE[dtype] = _NUMPY_NAMES[dtype.name]
            return _NUMPY_NAMES[dtype.name]
    raise DataTypeError(f"cuforge has no element type for {shown(element)} (known: {', '.join(DataType.__members__)})")


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


# The CUTLASS Python interface's conversions (its cutlass.utils.datatypes; cuforge.utils.datatypes is this module).

def library_type(element) -> DataType:
    """The DataType of a DataType, a NumPy/CuPy/torch type or a name (the interface's library_type)."""
    return to_datatype(element)


def numpy_library_type(element) -> DataType | None:
    """The DataType of a NumPy type (np.float16, np.dtype("f2")), else None (the interface's)."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not (isinstance(element, numpy.dtype) or
                             (isinstance(element, type) and issubclass(element, numpy.generic))):
        return None
    return _or_none(element)


def cupy_library_type(element) -> DataType | None:
    """The DataType of a CuPy type (CuPy's are NumPy's), else None (the interface's)."""
    return numpy_library_type(element) if is_cupy_available() else None


def torch_library_type(element) -> DataType | None:
    """The DataType of a torch dtype, else None (the interface's)."""
    torch = sys.modules.get("torch")
    return _or_none(element) if torch is not None and isinstance(element, torch.dtype) else None


def _or_none(element) -> DataType | None:
    try:
        return to_datatype(element)
    except DataTypeError:  # a type of the library that no kernel takes (np.complex128)
        return None


def to_camel_case(snake_str: str) -> str:
    """'row_major' -> 'RowMajor' (the interface's, for its enum options)."""
    return "".join(part.capitalize() for part in snake_str.lower().split("_"))


def getattr_enum(obj, attr_name: str):
    """The member of enum `obj` named by `attr_name` in snake case ('row_major': LayoutType.RowMajor); an
    InvalidArgumentError naming the option where there is none (the interface's)."""
    member = getattr(obj, to_camel_case(attr_name), None)
    if member is None:
        raise InvalidArgumentError(f"Invalid option: {attr_name}")
    return member


def _imported(name: str):
    try:
        return __import__(name)
    except ImportError:
        return None


def is_numpy_available() -> bool:
    return _imported("numpy") is not None


def is_torch_available() -> bool:
    return _imported("torch") is not None


def is_cupy_available() -> bool:
    return _imported("cupy") is not None


def is_numpy_tensor(x) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(x, numpy.ndarray)


def is_torch_tensor(x) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def is_cupy_tensor(x) -> bool:
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(x, cupy.ndarray)


def numpy_type(element):
    """NumPy's scalar type of a DataType (bfloat16 and fp8 where ml_dtypes is imported), else None."""
    import numpy as np

    element = to_datatype(element)
    for name, dt in _NUMPY_NAMES.items():
        if dt == element:
            try:
                return np.dtype(name).type
            except TypeError:  # bfloat16, float8_*: NumPy names them once ml_dtypes is imported
                return None
    return None


def cupy_type(element):
    """CuPy's type of a DataType (NumPy's), else None; None without CuPy."""
    return numpy_type(element) if is_cupy_available() else None


def torch_type(element):
    """torch's dtype of a DataType, else None; None without torch."""
    torch = _imported("torch")
    if torch is None:
        return None
    element = to_datatype(element)
    return next((t for t, dt in torch_table(torch).items() if dt == element), None)


def get_datatype_and_layout(tensor) -> tuple:
    """(DataType, LayoutType) of a NumPy or CuPy array (row- or column-major by its contiguity), a torch tensor
    (row-major) or a Python number (f32), as the interface reads a plan's tensors."""
    if isinstance(tensor, (int, float)) and not is_bool(tensor):
        return DataType.f32, LayoutType.RowMajor
    if is_torch_tensor(tensor):
        return to_datatype(tensor.dtype), LayoutType.RowMajor
    if is_numpy_tensor(tensor) or is_cupy_tensor(tensor):
        if tensor.flags.c_contiguous:
            return to_datatype(tensor.dtype), LayoutType.RowMajor
        if tensor.flags.f_contiguous:
            return to_datatype(tensor.dtype), LayoutType.ColumnMajor
        raise InvalidArgumentError(f"get_datatype_and_layout: an array of strides {tensor.strides} is neither row- "
                                   f"nor column-major")
    raise InvalidArgumentError(f"get_datatype_and_layout: expected a NumPy, CuPy or torch array or a number, got "
                               f"{type(tensor).__name__}")


def get_tensor_shape(tensor, op: str = "GEMM") -> tuple:
    """An array's shape (a torch tensor's NCHW as NHWC where ``op`` is "CONV"); (1,) for a number."""
    if isinstance(tensor, (int, float)) and not is_bool(tensor):
        return (1,)
    if is_torch_tensor(tensor):
        size = tuple(tensor.size())
        return (size[0], size[2], size[3], size[1]) if op == "CONV" and len(size) == 4 else size
    if is_numpy_tensor(tensor) or is_cupy_tensor(tensor):
        return tuple(tensor.shape)
    raise InvalidArgumentError(f"get_tensor_shape: expected a NumPy, CuPy or torch array or a number, got "
                               f"{type(tensor).__name__}")
