"""Epilogues, bias rows, batches, stream-K and split-K, and streams on the GPU, for SM90 kernels and
CUTLASS 2.x kernels (kernel_cc=80) alike.

Linear results (identity, relu, bias, batches, K decompositions) must be bit-exact: the inputs are
small integers (see exact.py). Transcendental activations are compared with torch's within the
rounding of the f16 output. Every kernel the module needs is compiled in one parallel build first.
"""


import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
F = pytest.importorskip("torch.nn.functional")

import cuforge  # noqa: E402
from exact import ROW, assert_exact, rand_int, reference  # noqa: E402

FAMILIES = {"sm90": None, "sm80": 80}
M, N, K = 264, 200, 136  # M not a multiple of any tile
ALPHA, BETA = 1 / 32, 0.5  # brings A @ B (integers up to ~100) into the activations' curved range
LEAKY_SLOPE = 0.1

# Each activation's reference, computed in f32 as the kernels do.
ACTIVATIONS = {
    "identity": lambda x: x,
    "relu": F.relu,
    "leaky_relu": lambda x: F.leaky_relu(x, LEAKY_SLOPE),
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "silu": F.silu,
    "hardswish": F.hardswish,
    "gelu": F.gelu,
}
EXACT = {"identity", "relu", "leaky_relu"}  # piecewise linear: exact on these inputs

# K-heavy problems for the K decompositions: few output tiles, long K.
KM, KN, KK = 192, 136, 8192
DECOMPOSITIONS = {  # name -> (plan settings); SM90 split-K and stream-K run on stream-K kernels
    "heuristic": dict(),
    "data_parallel": dict(decomposition=cuforge.Decomposition.DataParallel),
    "stream_k": dict(decomposition=cuforge.Decomposition.StreamK),
    "split_k4": dict(split_k_slices=4),
    "split_k4_relu": dict(split_k_slices=4, activation=cuforge.epilogue.relu),
    "stream_k_swizzle": dict(swizzling_functor=cuforge.swizzle.ThreadblockSwizzleStreamK),
    "parallel_split_k8": dict(split_k_slices=8, decomposition=cuforge.Decomposition.ParallelSplitK),
    "parallel_split_k64_leaky_relu": dict(split_k_slices=64, decomposition=cuforge.Decomposition.ParallelSplitK,
                                          activation=(cuforge.epilogue.leaky_relu, LEAKY_SLOPE)),
    # Partial tiles summed as they arrive: exact all the same on integer-valued inputs.
    "heuristic_arrival_order": dict(deterministic=False),
    "stream_k_arrival_order": dict(decomposition=cuforge.Decomposition.StreamK, deterministic=False),
    "split_k4_arrival_order": dict(split_k_slices=4, deterministic=False),
}


def make_plan(family, dtype=torch.float16, **settings):
    plan = cuforge.op.Gemm(element=dtype, layout=cuforge.LayoutType.RowMajor, element_accumulator=torch.float32,
                           kernel_cc=FAMILIES[family])
    for name, value in settings.items():
        setattr(plan, name, value)
    return plan


def activation_plan(family, name):
    value = (cuforge.epilogue.leaky_relu, LEAKY_SLOPE) if name == "leaky_relu" else getattr(cuforge.epilogue, name)
    return make_plan(family, activation=value)


def needed_kernels():
    """(plan, M, N, K, batch, bias) of every run below."""
    for family in FAMILIES:
        for name in ACTIVATIONS:
            yield activation_plan(family, name), M, N, K, 1, False
        for name in ("identity", "gelu"):
            yield activation_plan(family, name), M, N, K, 1, True
        yield make_plan(family), M, N, K, 3, False
        for settings in DECOMPOSITIONS.values():
            yield make_plan(family, **settings), KM, KN, KK, 1, False
        yield (make_plan(family, split_k_slices=16, decomposition=cuforge.Decomposition.ParallelSplitK,
                         activation=cuforge.epilogue.relu), KM, KN, KK, 1, True)
        yield (make_plan(family, split_k_slices=16, decomposition=cuforge.Decomposition.ParallelSplitK,
                         activation=cuforge.epilogue.relu), KM, KN, KK, 1, False)


@pytest.fixture(scope="module", autouse=True)
def prebuilt():
    names = [plan.select(m, n, k, batch, bias) for plan, m, n, k, batch, bias in needed_kernels()]
    cuforge.build(names)


