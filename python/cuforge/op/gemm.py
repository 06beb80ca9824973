"""cuforge.op.Gemm: D = alpha * A @ B + beta * C, compatible with the CUTLASS Python interface."""

from __future__ import annotations

from .. import _core, epilogue
from .._core import (
    Decomposition,
    InvalidArgumentError,
    LayoutType,
    MathOperation,
    OpcodeClass,
    TileDescription,
)
from ..arrays import HostStaging, current_stream, describe, host_descriptor
from ..dtypes import to_datatype

# The problem compiled by plan.compile() when the plan holds no tensors: large and square, the
# class most plans are built for.
_DEFAULT_COMPILE_PROBLEM = (4096, 4096, 4096)

_SLICED = (Decomposition.SplitK, Decomposition.ParallelSplitK)  # the decompositions that take split_k_slices

# The accumulator a plan takes unless told, by the type of A: the catalog's (f32 for 16-bit, f32
# and fp8 inputs).
_DEFAULT_ACCUMULATOR = {_core.DataType.s8: _core.DataType.s32, _core.DataType.f64: _core.DataType.f64}


def _layout_of(x, name) -> LayoutType | None:
    """Column-major when the array's rows, not its columns, are the contiguous dimension."""
    if x is None:
        return None
    _, _, shape, strides, _ = describe(x, name) or host_descriptor(x, -1)
    if len(shape) >= 2 and shape[-2] > 1 and strides[-2] == 1 and strides[-1] != 1:
        return LayoutType.ColumnMajor
    return LayoutType.RowMajor


def _tile_from(value) -> TileDescription:
    if isinstance(value, TileDescription):
        return value
    if isinstance(value, dict):
        td = TileDescription()
        for key, v in value.items():
            if not hasattr(td, key):
                raise InvalidArgumentError(f"tile_description: unknown key {key!r}")
            setattr(td, key, list(v) if isinstance(v, tuple) else v)
        return td
    raise InvalidArgumentError(
        f"tile_description: expected a cuforge.TileDescription or a dict, got {type(value).__name__}"
    )


def _scalar(value, name: str) -> float:
    """alpha or beta as a float; anything that is not a real number is refused by name."""
    if isinstance(value, (bool, complex)) or not hasattr(value, "__float__"):
        raise InvalidArgumentError(f"{name}: expected a real number, got {value!r} ({type(value).__name__})")
    return float(value)


