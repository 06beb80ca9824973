"""The ``run`` of an exported Conv2d module (``jit=True``): every convolution the CUTLASS Python
interface's modules ran.

A module holds one kernel, chosen for one problem: it splits K one way (serially in the kernel on SM80,
into f32 slices summed after it for ``_splitk`` kernels, SM90's between the images) or not at all, and
SM90's kernels run no strided dgrad and only the padding their TMA loads reach. The interface's modules
ran SM80 kernels that took ``split_k_mode="serial"`` or ``"parallel"`` with any ``split_k_slices``, and
any stride. So a run the module's kernel cannot serve (as the core's selection decides it, for the run's
sizes, geometry and split) goes to a cuforge plan of the same types and epilogue on the tensors' GPU,
which chooses a kernel that can (SM80's on Hopper), writing a new output as the operator does, on
torch's current stream. Runs the kernel serves, the default ones among them, call the operator itself
(traceable by torch.compile, capturable in CUDA graphs); by default a run takes the kernel's own split,
at most one slice per image between the images; dgrad's and wgrad's size is also taken as ``result_size=``, the
interface's modules' keyword. A module built from the sources (``pip install``) has the operator alone.
"""

from __future__ import annotations

from .. import _core
from .._core import InvalidArgumentError
from ..arguments import height_width
from ..dtypes import torch_type

# The operator's positional arguments, past dgrad's input_size or wgrad's weight_size.
_ARGUMENTS = ("A", "B", "C", "stride", "padding", "dilation", "alpha", "beta", "split_k_mode", "split_k_slices")
# The operator's geometry where a run gives none (its schema's, src/emit/pytorch.cpp: the interface's modules
# padded by one), and the least each takes.
_GEOMETRY = (("stride", 1, 1), ("padding", 1, 0), ("dilation", 1, 1))


def conv_kind(kernel: str) -> str | None:
    """'fprop', 'dgrad' or 'wgrad' for a convolution kernel's name, None for another kernel's (an
    InvalidArgumentError for a name of no kernel)."""
    kind = _core.kernel_config(kernel)["kind"]
    return kind.name.removeprefix("Conv2d").lower() if kind.name.startswith("Conv2d") else None


def with_every_split(operator, op, kind: str):
    """``operator`` (torch.ops.<module>.run.default) as a function that also runs what its kernel cannot
    serve, on a cuforge plan of ``op``'s types and epilogue."""
    config = op._config
    parallel = config["parallel_split_k"]
    images = parallel and config["arch"] == 90 and not config["pointwise"]
    own = ("parallel" if parallel else "serial", op._chosen.splits)
    names = (("input_size",) if kind == "dgrad" else ("weight_size",) if kind == "wgrad" else ()) + _ARGUMENTS
    plans = {}  # per GPU, the plan for what the kernel cannot serve, made at its first use there
    served = {}  # the core's answers, per problem: repeated runs ask it once

    def run(*args, **kwargs):
        if "result_size" in kwargs and kind in ("dgrad", "wgrad"):  # the interface's modules' keyword for it
            if names[0] in kwargs or args:
                raise InvalidArgumentError(f"result_size: given with {names[0]} (the same argument, as the "
                                           "interface's modules named it)")
            kwargs[names[0]] = kwargs.pop("result_size")
        given = dict(zip(names, args), **kwargs)
        asked = "split_k_mode" in given or "split_k_slices" in given
        A = given.get("A")
        if not asked and images and len(getattr(A, "shape", ())) >= 1:  # the kernel's own split: a slice per image
            kwargs["split_k_slices"] = given["split_k_slices"] = min(own[1], max(int(A.shape[0]), 1))
        mode, slices = given.get("split_k_mode", own[0]), given.get("split_k_slices", own[1])
        if (mode not in ("serial", "parallel") or isinstance(slices, bool) or not isinstance(slices, int)
                or slices < 1 or _served(op, kind, given, mode, slices, asked, served) is not False
                or not _taken(op, kind, given)):
            return operator(*args, **kwargs)  # its own checks name anything wrong
        device = A.device.index
        if device not in plans:
            plans[device] = _plan_like(op, device)
        return _on_a_plan(plans[device], kind, given, (mode, slices) if asked else None, config["bias"])

    run.__doc__ = operator.__doc__
    run.operator = operator  # the operator alone (its own kernel), as torch.ops.<module>.run.default
    return run


def _extents(kind: str, given: dict) -> tuple:
    """(N, H, W, C, K, R, S) of the run's N, C, H, W tensors and sizes, as the operator reads them."""
    A, B = given["A"], given["B"]
    x = A.shape if kind == "fprop" else given["input_size"] if kind == "dgrad" else B.shape
    w = given["weight_size"] if kind == "wgrad" else B.shape
    (n, c, h, wd), (k, _, r, s) = tuple(int(v) for v in x), tuple(int(v) for v in w)
    return n, h, wd, c, k, r, s


