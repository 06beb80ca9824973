"""How cuforge reads the arguments of its Python API into the core's terms: enums (the CUTLASS
Python interface's spellings too), integers, flags, scalars, problem lists, alignments, compute
capabilities, and tile descriptions (objects or seed-style dicts). Each refuses a value with an
InvalidArgumentError naming the argument."""

from __future__ import annotations

import copy
import logging
import numbers
import os

from . import _core
from ._core import InvalidArgumentError, LayoutType, MathInstruction, TileDescription
from .arrays import describe, host_descriptor
from .dtypes import bool_or_complex, interface_instruction, interface_member, is_bool
from .messages import shown

_logger = logging.getLogger("cuforge")


def layout_of(x, name) -> LayoutType | None:
    """Column-major when the array's rows, not its columns, are the contiguous dimension."""
    if x is None:
        return None
    _, _, shape, strides, _ = describe(x, name) or host_descriptor(x, -1, name)
    if len(shape) >= 2 and shape[-2] > 1 and strides[-2] == 1 and strides[-1] != 1:
        return LayoutType.ColumnMajor
    return LayoutType.RowMajor


def enum_value(value, enum, name: str):
    """A member of a cuforge enum, given as the member, its name ("Simt", "RowMajor"), the CUTLASS
    Python interface's snake_case spelling of it ("tensor_op"), or cutlass_library's member of that
    name of the enum of that name (the interface's enums are cutlass_library's; its swizzles
    SwizzlingFunctor's)."""
    if isinstance(value, enum):
        return value
    if interface_member(value):
        if not interface_member(value, enum.__name__):
            raise InvalidArgumentError(f"{name}: expected a cuforge.{enum.__name__} (or cutlass_library's "
                                       f"{enum.__name__}), got {type(value).__name__}.{value.name}")
        value = value.name
    if isinstance(value, str):  # a member's name in any case, with or without underscores (the interface's
        spelled = value.replace("_", "").casefold()  # getattr_enum: "tensor_op", "TENSOR_OP", "SIMT", "RowMajor")
        for name_of, member in enum.__members__.items():
            if name_of.replace("_", "").casefold() == spelled:
                return member
    raise InvalidArgumentError(f"{name}: expected a cuforge.{enum.__name__} (one of {', '.join(enum.__members__)}), "
                               f"got {shown(value)}")


def text(value, name: str, what: str) -> str:
    """A str as the core takes it, in UTF-8: `what` names what was expected of another type. A str that UTF-8
    cannot hold (a lone surrogate, as os.fsdecode makes of bytes that are not UTF-8) is refused here, where
    the core's bindings would say only "incompatible function arguments"."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name}: expected {what}, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidArgumentError(f"{name}: {shown(value)} is not Unicode text (a lone surrogate at position {e.start})") \
            from None
    return value


def file_path(value, name: str, what: str) -> str:
    """A path given as a str or an os.PathLike of one, as that str: refused where it is neither, or where it holds a
    NUL character or a character the file system's encoding has no bytes for, which no path can (the OS calls would
    raise a bare ValueError or UnicodeEncodeError)."""
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(path, str):
        raise InvalidArgumentError(f"{name}: expected {what}, got {type(value).__name__}")
    if "\0" in path:
        raise InvalidArgumentError(f"{name}: {path!r} holds a NUL character, which no path can")
    try:
        os.fsencode(path)
    except UnicodeEncodeError as e:  # a lone surrogate the file system's encoding has no bytes for
        raise InvalidArgumentError(f"{name}: {path!r} has no bytes in the file system's encoding ({e.reason})") from None
    return path


def integer(value, name: str, low: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentError(f"{name}: expected an integer, got {shown(value)} ({type(value).__name__})")
    if low is not None and value < low:
        raise InvalidArgumentError(f"{name}: expected {low} or more, got {shown(value)}")
    if not -2**63 <= value < 2**63:
        raise InvalidArgumentError(f"{name}: {shown(value)} is beyond any size cuforge can run")
    return int(value)


def height_width(value, name: str, low: int) -> tuple[int, int]:
    """A convolution's stride, padding or dilation: one integer for both axes, or (height, width)."""
    if isinstance(value, numbers.Integral):
        return integer(value, name, low), integer(value, name, low)
    items = fixed_items(value, (2,))
    if items is None:
        raise InvalidArgumentError(f"{name}: expected an integer or (height, width), got {shown(value)}")
    return integer(items[0], name, low), integer(items[1], name, low)


