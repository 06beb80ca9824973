"""A plan's element types and layouts from what its constructor was given: element_X/layout_X, else its
tensor's, else the generic element/layout (the CUTLASS Python interface's order: a tensor's own type is never
overridden by the generic one); C and D without either take the other's tensor's type (cuforge's own)."""

from __future__ import annotations

from .._core import DataType, DataTypeError, InvalidArgumentError, LayoutType
from ..arguments import enum_value, layout_of
from ..arrays import operand_extents
from ..dtypes import FP8, to_datatype

# The 8-bit types, whose tensor-op kernels read A and B K-major.
_EIGHT_BIT = FP8 | {DataType.s8}


def datatype(value, label: str) -> DataType:
    """``value`` as a DataType; a DataTypeError names the argument that gave it."""
    try:
        return to_datatype(value)
    except DataTypeError as e:
        raise DataTypeError(f"{label}: {e}") from None


def _first(tensor):
    """A grouped plan's operand as its first group's given (C's may be None); another plan's as given."""
    if isinstance(tensor, (list, tuple)):
        return next((t for t in tensor if t is not None), None)
    return tensor


def _says_layout(x, name: str) -> bool:
    """A matrix of more than one row and column (a vector's layout is either)."""
    shape = operand_extents(x, name)
    return len(shape) >= 2 and shape[-2] > 1 and shape[-1] > 1


class OperandTypes:
    """The operands A, B, C, D and the generic element and layout a plan was given."""

    def __init__(self, A, B, C, D, element, layout):
        self._tensors = {"A": A, "B": B, "C": C, "D": D}
        self._element, self._layout = element, layout

    def _type_of(self, tensor, tensor_name: str, name: str) -> DataType | None:
        """A tensor's dtype, else None where element= stands in."""
        dtype = getattr(tensor, "dtype", None)
        if dtype is not None:
            given = "" if tensor_name == name else f" (for element_{name})"
            return datatype(dtype, f"{tensor_name}'s dtype{given}")
        if self._element is None:
            raise InvalidArgumentError(f"{tensor_name}: expected an array or tensor (with a dtype), got "
                                       f"{type(tensor).__name__}; or give element=")
        return None

    def element(self, explicit, name: str, other: str | None = None) -> DataType:
        """Operand ``name``'s element type: element_X, its tensor's, element, the ``other``'s tensor's (C, D)."""
        own = _first(self._tensors[name])
        if explicit is not None:
            chosen = datatype(explicit, f"element_{name}")
            dtype = getattr(own, "dtype", None)
            # A tensor of another type than its element_X could never run (the interface refused both given).
            if dtype is not None and chosen != DataType.void and datatype(dtype, f"{name}'s dtype") != chosen:
                raise DataTypeError(f"element_{name} is {chosen.name}, but the tensor {name} given with it holds "
                                    f"{datatype(dtype, name).name}: give one of them")
            return chosen
        if own is not None and (dtype := self._type_of(own, name, name)) is not None:
            return dtype
        if self._element is not None:
            return datatype(self._element, "element")
        if other is not None and (tensor := _first(self._tensors[other])) is not None:
            return self._type_of(tensor, other, name)
        raise InvalidArgumentError(f"element_{name}: give element=, element_{name}= or a tensor {name}=")

    def layout(self, explicit, name: str, element: DataType | None = None) -> LayoutType:
        """Operand ``name``'s layout (C's from D's tensor, else C's): layout_X, that of its tensor of more than
        one row and column, layout, else row-major (8-bit A and B given as vectors: K-major)."""
        if explicit is not None:
            return enum_value(explicit, LayoutType, f"layout_{name}")
        tensor = self._tensors[name] if name != "C" or self._tensors["D"] is None else self._tensors["D"]
        tensors = tensor if isinstance(tensor, (list, tuple)) else [tensor]
        telling = next((x for x in tensors if x is not None and _says_layout(x, name)), None)
        if telling is not None:
            return layout_of(telling, name)
        if self._layout is not None:
            return enum_value(self._layout, LayoutType, "layout")
        # Vectors only: 8-bit A and B take the layouts their tensor-op kernels read (K-major), either fits.
        if element in _EIGHT_BIT and any(x is not None for x in tensors):
            return LayoutType.RowMajor if name == "A" else LayoutType.ColumnMajor
        return LayoutType.RowMajor
