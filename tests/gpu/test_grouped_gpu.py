"""Grouped GEMM on the GPU, bit-exact on integer data against a float64 reference: both kernel
families, f16 and bf16 in every layout (and e4m3 on SM90), ragged groups (sizes off the tiles, a
group of one row, empty groups, K = 0), activations, a bias row per group, the offsets form (device
offsets, empty groups, B row- or column-major, a bias row), two streams, and a CUDA graph of the
offsets form.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
from exact import COL, ROW, assert_exact, layout, rand_int  # noqa: E402
from paths import general_path_stream, run_on_held_stream  # noqa: E402
from timing import host_times_us  # noqa: E402
from prebuild import build_selected  # noqa: E402

FAMILIES = {"sm90": None, "sm80": 80}
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
LAYOUTS = [(ROW, ROW), (ROW, COL), (COL, ROW), (COL, COL)]
# Ragged groups: (M, N, K), off the tiles, one row, empty, K = 0 (D = beta * C). An extent along
# which an operand is contiguous must be a multiple of the kernels' alignment (8 elements): with a
# column-major A or D, M takes the second list's values.
RAGGED = [(264, 200, 136), (1, 136, 64), (0, 200, 136), (96, 8, 256), (130, 72, 0), (77, 248, 40)]
RAGGED_M8 = [(264, 200, 136), (8, 136, 64), (0, 200, 136), (96, 8, 256), (136, 72, 0), (72, 248, 40)]
FP8 = [(m, n, k - k % 16) for m, n, k in RAGGED]  # K of whole 16-byte e4m3 vectors
MOE = dict(groups=8, total=1000, n=512, k=256)
MOE_CLASS = (MOE["groups"], -(-MOE["total"] // MOE["groups"]), MOE["n"], MOE["k"])  # as the offsets form summarises it


def plan(family, dtype=torch.float16, la=ROW, lb=ROW, lc=ROW, **settings):
    p = cuforge.op.GroupedGemm(element=dtype, element_accumulator=torch.float32, layout_A=layout(la),
                               layout_B=layout(lb), layout_C=layout(lc), kernel_cc=FAMILIES[family])
    for name, value in settings.items():
        setattr(p, name, value)
    return p


def shapes_for(la, lc=ROW):
    return RAGGED_M8 if COL in (la, lc) else RAGGED


def fp8_plan(fast_accum=False):
    p = cuforge.op.GroupedGemm(element_A=torch.float8_e4m3fn, element_B=torch.float8_e4m3fn,
                               element_C=torch.float16, element_D=torch.float16, layout_A=layout(ROW),
                               layout_B=layout(COL), layout_C=layout(ROW))
    p.fp8_fast_accum = fast_accum
    return p


def mean_class(groups):
    """(groups, M, N, K) as the plan summarises a list: mean extents, rounded up."""
    g = len(groups)
    return (g,) + tuple(-(-sum(s[i] for s in groups) // g) for i in range(3))


def cases():
    """(plan, the class it runs, select()'s options) of every test below, for the prebuild."""
    for family in FAMILIES:
        yield plan(family, torch.bfloat16, activation=cuforge.epilogue.relu), mean_class(RAGGED), {"bias": True}
        yield plan(family, torch.bfloat16), MOE_CLASS, {"bias": True, "ragged": True}
        for dname, dtype in DTYPES.items():
            for la, lb in LAYOUTS:
                yield plan(family, dtype, la, lb), mean_class(shapes_for(la)), {}
        yield plan(family, torch.bfloat16, lc=COL), mean_class(RAGGED_M8), {}
        yield plan(family, activation=cuforge.epilogue.relu), mean_class(RAGGED), {}
        yield plan(family, activation=cuforge.epilogue.gelu), mean_class(RAGGED), {}
        for lb in (ROW, COL):
            yield plan(family, torch.bfloat16, lb=lb), MOE_CLASS, {"ragged": True}
    for fast_accum in (False, True):
        yield fp8_plan(fast_accum), mean_class(FP8), {}


@pytest.fixture(scope="module", autouse=True)
def prebuilt():
    build_selected([lambda p=p, c=c, o=o: p.select(*c, **o) for p, c, o in cases()])


def groups_of(shapes, dtype, la, lb, gen, c_dtype=None):
    As = [rand_int(m, k, dtype, la, gen) for m, n, k in shapes]
    Bs = [rand_int(k, n, dtype, lb, gen) for m, n, k in shapes]
    Cs = [rand_int(m, n, c_dtype or dtype, ROW, gen) for m, n, k in shapes]
    return As, Bs, Cs


def check(Ds, As, Bs, Cs, beta, act=lambda x: x, exact=True):
    for g, (D, A, B, C) in enumerate(zip(Ds, As, Bs, Cs)):
        ref = act(A.double() @ B.double() + beta * C.double()).to(D.dtype)
        if exact:
            assert_exact(D, ref)
        else:
            torch.testing.assert_close(D.float(), ref.float(), rtol=1e-2, atol=1e-2, msg=f"group {g}")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dname", DTYPES)
@pytest.mark.parametrize("la, lb", LAYOUTS, ids=lambda x: x)
def test_ragged_groups_exact(family, dname, la, lb):
    gen = torch.Generator(device="cuda").manual_seed(5)
    dtype = DTYPES[dname]
    p = plan(family, dtype, la, lb)
    As, Bs, Cs = groups_of(shapes_for(la), dtype, la, lb, gen)
    Ds = [torch.full_like(C, float("nan")) for C in Cs]
    p.run(As, Bs, Cs, Ds, beta=1.0)
    assert "_grouped_" in p.last_kernel and p.last_kernel.startswith(f"cuforge_{family}_")
    check(Ds, As, Bs, Cs, 1.0)
    # Without C (beta = 0): the K = 0 group is zeros.
    Ds = [torch.full_like(C, float("nan")) for C in Cs]
    p.run(As, Bs, None, Ds)
    check(Ds, As, Bs, [torch.zeros_like(C) for C in Cs], 0.0)


@pytest.mark.parametrize("family", FAMILIES)
def test_column_major_d_and_activations(family):
    gen = torch.Generator(device="cuda").manual_seed(6)
    As, Bs, Cs = groups_of(RAGGED_M8, torch.bfloat16, ROW, ROW, gen)
    Cs = [C.t().contiguous().t() for C in Cs]  # C and D column-major, as the plan's layout_C says
    Ds = [torch.full_like(C, float("nan")).t().contiguous().t() for C in Cs]
    plan(family, torch.bfloat16, lc=COL).run(As, Bs, Cs, Ds, beta=1.0)
    check(Ds, As, Bs, Cs, 1.0)
    As, Bs, Cs = groups_of(RAGGED, torch.float16, ROW, ROW, gen)
    for name, act, exact in (("relu", torch.relu, True), ("gelu", torch.nn.functional.gelu, False)):
        Ds = [torch.full_like(C, float("nan")) for C in Cs]
        p = plan(family, activation=getattr(cuforge.epilogue, name))
        p.run(As, Bs, Cs, Ds, beta=1.0)
        assert p.last_kernel.endswith("_" + name)
        check(Ds, As, Bs, Cs, 1.0, lambda x: act(x.float()).double() if not exact else act(x), exact)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_bias_row_per_group(family):
    """C as one row (N) per group, broadcast over the group's rows, with relu: ragged groups, one of one row
    (whose C reads as a matrix too), an empty one, K = 0 (relu(beta * bias)); the offsets form with one
    bias row for every group."""
    gen = torch.Generator(device="cuda").manual_seed(12)
    As, Bs, _ = groups_of(RAGGED, torch.bfloat16, ROW, ROW, gen)
    biases = [rand_int(1, n, torch.bfloat16, ROW, gen)[0] for m, n, k in RAGGED]
    Ds = [torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16) for m, n, k in RAGGED]
    p = plan(family, torch.bfloat16, activation=cuforge.epilogue.relu)
    p.run(As, Bs, biases, Ds, beta=1.0)
    assert p.last_kernel.startswith(f"cuforge_{family}_") and p.last_kernel.endswith("_relu_bias"), p.last_kernel
    check(Ds, As, Bs, [b.expand(D.shape) for b, D in zip(biases, Ds)], 1.0, torch.relu)
    A, B, C, offs, sizes = moe_operands(gen)
    bias = rand_int(1, C.shape[1], torch.bfloat16, ROW, gen)[0]
    D = torch.full_like(C, float("nan"))
    q = plan(family, torch.bfloat16)
    q.run(A, B, bias, D, beta=-1.0, offsets=offs)
    assert q.last_kernel.endswith("_bias"), q.last_kernel
    assert_exact(D, moe_reference(A, B, bias.expand(C.shape), sizes, -1.0))