def _taken(op, kind: str, given: dict) -> bool:
    """Whether the operator takes the run's tensors (CUDA tensors of the kernel's types, A and B in N, C, H, W
    order in channels_last memory, which a plan would read as N, H, W, C were they plain; C as the kernel adds
    it, where beta reads it), so that a plan's run differs from the operator's in its kernel alone: the rest is
    the operator's to refuse, in its words."""
    import torch

    from ..dtypes import torch_datatype

    core = op._plan

    def tensor(t, element) -> bool:
        try:
            return isinstance(t, torch.Tensor) and t.is_cuda and torch_datatype(t.dtype) == element
        except (TypeError, ValueError):  # a type cuforge has none of
            return False

    A, B, C = given["A"], given["B"], given.get("C")
    if not all(tensor(t, e) and t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last)
               for t, e in ((A, core.element_a), (B, core.element_b))):
        return False
    if given.get("beta", 0.0) == 0:
        return True  # C is never read
    try:
        channels = _output_shape(kind, given)
    except (InvalidArgumentError, TypeError, ValueError):
        return False
    if not tensor(C, core.element_c):
        return False
    if op._config["bias"]:
        return C.numel() == channels[1] and (C.dim() == 1 or C.shape[1] == channels[1])
    return tuple(C.shape) == channels and C.is_contiguous(memory_format=torch.channels_last)


def _output_shape(kind: str, given: dict) -> tuple:
    """The output's N, C, H, W shape, as the operator makes it."""
    if kind != "fprop":
        return tuple(int(v) for v in given["input_size" if kind == "dgrad" else "weight_size"])
    from ..op.conv2d import Conv2d

    A, B = given["A"], given["B"]
    stride, padding, dilation = (given.get(name, default) for name, default, _ in _GEOMETRY)
    n, p, q, k = Conv2d.output_size((A.shape[0], A.shape[2], A.shape[3], A.shape[1]),
                                    (B.shape[0], B.shape[2], B.shape[3], B.shape[1]), padding, stride, dilation)
    return n, k, p, q


def _served(op, kind: str, given: dict, mode: str, slices: int, asked: bool, answers: dict):
    """Whether the module's kernel, in `slices`, serves the run: a split asked for is part of the run's problem,
    the kernel's own split by default is the kernel's to make (None where the arguments are not ones to judge:
    the operator's checks then speak). `answers` keeps the core's answer per problem."""
    try:
        geometry = tuple(height_width(given.get(name, default), name, low) for name, default, low in _GEOMETRY)
        key = (_extents(kind, given), geometry, mode, slices, asked)
        if key not in answers:
            answers[key] = op._plan.serves(op.name, slices, op._settings, key[0], *geometry,
                                           slices if asked and slices > 1 else 0, mode == "parallel")
        return answers[key]
    except (AttributeError, KeyError, TypeError, ValueError, InvalidArgumentError):  # missing, malformed, refused
        return None


def _on_a_plan(plan, kind: str, given: dict, split_k, bias: bool):
    """The operator's run, its arguments as it takes them (`_taken`), on `plan` (split as `split_k` asks, else
    as the plan chooses)."""
    import torch

    A, B, C = given["A"], given["B"], given.get("C")
    stride, padding, dilation = (given.get(name, default) for name, default, _ in _GEOMETRY)
    alpha, beta = given.get("alpha", 1.0), given.get("beta", 0.0)
    shape = _output_shape(kind, given)
    dtype = torch_type(plan.element_D)  # a plan like the module's: of its output's torch type
    if dtype is None:
        raise InvalidArgumentError(f"D: torch has no dtype for the module's output type {plan.element_D.name}")
    D = torch.empty(shape, dtype=dtype, device=A.device, memory_format=torch.channels_last)
    if beta == 0:
        C = None  # never read, as by the operator
    elif bias:
        C = C.reshape(-1)  # the bias kernel's one value per channel, in the shapes the operator takes
    plan.run(A, B, C, D, stride=stride, padding=padding, dilation=dilation, alpha=alpha, beta=beta,
             split_k=split_k, sync=False)
    return D


def _plan_like(op, device: int):
    """A Conv2d plan of the op's kind, types and epilogue (its activation and math) on `device`, choosing
    its kernels."""
    from ..op.conv2d import Conv2d

    core = op._plan
    plan = Conv2d(kind=core.kind, element_A=core.element_a, element_B=core.element_b, element_C=core.element_c,
                  element_D=core.element_d, element_accumulator=core.element_accumulator, cc=op.cc, device=device)
    settings = op._settings

    def change(s: _core.GemmSettings):
        s.activation, s.activation_argument = settings.activation, settings.activation_argument
        s.math, s.opclass, s.deterministic = settings.math, settings.opclass, settings.deterministic

    plan._update(change)
    return plan
