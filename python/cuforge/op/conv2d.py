"""cuforge.op.Conv2d (and Conv2dFprop, Conv2dDgrad, Conv2dWgrad): 2-D convolutions as implicit GEMMs,
compatible with the CUTLASS Python interface."""

from __future__ import annotations

import logging
import numbers
import sys

from .. import _core, epilogue, swizzle
from ..emit import Operation
from .._core import InvalidArgumentError, IteratorAlgorithm, KernelKind, KernelScheduleType, LayoutType
from ..arrays import current_stream, describe, operand_extents
from ..dtypes import interface_member
from ..messages import shown
from ..arguments import (alignments, conv_geometry, enum_value, fixed_items, flag, height_width, integer,
                         jobs_count, named_instruction, problem_list, ranked_top, runs_as)
from .plan import Plan

_logger = logging.getLogger("cuforge")

_KINDS = {"fprop": KernelKind.Conv2dFprop, "dgrad": KernelKind.Conv2dDgrad, "wgrad": KernelKind.Conv2dWgrad}
_KIND_NAMES = {kind: name for name, kind in _KINDS.items()}



def _iterators(value, kind: KernelKind) -> IteratorAlgorithm | None:
    """An iterator_algorithm as the settings take it: the member or the interface's name; the interface's
    "analytic" and "few_channels", which cuforge does not build, logged and left to cuforge (None), but
    few_channels on a dgrad or wgrad plan, which the interface refused as fixed_channels (fprop's alone)."""
    if interface_member(value, "IteratorAlgorithm"):
        value = {"Analytic": "analytic", "FewChannels": "few_channels"}.get(value.name, value)
    unbuilt = {"analytic": "analytic", "fewchannels": "few_channels"}.get(
        value.replace("_", "").casefold() if isinstance(value, str) else None)
    if unbuilt == "few_channels" and kind != KernelKind.Conv2dFprop:
        raise InvalidArgumentError(f"iterator_algorithm few_channels: fprop's iterators (they read the activation's "
                                   f"few channels); this plan is Conv2d {_KIND_NAMES[kind]}")
    if unbuilt:
        _logger.info("iterator_algorithm %s: cuforge builds optimized and fixed_channels iterators; it chooses "
                     "between them per problem", unbuilt)
        return None
    return None if value is None else enum_value(value, IteratorAlgorithm, "iterator_algorithm")


# The CUTLASS Python interface's swizzling_stride: IdentitySwizzle<stride>.
_SWIZZLES = {1: swizzle.IdentitySwizzle1, 2: swizzle.IdentitySwizzle2, 4: swizzle.IdentitySwizzle4,
             8: swizzle.IdentitySwizzle8}


class _ConvKindName(str):
    """A convolution kind's name, equal to an enum member of that name too: the CUTLASS Python interface's conv_kind
    was cutlass_library's ConvKind, which its users compare with (``plan.conv_kind == ConvKind.Fprop``)."""

    def __eq__(self, other):
        if interface_member(other, "ConvKind"):  # an IntEnum: no key for its tables
            return other.name.lower() == str(self)
        return str.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = str.__hash__


def _kind(value) -> KernelKind:
    if isinstance(value, KernelKind) and value in _KINDS.values():
        return value
    name = getattr(value, "name", value)
    if isinstance(name, str) and name.lower() in _KINDS:
        return _KINDS[name.lower()]
    raise InvalidArgumentError(f"kind: expected 'fprop', 'dgrad' or 'wgrad', got {shown(value)}")