def conv_geometry(stride, padding, dilation) -> tuple:
    """A convolution's (stride, padding, dilation), each as height_width reads it (stride and dilation 1 or more,
    padding 0 or more)."""
    return (height_width(stride, "stride", 1), height_width(padding, "padding", 0),
            height_width(dilation, "dilation", 1))


def fixed_items(value, lengths) -> tuple | None:
    """The items of a list, tuple or other sized sequence (a NumPy vector) of one of `lengths` items, else None:
    not of a string, a mapping, a set or a 0-d array, whose lengths mean no items."""
    if isinstance(value, (str, bytes, dict, set, frozenset)) or not hasattr(value, "__len__"):
        return None
    try:
        items = tuple(value)
    except TypeError:  # sized but not iterable over items (a 0-d array)
        return None
    return items if len(items) in lengths else None


def ranked_top(ranked: list, top) -> list:
    """The first ``top`` of a plan's ranked candidates (all of them for None)."""
    if top is None:
        return ranked
    top = integer(top, "top")
    if top < 1:
        raise InvalidArgumentError(f"top: expected at least 1 candidate, got {top}")
    return ranked[:top]


def jobs_count(jobs) -> int:
    """How many nvcc processes at once: None or 0 is one per core."""
    jobs = 0 if jobs is None else integer(jobs, "jobs", 0)
    if jobs >= 2**31:
        raise InvalidArgumentError(f"jobs: expected 0 (one per core) to {2**31 - 1} nvcc processes, got {jobs}")
    return jobs


def problem_list(problems, each: str, lengths: tuple) -> list:
    """compile()'s ``problems``: a list or tuple of ``each``, every entry a sequence of one of
    ``lengths`` items."""
    if not isinstance(problems, (list, tuple)):
        raise InvalidArgumentError(f"problems: expected a list of {each}, got {type(problems).__name__}")
    checked = []
    for problem in problems:
        items = fixed_items(problem, lengths)
        if items is None:
            raise InvalidArgumentError(f"problems: expected {each}, got {shown(problem)}")
        checked.append(items)
    return checked


def capability(value, name: str) -> int:
    """A compute capability as given (0: the device's); the core says which it builds for."""
    value = integer(value, name, 0)
    if value >= 2**31:
        raise InvalidArgumentError(f"{name}: {value} is not a compute capability (such as 90)")
    return value


def device_ordinal(value) -> int:
    """A CUDA device ordinal as given (0 or more); the core says whether that device exists."""
    value = integer(value, "device", 0)
    if value >= 2**31:
        raise InvalidArgumentError(f"device: {value} is not a CUDA device ordinal")
    return value


def flag(value, name: str) -> bool:
    """A boolean (Python's or NumPy's bool: numpy.bool_, named numpy.bool since NumPy 2)."""
    if not is_bool(value):
        raise InvalidArgumentError(f"{name}: expected True or False, got {shown(value)}")
    return bool(value)


def _triple(value, name: str) -> list[int]:
    items = fixed_items(value, (3,))
    if items is None:
        raise InvalidArgumentError(f"{name}: expected three integers (M, N, K), got {shown(value)}")
    return [integer(v, name, 0) for v in items]


# The fields of a seed-style tile description dict, and how each is read.
_TILE_FIELDS = {
    "threadblock_shape": _triple,
    "warp_count": _triple,
    "cluster_shape": _triple,
    "stages": lambda v, name: integer(v, name, 0),
    "kernel_schedule": lambda v, name: enum_value(v, _core.KernelScheduleType, name),
    "epilogue_schedule": lambda v, name: enum_value(v, _core.EpilogueScheduleType, name),
    "tile_scheduler": lambda v, name: enum_value(v, _core.TileSchedulerType, name),
    "swap_ab": flag,
}


