"""Activations a GEMM epilogue fuses: ``plan.activation = cuforge.epilogue.relu``.

Each is applied to ``alpha * A @ B + beta * C`` before D is written. A plan also accepts the name
(``"gelu"``) or a ``(function, argument)`` pair: ``(cuforge.epilogue.leaky_relu, 0.1)`` (or
``("leaky_relu", [0.1])``) sets the negative slope (0.2 by default, the CUTLASS Python interface's;
torch.nn.functional.leaky_relu's is 0.01).
"""

from __future__ import annotations

import dis
import sys

from ._core import Activation, InvalidArgumentError, default_activation_argument
from .dtypes import bool_or_complex
from .messages import shown


class NotOfferedError(InvalidArgumentError, ImportError):
    """A name of the CUTLASS Python interface that cuforge does not offer, met by ``from cuforge import Tensor``: a
    cuforge error and an ImportError that says why (Python turns an AttributeError there into a bare "cannot
    import name")."""


class NotOfferedAttributeError(InvalidArgumentError, AttributeError):
    """The same name met as an attribute (``cuforge.epilogue.trace(...)``): an AttributeError, so that
    ``hasattr(cuforge, "Tensor")`` and ``getattr(..., default)`` answer rather than raise."""


class UnknownActivationError(InvalidArgumentError, AttributeError):
    """An activation name that is none: an AttributeError too, as the interface's lookup of the name raised."""


# The interface's epilogue visitor trees: Python epilogues traced into CUTLASS's visitor nodes.
_VISITOR_TREES = frozenset({"trace", "evt_ops", "exp", "max", "maximum", "minimum", "multiply_add", "permute",
                            "reshape", "sum"})


#: What a visitor tree's user does instead.
VISITOR_TREES_INSTEAD = "fuse an activation (plan.activation) and a bias row (a C of one row)"


def visitor_trees(name: str) -> str:
    """What is said of a visitor-tree name (not_offered's message)."""
    return (f"{name}: the CUTLASS Python interface's epilogue visitor trees (traced Python epilogues) are not offered; "
            f"{VISITOR_TREES_INSTEAD}")


def not_offered(message: str) -> InvalidArgumentError:
    """The error for a name of the interface that cuforge does not offer, raised by a module's ``__getattr__``: an
    ImportError where the module's caller is importing the name (its instruction is IMPORT_FROM), else an
    AttributeError."""
    try:
        caller = sys._getframe(2)  # past __getattr__: the frame that asked for the name
        importing = dis.opname[caller.f_code.co_code[caller.f_lasti]] == "IMPORT_FROM"
    except ValueError:  # no Python frame asked (a thread started on hasattr itself)
        importing = False
    return (NotOfferedError if importing else NotOfferedAttributeError)(message)


def __getattr__(name: str):
    if name in _VISITOR_TREES:
        raise not_offered(visitor_trees(f"cuforge.epilogue.{name}"))
    raise AttributeError(f"module 'cuforge.epilogue' has no attribute {name!r}")