def _split_k(value) -> tuple[int, bool]:
    """The seed's split_k=(mode, slices) as (slices, parallel): serial split-K sums the slices in the
    kernel, parallel split-K writes each slice's f32 partial products and sums them in a reduction
    kernel after it. None (0 slices to the core) takes the plan's settings."""
    if value is None:
        return 0, False
    items = fixed_items(value, (2,))
    if items is None:
        raise InvalidArgumentError(f"split_k: expected (mode, slices), e.g. ('serial', 1), got {shown(value)}")
    mode, slices = items
    if interface_member(mode, "SplitKMode"):
        mode = mode.name.lower()  # SplitKMode.Serial, the interface's default
    if not isinstance(mode, str) or mode not in ("serial", "parallel"):
        raise InvalidArgumentError(f"split_k: the mode is 'serial' or 'parallel', got {shown(mode)}")
    slices = integer(slices, "split_k slices", 1)
    if slices > 2**31 - 1:  # the core refuses too many slices itself; these do not fit its integers
        raise InvalidArgumentError(f"split_k: expected 1 to {_core.max_split_k_slices} slices, got {slices}")
    return slices, mode == "parallel"


def _nhwc_views(operands):
    """The NHWC views of the operands. Torch tensors in channels_last memory are logically N, C, H, W
    (as torch.nn.functional.conv2d takes them) and are permuted, without a copy; plain (contiguous)
    torch tensors and other arrays are read as N, H, W, C. A tensor with extents of 1 can be both, so
    the form is decided over all the torch operands together (channels_last where none says)."""
    torch = sys.modules.get("torch")
    tensors = [x for x in operands if torch is not None and isinstance(x, torch.Tensor) and x.dim() == 4]
    channels_last = plain = False
    for x in tensors:
        cl, rm = x.is_contiguous(memory_format=torch.channels_last), x.is_contiguous()
        channels_last |= cl and not rm
        plain |= rm and not cl
    if channels_last and plain:
        raise InvalidArgumentError("the torch tensors mix channels_last N, C, H, W tensors with plain N, H, W, C ones: "
                                   "give them all in one form")
    if plain:
        return list(operands)
    return [x.permute(0, 2, 3, 1) if any(x is t for t in tensors) else x for x in operands]