@pytest.fixture
def gen():
    g = torch.Generator(device="cuda")
    g.manual_seed(2026)
    return g


def operands(gen, m=M, n=N, k=K, batch=None):
    A = rand_int(m, k, torch.float16, ROW, gen, batch=batch)
    B = rand_int(k, n, torch.float16, ROW, gen, batch=batch)
    C = rand_int(m, n, torch.float16, ROW, gen, batch=batch)
    return A, B, C


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_matches_torch(family, name, gen):
    plan = activation_plan(family, name)
    A, B, C = operands(gen)
    D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    plan.run(A, B, C, D, alpha=ALPHA, beta=BETA)
    affine = ALPHA * (A.double() @ B.double()) + BETA * C.double()  # exact in f32 too
    expected = ACTIVATIONS[name](affine.float()).half()
    if name != "identity":
        assert plan.last_kernel.endswith("_" + name), plan.last_kernel
    if name in EXACT:
        assert_exact(D, expected)
    else:
        torch.testing.assert_close(D, expected, rtol=4e-3, atol=4e-3)


@pytest.mark.parametrize("family", FAMILIES)
def test_leaky_relu_without_a_slope_takes_the_interfaces_default(family, gen):
    """0.2, as the CUTLASS Python interface's leaky_relu; the same kernel as a given slope's."""
    plan = make_plan(family, activation="leaky_relu")
    A, B, C = operands(gen)
    D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    plan.run(A, B, C, D, alpha=ALPHA, beta=BETA)
    assert plan.last_kernel == activation_plan(family, "leaky_relu").select(M, N, K)
    assert_exact(D, F.leaky_relu((ALPHA * (A.double() @ B.double()) + BETA * C.double()).float(), 0.2).half())


@pytest.mark.parametrize("family", FAMILIES)
def test_beta_zero_runs_without_c(family, gen):
    plan = activation_plan(family, "relu")
    A, B, _ = operands(gen)
    D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    plan.run(A, B, None, D, alpha=ALPHA, beta=0.0)
    assert_exact(D, F.relu(ALPHA * (A.double() @ B.double())).half())


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("name", ["identity", "gelu"])
@pytest.mark.parametrize("shape", ["vector", "row"])
def test_bias_row_is_broadcast_over_rows(family, name, shape, gen):
    plan = activation_plan(family, name)
    A, B, _ = operands(gen)
    bias = rand_int(1, N, torch.float16, ROW, gen)
    C = bias[0] if shape == "vector" else bias
    D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    plan.run(A, B, C, D, alpha=ALPHA, beta=2.0)
    assert plan.last_kernel.endswith("_bias")
    expected = ACTIVATIONS[name]((ALPHA * (A.double() @ B.double()) + 2.0 * bias.double()).float()).half()
    if name in EXACT:
        assert_exact(D, expected)
    else:
        torch.testing.assert_close(D, expected, rtol=4e-3, atol=4e-3)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("broadcast", ["none", "A", "B", "C"])
def test_batched_with_and_without_broadcast(family, broadcast, gen):
    batch = 3
    A, B, C = operands(gen, batch=batch)
    if broadcast == "A":
        A = A[0]  # one matrix for every batch
    elif broadcast == "B":
        B = B[:1].expand(batch, K, N)  # batch stride 0
    elif broadcast == "C":
        C = C[0]
    D = torch.full((batch, M, N), float("nan"), device="cuda", dtype=torch.float16)
    make_plan(family).run(A, B, C, D, alpha=1.0, beta=2.0)
    expected = reference(A.expand(batch, M, K), B.expand(batch, K, N), C.expand(batch, M, N), 1.0, 2.0,
                         torch.float16)
    assert_exact(D, expected)


