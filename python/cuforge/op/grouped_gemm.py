"""cuforge.op.GroupedGemm: many GEMMs of their own sizes in one launch, compatible with the CUTLASS
Python interface's GroupedGemm, plus the mixture-of-experts offsets form of torch._grouped_mm."""

from __future__ import annotations


from .. import _core
from ..emit import Operation
from .._core import DataTypeError, InvalidArgumentError
from ..arrays import completion, current_stream, describe, operand_extents, stage
from ..arguments import alignments, flag, integer, jobs_count, problem_list, ranked_top
from .plan import Plan


def _listed(value, name):
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise InvalidArgumentError(f"{name}: expected a list of one tensor per group, got {type(value).__name__} "
                                   "(the offsets form takes offsets=)")
    return list(value)


def _offsets_descriptor(offsets):
    """The offsets' descriptor. An element type cuforge has no name for (int64, say) is refused here as
    not int32; the core refuses the types it knows (f32, ...) alike. A Python sequence is no device tensor."""
    if isinstance(offsets, (list, tuple, range)):
        raise InvalidArgumentError(f"offsets: expected an int32 tensor on the GPU (PyTorch or CuPy: the group sizes "
                                   f"stay on the device), got a {type(offsets).__name__}")
    try:
        return describe(offsets, "offsets")
    except DataTypeError:
        got = str(getattr(offsets, "dtype", type(offsets).__name__)).replace("torch.", "")
        raise DataTypeError(f"offsets: expected int32 (one row offset per group, as torch._grouped_mm takes), "
                            f"got {got}") from None


def _described_lists(A, B, C, D):
    """The list form's operands by name (C an empty list when not given), and their device
    descriptors (None for host arrays and absent Cs)."""
    As, Bs, Ds = _listed(A, "A"), _listed(B, "B"), _listed(D, "D")
    Cs = _listed(C, "C") or []
    for name, lst in (("A", As), ("B", Bs), ("D", Ds)):
        if not lst:
            raise InvalidArgumentError(f"{name}: expected a list of one tensor per group, got "
                                       f"{'none' if lst is None else 'an empty list'}")
    lists = {name: lst for name, lst in zip("ABCD", (As, Bs, Cs, Ds))}
    descs = {name: [describe(x, f"{name}[{g}]") if x is not None else None for g, x in enumerate(lst)]
             for name, lst in lists.items()}
    return lists, descs