class Conv2d(Plan):
    """A 2-D convolution plan of one kind, D = activation(alpha * conv + beta * C), computed as an
    implicit GEMM by CUTLASS's kernels: on Hopper its SM90 ones (f16 and bf16 with f32 accumulation)
    beside its SM80 ones, which also run what the SM90 kernels cannot (strided dgrad; serial split-K;
    parallel split-K but wgrad's into at most as many slices as it has images); ``kernel_cc=80`` keeps
    to SM80. ``opclass = OpcodeClass.Simt`` runs SM80's CUDA-core kernels (f32, f64, f16; any channel
    count), which f64 convolutions run on whatever the opclass. The tensors:

    - ``fprop``: A = x (N, H, W, C), B = filters (K, R, S, C), D = y (N, P, Q, K)
    - ``dgrad``: A = dy (N, P, Q, K), B = filters (K, R, S, C), D = dx (N, H, W, C)
    - ``wgrad``: A = dy (N, P, Q, K), B = x (N, H, W, C), D = dw (K, R, S, C)

    with P = (H + 2 pad - dilation (R - 1) - 1) / stride + 1 (Q likewise). Torch tensors in
    channels_last memory are taken as torch holds them, N, C, H, W; other arrays are dense NHWC. C
    has D's shape, or is a bias of one value per channel of D. Element types are bound here as for
    Gemm (``element=``, ``element_A``...``element_D``, ``element_accumulator``, or from tensors).
    """

    _core_class = _core.Conv2d

    def __init__(self, kind="fprop", A=None, B=None, C=None, D=None, alpha=1.0, beta=0.0, element=None,
                 element_A=None, element_B=None, element_C=None, element_D=None, element_accumulator=None, cc=None,
                 kernel_cc=None, device=None):
        super().__init__(A=A, B=B, C=C, D=D, alpha=alpha, beta=beta, element=element, element_A=element_A,
                         element_B=element_B, element_C=element_C, element_D=element_D,
                         element_accumulator=element_accumulator, layout=LayoutType.TensorNHWC, cc=cc,
                         kernel_cc=kernel_cc, kind=_kind(kind), device=device)
        self._types.update(layout_a=LayoutType.TensorNHWC, layout_b=LayoutType.TensorNHWC,
                           layout_c=LayoutType.TensorNHWC)

    def _family_for_tile(self, value):
        """On Hopper, where cuforge chose the family (no kernel_cc), a tile of the SM80 family's (a dict
        giving a warp count or naming SM80's instruction_shape, a description carrying its math_instruction
        or the Multistage schedule) moves the plan to SM80 kernels, as the CUTLASS Python interface's
        Conv2d ran SM80 kernels on Hopper."""
        if self._core_args["kernel_cc"] or self._plan.kernel_cc < 90:
            return None
        settings = self._plan.settings
        settings.tile = None  # an SM90 tile pinned before is no SM80 one
        core_args = dict(self._core_args, kernel_cc=80)
        try:
            sm80 = self._core_class(settings=settings, **core_args)
        except InvalidArgumentError:  # no SM80 kernel for these types or settings
            return None
        theirs = sm80.math_instruction()
        if isinstance(value, dict):  # the interface's SM80 dicts: a warp count, SM80's instruction shape
            shape = fixed_items(value.get("instruction_shape"), (3,))
            asks = value.get("warp_count") is not None or (shape is not None and runs_as(shape, theirs))
        else:
            given = named_instruction(value)
            asks = (given is not None and runs_as(given.instruction_shape, theirs)) or (
                getattr(value, "kernel_schedule", None) == KernelScheduleType.Multistage)
        return (sm80, core_args) if asks else None

    name = property(lambda self: f"conv2d{self.conv_kind}", doc="The operation, as the CUTLASS Python interface "
                                                                  "names it: conv2dfprop, conv2ddgrad or conv2dwgrad.")

    @property
    def conv_kind(self) -> str:
        """'fprop', 'dgrad' or 'wgrad' (equal to cutlass_library's ConvKind member too, as the interface's was one)."""
        return _ConvKindName(_KIND_NAMES[self._plan.kind])

    @property
    def swizzling_stride(self) -> int | None:
        """The CUTLASS Python interface's swizzle stride (1, 2, 4 or 8): the pinned swizzling_functor's
        (IdentitySwizzle1 ... IdentitySwizzle8), None while cuforge chooses. A performance hint there
        (its results are the same): where this plan's kernels take no such swizzle (SM90 convolution
        kernels run a CTA per tile in launch order; the interface ran SM80 kernels on Hopper), the
        stride is logged and the choice left to cuforge. Strided dgrad runs CUTLASS's strided-dgrad
        swizzle whatever the stride."""
        return {v: k for k, v in _SWIZZLES.items()}.get(self.swizzling_functor)

    @swizzling_stride.setter
    def swizzling_stride(self, stride):
        if stride is not None and (isinstance(stride, bool) or not isinstance(stride, numbers.Integral)
                                   or stride not in _SWIZZLES):
            raise InvalidArgumentError(f"swizzling_stride: expected 1, 2, 4 or 8, got {shown(stride)}")
        value = None if stride is None else self._tile_scheduler(_SWIZZLES[stride], f"swizzling_stride {stride}")
        self._update(lambda s: setattr(s, "tile_scheduler", value))

    def _tile_scheduler(self, value, given: str | None = None):
        """A swizzling_functor as the settings' tile scheduler (None: cuforge's choice). On a convolution
        the identity and strided-dgrad swizzles are a performance hint, as the interface's swizzling_stride
        (the results are the same): one this plan's kernels do not take (SM80 dgrad kernels take the
        strided-dgrad swizzle only, SM90 ones none) is logged and the choice left to cuforge."""
        name = getattr(value, "name", value)
        if isinstance(name, str) and name.startswith("StridedDgrad") and self.conv_kind == "dgrad":
            _logger.info("swizzling_functor %s: cuforge's dgrad kernels take CUTLASS's strided-dgrad swizzle where "
                         "they need it", name)
            return None
        value = super()._tile_scheduler(value, given)
        if value in _SWIZZLES.values() and value not in self.swizzling_functors():
            _logger.info("%s: this plan's kernels take no such swizzle (they run %s); cuforge chooses",
                         given or f"swizzling_functor {value.name}", ", ".join(f.name for f in self.swizzling_functors()))
            return None
        return value

    @property
    def iterator_algorithm(self) -> IteratorAlgorithm | None:
        """The iterators this plan's kernels walk the activation with: IteratorAlgorithm.Optimized, or
        FixedChannels (fprop of exactly one vector of channels, SM80 kernels), or None while chosen
        per problem (fixed-channel kernels where the channels are one vector, as the CUTLASS Python
        interface proposes). Set as the member or the interface's name ("optimized",
        "fixed_channels"); a problem the pinned iterators cannot run is refused when it runs. The
        interface's "analytic" and "few_channels", which cuforge does not build (their results are the
        optimized ones'), are logged and leave the choice to cuforge."""
        return self._plan.settings.iterator_algorithm

    @iterator_algorithm.setter
    def iterator_algorithm(self, value):
        value = _iterators(value, self._plan.kind)
        self._update(lambda s: setattr(s, "iterator_algorithm", value))

    def _seed_change(self, iterator_algorithm, stride_support, swizzling_functor, epilogue_functor):
        """The CUTLASS Python interface's construct() and compile() arguments beside the tile, as a change of
        the settings (None where none is given): iterator_algorithm, swizzling_functor and epilogue_functor
        (an activation) as their properties take them; stride_support (dgrad's) logged, cuforge choosing
        unit-stride or strided kernels per problem."""
        if stride_support is not None:
            name = getattr(stride_support, "name", stride_support)
            if not isinstance(name, str) or name.lower() not in ("strided", "unity"):
                raise InvalidArgumentError(f"stride_support: expected StrideSupport.Strided or Unity, got "
                                           f"{shown(stride_support)}")
            _logger.info("stride_support %s: cuforge chooses unit-stride or strided dgrad kernels per problem", name)
        changes = []
        if iterator_algorithm is not None:
            iterators = _iterators(iterator_algorithm, self._plan.kind)
            changes.append(lambda s: setattr(s, "iterator_algorithm", iterators))
        if swizzling_functor is not None:
            scheduler = self._tile_scheduler(swizzling_functor)
            changes.append(lambda s: setattr(s, "tile_scheduler", scheduler))
        if epilogue_functor is not None:
            try:
                function, argument = epilogue.resolve(epilogue_functor)
            except InvalidArgumentError as e:
                raise InvalidArgumentError(f"epilogue_functor (an activation, as plan.activation takes it): {e}") \
                    from None
            changes.append(lambda s: s.set_activation(function.kind, argument))
        if not changes:
            return None

        def change_all(settings):
            for change in changes:
                change(settings)

        return change_all

    @staticmethod
    def output_size(input_size, weight_size, padding, stride, dilation) -> tuple[int, int, int, int]:
        """(N, P, Q, K), the output's NHWC shape, of an input of (N, H, W, C) and filters of (K, R, S, C),
        checked as a run checks them (the CUTLASS Python interface's Conv2d.output_size)."""
        sizes = [fixed_items(v, (4,)) for v in (input_size, weight_size)]
        if None in sizes:
            raise InvalidArgumentError(f"output_size: expected input_size (N, H, W, C) and weight_size (K, R, S, C), "
                                       f"got {shown(input_size)} and {shown(weight_size)}")
        (n, h, w, c), (k, r, s, c_filter) = ([integer(v, name, 1) for v, name in zip(size, names)]
                                              for size, names in zip(sizes, ("NHWC", "KRSC")))
        if c_filter != c:
            raise InvalidArgumentError(f"C: the filters' channels ({c_filter}) must equal the input's ({c})")
        p, q = _core.conv_output_size((n, h, w, c, k, r, s), *conv_geometry(stride, padding, dilation))
        return n, p, q, k

    def _extents(self, A, B, D, geometry) -> tuple:
        """(N, H, W, C, K, R, S) of the tensors the kind gives them in, whose channels must agree, and
        whose output's extents must be the geometry's (stride, padding, dilation) if one is given."""
        a, b, d = (operand_extents(t, name) for t, name in zip(_nhwc_views((A, B, D)), "ABD"))
        if not len(a) == len(b) == len(d) == 4:
            raise InvalidArgumentError(f"expected rank-4 tensors, got shapes {a}, {b} and {d}")
        kind = self.conv_kind
        x = a if kind == "fprop" else d if kind == "dgrad" else b
        w = b if kind != "wgrad" else d
        y, output = (d, "D (the output)") if kind == "fprop" else (a, "A (the output's gradient)")
        if w[3] != x[3]:
            raise InvalidArgumentError(f"the plan's tensors: the filters' channels ({w[3]}) must equal the input's "
                                       f"({x[3]})")
        if geometry is None:
            return (*x, *w[:3])
        p, q = _core.conv_output_size((*x, *w[:3]), *geometry)
        if y != (x[0], p, q, w[0]):
            raise InvalidArgumentError(
                f"the plan's tensors: {output} is {y}; input {x} and filters {w}, with stride "
                f"{geometry[0]}, padding {geometry[1]} and dilation {geometry[2]}, make {(x[0], p, q, w[0])}")
        return (*x, *w[:3])

    def _bias(self, bias) -> bool:
        """``bias`` as given, else whether the plan's own C is a bias (a vector, one value per channel)."""
        if bias is not None:
            return flag(bias, "bias")
        return self.C is not None and len(operand_extents(self.C, "C")) == 1

    def select(self, N: int, H: int, W: int, C: int, K: int, R: int, S: int, stride=(1, 1), padding=(0, 0),
               dilation=(1, 1), bias: bool = False) -> str:
        """Name of the kernel a convolution of this size would use (dense tensors on 16-byte aligned
        allocations; C a bias when ``bias``). Compiles nothing."""
        extents = [integer(v, name, 1) for v, name in zip((N, H, W, C, K, R, S), "NHWCKRS")]
        return self._plan.select(extents, *conv_geometry(stride, padding, dilation), flag(bias, "bias")).name

    def candidates(self, N: int, H: int, W: int, C: int, K: int, R: int, S: int, stride=(1, 1), padding=(0, 0),
                   dilation=(1, 1), bias: bool = False, *, top: int | None = None) -> list:
        """The cost model's ranking for a convolution of this size (as select() takes it), best estimated
        first: each candidate with its ``name``, ``splits``, ``decomposition`` and ``estimated_us``; the
        first ``top`` only where given. Autotuning times the first ``autotune_candidates``. Compiles nothing."""
        extents = [integer(v, name, 1) for v, name in zip((N, H, W, C, K, R, S), "NHWCKRS")]
        return ranked_top(self._plan.candidates(extents, *conv_geometry(stride, padding, dilation), flag(bias, "bias")),
                          top)

    def profile(self, N: int, H: int, W: int, C: int, K: int, R: int, S: int, stride=(1, 1), padding=(0, 0),
                dilation=(1, 1), *, top: int = 6, filter: str | None = None, jobs: int | None = None,
                csv: str | None = None, plot: str | None = None, baseline: bool = True, progress: bool = True):
        """Build (in parallel, with progress on stderr) and time on the GPU the cost model's best ``top``
        candidates for a convolution of (N, H, W, C, K, R, S) with the geometry given (``filter``: a
        shell glob on kernel names), beside cuDNN (torch's conv2d or convolution_backward) when torch
        is installed. Returns a cuforge.profiler.Profile; ``csv`` and ``plot`` write its CSV and a PNG."""
        from ..profiler import profile_conv

        return profile_conv(self, N, H, W, C, K, R, S, stride, padding, dilation, top=top, filter=filter, jobs=jobs,
                            baseline=baseline, progress=progress, csv=csv, plot=plot)

    def construct(self, tile_description=None, alignment_A=None, alignment_B=None, alignment_C=None,
                  iterator_algorithm=None, stride_support=None, swizzling_functor=None, epilogue_functor=None, *,
                  problem=None, stride=None, padding=None, dilation=None,
                  bias: bool | None = None) -> Operation:
        """The plan's kernel as an operation emit.pytorch exports (``op.rt_module.emit()`` is its
        source): chosen for ``problem`` (N, H, W, C, K, R, S, or a ``Conv2DProblemSize`` with its geometry), else a
        ResNet-50 3 x 3 layer (its stem of one vector of channels for fixed-channel iterators), never the
        plan's tensors' extents, so that plans built from tensors or from types construct the same kernel,
        as the CUTLASS Python interface's did; ``stride``, ``padding`` and ``dilation`` as given, else 1, 0
        and 1 (the ResNet-50 layer's own without ``problem``); ``bias`` as in compile(). ``alignment_A/B/C``
        cap the vectors the kernel loads along each operand's channels; ``tile_description`` is pinned, and
        ``iterator_algorithm``, ``swizzling_functor`` and ``epilogue_functor`` (an activation) set as their
        properties set them, for this choice only (``stride_support``, the interface's, is logged: cuforge
        chooses per problem). Compiles nothing."""
        from ..shape import Conv2DProblemSize  # which imports the package this module is of

        geometry = ((1, 1), (0, 0), (1, 1))
        if isinstance(problem, Conv2DProblemSize):  # the interface's sizes, their geometry too
            if problem.groups != 1:
                raise InvalidArgumentError(f"problem: a grouped convolution ({problem.groups} groups); cuforge's "
                                           "kernels run ungrouped ones")
            geometry = (problem.stride, problem.padding, problem.dilation)
            problem = (problem.N, problem.H, problem.W, problem.C, problem.K, problem.R, problem.S)
        elif problem is None:
            problem, *geometry = self._core_class.default_problem
            iterators = (self.iterator_algorithm if iterator_algorithm is None
                         else _iterators(iterator_algorithm, self._plan.kind))
            if iterators == IteratorAlgorithm.FixedChannels:
                # Fixed-channel kernels take one vector of channels: ResNet-50's stem of that many (a 16-byte
                # vector, or alignment_A's), as the interface built them with no problem given.
                n, _, _, _, k, _, _ = problem
                channels = (128 // _core.size_bits(self.element_A) if alignment_A is None
                            else integer(alignment_A, "alignment_A", 1))
                problem, geometry = (n, 224, 224, channels, k, 7, 7), ((2, 2), (3, 3), (1, 1))
        stride, padding, dilation = (given if given is not None else default
                                     for given, default in zip((stride, padding, dilation), geometry))
        items = fixed_items(problem, (7,))
        if items is None:
            raise InvalidArgumentError(f"problem: expected (N, H, W, C, K, R, S), got {shown(problem)}")
        extents = [integer(v, name, 1) for v, name in zip(items, "NHWCKRS")]
        return self._construct(tile_description, extents, *conv_geometry(stride, padding, dilation), self._bias(bias),
                               alignments(alignment_A, alignment_B, alignment_C),
                               change=self._seed_change(iterator_algorithm, stride_support, swizzling_functor,
                                                        epilogue_functor))

    def compile(self, tile_description=None, alignment_A=None, alignment_B=None, alignment_C=None,
                iterator_algorithm=None, stride_support=None, swizzling_functor=None, epilogue_functor=None,
                print_module: bool = False, *, problems=None, stride=None, padding=None, dilation=None,
                jobs: int | None = None, bias: bool | None = None):
        """Build the plan's kernel now (or find it in the disk cache): for the plan's tensors if it
        holds them, else for a ResNet-50 3 x 3 layer, with ``stride``, ``padding`` and ``dilation``
        where given (the held output's extents must then be theirs; else unit stride and dilation, and
        no padding, or the layer's). ``problems``, a list of ((N, H, W, C, K, R, S), stride, padding,
        dilation), builds each one's kernel in parallel; ``bias``: the runs' C is a bias of one value per
        channel (by default, when the plan's own C is); ``alignment_A/B/C`` cap the vectors its kernels
        load along each operand's channels; ``iterator_algorithm``, ``swizzling_functor`` and
        ``epilogue_functor`` (an activation) are set first, as their properties set them, and put back if
        the build is refused (the interface's signature; ``stride_support`` logged). Later runs use the
        kernels for every problem they can run. Returns the kernel as an :class:`~cuforge.emit.Operation`
        (a list of them for ``problems``), also the plan's ``operation``, which says where its build is
        (``library``, ``cache_hit``)."""
        caps = alignments(alignment_A, alignment_B, alignment_C)
        change = self._seed_change(iterator_algorithm, stride_support, swizzling_functor, epilogue_functor)
        single = problems is None
        given = (stride, padding, dilation)
        if single:
            if self.A is not None and self.B is not None and self.D is not None:
                # Without a geometry, unit stride and dilation and no padding, whatever the output (as the CUTLASS
                # Python interface's compile(), which took none, built for its runs' geometry).
                geometry = [height_width(g, name, least) if g is not None else default for g, name, least, default
                            in zip(given, ("stride", "padding", "dilation"), (1, 0, 1), ((1, 1), (0, 0), (1, 1)))]
                told = any(g is not None for g in given)
                problems = [(self._extents(self.A, self.B, self.D, geometry if told else None), *geometry)]
            else:
                extents, *geometry = self._core_class.default_problem
                problems = [(extents, *(g if g is not None else default for g, default in zip(given, geometry)))]
        elif any(g is not None for g in given):
            raise InvalidArgumentError("stride, padding, dilation: each of problems gives its own (extents, stride, "
                                       "padding, dilation)")
        shapes = []
        for problem in problem_list(problems, "((N, H, W, C, K, R, S), stride, padding, dilation)", (4,)):
            extents, s, p, d = problem
            checked = fixed_items(extents, (7,))
            if checked is None:
                raise InvalidArgumentError(f"problems: expected extents (N, H, W, C, K, R, S), got {shown(extents)}")
            shapes.append(([integer(v, name, 1) for v, name in zip(checked, "NHWCKRS")], *conv_geometry(s, p, d)))
        bias, jobs = self._bias(bias), jobs_count(jobs)
        built = self._pinned_build(tile_description, lambda core: core.compile(shapes, jobs, bias, caps), print_module,
                                   change)
        return built[0] if single else built

    def run(self, A=None, B=None, C=None, D=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), alpha=None,
            beta=None, split_k=None, sync: bool = True, print_module: bool = False, stream=None):
        """D = activation(alpha * conv + beta * C). Returns a handle whose sync() waits for this run.

        Every operand and the geometry are checked before anything runs; nothing is written to D
        when a check fails. Torch and CuPy tensors run in place on their current stream (or
        ``stream``); NumPy arrays are copied to the GPU and D copied back when the run is
        synchronized. ``split_k=('serial', n)`` cuts the implicit GEMM's K into n slices summed in the
        kernel, ``split_k=('parallel', n)`` into n slices of f32 partial products summed by a
        reduction kernel; by default the plan's settings (and its choice) apply.
        """
        if self._pending_tile is not None:
            self._refuse_pending_tile()
        if print_module is False and not self._refuses_c(C):
            # 4-D CUDA torch tensors, int geometry, real scalars, torch's stream or one given (but
            # CuPy's): one call into the core, which returns None (having done nothing) for
            # anything else.
            handle = self._plan.run_tensors(A, B, self.C if C is None else C, D, stride, padding, dilation,
                                            self.alpha if alpha is None else alpha,
                                            self.beta if beta is None else beta, split_k, sync, stream)
            if handle is not None:
                return handle
        A, B, C, D, alpha, beta, sync = self._run_arguments(A, B, C, D, alpha, beta, sync, print_module)
        geometry = conv_geometry(stride, padding, dilation)
        splits, parallel = _split_k(split_k)
        operands = tuple(_nhwc_views((A, B, C, D)))
        descs = [None if x is None else describe(x, name) for x, name in zip(operands, "ABCD")]
        s = current_stream(operands, stream)
        on_complete = None
        if any(d is None and x is not None for d, x in zip(descs, operands)):
            descs, on_complete = self._stage_host_arrays(
                operands, descs, s, copy_d_in=beta != 0,
                check=lambda d: self._plan.check(d[0], d[1], None if C is None else d[2], d[3], *geometry, alpha,
                                                 beta, splits, parallel))
        handle = self._plan.run(descs[0], descs[1], None if C is None else descs[2], descs[3], *geometry, alpha,
                                beta, splits, parallel, s, on_complete)
        return self._finished(handle, print_module, sync)


