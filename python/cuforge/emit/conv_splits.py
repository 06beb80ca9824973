"""The ``run`` of an exported Conv2d module (``jit=True``): every split-K mode the CUTLASS Python
interface's modules took.

A module's kernel splits K one way: serially in the kernel (SM80's convolution kernels), into f32
slices summed after it (``_splitk`` kernels; SM90's between the images, so into at most N slices), or
not at all (SM90's unsplit and pointwise kernels). By default a run takes its kernel's own split (at
most one slice per image between the images). The interface's modules took ``split_k_mode="serial"``
and ``"parallel"`` with any ``split_k_slices`` at every call, so a run asking for a split its kernel
cannot run goes to a cuforge plan of the same types and epilogue on the tensors' GPU, which chooses the
kernels that split so (SM80's on Hopper), writing a new output as the operator does, on torch's current
stream. Runs the kernel does run, the default ones among them, call the operator itself (traceable by
torch.compile, capturable in CUDA graphs). A module built from the sources (``pip install``) has the
operator alone.
"""

from __future__ import annotations

from .. import _core
from ..dtypes import _torch_table

# Where the split-K arguments sit among the operator's positional ones (after A, B, C, stride,
# padding, dilation, alpha, beta), past dgrad's input_size or wgrad's weight_size.
_MODE_AT, _SLICES_AT = 8, 9


def conv_kind(kernel: str) -> str | None:
    """'fprop', 'dgrad' or 'wgrad' for a convolution kernel's name, else None."""
    kinds = [k for k in ("fprop", "dgrad", "wgrad") if f"_{k}_" in kernel]
    return kinds[0] if kinds else None


def with_every_split(operator, op, kind: str):
    """``operator`` (torch.ops.<module>.run.default) as a function that also runs the splits its kernel
    cannot, on a cuforge plan of ``op``'s types and epilogue."""
    tokens = op.name.split("_")
    parallel = "splitk" in tokens
    sm90_images = parallel and op.name.startswith("cuforge_sm90_") and "pointwise" not in tokens
    serial = not parallel and op.name.startswith("cuforge_sm80_")
    pointwise = "pointwise" in tokens  # a GEMM kernel, whose split must cut K evenly: left to a plan
    defaults = ("parallel" if parallel else "serial", op._chosen.splits)
    offset = 0 if kind == "fprop" else 1
    plans = {}  # per GPU, the plan for other splits, made at its first use there

    def given(args, kwargs, name, at):
        return name in kwargs or len(args) > at

    def argument(args, kwargs, name, at, default):
        return kwargs[name] if name in kwargs else args[at] if len(args) > at else default

    def runs_it(mode, slices, images) -> bool:
        if slices == 1:
            return True
        if pointwise:
            return False
        if mode == "parallel":
            return parallel and (not sm90_images or slices <= images)
        return mode == "serial" and serial

    def run(*args, **kwargs):
        A = argument(args, kwargs, "A", offset, None)
        shape = getattr(A, "shape", None)
        if not (given(args, kwargs, "split_k_mode", _MODE_AT + offset)
                or given(args, kwargs, "split_k_slices", _SLICES_AT + offset)):
            if sm90_images and shape:  # the kernel's own split: at most one slice per image
                kwargs["split_k_slices"] = min(defaults[1], max(int(shape[0]), 1))
            return operator(*args, **kwargs)
        mode = argument(args, kwargs, "split_k_mode", _MODE_AT + offset, defaults[0])
        slices = argument(args, kwargs, "split_k_slices", _SLICES_AT + offset, defaults[1])
        if (mode not in ("serial", "parallel") or isinstance(slices, bool) or not isinstance(slices, int)
                or slices < 1 or not shape or runs_it(mode, slices, shape[0])):
            return operator(*args, **kwargs)  # its own checks name anything wrong
        device = A.device.index
        if device not in plans:
            plans[device] = _plan_like(op, device)
        return _on_a_plan(plans[device], kind, args, kwargs, offset, mode, slices)

    run.__doc__ = operator.__doc__
    run.operator = operator  # the operator alone (its own splits), as torch.ops.<module>.run.default
    return run


def _on_a_plan(plan, kind: str, args, kwargs, offset: int, mode: str, slices: int):
    """The operator's run, its arguments as it takes them, on `plan` with split_k=(mode, slices)."""
    import torch

    names = ["A", "B", "C", "stride", "padding", "dilation", "alpha", "beta"]
    if offset:
        names.insert(0, "input_size" if kind == "dgrad" else "weight_size")
    given = dict(zip(names, args), **{k: v for k, v in kwargs.items() if k in names})
    A, B, C = given["A"], given["B"], given.get("C")
    stride, padding, dilation = given.get("stride", 1), given.get("padding", 0), given.get("dilation", 1)
    alpha, beta = given.get("alpha", 1.0), given.get("beta", 0.0)
    if kind == "fprop":
        from ..op.conv2d import Conv2d

        n, p, q, k = Conv2d.output_size((A.shape[0], A.shape[2], A.shape[3], A.shape[1]),
                                        (B.shape[0], B.shape[2], B.shape[3], B.shape[1]), padding, stride, dilation)
        shape = (n, k, p, q)
    else:
        shape = tuple(given[names[0]])
    dtype = next(t for t, d in _torch_table(torch).items() if d == plan.element_D)
    D = torch.empty(shape, dtype=dtype, device=A.device, memory_format=torch.channels_last)
    if beta == 0:
        C = None  # never read, as by the operator
    elif C is not None and C.numel() == shape[1] and tuple(C.shape) != shape:
        C = C.reshape(-1)  # a bias of one value per channel, in any of the shapes the operator takes
    plan.run(A, B, C, D, stride=stride, padding=padding, dilation=dilation, alpha=alpha, beta=beta,
             split_k=(mode, slices), sync=False)
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