@pytest.mark.parametrize("fast_accum", [False, True], ids=["promoted", "fast_accum"])
def test_fp8_groups_on_sm90(fast_accum):
    """Exact: integer products summed in f32 either way (fast accumulation only skips the promotion
    of the tensor cores' partial sums, which integer data of these sizes never rounds)."""
    gen = torch.Generator(device="cuda").manual_seed(7)
    As, Bs, Cs = groups_of(FP8, torch.float8_e4m3fn, ROW, COL, gen, c_dtype=torch.float16)
    p = fp8_plan(fast_accum)
    Ds = [torch.full_like(C, float("nan")) for C in Cs]
    p.run(As, Bs, Cs, Ds, beta=1.0)
    assert "_e4m3_e4m3_" in p.last_kernel and ("fastaccum" in p.last_kernel) == fast_accum, p.last_kernel
    check(Ds, As, Bs, Cs, 1.0)


def moe_operands(gen, lb=ROW, sizes=None):
    g, total, n, k = MOE["groups"], MOE["total"], MOE["n"], MOE["k"]
    sizes = sizes or [200, 0, 1, 333, 0, 150, 16, 300]  # sums to 1000, empty groups among them
    offs = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    A = rand_int(total, k, torch.bfloat16, ROW, gen)
    B = torch.randint(-3, 4, (g, k, n), device="cuda", generator=gen).to(torch.bfloat16)
    if lb == COL:
        B = B.transpose(1, 2).contiguous().transpose(1, 2)  # each group's B column-major
    C = rand_int(total, n, torch.bfloat16, ROW, gen)
    return A, B, C, offs, sizes