class Gemm:
    """A GEMM plan: D = activation(alpha * A @ B + beta * C). Element types and layouts are bound
    here and cannot change afterwards; C may be D-shaped or a bias row of N broadcast over D's rows,
    and rank-3 operands run as a batch (a rank-2 input is broadcast across it).

    ``Gemm(element=np.float16, layout=LayoutType.RowMajor)`` sets every operand alike;
    ``element_A``...``element_D``, ``element_accumulator`` and ``layout_A``/``layout_B``/``layout_C``
    set them one by one, and tensors given as ``A``...``D`` supply what is not given. The
    accumulator defaults to f32. ``cc`` is the GPU to build for (default: the device's);
    ``kernel_cc=80`` asks for CUTLASS 2.x (SM80) kernels, which also run on Hopper. The accumulator
    defaults to f32, to s32 for int8 inputs and to f64 for f64 inputs. ``opclass=OpcodeClass.Simt``
    asks for CUDA-core kernels (f32 and f64, SM80 family) instead of tensor cores.
    """

    def __init__(self, A=None, B=None, C=None, D=None, alpha=1.0, beta=0.0, element_accumulator=None,
                 element=None, layout=None, element_A=None, element_B=None, element_C=None, element_D=None,
                 layout_A=None, layout_B=None, layout_C=None, cc=None, kernel_cc=None, opclass=None,
                 math_operation=None):
        def element_of(explicit, tensor, name):
            chosen = explicit if explicit is not None else element
            if chosen is None and tensor is not None:
                chosen = tensor.dtype
            if chosen is None:
                raise InvalidArgumentError(f"element_{name}: give element=, element_{name}= or a tensor {name}=")
            return to_datatype(chosen)

        def layout_of(explicit, tensor, name):
            chosen = explicit if explicit is not None else layout
            return chosen if chosen is not None else (_layout_of(tensor, name) or LayoutType.RowMajor)

        types = dict(
            element_a=element_of(element_A, A, "A"),
            element_b=element_of(element_B, B, "B"),
            element_c=element_of(element_C, C if C is not None else D, "C"),
            element_d=element_of(element_D, D if D is not None else C, "D"),
            layout_a=layout_of(layout_A, A, "A"),
            layout_b=layout_of(layout_B, B, "B"),
            layout_c=layout_of(layout_C, D if D is not None else C, "D" if D is not None else "C"),
        )
        if element_accumulator is not None:
            acc = to_datatype(element_accumulator)
        else:
            acc = _DEFAULT_ACCUMULATOR.get(types["element_a"], _core.DataType.f32)
        if acc == _core.DataType.f16 and types["element_a"] != _core.DataType.f16:
            raise InvalidArgumentError("element_accumulator: f16 accumulation is offered for f16 inputs only")
        self._arguments = dict(types, element_accumulator=acc, cc=cc or 0, kernel_cc=kernel_cc or 0,
                               math=math_operation)
        self._plan = _core.Gemm(**self._arguments, opclass=opclass)
        self._types = types
        self.element_accumulator = acc
        self.A, self.B, self.C, self.D = A, B, C, D
        self.alpha, self.beta = alpha, beta
        self._opclass = opclass or OpcodeClass.TensorOp
        self._math = math_operation or MathOperation.multiply_add
        self._staging = HostStaging()

    # Properties of the CUTLASS Python interface.
    element_A = property(lambda self: self._types["element_a"])
    element_B = property(lambda self: self._types["element_b"])
    element_C = property(lambda self: self._types["element_c"])
    element_D = property(lambda self: self._types["element_d"])
    layout_A = property(lambda self: self._types["layout_a"])
    layout_B = property(lambda self: self._types["layout_b"])
    layout_C = property(lambda self: self._types["layout_c"])
    cc = property(lambda self: self._plan.cc, doc="Compute capability the plan builds for.")
    kernel_cc = property(lambda self: self._plan.kernel_cc, doc="Kernel family: 80 (CUTLASS 2.x) or 90 (3.x).")

    @property
    def opclass(self) -> OpcodeClass:
        """Tensor cores (TensorOp, the default) or CUDA cores (Simt: f32 and f64 kernels of the SM80
        family). Setting it chooses among that class's kernels from then on; the epilogue,
        decomposition, swizzle and a pinned tile description carry over (an error says which cannot)."""
        return self._opclass

    @opclass.setter
    def opclass(self, value: OpcodeClass):
        if not isinstance(value, OpcodeClass):
            raise InvalidArgumentError(f"opclass: expected a cuforge.OpcodeClass, got {value!r}")
        if value == self._opclass:
            return
        plan = _core.Gemm(**self._arguments, opclass=value)
        old = self._plan
        plan.set_activation(old.activation, old.activation_argument)
        plan.set_decomposition(old.decomposition, old.splits)
        plan.deterministic = old.deterministic
        if old.tile_scheduler is not None:
            plan.set_tile_scheduler(old.tile_scheduler)
        if old.tile_description() is not None:
            plan.set_tile_description(old.tile_description())
        self._plan, self._opclass = plan, value

    math_operation = property(lambda self: self._math, doc="multiply_add; multiply_add_fast_f32 is 3xTF32.")

    @property
    def activation(self) -> epilogue.ActivationFunction:
        """The activation fused into the epilogue (cuforge.epilogue.identity by default)."""
        return epilogue.of_kind(self._plan.activation)

    @activation.setter
    def activation(self, value):
        function, argument = epilogue.resolve(value)
        self._plan.set_activation(function.kind, argument)

    def activations(self) -> list[epilogue.ActivationFunction]:
        """Every activation this plan's kernels can fuse."""
        return [epilogue.of_kind(kind) for kind in self._plan.activations()]

    @property
    def swizzling_functor(self):
        """The pinned tile scheduler (cuforge.swizzle), or None when cuforge chooses per problem."""
        return self._plan.tile_scheduler

    @swizzling_functor.setter
    def swizzling_functor(self, value):
        self._plan.set_tile_scheduler(value)

    def swizzling_functors(self) -> list:
        """The swizzles (SM80) or tile schedulers (SM90) this plan's kernels can use."""
        return self._plan.tile_schedulers()

    @property
    def decomposition(self) -> Decomposition:
        """How K-heavy problems are divided: Heuristic (default), DataParallel, SplitK (reduced in the
        kernel), StreamK, or ParallelSplitK (the slices as a batch, then a reduction kernel). The two
        split-K decompositions take their slices from split_k_slices."""
        return self._plan.decomposition

    @decomposition.setter
    def decomposition(self, value: Decomposition):
        if value in _SLICED and self._plan.splits <= 1:
            raise InvalidArgumentError(f"decomposition {value.name} cuts K into split_k_slices >= 2 slices: set "
                                       f"split_k_slices first (the decomposition then keeps them)")
        self._plan.set_decomposition(value, self._plan.splits if value in _SLICED else 1)

    @property
    def deterministic(self) -> bool:
        """Whether stream-K and split-K sum partial tiles in K order (True, the default: bitwise
        reproducible) or as they arrive (False: faster on long K; f32 rounding may vary by run)."""
        return self._plan.deterministic

    @deterministic.setter
    def deterministic(self, value: bool):
        self._plan.deterministic = bool(value)

    @property
    def split_k_slices(self) -> int:
        """K slices of split-K (1: none). Setting more than one selects the SplitK decomposition
        unless ParallelSplitK is already chosen."""
        return self._plan.splits

    @split_k_slices.setter
    def split_k_slices(self, slices: int):
        if slices <= 1:
            self._plan.set_decomposition(Decomposition.Heuristic, slices)
        else:
            current = self._plan.decomposition
            self._plan.set_decomposition(current if current in _SLICED else Decomposition.SplitK, slices)

    def tile_descriptions(self) -> list[TileDescription]:
        """Every tile description the catalog can build for this plan's types, layouts and target."""
        return self._plan.tile_descriptions()

    @property
    def tile_description(self) -> TileDescription | None:
        """The pinned tile description, or None when cuforge chooses per problem."""
        return self._plan.tile_description()

    @tile_description.setter
    def tile_description(self, value):
        if value is None:
            self._plan.clear_tile_description()
        else:
            self._plan.set_tile_description(_tile_from(value))

    @property
    def last_kernel(self) -> str | None:
        """Name of the kernel the latest run launched (None before the first run)."""
        return self._plan.last_kernel

    @property
    def last_splits(self) -> int | None:
        """Split-K slices of the latest run (1: none; the heuristic decomposition may choose more)."""
        return self._plan.last_splits

    def select(self, M: int, N: int, K: int, batch: int = 1, bias: bool = False) -> str:
        """Name of the kernel a run of this size would use (packed, aligned operands; C a bias row when
        ``bias``); compiles nothing."""
        return self._plan.select(M, N, K, batch, bias)

    def compile(self, M: int | None = None, N: int | None = None, K: int | None = None, batch: int = 1) -> dict:
        """Build (or find in the cache) the kernel for a problem size: the plan's tensors' if it holds
        them, else the one given, else 4096^3. Returns the kernel's name, library path and whether the
        cache had it."""
        if M is None:
            if self.A is not None and self.B is not None:
                M, K = self.A.shape[-2], self.A.shape[-1]
                N = self.B.shape[-1]
            else:
                M, N, K = _DEFAULT_COMPILE_PROBLEM
        return self._plan.compile(M, N, K, batch)

    def run(self, A=None, B=None, C=None, D=None, alpha=None, beta=None, sync: bool = True,
            print_module: bool = False, stream=None):
        """D = activation(alpha * A @ B + beta * C). Returns a handle whose sync() waits for this run only.

        Operands default to those given at construction. PyTorch and CuPy arrays run in place on
        their current stream (or ``stream``); NumPy arrays are copied to the GPU and D copied back
        when the run is synchronized. Every operand is checked before anything runs.
        ``print_module`` prints the source of the kernel that ran.
        """
        A = self.A if A is None else A
        B = self.B if B is None else B
        C = self.C if C is None else C
        D = self.D if D is None else D
        alpha = _scalar(self.alpha if alpha is None else alpha, "alpha")
        beta = _scalar(self.beta if beta is None else beta, "beta")
        operands = (A, B, C, D)
        descs = [None if x is None else describe(x, name) for x, name in zip(operands, "ABCD")]
        s = current_stream(operands, stream)
        on_complete = None
        if any(d is None and x is not None for d, x in zip(descs, operands)):
            descs, on_complete = self._stage_host_arrays(operands, descs, s, alpha, beta)
        handle = self._plan.run(descs[0], descs[1], None if C is None else descs[2], descs[3], alpha, beta, s,
                                on_complete)
        if print_module and self.last_kernel:
            print(_core.emit(self.last_kernel))
        if sync:
            handle.sync()
        return handle

    def _stage_host_arrays(self, operands, descs, stream, alpha, beta):
        device = self._plan.device
        # Check first: nothing is copied (and no GPU is needed) for a run that would be refused.
        checked = [host_descriptor(x, device) if d is None and x is not None else d for d, x in zip(descs, operands)]
        self._plan.check(checked[0], checked[1], None if operands[2] is None else checked[2], checked[3], alpha, beta)
        staged_d = None
        out = list(descs)
        for i, (x, name) in enumerate(zip(operands, "ABCD")):
            if x is None or descs[i] is not None:
                continue
            copy_in = name != "D" or beta != 0
            out[i], buf, host = self._staging.stage(x, name, device, stream, copy_in)
            if name == "D":
                staged_d = (buf, host)
        if staged_d is None:
            return out, None
        buf, host = staged_d

        def copy_back():
            buf.copy_to_host(host.ctypes.data, host.nbytes, stream)

        return out, copy_back

