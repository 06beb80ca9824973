"""What the GEMM-family plans of cuforge.op share: construction from element types, layouts and
tensors, and the settings (their arguments read by cuforge.arguments)."""

from __future__ import annotations

import difflib
import enum
import logging
import threading

from .. import _core, epilogue
from .._core import DataTypeError, Decomposition, InvalidArgumentError, MathOperation, OpcodeClass
from ..arrays import completion, host_descriptor, operand_extents, stage
from ..emit import Operation, PlanCopyError, kernel_source
from ..dtypes import FP8
from ..arguments import capability, device_ordinal, enum_value, flag, integer, scalar
from .operand_types import OperandTypes, datatype
from .tile_pinning import TilePinning


_logger = logging.getLogger("cuforge")

class UnknownSettingError(InvalidArgumentError, AttributeError):
    """A setting a plan does not have: a cuforge error, and the AttributeError Python raises for a name
    an object does not have."""


class Plan(TilePinning):
    """What every GEMM-family plan shares (Gemm, GroupedGemm, Conv2d): element types and layouts
    bound at construction, and the settings, each setter writing one field of the core's settings
    value. ``kind`` is a convolution's (KernelKind), for Conv2d's core plan.

    ``Plan(element=np.float16, layout=LayoutType.RowMajor)`` sets every operand alike;
    ``element_A``...``element_D``, ``element_accumulator`` and ``layout_A``/``layout_B``/``layout_C``
    set them one by one, and tensors given as ``A``...``D`` supply theirs in between (an operand's own
    element_X or layout_X first, then its tensor's, then the generic one, as in the CUTLASS Python
    interface). The
    accumulator defaults to f32 (s32 for int8 A and B, f64 for f64). ``cc`` is the GPU to build for
    (default: the device's); ``kernel_cc=80`` asks for CUTLASS 2.x (SM80) kernels, which also run on
    Hopper. ``opclass=OpcodeClass.Simt`` asks for CUDA-core kernels (f32, f64, f16, int8, fp8; SM80 family)
    instead of tensor cores. ``device`` is the CUDA device ordinal the plan builds for and runs on
    (default: the current device).
    """

    _core_class = None  # the core plan a subclass wraps
    # What a plan holds besides its properties: the operands and scalars runs default to.
    _FIELDS = frozenset({"A", "B", "C", "D", "alpha", "beta"})

    def __setattr__(self, name, value):
        if name in ("A", "B", "C", "D"):
            self._held(value, name)
        # A misspelt setting (plan.activaton = relu) is refused, not kept unread; so is a method's name.
        if not name.startswith("_") and name not in Plan._FIELDS:
            if not isinstance(getattr(type(self), name, None), property):
                known = {n for c in type(self).__mro__ for n, v in vars(c).items() if isinstance(v, property)}
                close = difflib.get_close_matches(name, sorted(known | Plan._FIELDS), n=1)
                raise UnknownSettingError(f"{type(self).__name__} has no setting {name!r}"
                                          + (f"; did you mean {close[0]!r}?" if close else ""))
        super().__setattr__(name, value)

    def __reduce_ex__(self, protocol):
        # copy.copy, copy.deepcopy and pickle all ask this: a plan holds a core plan, its kernels and a lock.
        raise PlanCopyError(f"a {type(self).__name__} plan is not copied or pickled (it holds the core's plan, its "
                            f"compiled kernels and a lock): construct another with the same arguments")

    def __delattr__(self, name):
        if not name.startswith("_"):
            raise UnknownSettingError(f"{type(self).__name__}.{name} cannot be deleted: set it instead (None where "
                                      f"it takes None)")
        super().__delattr__(name)

    def _held(self, value, name: str) -> None:
        """An operand the plan holds (given at construction, or plan.A = x), checked as far as its extents
        now: the plan sizes problems and tells a bias by them, and runs read it later."""
        if value is not None:
            operand_extents(value, name)

    def __init__(self, A=None, B=None, C=None, D=None, alpha=1.0, beta=0.0, element_accumulator=None,
                 element=None, layout=None, element_A=None, element_B=None, element_C=None, element_D=None,
                 layout_A=None, layout_B=None, layout_C=None, cc=None, kernel_cc=None, opclass=None,
                 math_operation=None, kind=None, device=None):
        self.A, self.B, self.C, self.D = A, B, C, D  # each checked as far as its extents (_held)

        self._settings_lock = threading.RLock()
        self._operation = None  # what compile() built last
        settings = _core.GemmSettings()
        if opclass is not None:
            settings.opclass = enum_value(opclass, OpcodeClass, "opclass")
        if math_operation is not None:
            settings.math = enum_value(math_operation, MathOperation, "math_operation")
        types = OperandTypes(A, B, C, D, element, layout)  # each operand's type and layout, as the interface chose
        element_a = types.element(element_A, "A")
        element_b = types.element(element_B, "B")
        element_c = types.element(element_C, "C", "D")
        element_d = types.element(element_D, "D", "C")
        # element_C = void (the seed's spelling of "no C"): the kernels take C of D's type, never read.
        self._no_c = element_c == _core.DataType.void
        # What the core plan is made of, kept to make another like it (construct() with a tile).
        self._core_args = dict(
            element_a=element_a,
            element_b=element_b,
            element_c=element_d if self._no_c else element_c,
            element_d=element_d,
            element_accumulator=None if element_accumulator is None else datatype(element_accumulator,
                                                                                   "element_accumulator"),
            layout_a=types.layout(layout_A, "A", element_a),
            layout_b=types.layout(layout_B, "B", element_b),
            layout_c=types.layout(layout_C, "C"),
            cc=0 if cc is None else capability(cc, "cc"),
            kernel_cc=0 if kernel_cc is None else capability(kernel_cc, "kernel_cc"),
            device=-1 if device is None else device_ordinal(device),
            **({} if kind is None else {"kind": kind}),
        )
        self._plan = self._core_class(settings=settings, **self._core_args)
        o = self._plan
        self._types = dict(element_a=o.element_a, element_b=o.element_b, element_c=element_c,
                           element_d=o.element_d, layout_a=o.layout_a, layout_b=o.layout_b, layout_c=o.layout_c)
        self.alpha, self.beta = alpha, beta

    def _run_arguments(self, A, B, C, D, alpha, beta, sync, print_module=False):
        """A run's operands (those given at construction where it gives none), alpha and beta as
        floats (the plan's where it gives none) and sync as a bool, print_module checked; a plan whose
        element_C is void takes no C."""
        flag(print_module, "print_module")
        A = self.A if A is None else A
        B = self.B if B is None else B
        C = self.C if C is None else C
        D = self.D if D is None else D
        if self._no_c and C is not None and not (isinstance(C, (list, tuple)) and len(C) == 0):
            raise InvalidArgumentError("C: the plan's element_C is void: it runs without C (give C=None, beta=0)")
        return (A, B, C, D, scalar(self.alpha if alpha is None else alpha, "alpha"),
                scalar(self.beta if beta is None else beta, "beta"), flag(sync, "sync"))

    def _refuses_c(self, C) -> bool:
        """Whether a run is given a C (else the plan holds one) that the plan refuses, its element_C being void:
        the one-call paths leave it to _run_arguments' message."""
        return self._no_c and (C is not None or self.C is not None)

    def _on_device(self, x, desc, name: str, output: bool):
        """A run's operand as the core checks it: its descriptor, or a host array's described as if it
        were on the plan's device (None for an absent operand)."""
        if desc is None and x is not None:
            return host_descriptor(x, self._plan.device, name, output=output)
        return desc

    def _stage_host_arrays(self, operands, descs, stream, copy_d_in, check):
        """Copies the NumPy operands of (A, B, C, D) to the device, after `check` (the plan's checks)
        accepted them described as if they were there: nothing is copied, and no GPU is needed, for
        a refused run. Returns the descriptors to run on and the run's completion (None when nothing
        was staged), which copies D back to the host and holds the run's copies until then: each run
        has its own, so that runs in flight at once (sync=False, threads) never share one."""
        device = self._plan.device
        check([self._on_device(x, d, name, name == "D") for d, x, name in zip(descs, operands, "ABCD")])
        copies = []
        out = list(descs)
        for i, (x, name) in enumerate(zip(operands, "ABCD")):
            if x is not None and descs[i] is None:
                out[i], buf, host = stage(x, name, device, stream, name != "D" or copy_d_in)
                copies.append((name, buf, host))
        return out, completion(copies)

    def _finished(self, handle, print_module: bool, sync: bool):
        """A run's handle, once the source of the kernel that ran is printed (``print_module``, the
        CUTLASS Python interface's) and the run waited for (``sync``)."""
        if print_module and self.last_kernel:
            print(kernel_source(self.last_kernel))
        if sync:
            handle.sync()
        return handle

    def _construct(self, tile_description, *problem, change=None) -> Operation:
        """construct(): the kernel the core plan selects for `problem`, as an Operation. With a tile
        description (or a `change` of the settings) the choice is made by a new core plan of the same types
        and settings with that tile pinned (checked as the setter checks it) and the change made, so that
        the plan keeps its settings and the kernels it compiled."""
        if tile_description is None:
            self._refuse_pending_tile()
        core = self._plan
        if tile_description is not None or change is not None:
            core = self._trial_core(tile_description, change)
        return Operation(core, core.select(*problem), core.settings, self.cc)

    def _set_flag(self, name: str, value):
        """A boolean setting, checked before the core sees it."""
        value = flag(value, name)
        self._update(lambda s: setattr(s, name, value))

    # What compile()'s `change` may set (Conv2d's: the CUTLASS Python interface's compile() arguments).
    _CHANGED_FIELDS = ("iterator_algorithm", "tile_scheduler", "activation", "activation_argument")

    def _pinned_build(self, tile_description, build, print_module: bool, change=None) -> list[Operation]:
        """compile()'s build (a function of the core plan), its arguments checked, with ``tile_description``
        pinned and ``change`` made to the settings first (for good, as the setters make them; a change that
        changes nothing is not made, so that the kernels compiled before stay the plan's), each kernel's
        source printed after it with ``print_module`` (the CUTLASS Python interface's): the kernels built,
        as operations (the last one also the plan's ``operation``, as the interface's compile() leaves
        it). Where the core refuses the build's arguments, the tile and the change are undone, and a
        family the tile moved the plan to left (the kernels compiled before are then the disk cache's to
        find)."""
        print_module = flag(print_module, "print_module")
        before = self._plan.settings
        if change is not None:
            after = self._plan.settings
            change(after)
            if all(getattr(after, f) == getattr(before, f) for f in self._CHANGED_FIELDS):
                change = None
        if tile_description is None:
            self._refuse_pending_tile(compiling=True)
        if tile_description is None and change is None:
            core = self._plan
            built = build(core)
        else:
            core, core_args, pending = self._plan, self._core_args, self._pending_tile
            if tile_description is not None:  # refused at once, the plan as it was: no pending tile here
                with self._settings_lock:
                    self._pin(tile_description)
                    self._pending_tile = None
            try:
                if change is not None:
                    self._update(change)
                built = build(self._plan)
            except (InvalidArgumentError, DataTypeError):
                fields = ("tile",) + (self._CHANGED_FIELDS if change is not None else ())

                def put_back(settings):
                    for field in fields:
                        setattr(settings, field, getattr(before, field))

                with self._settings_lock:
                    if self._plan is not core:  # the family the tile moved to left: the plan as it was
                        self._plan, self._core_args = core, core_args
                    else:  # the tile and the changed fields put back: what another thread set meanwhile stays
                        self._update(put_back)
                    self._pending_tile = pending
                raise
            core = self._plan
        operations = [Operation(core, r["chosen"], core.settings, self.cc, r) for r in built]
        if print_module:
            for op in operations:
                print(op.emit())
        if operations:
            self._operation = operations[-1]
        return operations

    def _update(self, change):
        """Applies `change` to a copy of the settings and gives it to the core, which checks it whole:
        a refused change leaves the plan as it was. One at a time: two threads' changes both stay."""
        with self._settings_lock:
            settings = self._plan.settings
            change(settings)
            self._plan.settings = settings

    # Properties of the CUTLASS Python interface.
    element_A = property(lambda self: self._types["element_a"])
    element_B = property(lambda self: self._types["element_b"])
    element_C = property(lambda self: self._types["element_c"])
    element_D = property(lambda self: self._types["element_d"])
    element_accumulator = property(lambda self: self._plan.element_accumulator)
    layout_A = property(lambda self: self._types["layout_a"])
    layout_B = property(lambda self: self._types["layout_b"])
    layout_C = property(lambda self: self._types["layout_c"])
    # The interface's own spellings of these, which its test harnesses read (plan._element_a ...).
    _element_a, _element_b, _element_c, _element_d = element_A, element_B, element_C, element_D
    _element_accumulator = element_accumulator
    _layout_a, _layout_b, _layout_c = layout_A, layout_B, layout_C
    cc = property(lambda self: self._plan.cc, doc="Compute capability the plan builds for.")
    kernel_cc = property(lambda self: self._plan.kernel_cc, doc="Kernel family: 80 (CUTLASS 2.x) or 90 (3.x).")
    current_cc = property(lambda self: self._plan.kernel_cc, doc="kernel_cc, as the CUTLASS Python interface named it.")

    @property
    def opclass(self) -> OpcodeClass:
        """Tensor cores (TensorOp, the default) or CUDA cores (Simt: f32, f64, f16, int8 and fp8 kernels of the
        SM80 family); a member or its name. Where none was set, the class of the plan's kernels: SIMT where
        the tensor cores have no kernel for the plan's layouts or math operation (int8 or fp8 with A column-major
        or B row-major, fp8 before SM90), as in the CUTLASS Python interface (a warning says so), and for f64
        convolutions. Setting
        it chooses among that class's kernels from then on; the other settings carry over (an error says which
        cannot)."""
        opclass = self._plan.settings.opclass
        return opclass if opclass is not None else self._plan.math_instruction().opcode_class

    @opclass.setter
    def opclass(self, value):
        value = enum_value(value, OpcodeClass, "opclass")

        def change(s):
            s.opclass = value

        self._update(change)

    op_class = opclass  # the CUTLASS Python interface's attribute, which its opclass setter wrote

    @property
    def operation(self) -> Operation | None:
        """The kernel compile() built last, as the operation it returned (None before a compile())."""
        return self._operation

    @property
    def math_operation(self) -> MathOperation:
        """The math operation set on the plan, else the one its kernels compute with (multiply_add;
        multiply_add_saturate for int8 on SM80, multiply_add_mixed_input_upcast for s8 beside f16 or bf16).
        multiply_add_fast_f32 asks for 3xTF32, multiply_add_fast_accum for fp8 fast accumulation
        (``fp8_fast_accum``)."""
        math = self._plan.settings.math
        return math if math is not None else self._plan.math_instruction().math_operation

    @math_operation.setter
    def math_operation(self, value):  # None: the kernels' own again
        value = None if value is None else enum_value(value, MathOperation, "math_operation")

        def change(s):
            s.math = value

        self._update(change)

    def _fp8(self) -> bool:
        """Whether the plan multiplies fp8 operands (both e4m3 or e5m2)."""
        return self._types["element_a"] in FP8 and self._types["element_b"] in FP8

    @property
    def fp8_fast_accum(self) -> bool:
        """fp8 (e4m3/e5m2) operands only: True runs CUTLASS's fast-accumulation kernels, which keep the
        sums of all of K in the tensor core's accumulator (faster; fewer accumulator bits over long K).
        False (the default) promotes the sums into f32 registers every few k-blocks, as
        ``torch._scaled_mm`` does by default (its ``use_fast_accum=False``), so results compare."""
        return self._plan.settings.math == MathOperation.multiply_add_fast_accum

    @fp8_fast_accum.setter
    def fp8_fast_accum(self, value):
        value = flag(value, "fp8_fast_accum")
        if not self._fp8():
            raise InvalidArgumentError(
                f"fp8_fast_accum applies to fp8 (e4m3, e5m2) operands; this plan multiplies "
                f"{self._types['element_a'].name} x {self._types['element_b'].name}")

        def change(s):
            s.math = MathOperation.multiply_add_fast_accum if value else None

        self._update(change)

    @property
    def epilogue_visitor(self) -> None:
        """The CUTLASS Python interface's epilogue visitor trees are not offered (None): fuse an
        activation (plan.activation) and give C as a bias row instead."""
        return None

    @epilogue_visitor.setter
    def epilogue_visitor(self, visitor):
        raise InvalidArgumentError("epilogue_visitor: epilogue visitor trees are not offered; fuse an activation "
                                   "(plan.activation) and give C as a bias row")

    @property
    def activation(self) -> epilogue.ActivationFunction:
        """The activation fused into the epilogue (cuforge.epilogue.identity by default)."""
        return epilogue.of_kind(self._plan.settings.activation)

    @activation.setter
    def activation(self, value):
        function, argument = epilogue.resolve(value)
        self._update(lambda s: s.set_activation(function.kind, argument))

    def activations(self) -> list[epilogue.ActivationFunction]:
        """Every activation this plan's kernels can fuse, in the interface's order (epilogue.get_activations())."""
        order = epilogue.get_activations()
        fused = [epilogue.of_kind(kind) for kind in self._plan.activations()]
        return sorted(fused, key=lambda f: order.index(f) if f in order else len(order))

    @property
    def swizzling_functor(self):
        """The pinned tile scheduler (cuforge.swizzle), or None when cuforge chooses per problem."""
        return self._plan.settings.tile_scheduler

    @swizzling_functor.setter
    def swizzling_functor(self, value):
        value = self._tile_scheduler(value)
        self._update(lambda s: setattr(s, "tile_scheduler", value))

    def _tile_scheduler(self, value, given: str | None = None):
        """A swizzling_functor as the settings' tile scheduler (None: cuforge's choice); ``given`` names the
        setting in what is logged (default: swizzling_functor and the value)."""
        name = getattr(value, "name", value) if isinstance(value, enum.Enum) else value
        if isinstance(name, str) and name.startswith("StridedDgrad"):  # cuforge.swizzle's or cutlass_library's
            raise InvalidArgumentError(f"swizzling_functor {name}: a strided-dgrad swizzle schedules dgrad kernels, "
                                       f"not this plan's")
        if isinstance(name, str) and name == "Identity8":  # cutlass_library's member, the interface's IdentitySwizzle8
            value = _core.TileSchedulerType.Default
        value = None if value is None else enum_value(value, _core.TileSchedulerType, "swizzling_functor")
        threadblock_swizzles = (_core.TileSchedulerType.Identity1, _core.TileSchedulerType.Identity2,
                                _core.TileSchedulerType.Identity4, _core.TileSchedulerType.Horizontal)
        if value in threadblock_swizzles and self.kernel_cc >= 90:
            # The interface's default (IdentitySwizzle1) and its other 2.x swizzles leave its SM90 kernels as
            # they are: logged, and the scheduler left to cuforge (as swizzling_stride is).
            _logger.info("%s: this plan's SM90 kernels take no CUTLASS 2.x threadblock swizzle; cuforge chooses their "
                         "tile scheduler", given or f"swizzling_functor {value.name}")
            return None
        return value

    def swizzling_functors(self) -> list:
        """The swizzles (SM80) or tile schedulers (SM90) this plan's kernels can use."""
        return self._plan.tile_schedulers()

    @property
    def decomposition(self) -> Decomposition:
        """How K-heavy problems are divided: Heuristic (default), DataParallel, SplitK (reduced in the
        kernel), StreamK, or ParallelSplitK (the slices as a batch, then a reduction kernel). The two
        split-K decompositions take their slices from split_k_slices (set first)."""
        return self._plan.settings.decomposition

    @decomposition.setter
    def decomposition(self, value):
        value = enum_value(value, Decomposition, "decomposition")
        self._update(lambda s: s.set_decomposition(value))

    @property
    def autotune(self) -> bool:
        """Measured choice (default: CUFORGE_AUTOTUNE=1): the first run of each new problem class builds
        the cost model's best ``autotune_candidates`` kernels in parallel, times them on the run's
        operands (writing to scratch memory, never to D) and keeps the fastest in the tuning record in
        the cache directory, which later runs and later processes use without timing again, unless they
        ask for more ``autotune_candidates`` than its measurement tried. Plans without autotune use the
        record too, where it has the class. Grouped runs with a group of K = 0 are not measured."""
        return self._plan.settings.autotune

    @autotune.setter
    def autotune(self, value):
        self._set_flag("autotune", value)

    @property
    def autotune_candidates(self) -> int:
        """How many of the cost model's best candidates autotuning times (default 6)."""
        return self._plan.settings.autotune_candidates

    @autotune_candidates.setter
    def autotune_candidates(self, value):
        value = integer(value, "autotune_candidates", 1)  # the core says how many it times at most

        def change(s):
            s.autotune_candidates = value

        self._update(change)

    @property
    def first_run(self) -> str:
        """What a run does when the kernel chosen for its problem class is not built yet: "wait" (the
        default, or the environment's CUFORGE_FIRST_RUN) builds it first, so every run of a class uses
        one kernel; "fallback" runs at once on the best-ranked kernel already built (else a quick-to-build
        SM80 kernel, built first) while the chosen one builds in the background, and runs switch to it
        once it is ready. ``last_kernel`` says which ran."""
        return self._plan.settings.first_run.name

    @first_run.setter
    def first_run(self, value):
        value = enum_value(value, _core.FirstRun, "first_run")

        def change(s):
            s.first_run = value

        self._update(change)

    @property
    def deterministic(self) -> bool:
        """Whether stream-K and split-K sum partial tiles in K order (True, the default: bitwise
        reproducible) or as they arrive (False: faster on long K; f32 rounding may vary by run)."""
        return self._plan.settings.deterministic

    @deterministic.setter
    def deterministic(self, value):
        self._set_flag("deterministic", value)

    @property
    def split_k_slices(self) -> int:
        """K slices of split-K (1: none). Setting more than one selects the SplitK decomposition
        unless ParallelSplitK is already chosen."""
        return self._plan.settings.splits

    @split_k_slices.setter
    def split_k_slices(self, slices):
        slices = integer(slices, "split_k_slices")
        self._update(lambda s: s.set_split_k_slices(slices))

    @property
    def last_kernel(self) -> str | None:
        """Name of the kernel the latest run launched (None before the first run)."""
        return self._plan.last_kernel

    @property
    def last_splits(self) -> int | None:
        """Split-K slices of the latest run (1: none; the heuristic decomposition may choose more)."""
        return self._plan.last_splits