def moe_reference(A, B, C, sizes, beta):
    out, start = [], 0
    for g, rows in enumerate(sizes):
        out.append(A[start:start + rows].double() @ B[g].double() + beta * C[start:start + rows].double())
        start += rows
    return torch.cat(out).to(A.dtype)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("lb", [ROW, COL])
def test_offsets_form_exact(family, lb):
    gen = torch.Generator(device="cuda").manual_seed(8)
    A, B, C, offs, sizes = moe_operands(gen, lb)
    p = plan(family, torch.bfloat16, lb=lb)
    D = torch.full_like(C, float("nan"))
    p.run(A, B, C, D, beta=1.0, offsets=offs)
    assert_exact(D, moe_reference(A, B, C, sizes, 1.0))
    D2 = torch.full_like(C, float("nan"))
    p.run(A, B, None, D2, offsets=offs)
    assert_exact(D2, moe_reference(A, B, C, sizes, 0.0))


@pytest.mark.parametrize("form", ["lists", "offsets"])
def test_groups_without_outputs_choose_build_and_launch_nothing(form):
    """Every group empty (no rows, or no columns): the run returns having chosen no kernel (the class of such
    groups is refused by construct(): a kernel for it would never run)."""
    p = plan("sm90")
    f16 = dict(dtype=torch.float16, device="cuda")
    if form == "lists":
        p.run([torch.ones(0, 64, **f16), torch.ones(16, 64, **f16)], [torch.ones(64, 32, **f16),
              torch.ones(64, 0, **f16)], None, [torch.empty(0, 32, **f16), torch.empty(16, 0, **f16)])
    else:
        p.run(torch.ones(0, 64, **f16), torch.ones(4, 64, 32, **f16), None, torch.empty(0, 32, **f16),
              offsets=torch.zeros(4, dtype=torch.int32, device="cuda"))
    assert p.last_kernel is None
    with pytest.raises(cuforge.InvalidArgumentError, match="need no kernel"):
        p.construct(groups=4, M=0, N=32, K=64)


def test_two_streams_and_a_cuda_graph():
    gen = torch.Generator(device="cuda").manual_seed(9)
    p = plan("sm90", torch.bfloat16)
    A, B, C, offs, sizes = moe_operands(gen)
    ref = moe_reference(A, B, C, sizes, 1.0)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    outs = [torch.full_like(C, float("nan")) for _ in streams]
    for s, D in zip(streams, outs):
        with torch.cuda.stream(s):
            p.run(A, B, C, D, beta=1.0, offsets=offs, sync=False)
    torch.cuda.synchronize()
    for D in outs:
        assert_exact(D, ref)
    graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    D = torch.full_like(C, float("nan"))
    with torch.cuda.graph(graph, stream=stream):
        p.run(A, B, C, D, beta=1.0, offsets=offs, sync=False)
    for replay in range(2):
        D.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert_exact(D, ref)
    # The group sizes are read on the device at every replay.
    offs.copy_(torch.tensor([1000, 0, 0, 0, 0, 0, 0, 0], device="cuda").cumsum(0).to(torch.int32))
    graph.replay()
    torch.cuda.synchronize()
    assert_exact(D, moe_reference(A, B, C, [1000, 0, 0, 0, 0, 0, 0, 0], 1.0))


