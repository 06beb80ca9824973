"""cuforge.op.Gemm: D = alpha * A @ B + beta * C, compatible with the CUTLASS Python interface."""

from __future__ import annotations


import numbers

from .. import _core
from ..emit import Operation
from .._core import InvalidArgumentError, OpcodeClass
from ..arrays import current_stream, describe, operand_extents
from ..arguments import (alignments, enum_value, flag, integer, jobs_count, named_instruction, problem_list,
                         ranked_top, scalar)
from .plan import Plan


def fold_batches(desc, name):
    """An operand of several leading batch dimensions, (..., rows, cols), as one batch of matrices,
    as the CUTLASS Python interface takes (2, 3, M, K): the batch dimensions must be evenly strided
    (a contiguous stack, or a broadcast of stride 0 throughout)."""
    if desc is None or len(desc[2]) <= 3:
        return desc
    ptr, dtype, shape, strides, device = desc
    if any(extent < 0 for extent in shape):  # a protocol's own fields (the core checks those it is given)
        raise InvalidArgumentError(f"{name}: extents are never negative, got shape {tuple(shape)}")
    batch = 1
    for extent in shape[:-2]:
        batch *= extent
    dims = [(e, st) for e, st in zip(shape[:-2], strides[:-2]) if e != 1]  # extents of 1 are never stepped
    if batch and any(dims[i][1] != dims[i + 1][1] * dims[i + 1][0] for i in range(len(dims) - 1)):
        raise InvalidArgumentError(
            f"{name}: batch dimensions {tuple(shape[:-2])} with strides {tuple(strides[:-2])} do not fold into one "
            f"batch (each must step over the next whole); pass a contiguous tensor")
    return ptr, dtype, (batch, *shape[-2:]), (dims[-1][1] if dims else 0, *strides[-2:]), device