class ActivationFunction:
    """One fusable activation; ``default_argument`` is its parameter when none is given (decided by
    the C++ core)."""

    __slots__ = ("_kind",)

    def __init__(self, kind: Activation):
        if not isinstance(kind, Activation):
            raise InvalidArgumentError(f"ActivationFunction: expected a cuforge.Activation, got {shown(kind)}")
        self._kind = kind

    kind = property(lambda self: self._kind, doc="The core's Activation (read-only).")
    name = property(lambda self: self._kind.name, doc="The activation's name (relu, gelu, ...).")

    def __eq__(self, other):
        return isinstance(other, ActivationFunction) and other.kind == self.kind

    def __hash__(self):
        return hash(self.kind)

    @property
    def default_argument(self) -> float:
        return default_activation_argument(self.kind)

    __name__ = property(lambda self: self._kind.name, doc="The name, as the interface's activation classes had.")

    def __repr__(self):
        return f"cuforge.epilogue.{self.name}"

    def __call__(self, x, *argument):
        """The activation applied to a NumPy array or a torch tensor, on the host or its device, as the epilogue
        applies it (the CUTLASS Python interface's reference: ``cutlass.epilogue.relu(x)``,
        ``leaky_relu(x, 0.5)``; leaky_relu's slope is its default where none is given)."""
        if type(x).__module__.partition(".")[0] == "torch":
            return self.torch(x, *argument)
        return self.numpy(x, *argument)

    def _slope(self, argument: tuple) -> float:
        if len(argument) > 1:
            raise InvalidArgumentError(f"{self.name}: expected an array and at most one argument, got {len(argument)} "
                                       f"arguments past the array")
        given = resolve((self, argument[0]))[1] if argument else None
        return self.default_argument if given is None else given

    def numpy(self, x, *argument):
        """The activation of a NumPy array (or anything np.asarray takes), in its element type."""
        import numpy as np

        slope, x = self._slope(argument), np.asarray(x)
        if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
            raise InvalidArgumentError(f"{self.name}: expected a real array, got elements of {x.dtype}")
        wide = x.astype(np.float64)
        if self._kind == Activation.gelu:  # erf's, as CUTLASS's GELU (not its tanh approximation)
            import math

            y = 0.5 * wide * (1.0 + np.vectorize(math.erf, otypes=[np.float64])(wide / math.sqrt(2.0)))
        else:
            y = {
                Activation.identity: lambda v: v,
                Activation.relu: lambda v: np.maximum(v, 0.0),
                Activation.leaky_relu: lambda v: np.where(v > 0, v, v * slope),
                Activation.tanh: np.tanh,
                Activation.sigmoid: lambda v: 1.0 / (1.0 + np.exp(-v)),
                Activation.silu: lambda v: v / (1.0 + np.exp(-v)),
                Activation.hardswish: lambda v: v * np.clip(v + 3.0, 0.0, 6.0) / 6.0,
            }[self._kind](wide)
        return y.astype(x.dtype) if np.issubdtype(x.dtype, np.floating) else y

    def torch(self, x, *argument):
        """The activation of a torch tensor (torch.nn.functional's), in its element type and on its device."""
        import torch.nn.functional as F

        slope = self._slope(argument)
        return {
            Activation.identity: lambda v: v,
            Activation.relu: F.relu,
            Activation.leaky_relu: lambda v: F.leaky_relu(v, slope),
            Activation.tanh: lambda v: v.tanh(),
            Activation.sigmoid: lambda v: v.sigmoid(),
            Activation.silu: F.silu,
            Activation.hardswish: F.hardswish,
            Activation.gelu: F.gelu,
        }[self._kind](x)


identity = ActivationFunction(Activation.identity)
relu = ActivationFunction(Activation.relu)
leaky_relu = ActivationFunction(Activation.leaky_relu)
tanh = ActivationFunction(Activation.tanh)
sigmoid = ActivationFunction(Activation.sigmoid)
silu = ActivationFunction(Activation.silu)
hardswish = ActivationFunction(Activation.hardswish)
gelu = ActivationFunction(Activation.gelu)

_BY_KIND = {f.kind: f for f in (identity, relu, leaky_relu, tanh, sigmoid, silu, hardswish, gelu)}
_BY_NAME = {f.name: f for f in _BY_KIND.values()}


def get_activations() -> list[ActivationFunction]:
    """Every activation, in the CUTLASS Python interface's order (a plan's activations() lists those its kernels
    fuse)."""
    return [gelu, hardswish, identity, leaky_relu, relu, sigmoid, silu, tanh]


def of_kind(kind: Activation) -> ActivationFunction:
    """The function object of an Activation value (what plan.activation returns)."""
    if not isinstance(kind, Activation):
        raise InvalidArgumentError(f"of_kind: expected a cuforge.Activation, got {shown(kind)}")
    return _BY_KIND[kind]


def resolve(value) -> tuple[ActivationFunction, float | None]:
    """The activation and its argument (None: its default) from a function, a name, or a (function or
    name, argument) pair."""
    argument = None
    if isinstance(value, tuple):
        if len(value) != 2:
            raise InvalidArgumentError(f"activation: expected (function, argument), got a tuple of {len(value)}")
        value, argument = value
    if isinstance(value, str):
        if value not in _BY_NAME:
            raise UnknownActivationError(f"activation: unknown {shown(value)}; known: {', '.join(_BY_NAME)}")
        value = _BY_NAME[value]
    if not isinstance(value, ActivationFunction):
        raise InvalidArgumentError(
            f"activation: expected one of cuforge.epilogue's functions, a name or a (function, argument) pair, "
            f"got {type(value).__name__}"
        )
    if argument is None:
        return value, None
    if value.kind != Activation.leaky_relu:
        raise InvalidArgumentError(f"activation: {value.name} takes no argument, got {shown(argument)}")
    if isinstance(argument, (list, tuple)):  # the interface's "list of parameters"
        if len(argument) != 1:
            raise InvalidArgumentError(f"activation: leaky_relu takes one slope, got {shown(argument)}")
        argument = argument[0]
    if isinstance(argument, (str, bytes)) or bool_or_complex(argument):
        raise InvalidArgumentError(f"activation: leaky_relu's slope must be a real number, got {shown(argument)}")
    try:
        return value, float(argument)
    except (TypeError, ValueError, OverflowError) as e:
        raise InvalidArgumentError(f"activation: leaky_relu's slope must be a real number, got {shown(argument)}: {e}") from None