# 64 groups of 64x128 @ 128x64 f16 (one class, for the tests below): operands, NaN-filled outputs,
# and the exact products.
SMALL_GROUPS = 64


def small_inputs(gen, rows=64, cols=128):
    return [rand_int(rows, cols, torch.float16, ROW, gen) for _ in range(SMALL_GROUPS)]


def nan_outputs():
    return [torch.full((64, 64), float("nan"), device="cuda", dtype=torch.float16) for _ in range(SMALL_GROUPS)]


def check_products(As, Bs, Ds):
    for A, B, D in zip(As, Bs, Ds):
        assert_exact(D, (A.double() @ B.double()).half())


def test_lists_of_torch_tensors_take_one_call_and_equal_the_general_path():
    """Lists of CUDA torch tensors go to the core in one call (read in C++); a stream as CuPy's takes
    the Python path. Both must agree, and the one call must cost less host time (printed)."""
    gen = torch.Generator(device="cuda").manual_seed(5)
    p = plan("sm90")
    As, Bs = small_inputs(gen), small_inputs(gen, 128, 64)
    fast, general = nan_outputs(), nan_outputs()
    p.run(As, Bs, None, fast)
    p.run(As, Bs, None, general, stream=general_path_stream())
    for g in range(SMALL_GROUPS):
        assert torch.equal(fast[g], general[g])
    check_products(As, Bs, fast)

    python_stream = general_path_stream()
    times = host_times_us({"one call": lambda: p.run(As, Bs, None, fast, sync=False),
                           "python": lambda: p.run(As, Bs, None, fast, sync=False, stream=python_stream)},
                          calls=20, warmup=20)
    one_call, python = times["one call"], times["python"]
    print(f"host time of a 64-group list run(): {one_call:.1f} us in one call, {python:.1f} us through Python")
    assert one_call < python


@pytest.mark.parametrize("given", ["torch_stream", "int"])
def test_a_stream_given_takes_one_call_on_that_stream(given):
    """stream= as a torch.cuda.Stream or its int handle: the core reads it and queues the run there."""
    gen = torch.Generator(device="cuda").manual_seed(7)
    p = plan("sm90")
    As, Bs = small_inputs(gen), small_inputs(gen, 128, 64)
    # A kernel's first run in a process may wait for the device (loading it): not under test.
    p.run(As, Bs, None, nan_outputs())
    for run in (lambda Ds, stream: p._plan.run_tensors(As, Bs, None, Ds, 1.0, 0.0, False, stream),
                lambda Ds, stream: p.run(As, Bs, None, Ds, sync=False, stream=stream)):
        Ds = nan_outputs()
        run_on_held_stream(lambda stream: run(Ds, stream), given)
        check_products(As, Bs, Ds)


def test_list_runs_queued_behind_the_gpu_neither_wait_for_it_nor_mix_descriptors():
    """Each list-form run stages its descriptors in pinned memory that the copy reads when the stream
    reaches it: runs queued behind a long kernel get buffers of their own (the host does not wait for
    the GPU), and each run reads its own groups."""
    gen = torch.Generator(device="cuda").manual_seed(6)
    p = plan("sm90")
    runs = 12  # more than the first staging buffers
    Bs = small_inputs(gen, 128, 64)
    Ass = [small_inputs(gen) for _ in range(runs)]
    Dss = [nan_outputs() for _ in range(runs)]
    p.run(Ass[0], Bs, None, Dss[0])
    torch.cuda.synchronize()
    torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time
    for As, Ds in zip(Ass, Dss):
        p.run(As, Bs, None, Ds, sync=False)
    assert not torch.cuda.current_stream().query(), "the host waited for the GPU's sleep"
    torch.cuda.synchronize()
    for As, Ds in zip(Ass, Dss):
        check_products(As, Bs, Ds)


def test_a_grouped_runs_small_workspace_comes_from_cuforges_pool():
    """A grouped run's workspace (its arrays, CUTLASS's tensor maps: under 256 KiB here) is taken from
    cuforge's own pool, never from the allocator a front end installed (a call into Python each way)."""
    asked = []

    def allocate(device, nbytes, stream):
        asked.append(nbytes)
        return 0  # cuforge's pool

    gen = torch.Generator(device="cuda").manual_seed(7)
    p = plan("sm90")
    As, Bs, Ds = small_inputs(gen), small_inputs(gen, 128, 64), nan_outputs()
    cuforge._core.set_workspace_allocator(allocate, lambda *args: None)
    try:
        p.run(As, Bs, None, Ds)
    finally:
        cuforge.memory._use_default()
    assert asked == []
    check_products(As, Bs, Ds)