class GroupedGemm(Plan):
    """A grouped GEMM plan: for every group g, D_g = activation(alpha * A_g @ B_g + beta * C_g), each
    group with its own M, N and K, all in one launch. Constructed like Gemm (element types, layouts,
    accumulator, cc, kernel_cc, opclass); SM90 pointer-array kernels (f16, bf16, e4m3) or SM80
    GemmGrouped kernels (f16, bf16; ``kernel_cc=80``).

    ``run(As, Bs, Cs, Ds)`` takes lists (NumPy, PyTorch or CuPy; C may be None when beta is 0, or a
    bias row of N per group, broadcast over the group's rows, in every group alike);
    ``run(A, B, C, D, offsets=offs)`` the offsets form: A (total_M x K) and D (total_M x N) cut into
    groups of rows by ``offs`` (int32 on the GPU, group g's rows end at offs[g]), B (G x K x N), so
    that the group sizes never leave the GPU (no host synchronisation; a run can be captured in a
    CUDA graph); there C is like D, or one bias row of N for every group. Offsets past total_M or
    decreasing are clipped on the GPU, never read past.
    """

    name = property(lambda self: "grouped_gemm", doc="The operation, as the CUTLASS Python interface names it.")

    _core_class = _core.GroupedGemm

    def select(self, groups: int, M: int, N: int, K: int, *, alignment_A=None, alignment_B=None,
               alignment_C=None, ragged: bool = False, bias: bool = False) -> str:
        """Name of the kernel `groups` groups of packed operands of these mean sizes would run;
        ``ragged``: the groups' M differ around the mean M (the offsets form's groups always count as
        ragged: their sizes stay on the device), which favours tiles of fewer rows; ``bias``: C is a
        bias row (N) per group."""
        return self._plan.select(integer(groups, "groups"), integer(M, "M"), integer(N, "N"), integer(K, "K"),
                                 alignments(alignment_A, alignment_B, alignment_C), flag(ragged, "ragged"), flag(bias, "bias")).name

    def candidates(self, groups: int, M: int, N: int, K: int, *, top: int | None = None, alignment_A=None,
                   alignment_B=None, alignment_C=None, ragged: bool = False, bias: bool = False) -> list:
        """The cost model's ranking for those groups (as select() takes them), best estimated first: each
        candidate with its ``name``, ``splits``, ``decomposition`` and ``estimated_us``; the first ``top``
        only where given. Autotuning times the first ``autotune_candidates``. Compiles nothing."""
        return ranked_top(self._plan.candidates(integer(groups, "groups"), integer(M, "M"), integer(N, "N"),
                                                integer(K, "K"), alignments(alignment_A, alignment_B, alignment_C),
                                                flag(ragged, "ragged"), flag(bias, "bias")), top)

    def compile(self, tile_description=None, alignment_A=None, alignment_B=None, alignment_C=None,
                print_module: bool = False, *, groups: int | None = None, M: int | None = None,
                N: int | None = None, K: int | None = None, problems=None, jobs: int | None = None,
                ragged: bool = False, bias: bool | None = None):
        """Build the plan's kernel now (or find it in the disk cache): later runs that it can implement
        use it, whatever their groups. Chosen for the plan's lists if it holds them (the class a run of
        them is: ragged or not, their alignments, a bias), or its offsets form's A and B (ragged, their mean
        rows), else for ``groups`` groups of M x N x K, else 8 of 1024 x 4096 x 4096; ``problems``, a list of
        (groups, M, N, K), builds several in parallel; ``ragged`` as in select() (for the offsets
        form); ``bias``: the runs' C is a bias row per group (by default, when the plan's own C is).
        Returns the kernel as an :class:`~cuforge.emit.Operation` (a list of them for ``problems``), also
        the plan's ``operation``."""
        single = problems is None
        given = (groups, M, N, K, alignment_A, alignment_B, alignment_C, bias)
        if single and all(v is None for v in given) and not ragged and isinstance(self.A, (list, tuple)) \
                and isinstance(self.D, (list, tuple)):
            # The plan's own lists: the class a run of them is (ragged or not, their alignments, a bias),
            # as the core's checks make it.
            A, B, C, D, alpha, beta, _ = self._run_arguments(None, None, None, None, None, None, True)
            lists, descs = _described_lists(A, B, C, D)
            checked = self._as_on_device(lists, descs)
            arguments = (checked["A"], checked["B"], checked["C"], checked["D"], alpha, beta, jobs_count(jobs))
            build = lambda core: core.compile_lists(*arguments)  # noqa: E731
        else:
            if single:
                problems = [self._problem(groups, M, N, K, "compile")]
                # A plan of the offsets form (one A of every group's rows) runs ragged: its groups' rows stay
                # on the device.
                ragged = ragged or (groups is None and M is None and N is None and K is None
                                    and self._offsets_form())
            shapes = []
            for problem in problem_list(problems, "(groups, M, N, K)", (4,)):
                shapes.append(tuple(integer(v, name) for v, name in zip(problem, ("groups", "M", "N", "K"))))
            arguments = (shapes, alignments(alignment_A, alignment_B, alignment_C), jobs_count(jobs),
                         flag(ragged, "ragged"), self._bias(bias))
            build = lambda core: core.compile(*arguments)  # noqa: E731
        built = self._pinned_build(tile_description, build, print_module)
        return built[0] if single else built

    def _problem(self, groups, M, N, K, caller: str) -> tuple:
        """(groups, M, N, K) as given, else the mean of the plan's tensors, else the default class."""
        if M is None and N is None and K is None and groups is None:
            if self._offsets_form():
                a, b = operand_extents(self.A, "A"), operand_extents(self.B, "B")
                if len(a) != 2 or len(b) != 3 or b[0] < 1:
                    raise InvalidArgumentError(f"{caller}: the plan's A and B (the offsets form) size the problem as "
                                               f"A of rows x K and B of groups x K x N, got shapes {a} and {b}; give "
                                               "groups, M, N and K")
                return b[0], -(-a[0] // b[0]), b[2], b[1]  # the mean rows rounded up, as in the lists
            As, Bs = _listed(self.A, "A"), _listed(self.B, "B")
            if As and Bs:
                if len(As) != len(Bs):
                    raise InvalidArgumentError(f"{caller}: the plan's A and B lists hold {len(As)} and {len(Bs)} "
                                               f"tensors; each group is one of each")
                a = [operand_extents(x, f"A[{g}]") for g, x in enumerate(As)]
                b = [operand_extents(x, f"B[{g}]") for g, x in enumerate(Bs)]
                if min(len(e) for e in a + b) < 2:
                    raise InvalidArgumentError(f"{caller}: the plan's A and B lists size the problem only as matrices, "
                                               f"got shapes {a} and {b}; give groups, M, N and K")
                groups = len(a)  # the mean extents rounded up, as the core summarises groups
                return (groups, -(-sum(e[-2] for e in a) // groups), -(-sum(e[-1] for e in b) // groups),
                        -(-sum(e[-1] for e in a) // groups))
            return self._core_class.default_problem
        if None in (groups, M, N, K):
            raise InvalidArgumentError(f"{caller}: give all of groups, M, N and K, or none of them")
        return groups, M, N, K

    def _offsets_form(self) -> bool:
        """Whether the plan holds the offsets form's operands: one A and one B, not lists."""
        return self.A is not None and self.B is not None and not isinstance(self.A, (list, tuple)) \
            and not isinstance(self.B, (list, tuple))

    def _bias(self, bias) -> bool:
        """``bias`` as given, else whether the plan's own C is a bias row per group (as a run reads it:
        a vector, or one row, in the first group whose A has more than one row; in the offsets form, a
        vector)."""
        if bias is not None:
            return flag(bias, "bias")
        As, Cs = self.A, self.C
        if not isinstance(Cs, (list, tuple)):  # the offsets form: a vector, or one row under A of more rows
            if Cs is None:
                return False
            c = operand_extents(Cs, "C")
            a = operand_extents(As, "A") if As is not None and not isinstance(As, (list, tuple)) else ()
            return len(c) == 1 or (len(c) == 2 and c[0] == 1 and len(a) == 2 and a[0] > 1)
        if not isinstance(As, (list, tuple)):
            return False
        for g, (a, c) in enumerate(zip(As, Cs)):
            a, c = operand_extents(a, f"A[{g}]"), None if c is None else operand_extents(c, f"C[{g}]")
            if c is not None and len(c) >= 1 and len(a) >= 2 and a[-2] > 1:
                return len(c) == 1 or c[0] == 1
        return False

    def _held(self, value, name: str) -> None:
        """A list of one tensor per group (C's may hold None), or one tensor (the offsets form), checked as far
        as its extents."""
        if not isinstance(value, (list, tuple)):
            return super()._held(value, name)
        for g, x in enumerate(value):
            if x is None and name != "C":
                raise InvalidArgumentError(f"{name}[{g}]: expected a tensor, got None")
            super()._held(x, f"{name}[{g}]")

    def profile(self, groups: int, M: int, N: int, K: int, *, offsets: bool = False, top: int = 6,
                filter: str | None = None, jobs: int | None = None, csv: str | None = None, plot: str | None = None,
                baseline: bool = True, progress: bool = True):
        """Build (in parallel, with progress on stderr) and time on the GPU the cost model's best ``top``
        candidates for ``groups`` groups of M x N x K (``filter``: a shell glob on kernel names): lists of
        one tensor per group, or with ``offsets`` the offsets form (A of groups * M rows cut by device
        offsets, B groups x K x N); beside torch._grouped_mm (else a loop of torch.matmul) when torch is
        installed. Returns a cuforge.profiler.Profile; ``csv`` and ``plot`` write its CSV and a PNG."""
        from ..profiler import profile_grouped

        return profile_grouped(self, groups, M, N, K, offsets=offsets, top=top, filter=filter, jobs=jobs,
                               baseline=baseline, progress=progress, csv=csv, plot=plot)

    def construct(self, tile_description=None, alignment_A=None, alignment_B=None, alignment_C=None, *,
                  groups: int | None = None, M: int | None = None, N: int | None = None,
                  K: int | None = None) -> Operation:
        """The plan's kernel as an operation emit.pytorch exports: chosen for ``groups`` groups of M x N x K
        if given, else 8 of 1024 x 4096 x 4096, never the plan's tensors' extents, so that plans built from
        tensors or from types construct the same kernel (``alignment_A/B/C`` cap its operands' alignments),
        with ``tile_description`` pinned for this choice only. Compiles nothing."""
        if M is None and N is None and K is None and groups is None:
            groups, M, N, K = self._core_class.default_problem
        g, m, n, k = self._problem(groups, M, N, K, "construct")
        return self._construct(tile_description, integer(g, "groups"), integer(m, "M"), integer(n, "N"),
                               integer(k, "K"), alignments(alignment_A, alignment_B, alignment_C))

    def run(self, A=None, B=None, C=None, D=None, alpha=None, beta=None, sync: bool = True,
            print_module: bool = False, stream=None, offsets=None):
        """Every group's D = activation(alpha * A @ B + beta * C). Returns a handle whose sync() waits for
        this run only. Operands default to those given at construction; every one is checked, and the
        group it belongs to named, before anything runs."""
        if self._pending_tile is not None:
            self._refuse_pending_tile()
        if offsets is None and print_module is False and not self._refuses_c(C):
            # Lists of CUDA torch tensors, real scalars, torch's stream or one given (but CuPy's):
            # one call into the core, which returns None (having done nothing) for anything else.
            handle = self._plan.run_tensors(A, B, self.C if C is None else C, D,
                                            self.alpha if alpha is None else alpha,
                                            self.beta if beta is None else beta, sync, stream)
            if handle is not None:
                return handle
        A, B, C, D, alpha, beta, sync = self._run_arguments(A, B, C, D, alpha, beta, sync, print_module)
        if offsets is not None:
            operands = (A, B, C, D, offsets)
            descs = [None if x is None else describe(x, name) for x, name in zip(operands, "ABCD")]
            descs.append(_offsets_descriptor(offsets))
            for x, d, name in zip(operands, descs, ("A", "B", "C", "D", "offsets")):
                if x is not None and d is None:
                    raise InvalidArgumentError(f"{name}: the offsets form runs on GPU tensors (PyTorch or CuPy), got "
                                               f"a host array")
            s = current_stream(operands, stream)
            handle = self._plan.run_offsets(*descs, alpha, beta, s)
        else:
            lists, descs = _described_lists(A, B, C, D)
            flat = [x for lst in lists.values() for x in lst]
            s = current_stream(flat, stream)
            on_complete = None
            if any(d is None and x is not None for name in lists for x, d in zip(lists[name], descs[name])):
                on_complete = self._stage_host_lists(lists, descs, s, alpha, beta)
            handle = self._plan.run(descs["A"], descs["B"], descs["C"], descs["D"], alpha, beta, s, on_complete)
        return self._finished(handle, print_module, sync)

    def _as_on_device(self, lists, descs) -> dict:
        """The lists' descriptors with their host arrays described as if on the plan's device, for the
        core's checks."""
        return {name: [self._on_device(x, d, f"{name}[{g}]", name == "D") for g, (x, d) in
                       enumerate(zip(lists[name], descs[name]))] for name in lists}

    def _stage_host_lists(self, lists, descs, stream, alpha, beta):
        """NumPy operands are checked as if on the GPU, then copied there; the Ds come back at sync(). A
        group's C of None stays absent (beta must then be 0, as the checks say). Returns the run's
        completion (arrays.completion)."""
        device = self._plan.device
        checked = self._as_on_device(lists, descs)
        self._plan.check(checked["A"], checked["B"], checked["C"], checked["D"], alpha, beta)
        copies = []
        for name, lst in lists.items():
            for g, x in enumerate(lst):
                if descs[name][g] is not None or x is None:
                    continue
                descs[name][g], buf, host = stage(x, f"{name}[{g}]", device, stream, name != "D" or beta != 0)
                copies.append((name, buf, host))
        return completion(copies)
