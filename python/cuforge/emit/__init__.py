"""cuforge.emit: kernels as source, and as PyTorch operators.

- ``emit.kernel_source(name)``: the complete CUDA source of a catalog kernel.
- ``plan.construct()`` returns an :class:`Operation`, a plan's kernel chosen for a problem;
  ``emit.pytorch(op, name, cc, jit=False, sourcedir="")`` exports it as a PyTorch extension (the
  CUTLASS Python interface's ``cutlass.emit.pytorch``).
"""

from __future__ import annotations

import copy
import functools
from typing import NamedTuple

from .. import _core, epilogue
from .._core import DataType, LayoutType, TileDescription
from ..arguments import text
from .pytorch import pytorch  # the function: cuforge.emit.pytorch(op, name, ...), as the interface has it


def kernel_source(name: str) -> str:
    """The complete CUDA source of a catalog kernel, by name (``cuforge list`` names them)."""

    return _core.emit(text(name, "name", "a kernel's name (a string)"))


class PlanCopyError(_core.InvalidArgumentError, TypeError):
    """A plan, or the Operation it chose, copied or pickled: a cuforge error, and the TypeError copy and pickle
    raise for an object they cannot take."""


class TensorDescription(NamedTuple):
    """An operand of an operation's kernel as the CUTLASS Python interface describes it: element type, layout
    (TensorNHWC for a convolution's) and alignment in elements."""

    element: DataType
    layout: LayoutType
    alignment: int


class EpilogueFunctor(NamedTuple):
    """An operation's epilogue as the CUTLASS Python interface's linear combination described it: D's element
    type, the accumulator's, the type alpha, beta and the activation compute in, and the activation."""

    element_output: DataType
    element_accumulator: DataType
    element_epilogue: DataType
    activation_functor: object


class Operation:
    """A plan's kernel, chosen for one problem by ``plan.construct()`` (or built by ``plan.compile()``),
    with what each of its runs passes (the activation's argument, split-K slices, decomposition) as the
    plan had them then. ``emit()`` (also as ``rt_module.emit()``, the CUTLASS Python interface's
    spelling) returns its CUDA source; ``emit.pytorch`` exports it. An operation compile() returns also
    says where its build is: ``library``, ``cache_hit``, ``build_seconds``, ``cache_key`` and
    ``source_path`` (None for construct()'s, which builds nothing)."""

    def __init__(self, core_plan, chosen, settings, cc: int, built: dict | None = None):
        self._plan = core_plan
        self._chosen = chosen
        self._settings = settings
        self.cc = cc
        self._built = built or {}

    library = property(lambda self: self._built.get("library"), doc="The built kernel's shared library.")
    cache_hit = property(lambda self: self._built.get("cache_hit"),
                         doc="Whether compile() found the kernel in the disk cache (False: nvcc built it).")
    build_seconds = property(lambda self: self._built.get("seconds"),
                             doc="Wall time of compile()'s request for the kernel, cache lookup included.")
    cache_key = property(lambda self: self._built.get("key"), doc="The kernel's content address in the cache.")
    source_path = property(lambda self: self._built.get("source"), doc="The CUDA source the cache keeps for it.")

    @property
    def name(self) -> str:
        """The kernel's catalog name."""
        return self._chosen.name

    @functools.cached_property
    def _config(self) -> dict:
        """What the kernel's name says of it (parsed once)."""
        return _core.kernel_config(self.name)

    @property
    def arch(self) -> int:
        """The kernel family's compute capability (80 or 90; ``cc`` is the GPU it is built for)."""
        return self._config["arch"]

    @property
    def tile_description(self) -> TileDescription:
        """The kernel's tile (a copy), with the ``math_instruction`` it computes with."""
        config = self._config
        td = copy.copy(config["tile"])  # each caller's own
        td.math_instruction = config["math_instruction"]
        td.instruction_shape = list(td.math_instruction.instruction_shape)
        return td

    def _operand(self, name: str) -> TensorDescription:
        """An operand in the plan's terms: a convolution's are NHWC tensors, whatever its implicit GEMM's layouts;
        a GEMM whose C the plan has column-major runs a kernel of Dᵀ = Bᵀ·Aᵀ (row-major C), whose A is the
        plan's Bᵀ and B its Aᵀ."""
        config = self._config
        if config["kind"] not in (_core.KernelKind.Gemm, _core.KernelKind.Grouped):
            element, _, alignment = config[name]
            return TensorDescription(element, LayoutType.TensorNHWC, alignment)
        if config["C"][1] == self._plan.layout_c:
            return TensorDescription(*config[name])
        flip = {LayoutType.RowMajor: LayoutType.ColumnMajor, LayoutType.ColumnMajor: LayoutType.RowMajor}
        element, layout, alignment = config[{"A": "B", "B": "A", "C": "C"}[name]]
        return TensorDescription(element, flip[layout], alignment)

    A = property(lambda self: self._operand("A"), doc="A's element, layout and alignment.")
    B = property(lambda self: self._operand("B"), doc="B's element, layout and alignment.")
    C = property(lambda self: self._operand("C"), doc="C's (and D's) element, layout and alignment.")
    switched = property(lambda self: False, doc="False: A, B and C are the plan's, whichever way the kernel takes "
                                                "them (the CUTLASS Python interface's flag of swapped operands).")
    element_accumulator = property(lambda self: self._config["element_accumulator"],
                                   doc="The accumulator's element type.")
    swizzling_functor = property(lambda self: self._config["tile"].tile_scheduler,
                                 doc="The kernel's tile scheduler (cuforge.swizzle).")

    @property
    def epilogue_functor(self) -> EpilogueFunctor:
        """The kernel's epilogue: D's element type, the accumulator's, alpha and beta's, and the activation."""
        config = self._config
        return EpilogueFunctor(config["element_d"], config["element_accumulator"], config["element_epilogue"],
                               epilogue.of_kind(config["activation"]))

    def procedural_name(self) -> str:
        """The kernel's name (the CUTLASS Python interface's spelling of ``name``)."""
        return self.name

    @property
    def rt_module(self) -> Operation:
        return self

    def emit(self) -> str:
        """The kernel's complete CUDA source."""
        return kernel_source(self.name)

    def pytorch_binding(self, module: str) -> str:
        """The C++ source that registers the kernel as the operators torch.ops.<module>.*."""

        module = text(module, "module", "a module name (a string)")
        return self._plan.pytorch_binding(self._chosen, module, self._settings)

    def __repr__(self) -> str:
        return f"Operation({self.name}, cc={self.cc})"

    def __reduce_ex__(self, protocol):
        raise PlanCopyError("an Operation (the kernel a plan chose) is not copied or pickled: construct it again from "
                            "its plan, or keep its name (op.name) and build that")


__all__ = ["EpilogueFunctor", "Operation", "TensorDescription", "kernel_source", "pytorch"]
