"""The CUTLASS Python interface's module paths whose names cuforge keeps in its own modules, registered under
cuforge (and in sys.modules, so that ``import cuforge.utils.datatypes`` works as the interface's import does):

- ``backend.utils.device``: device_cc and device_sm_count (the interface's notebooks import device_cc there);
- ``utils.datatypes``: its conversions between element types (cuforge.dtypes);
- ``op.gemm_grouped``, ``op.conv`` and ``op.op``: the modules of GroupedGemm, Conv2d and OperationBase;
- ``backend.epilogue`` and ``epilogue.epilogue``: the activations (cuforge.epilogue);
- ``utils.profiler``: its CUDAEventProfiler (cuforge.event_profiler's, imported on use: it needs NumPy).

Importing one of the interface's modules that cuforge has no counterpart of (``cutlass.backend.evt``) raises a
ModuleNotFoundError that says why, and what to use instead.

Its TileDescription's helpers too: ``procedural_name()``, ``procedural_name_2x()``, ``clone_and_update(dict)`` and
``num_threads``; and pickling of its MathInstruction (the interface's were plain objects).

And the interface's enums were cutlass_library's: each of cuforge's equals cutlass_library's member of the same
enum and name (``cutlass.OpcodeClass.Simt == cutlass_library.OpcodeClass.Simt``; a swizzle, SwizzlingFunctor's),
with the same hash, so that cutlass_library's tables take cuforge's members as keys
(``cutlass_library.DataTypeNames[cutlass.DataType.f16]``). Not its IntEnums (ConvKind, ConvMode), which hash as
numbers: cuforge's ConvMode is an IntEnum of the same numbers.
"""

from __future__ import annotations

import copy
import copyreg
import enum
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from . import _core, dtypes, environment, epilogue, swizzle
from ._core import InvalidArgumentError
from .epilogue import VISITOR_TREES_INSTEAD, not_offered
from .op import conv2d, grouped_gemm, plan


def _alias(path: str, module: types.ModuleType) -> None:
    """``module`` as cuforge.<path>, the packages on the way made where cuforge has none."""
    parent = sys.modules[__name__.rpartition(".")[0]]
    *packages, last = path.split(".")
    for part in packages:
        if not hasattr(parent, part):
            child = types.ModuleType(f"{parent.__name__}.{part}")
            child.__spec__ = importlib.machinery.ModuleSpec(child.__name__, None, is_package=True)
            child.__path__ = []
            sys.modules[child.__name__] = child
            setattr(parent, part, child)
        parent = getattr(parent, part)
    sys.modules[f"{parent.__name__}.{last}"] = module
    setattr(parent, last, module)


def _names(path: str, **names) -> types.ModuleType:
    name = f"{__name__.rpartition('.')[0]}.{path}"
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)  # importlib.util.find_spec finds it
    module.__dict__.update(names)
    return module


class NotOfferedModuleError(InvalidArgumentError, ModuleNotFoundError):
    """An import of a module of the CUTLASS Python interface that cuforge has no counterpart of."""


# The interface's modules cuforge has none of, by path under the package (a path covers the modules below it),
# with what to use instead.
NOT_OFFERED = {
    "backend": "the interface's run-time internals (its compiler, argument structures, operations and memory "
               "manager); cuforge's plans build and run their kernels: plan.compile(), plan.run(), "
               "cuforge.emit.kernel_source(name)",
    "backend.evt": "the interface's epilogue visitor trees (traced Python epilogues) are not offered; "
                   + VISITOR_TREES_INSTEAD,
    "epilogue.evt_ops": "the interface's epilogue visitor tree operations (traced Python epilogues) are not "
                        "offered; " + VISITOR_TREES_INSTEAD,
    "emit.common": "the interface's C++ templates of its exported modules; cuforge.emit.pytorch writes its own",
    "library_defaults": "the interface's tables of default kernels; cuforge's catalog holds them: "
                        "plan.tile_descriptions(), cuforge.list_gemms(), `cuforge list`",
    "utils.check": "the interface's checks of tile descriptions; plan.construct(td) and plan.compile(td) check "
                   "them in cuforge",
    "utils.lazy_import": "the interface's deferred imports; cuforge imports torch, NumPy and CuPy where it needs them",
}