def test_batched_views_with_strides(gen):
    """Every other matrix of a larger batch: batch strides of two matrices."""
    A, B, C = operands(gen, batch=6)
    A, B, C = A[::2], B[::2], C[::2]
    D = torch.full((3, M, N), float("nan"), device="cuda", dtype=torch.float16)
    make_plan("sm90").run(A, B, C, D, alpha=1.0, beta=2.0)
    assert_exact(D, reference(A, B, C, 1.0, 2.0, torch.float16))


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("mode", DECOMPOSITIONS)
def test_k_decompositions_equal_the_data_parallel_result(family, mode, gen):
    A, B, C = operands(gen, KM, KN, KK)
    plan = make_plan(family, **DECOMPOSITIONS[mode])
    expected = reference(A, B, C, 1.0, 1.0, torch.float16)
    if mode.endswith("leaky_relu"):
        expected = F.leaky_relu(expected, LEAKY_SLOPE)
    elif mode.endswith("relu"):
        expected = F.relu(expected)
    D = torch.empty((KM, KN), device="cuda", dtype=torch.float16)
    for _ in range(3):  # repeats launch with the first run's prepared parameters: workspaces start afresh
        D.fill_(float("nan"))
        plan.run(A, B, C, D, alpha=1.0, beta=1.0)
        assert_exact(D, expected)
    kernel = plan.last_kernel
    if mode.startswith("stream_k") or (family == "sm90" and mode.startswith("split_k")):
        assert "_streamk_" in kernel, kernel
    if mode == "data_parallel":
        assert "_streamk_" not in kernel and "_splitk" not in kernel, kernel
    if mode.startswith("parallel_split_k"):
        assert "_default_" in kernel and "_splitk" in kernel, kernel
        assert plan.last_splits == plan.split_k_slices


@pytest.mark.parametrize("family", FAMILIES)
def test_parallel_split_k_with_a_bias_row_and_c_aliasing_d(family, gen):
    """The reduction kernel applies the whole epilogue: alpha, beta times a bias row or C itself
    (C and D one tensor), the activation; the slices' partial products never touch D."""
    A, B, C = operands(gen, KM, KN, KK)
    plan = make_plan(family, split_k_slices=16, decomposition=cuforge.Decomposition.ParallelSplitK,
                     activation=cuforge.epilogue.relu)
    bias = C[0].clone()
    D = torch.full((KM, KN), float("nan"), device="cuda", dtype=torch.float16)
    plan.run(A, B, bias, D, alpha=0.5, beta=2.0)
    assert plan.last_kernel.endswith("_splitk_relu_bias"), plan.last_kernel
    assert_exact(D, F.relu(reference(A, B, bias.expand(KM, KN), 0.5, 2.0, torch.float16)))
    expected = F.relu(reference(A, B, C, 1.0, -1.0, torch.float16))
    plan.run(A, B, C, C, alpha=1.0, beta=-1.0)
    assert_exact(C, expected)


def test_two_streams_each_synchronized_by_its_own_handle(gen):
    """A run queued behind a long GPU sleep on one stream does not hold up another stream's run."""
    plans = [make_plan("sm90"), make_plan("sm80")]
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    runs = [operands(gen) for _ in plans]
    outs = [torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16) for _ in plans]
    torch.cuda.synchronize()
    with torch.cuda.stream(streams[0]):
        torch.cuda._sleep(2_000_000_000)  # about a second of GPU clock cycles
    slow = plans[0].run(*runs[0], outs[0], alpha=1.0, beta=2.0, sync=False, stream=streams[0])
    fast = plans[1].run(*runs[1], outs[1], alpha=1.0, beta=2.0, sync=False, stream=streams[1])
    fast.sync()
    assert not slow.done(), "the first stream's run finished before its sleep could have"
    assert_exact(outs[1], reference(*runs[1], 1.0, 2.0, torch.float16))
    slow.sync()
    assert slow.done()
    assert_exact(outs[0], reference(*runs[0], 1.0, 2.0, torch.float16))


def test_torch_current_stream_is_used(gen):
    plan = make_plan("sm90")
    A, B, C = operands(gen)
    D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(2_000_000_000)
        handle = plan.run(A, B, C, D, alpha=1.0, beta=2.0, sync=False)
    assert not side.query() and not handle.done(), "the run was not queued on torch's current stream"
    handle.sync()
    assert_exact(D, reference(A, B, C, 1.0, 2.0, torch.float16))


def test_seed_activation_and_async_snippet(gen):
    """SEED_API.md's activation and asynchronous-run snippet, verbatim under `import cuforge as cutlass`."""
    import cuforge as cutlass
    cutlass_cppgen = cutlass

    A, B, C = operands(gen)
    D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    plan = cutlass_cppgen.op.Gemm(A=A, B=B, C=C, D=D)

    plan.activation = cutlass_cppgen.epilogue.relu

    args = plan.run()      # tensors given when the plan was built
    # ... other work ...
    args.sync()

    assert_exact(D, F.relu(A.double() @ B.double()).half())  # beta defaults to 0