# The passes' run() take their arguments in Conv2d.run's order. The interface declared alpha and beta before stride,
# padding and dilation there, but handed its arguments on by position to Conv2d.run (stride, padding, dilation, alpha,
# beta): its notebook's positional calls, `plan.run(input, weight, C, output, stride, padding, dilation, alpha, beta)`,
# ran as written, its keyword calls did not. Here both do.
class Conv2dFprop(Conv2d):
    """Forward propagation: output = conv(input, weight), the seed's names for A, B and D."""

    def __init__(self, input=None, weight=None, C=None, output=None, alpha=1.0, beta=0.0, element=None,
                 element_input=None, element_weight=None, element_C=None, element_output=None,
                 element_accumulator=None, cc=None, kernel_cc=None, device=None):
        super().__init__("fprop", input, weight, C, output, alpha, beta, element, element_input, element_weight,
                         element_C, element_output, element_accumulator, cc, kernel_cc, device)

    def run(self, input=None, weight=None, C=None, output=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
            alpha=None, beta=None, split_k=None, sync=True, print_module=False, stream=None):
        return super().run(input, weight, C, output, stride=stride, padding=padding, dilation=dilation, alpha=alpha,
                           beta=beta, split_k=split_k, sync=sync, print_module=print_module, stream=stream)