class TileTriple(list):
    """A tile description's threadblock_shape, warp_count or cluster_shape as the CUTLASS Python interface's
    plain list, changed in place (``td.cluster_shape[0] = 2``) into the description it came from (through the
    property's checks: a value it refuses leaves both as they were; the description's other values as they
    are now). Its length is three: what would change it is refused. Copies and pickles are plain lists."""

    __slots__ = ("_tile", "_field")

    def __init__(self, values, tile, field: str):
        super().__init__(values)
        self._tile, self._field = tile, field

    def __setitem__(self, index, value):
        changed = list(getattr(self._tile, self._field))
        try:
            changed[index] = value
        except (IndexError, TypeError, ValueError) as e:  # an index past the three, a str, an extended slice
            raise InvalidArgumentError(f"TileDescription.{self._field}[{shown(index)}]: {e}; the list holds three "
                                       "integers") from None
        setattr(self._tile, self._field, changed)
        super().__setitem__(slice(None), getattr(self._tile, self._field))

    def _fixed(self, *args, **kwargs):
        raise InvalidArgumentError(f"TileDescription.{self._field}: three integers; set one (td.{self._field}[0] = "
                                   f"2), or the whole list")

    __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = __iadd__ = __imul__ = _fixed

    def __copy__(self):
        return list(self)

    def __deepcopy__(self, memo):
        return list(self)

    def __reduce__(self):
        return list, (list(self),)


def write_through_triples(cls) -> None:
    """``cls``'s three-integer properties return TileTriple, which changes the description in place."""
    for field in ("threadblock_shape", "warp_count", "cluster_shape"):
        given = getattr(cls, field)
        setattr(cls, field, property(lambda tile, get=given.fget, field=field: TileTriple(get(tile), tile, field),
                                     given.fset, doc=given.__doc__))


def alignments(a, b, c) -> list:
    """alignment_A/B/C as the core takes them: None (as the sizes allow) or a whole number of elements
    (the core says which powers of two the type allows; anything past 32 bits is none of them)."""
    out = []
    for v, name in ((a, "alignment_A"), (b, "alignment_B"), (c, "alignment_C")):
        value = None if v is None else integer(v, name, 1)
        if value is not None and value > 2**31 - 1:
            raise InvalidArgumentError(f"{name}: expected a power of two of at most 16 bytes of elements, got {v}")
        out.append(value)
    return out


def runs_as(shape, instruction) -> bool:
    """Whether a pinned instruction shape runs as the plan's own instruction: the same, or mma.sync's of
    half its K (the CUTLASS Python interface's conv tests pin SM80's 16x8x8 f16 mma where cuforge's 16-bit
    SM80 kernels issue 16x8x16: the same products, summed in twos of the narrower one's K); cuforge builds
    one instruction per family and type."""
    own, shape = list(instruction.instruction_shape), list(shape)
    return shape == own or (own[0] == 16 and shape[:2] == own[:2] and 2 * shape[2] == own[2])


def _log_narrower(shape, instruction):
    own = list(instruction.instruction_shape)
    if list(shape) != own:
        _logger.info("instruction_shape %s: cuforge's kernels of these types issue the %s instruction, the same "
                     "products over a wider K; the tile runs with it", "x".join(map(str, shape)),
                     "x".join(map(str, own)))


def _same_instruction(a, b) -> bool:
    fields = ("element_a", "element_b", "element_accumulator", "opcode_class", "math_operation")
    return runs_as(a.instruction_shape, b) and all(getattr(a, f) == getattr(b, f) for f in fields)


def named_instruction(tile: TileDescription):
    """The math_instruction a tile description names: None (made by hand), a plan's, or cutlass_library's
    MathInstruction, not another value."""
    given = getattr(tile, "math_instruction", None)
    if given is not None and not isinstance(given, MathInstruction) and not interface_instruction(given):
        raise InvalidArgumentError(f"tile_description.math_instruction: expected a cuforge.MathInstruction (one "
                                   f"of plan.tile_descriptions()'s) or None, got {type(given).__name__}")
    return given