class Gemm(Plan):
    """A GEMM plan: D = activation(alpha * A @ B + beta * C). Element types and layouts are bound
    here and cannot change afterwards; C may be D-shaped or a bias row of N broadcast over D's rows,
    and operands with batch dimensions run as one batch (a rank-2 input is broadcast across it;
    several leading batch dimensions, as in (2, 3, M, K), are folded into one).

    ``Gemm(element=np.float16, layout=LayoutType.RowMajor)`` sets every operand alike;
    ``element_A``...``element_D``, ``element_accumulator`` and ``layout_A``/``layout_B``/``layout_C``
    set them one by one, and tensors given as ``A``...``D`` supply theirs in between (an operand's own
    element_X or layout_X first, then its tensor's, then the generic one). The accumulator defaults to
    f32 (s32 for int8 A and B, f64 for f64). ``cc`` is the GPU to build for (default: the device's);
    ``kernel_cc=80`` asks for CUTLASS 2.x (SM80) kernels, which also run on Hopper.
    ``opclass=OpcodeClass.Simt`` asks for CUDA-core kernels (f32, f64, f16, int8, fp8; SM80 family) instead of
    tensor cores.
    """

    name = property(lambda self: "gemm", doc="The operation, as the CUTLASS Python interface names it.")

    _core_class = _core.Gemm

    @staticmethod
    def _folded(descs, C):
        """A, B, C (None when not given) and D, each of several batch dimensions folded into one (an
        input batched over several dimensions has D's batch shape, or is a single matrix). The core
        folds a batch over one B into the rows of one GEMM."""
        descs = [None if (name == "C" and C is None) else d for d, name in zip(descs, "ABCD")]
        if not any(d is not None and len(d[2]) > 3 for d in descs):
            return descs
        d_batch = tuple(descs[3][2][:-2]) if descs[3] is not None else ()
        for d, name in zip(descs[:3], "ABC"):
            if d is not None and len(d[2]) > 2 and tuple(d[2][:-2]) != d_batch:
                raise InvalidArgumentError(f"{name}: batch shape {tuple(d[2][:-2])} is not D's {d_batch} (an input is "
                                           f"batched like D, or is one matrix broadcast over the batch)")
        return [fold_batches(d, name) for d, name in zip(descs, "ABCD")]

    def _family_for_tile(self, value):
        """A tile description naming the other opcode class's instruction (a SIMT one, from a SIMT plan's
        tile_descriptions() or cutlass_library's, on a tensor-op plan, or back) moves the plan to that class's
        kernels, as the CUTLASS Python interface emitted its kernel with the description's instruction; None
        where it names none, the plan's own class, or a class with no kernel for the plan's types. The plan's
        kernel family stays its own (or cuforge's choice), so that a tile of the first class moves it back."""
        given = None if isinstance(value, dict) else named_instruction(value)
        if given is None or given.opcode_class == self._plan.math_instruction().opcode_class:
            return None
        settings = self._plan.settings
        settings.tile = None  # a tile of this class's is none of the other's
        settings.opclass = enum_value(given.opcode_class, OpcodeClass, "tile_description.math_instruction")
        try:
            return self._core_class(settings=settings, **self._core_args), self._core_args
        except InvalidArgumentError:  # no kernels of that class for these types: refused as another instruction
            return None

    def select(self, M: int, N: int, K: int, batch: int = 1, bias: bool = False, *, alignment_A=None,
               alignment_B=None, alignment_C=None) -> str:
        """Name of the kernel a run of this size would use (packed operands on 16-byte aligned allocations,
        or the alignments given, in elements; C a bias row when ``bias``): the tuning record's kernel for
        the class, else a kernel compile() built that can run it, else the selection's choice. Compiles
        nothing."""
        return self._plan.select(integer(M, "M"), integer(N, "N"), integer(K, "K"), integer(batch, "batch"),
                                 flag(bias, "bias"), alignments(alignment_A, alignment_B, alignment_C)).name

    def candidates(self, M: int, N: int, K: int, batch: int = 1, bias: bool = False, *, top: int | None = None,
                   alignment_A=None, alignment_B=None, alignment_C=None) -> list:
        """The cost model's ranking for a run of this size (as select() takes it), best estimated first: each
        candidate with its ``name``, split-K ``splits``, ``decomposition`` and ``estimated_us``; the first
        ``top`` only where given. Autotuning times the first ``autotune_candidates`` of these; select()
        returns the first unless the tuning record or compile() chose another. Compiles nothing."""
        return ranked_top(self._plan.candidates(integer(M, "M"), integer(N, "N"), integer(K, "K"),
                                                integer(batch, "batch"), flag(bias, "bias"),
                                                alignments(alignment_A, alignment_B, alignment_C)), top)

    def _scales(self, scale_a, scale_b, alpha):
        """Python numbers among the scales folded into alpha (the plan's where the run gives none). Scales
        of any kind on a plan that is not fp8 are refused by the core's check; numbers here."""
        numbers_given = [x for x in (scale_a, scale_b) if isinstance(x, numbers.Real) and not isinstance(x, bool)]
        if numbers_given and not self._fp8():
            raise InvalidArgumentError(
                f"scale_a, scale_b: per-tensor scales apply to fp8 (e4m3, e5m2) operands; this plan multiplies "
                f"{self._types['element_a'].name} x {self._types['element_b'].name} (scale alpha instead)")
        for name, value in (("scale_a", scale_a), ("scale_b", scale_b)):
            if isinstance(value, numbers.Real) and not isinstance(value, bool):
                alpha = scalar(self.alpha if alpha is None else alpha, "alpha") * scalar(value, name)
        keep = [None if isinstance(x, numbers.Real) and not isinstance(x, bool) else x for x in (scale_a, scale_b)]
        return keep[0], keep[1], alpha

    @staticmethod
    def _device_scale(x, name):
        desc = describe(x, name)
        if desc is None:
            raise InvalidArgumentError(f"{name}: expected one float32 value on the GPU (the kernel reads it when it "
                                       f"runs, as torch._scaled_mm takes it), or a Python number; got a host array")
        return desc

    def compile(self, tile_description=None, alignment_A=None, alignment_B=None, alignment_C=None,
                print_module: bool = False, *, M: int | None = None, N: int | None = None, K: int | None = None,
                batch: int = 1, problems=None, jobs: int | None = None, bias: bool | None = None):
        """Build the plan's kernel now (or find it in the disk cache), so that later runs launch at once:
        every run() the compiled kernel can implement uses it, whatever its size; others choose their
        own. The kernel is the one chosen for the plan's tensors if it holds them (the class a run of
        them is: batches folded, their alignments, a bias), else for M x N x K if given, else for
        4096^3; ``tile_description`` pins a tile first (as setting plan.tile_description does).
        ``problems``, a list of (M, N, K) or (M, N, K, batch), builds each one's kernel in parallel
        (``jobs`` nvcc processes; default one per core). ``bias``: the runs' C is a bias row (by default,
        when the plan's own C is one). Returns the kernel as an :class:`~cuforge.emit.Operation` (a list of
        them for ``problems``), also the plan's ``operation``, which says where its build is (``library``,
        ``cache_hit``), as the CUTLASS Python interface's compile() returns its operation."""
        single = problems is None
        given = (M, N, K, alignment_A, alignment_B, alignment_C, bias)
        held = all(x is not None for x in (self.A, self.B, self.D))
        if single and all(v is None for v in given) and integer(batch, "batch", 1) == 1 and held:
            # The plan's own tensors: the class a run of them is (batches folded, their alignments, a
            # bias), as the core's checks make it.
            A, B, C, D, alpha, beta, _ = self._run_arguments(None, None, None, None, None, None, True)
            descs = [None if x is None else self._on_device(x, describe(x, name), name, name == "D")
                     for x, name in zip((A, B, C, D), "ABCD")]
            arguments = (*self._folded(descs, C), alpha, beta, jobs_count(jobs))
            build = lambda core: core.compile_tensors(*arguments)  # noqa: E731
        else:
            if single:
                problems = [self._problem(M, N, K, batch, "compile")]
            bias = self._bias(bias)
            shapes = []
            for problem in problem_list(problems, "(M, N, K) or (M, N, K, batch)", (3, 4)):
                m, n, k, b = (*problem, 1) if len(problem) == 3 else problem
                shapes.append((integer(m, "M"), integer(n, "N"), integer(k, "K"), integer(b, "batch"), bias))
            arguments = (shapes, alignments(alignment_A, alignment_B, alignment_C), jobs_count(jobs))
            build = lambda core: core.compile(*arguments)  # noqa: E731
        built = self._pinned_build(tile_description, build, print_module)
        return built[0] if single else built

    def profile(self, M: int, N: int, K: int, batch: int = 1, *, top: int = 6, filter: str | None = None,
                jobs: int | None = None, csv: str | None = None, plot: str | None = None, baseline: bool = True,
                progress: bool = True):
        """Build (in parallel, with progress on stderr) and time on the GPU the cost model's best ``top``
        candidates for an M x N x K problem (``filter``: a shell glob on kernel names), beside
        torch.matmul (cuBLAS) when torch is installed. Returns a cuforge.profiler.Profile (rows best
        measured first, each with the model's rank); ``csv`` and ``plot`` write its CSV and a PNG."""
        from ..profiler import profile

        return profile(self, M, N, K, batch, top=top, filter=filter, jobs=jobs, baseline=baseline,
                       progress=progress, csv=csv, plot=plot)

    def _problem(self, M, N, K, batch, caller: str) -> tuple:
        """(M, N, K, batch) as given, else of the plan's tensors, else the default class."""
        if M is None and N is None and K is None:
            if self.A is not None and self.B is not None:
                shapes = [operand_extents(x, name) for x, name in ((self.A, "A"), (self.B, "B"))]
                if min(len(shape) for shape in shapes) < 2:
                    raise InvalidArgumentError(f"{caller}: the plan's A and B size the problem only as matrices (or "
                                               f"batches of them), got shapes {shapes[0]} and {shapes[1]}; give M, "
                                               f"N and K")
                return shapes[0][-2], shapes[1][-1], shapes[0][-1], batch
            return (*self._core_class.default_problem, batch)
        if M is None or N is None or K is None:
            raise InvalidArgumentError(f"{caller}: give all of M, N and K, or none of them")
        return M, N, K, batch

    def _bias(self, bias) -> bool:
        """``bias`` as given, else whether the plan's own C is a bias row for its A (as the core's check reads
        it: a vector or one row, where A has other than one row)."""
        if bias is not None:
            return flag(bias, "bias")
        if self.A is None or self.C is None:
            return False
        a, c = operand_extents(self.A, "A"), operand_extents(self.C, "C")
        rows = a[-2] if len(a) >= 2 else 1  # a vector A: one row
        return (len(c) == 1 or (len(c) == 2 and c[0] == 1)) and rows != 1

    def construct(self, tile_description=None, alignment_A=None, alignment_B=None, alignment_C=None, *,
                  M: int | None = None, N: int | None = None, K: int | None = None, batch: int = 1,
                  bias: bool | None = None) -> Operation:
        """The plan's kernel as an operation emit.pytorch exports (``op.rt_module.emit()`` is its source):
        chosen for M x N x K if given, else 4096^3, never the plan's tensors' extents, so that plans built
        from tensors or from types construct the same kernel, as the CUTLASS Python interface's did
        (``bias`` as in compile()); ``alignment_A/B/C`` cap its operands' alignments, and
        ``tile_description`` is pinned for this choice only (the plan keeps its own). Compiles nothing."""
        if M is None and N is None and K is None:
            M, N, K = self._core_class.default_problem
        m, n, k, b = self._problem(M, N, K, batch, "construct")
        return self._construct(tile_description, integer(m, "M"), integer(n, "N"), integer(k, "K"),
                               integer(b, "batch"), self._bias(bias), alignments(alignment_A, alignment_B, alignment_C))

    def run(self, A=None, B=None, C=None, D=None, alpha=None, beta=None, sync: bool = True,
            print_module: bool = False, visitor_args=None, stream=None, *, scale_a=None, scale_b=None):
        """D = activation(alpha * A @ B + beta * C). Returns a handle whose sync() waits for this run only.

        Operands default to those given at construction. PyTorch and CuPy arrays run in place on
        their current stream (or ``stream``); NumPy arrays are copied to the GPU and D copied back
        when the run is synchronized. Every operand is checked before anything runs.
        ``print_module`` prints the source of the kernel that ran. ``visitor_args`` (the seed's
        epilogue visitor trees) are not offered: fuse an activation (plan.activation) and a bias C.
        fp8 plans take per-tensor scales, as ``torch._scaled_mm`` does: ``scale_a`` and ``scale_b``,
        one float32 value each on the GPU, read by the SM90 kernel when it runs (so D = activation(alpha *
        scale_a * scale_b * A @ B + beta * C); SIMT fp8 kernels refuse them); a Python number multiplies alpha
        instead.
        """
        if self._pending_tile is not None:
            self._refuse_pending_tile()
        if scale_a is not None or scale_b is not None:
            scale_a, scale_b, alpha = self._scales(scale_a, scale_b, alpha)
        if (visitor_args is None and print_module is False and not self._refuses_c(C) and scale_a is None
                and scale_b is None):
            # CUDA torch tensors of rank 2 or 3, real scalars, torch's stream or one given (but CuPy's): one
            # call into the core, which returns None (having done nothing) for anything else.
            handle = self._plan.run_tensors(A, B, self.C if C is None else C, D,
                                            self.alpha if alpha is None else alpha,
                                            self.beta if beta is None else beta, sync, stream)
            if handle is not None:
                return handle
        if visitor_args is not None:
            raise InvalidArgumentError("visitor_args: epilogue visitor trees are not offered; fuse an activation "
                                       "(plan.activation) and give C as a bias row")
        A, B, C, D, alpha, beta, sync = self._run_arguments(A, B, C, D, alpha, beta, sync, print_module)
        scales = [None if x is None else self._device_scale(x, name) for x, name in ((scale_a, "scale_a"),
                                                                                    (scale_b, "scale_b"))]
        operands = (A, B, C, D)
        descs = [None if x is None else describe(x, name) for x, name in zip(operands, "ABCD")]
        s = current_stream(operands, stream)
        on_complete = None
        if any(d is None and x is not None for d, x in zip(descs, operands)):
            descs, on_complete = self._stage_host_arrays(
                operands, descs, s, copy_d_in=beta != 0,
                check=lambda d: self._plan.check(*self._folded(d, C), alpha, beta, *scales))
        handle = self._plan.run(*self._folded(descs, C), alpha, beta, s, on_complete, *scales)
        return self._finished(handle, print_module, sync)