class Conv2dDgrad(Conv2d):
    """The input's gradient: grad_input from grad_output and weight."""

    def __init__(self, grad_output=None, weight=None, C=None, grad_input=None, alpha=1.0, beta=0.0, element=None,
                 element_grad_output=None, element_weight=None, element_C=None, element_grad_input=None,
                 element_accumulator=None, cc=None, kernel_cc=None, device=None):
        super().__init__("dgrad", grad_output, weight, C, grad_input, alpha, beta, element, element_grad_output,
                         element_weight, element_C, element_grad_input, element_accumulator, cc, kernel_cc, device)

    def run(self, grad_output=None, weight=None, C=None, grad_input=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
            alpha=None, beta=None, split_k=None, sync=True, print_module=False, stream=None):
        return super().run(grad_output, weight, C, grad_input, stride=stride, padding=padding, dilation=dilation,
                           alpha=alpha, beta=beta, split_k=split_k, sync=sync, print_module=print_module,
                           stream=stream)


class Conv2dWgrad(Conv2d):
    """The filters' gradient: grad_weight from grad_output and input."""

    def __init__(self, grad_output=None, input=None, C=None, grad_weight=None, alpha=1.0, beta=0.0, element=None,
                 element_grad_output=None, element_input=None, element_C=None, element_grad_weight=None,
                 element_accumulator=None, cc=None, kernel_cc=None, device=None):
        super().__init__("wgrad", grad_output, input, C, grad_weight, alpha, beta, element, element_grad_output,
                         element_input, element_C, element_grad_weight, element_accumulator, cc, kernel_cc, device)

    def run(self, grad_output=None, input=None, C=None, grad_weight=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
            alpha=None, beta=None, split_k=None, sync=True, print_module=False, stream=None):
        return super().run(grad_output, input, C, grad_weight, stride=stride, padding=padding, dilation=dilation,
                           alpha=alpha, beta=beta, split_k=split_k, sync=sync, print_module=print_module,
                           stream=stream)