def _instruction_shape(value, name: str, instruction) -> None:
    """A tile's instruction_shape: the plan's instruction's, or a narrower K of it (logged); else refused."""
    shape = _triple(value, name)
    if not runs_as(shape, instruction):
        raise InvalidArgumentError(
            f"{name}: this plan's kernels compute with {shown(instruction)}, not {'x'.join(map(str, shape))}")
    _log_narrower(shape, instruction)


def tile_from(value, base: TileDescription, instruction) -> TileDescription:
    """A tile description as given (one naming another plan's math_instruction refused), or one from a
    seed-style dict: ``base`` with the dict's keys changed. ``instruction_shape`` may be given as the
    plan's own (its kernels compute with that instruction), or a narrower K of it (runs_as); another one
    is refused."""
    if isinstance(value, TileDescription):
        given = named_instruction(value)
        if given is not None and not _same_instruction(given, instruction):
            if interface_instruction(given):  # its repr names no field
                math = getattr(given, "math_operation", None)
                given = (f"cutlass_library's MathInstruction({'x'.join(map(str, given.instruction_shape))}, "
                         f"{given.element_a.name} x {given.element_b.name} -> {given.element_accumulator.name}, "
                         f"{given.opcode_class.name}, {getattr(math, 'name', math)})")
                instruction = f"{shown(instruction)} ({instruction.math_operation.name})"
            raise InvalidArgumentError(f"tile_description: its math_instruction is {given!s}; this plan's kernels "
                                       f"compute with {instruction!s} (plan.tile_descriptions() lists its tiles)")
        if given is not None:
            _log_narrower(given.instruction_shape, instruction)
        shape = getattr(value, "instruction_shape", None)  # tile_descriptions() sets it; a user may change it
        name = "tile_description.instruction_shape"
        if shape is not None and (given is None or list(_triple(shape, name)) != list(given.instruction_shape)):
            _instruction_shape(shape, name, instruction)
        return value
    if not isinstance(value, dict):
        raise InvalidArgumentError(
            f"tile_description: expected a cuforge.TileDescription or a dict, got {type(value).__name__}")
    td = copy.copy(base)
    for key, v in value.items():
        name = f"tile_description[{shown(key)}]"
        if key == "instruction_shape":
            _instruction_shape(v, name, instruction)
            continue
        if key not in _TILE_FIELDS:
            raise InvalidArgumentError(
                f"tile_description: unknown key {shown(key)} (known: {', '.join(_TILE_FIELDS)}, instruction_shape)")
        setattr(td, key, _TILE_FIELDS[key](v, name))
    return td


def scalar(value, name: str) -> float:
    """alpha or beta as a float: a real number, or an array or tensor of one element (on any device)."""
    if type(value) is float:  # the common case, once per run
        return value
    if bool_or_complex(value) or isinstance(value, (str, bytes)) or value is None:
        raise InvalidArgumentError(f"{name}: expected a real number, got {shown(value)} ({type(value).__name__})")
    kind = getattr(getattr(value, "dtype", None), "kind", None)  # NumPy's (torch's dtypes have none)
    if isinstance(kind, str) and kind not in "iufbcO":  # text, bytes, dates, times; bool, complex, objects: below: '2' is no number
        raise InvalidArgumentError(f"{name}: expected a real number, got {type(value).__name__} of dtype {value.dtype}")
    size = getattr(value, "size", None)
    count = value.numel() if hasattr(value, "numel") else (size if isinstance(size, int) else 1)
    if count != 1:
        raise InvalidArgumentError(f"{name}: expected a real number, got {type(value).__name__} of {count} elements "
                                   f"(shape {tuple(getattr(value, 'shape', ()))})")
    try:
        item = value.item() if hasattr(value, "item") else value
        if bool_or_complex(item):  # an array of one bool or complex element
            raise TypeError(f"its element is {type(item).__name__}")
        return float(item)
    except (TypeError, ValueError, RuntimeError, OverflowError) as e:
        raise InvalidArgumentError(f"{name}: expected a real number, got {shown(value)}: {e}") from None