class _NotOfferedFinder(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: consulted only for what no other finder found."""

    def find_spec(self, fullname, path=None, target=None):
        package = __name__.rpartition(".")[0]
        if not fullname.startswith(package + "."):
            return None
        rest = fullname[len(package) + 1:]
        covering = [p for p in NOT_OFFERED if rest == p or rest.startswith(p + ".")]
        if not covering:
            return None
        error = NotOfferedModuleError(f"No module named {fullname!r}: {NOT_OFFERED[max(covering, key=len)]}")
        error.name = fullname  # as ModuleNotFoundError's
        raise error


def _profiler_names(name: str):
    """cuforge.utils.profiler's names, from cuforge.event_profiler (NumPy's import waits for the first use)."""
    if name == "CUDAEventProfiler":
        return importlib.import_module(".event_profiler", __name__.rpartition(".")[0]).CUDAEventProfiler
    if name == "GpuTimer":
        raise not_offered("cuforge.utils.profiler.GpuTimer: the interface's timer of cuda-python events is not "
                          "offered; CUDAEventProfiler(plan, warmup, iterations, *operands)() times a plan's runs, "
                          "plan.profile(M, N, K) its candidates")
    raise AttributeError(f"module 'cuforge.utils.profiler' has no attribute {name!r}")


def _equal(self, other):
    """A member of cuforge's enum equals itself and another library's member of the same name of an enum of its
    name (cutlass_library's; a swizzle, SwizzlingFunctor's), which hashes as it does (by name: not an IntEnum's,
    which hash as their numbers); anything else is left to the other side."""
    if type(other) is type(self):
        return self is other
    if dtypes.interface_member(other, type(self).__name__) and not isinstance(other, int):
        return other.name == self.name
    return NotImplemented


def _unequal(self, other):
    equal = _equal(self, other)
    return equal if equal is NotImplemented else not equal


def _missing(cls, value):
    """`cuforge.DataType(cutlass_library.DataType.f16)` and kin: another library's member of the same name (as
    _equal takes it), else the enum's own error."""
    if dtypes.interface_member(value, cls.__name__) and value.name in cls.__members__:
        return cls[value.name]
    return None


# The fields the interface's TileDescription.clone_and_update takes.
_TILE_FIELDS = ("cluster_shape", "threadblock_shape", "warp_count", "stages", "instruction_shape", "kernel_schedule",
                "epilogue_schedule", "tile_scheduler")


def _procedural_name(td) -> str:
    """The interface's name of a tile description: its cluster, tile and stages (0: automatic), "1x1x1_128x128_64x3"."""
    c, t = td.cluster_shape, td.threadblock_shape
    return f"{c[0]}x{c[1]}x{c[2]}_{t[0]}x{t[1]}_{t[2]}x{td.stages}"


def _procedural_name_2x(td) -> str:
    """The interface's CUTLASS 2.x name of a tile description: its tile and stages, "128x128_64x3"."""
    t = td.threadblock_shape
    return f"{t[0]}x{t[1]}_{t[2]}x{td.stages}"


def _clone_and_update(td, changes: dict):
    """A copy of the tile description with the fields of `changes` set (each checked as its setter checks it)."""
    if not isinstance(changes, dict):
        raise InvalidArgumentError(f"clone_and_update: expected a dict of fields, got {type(changes).__name__}")
    unknown = sorted(set(changes) - set(_TILE_FIELDS))
    if unknown:
        raise InvalidArgumentError(f"clone_and_update: no field {', '.join(map(repr, unknown))}; the fields are "
                                   f"{', '.join(_TILE_FIELDS)}")
    clone = copy.copy(td)
    for field, value in changes.items():
        setattr(clone, field, value)
    return clone


def _num_threads(td) -> int:
    """Threads of a CTA as the interface counted them: 32 per warp of warp_count."""
    return 32 * td.warp_count[0] * td.warp_count[1] * td.warp_count[2]


def _math_instruction(row: int):
    """A pickled MathInstruction read back: its row of cuforge's table."""
    return _core._math_instruction(row)


def _pickled_math_instruction(instruction):
    return _math_instruction, (_core._math_instruction_row(instruction),)


def register() -> None:
    """Registers the paths above (once cuforge's own modules are imported), and the enums' equality."""
    for enum_type in [e for e in vars(_core).values() if isinstance(e, enum.EnumMeta)] + [swizzle.StridedDgradSwizzle]:
        enum_type.__eq__, enum_type.__ne__, enum_type.__hash__ = _equal, _unequal, enum.Enum.__hash__
        enum_type._missing_ = classmethod(_missing)
    tile = _core.TileDescription
    tile.procedural_name, tile.procedural_name_2x = _procedural_name, _procedural_name_2x
    tile.clone_and_update, tile.num_threads = _clone_and_update, property(_num_threads)
    copyreg.pickle(_core.MathInstruction, _pickled_math_instruction)  # a tile description's, pickled with it
    _alias("backend.utils.device", _names("backend.utils.device", device_cc=environment.device_cc,
                                          device_sm_count=environment.device_sm_count))
    _alias("utils.datatypes", dtypes)
    _alias("op.gemm_grouped", grouped_gemm)
    _alias("op.conv", conv2d)
    _alias("op.op", _names("op.op", OperationBase=plan.Plan))
    _alias("backend.epilogue", epilogue)
    _alias("epilogue.epilogue", epilogue)  # the interface's module of the activations, under its epilogue package
    epilogue.__path__ = []  # a package, as the interface's: its other module (evt_ops) is refused by name, not
    #                         as "cuforge.epilogue is not a package"
    _alias("utils.profiler", _names("utils.profiler", __getattr__=_profiler_names))
    if not any(isinstance(finder, _NotOfferedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_NotOfferedFinder())
