"""On the GPU: the one-call path of Gemm.run (2-D CUDA torch tensors and real scalars go to the
core in one call) against the general path (paths.general_path_stream), a stream given either
way, and repeated runs that reuse a kernel's prepared parameters only while the arguments are
unchanged."""

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
from exact import COL, ROW, assert_exact, poisoned, rand_int, reference  # noqa: E402
from paths import general_path_stream, run_on_held_stream  # noqa: E402
from timing import host_times_us  # noqa: E402

BF16 = torch.bfloat16
M, N, K = 136, 200, 264


@pytest.fixture
def gen():
    return torch.Generator(device="cuda").manual_seed(11)


def plan_for(kernel_cc=None, **kwargs):
    return cuforge.op.Gemm(element=BF16, layout=cuforge.LayoutType.RowMajor, kernel_cc=kernel_cc, **kwargs)


@pytest.fixture(scope="module", autouse=True)
def prebuilt():
    names = {plan_for(cc).select(M, N, K, bias=bias) for cc in (None, 80) for bias in (False, True)}
    names.add(plan_for(layout_A=cuforge.LayoutType.ColumnMajor).select(M, N, K))
    cuforge.build(sorted(names))


@pytest.mark.parametrize("kernel_cc", [None, 80], ids=["sm90", "sm80"])
@pytest.mark.parametrize("case", ["plain", "alpha_beta", "bias", "strided", "int_scalars"])
def test_one_call_path_equals_the_general_path(kernel_cc, case, gen):
    plan = plan_for(kernel_cc)
    A, B = rand_int(M, K, BF16, ROW, gen, ld=K + 8 if case == "strided" else None), rand_int(K, N, BF16, ROW, gen)
    C = rand_int(1, N, BF16, ROW, gen)[0] if case == "bias" else rand_int(M, N, BF16, ROW, gen)
    alpha, beta = {"alpha_beta": (2.0, 0.5), "bias": (1.0, 1.0), "int_scalars": (2, 1)}.get(case, (1.0, 0.0))
    fast, general = poisoned(M, N, BF16, ROW), poisoned(M, N, BF16, ROW)
    plan.run(A, B, C, fast, alpha=alpha, beta=beta)
    fast_kernel = plan.last_kernel
    plan.run(A, B, C, general, alpha=alpha, beta=beta, stream=general_path_stream())
    assert plan.last_kernel == fast_kernel
    assert torch.equal(fast, general)
    assert_exact(fast, reference(A, B, C.expand(M, N), alpha, beta, BF16))


def test_one_call_path_refuses_as_the_general_path_does(gen):
    plan = plan_for()
    A, B = rand_int(M, K, BF16, ROW, gen), rand_int(K + 8, N, BF16, ROW, gen)  # K mismatch
    D = poisoned(M, N, BF16, ROW)
    with pytest.raises(cuforge.InvalidArgumentError) as fast:
        plan.run(A, B, None, D)
    with pytest.raises(cuforge.InvalidArgumentError) as general:
        plan.run(A, B, None, D, stream=general_path_stream())
    assert str(fast.value) == str(general.value)
    assert torch.isnan(D).all()  # nothing was written
    with pytest.raises(cuforge.DataTypeError):  # an element type cuforge lacks: the general path names it
        plan.run(A, B.to(torch.int16), None, D)


def test_other_operands_take_the_general_path(gen):
    plan = plan_for()
    A, B = rand_int(M, K, BF16, ROW, gen), rand_int(K, N, BF16, ROW, gen)
    expected = reference(A, B, None, 2.0, 0.0, BF16)
    for alpha in (torch.tensor(2.0, device="cuda"), torch.tensor([2.0])):  # scalars as tensors
        D = poisoned(M, N, BF16, ROW)
        plan.run(A, B, None, D, alpha=alpha)
        assert_exact(D, expected)
    D = poisoned(M, N, BF16, ROW)  # a batch of one (rank 3)
    plan.run(A[None], B, None, D[None], alpha=2.0)
    assert_exact(D, expected)
    plan_col = plan_for(layout_A=cuforge.LayoutType.ColumnMajor)
    Acol = rand_int(M, K, BF16, COL, gen)
    D = poisoned(M, N, BF16, ROW)
    plan_col.run(Acol, B, None, D)
    assert_exact(D, reference(Acol, B, None, 1.0, 0.0, BF16))


def test_a_plan_of_void_c_takes_the_one_call_path(gen):
    """A plan whose element_C is void runs without C in one call (it took the general path every run); a C
    given is refused there, as before."""
    A, B = rand_int(M, K, BF16, ROW, gen), rand_int(K, N, BF16, ROW, gen)
    plan = plan_for(element_C=cuforge.DataType.void)
    general = plan._run_arguments
    plan._run_arguments = lambda *args: pytest.fail("the general path ran")
    D = poisoned(M, N, BF16, ROW)
    plan.run(A, B, None, D)
    assert_exact(D, reference(A, B, None, 1.0, 0.0, BF16))
    plan._run_arguments = general
    with pytest.raises(cuforge.InvalidArgumentError, match="element_C is void"):
        plan.run(A, B, rand_int(M, N, BF16, ROW, gen), D)


@pytest.mark.parametrize("kernel_cc", [None, 80], ids=["sm90", "sm80"])
def test_repeated_runs_see_every_change_of_arguments(kernel_cc, gen):
    """The kernel keeps the parameters of its latest run per thread; a run that differs in any
    argument (an operand's address, alpha, beta) must prepare anew."""
    plan = plan_for(kernel_cc)
    A1, A2 = rand_int(M, K, BF16, ROW, gen), rand_int(M, K, BF16, ROW, gen)
    B, C = rand_int(K, N, BF16, ROW, gen), rand_int(M, N, BF16, ROW, gen)
    D1, D2 = poisoned(M, N, BF16, ROW), poisoned(M, N, BF16, ROW)
    for A, D, alpha, beta in [(A1, D1, 1.0, 0.0), (A1, D1, 1.0, 0.0), (A2, D1, 1.0, 0.0), (A2, D2, 1.0, 0.0),
                              (A2, D2, 2.0, 0.0), (A2, D2, 2.0, 1.0), (A1, D1, 1.0, 0.0)]:
        D.fill_(float("nan"))
        plan.run(A, B, C, D, alpha=alpha, beta=beta)
        assert_exact(D, reference(A, B, C, alpha, beta, BF16))


@pytest.mark.parametrize("given", ["torch_stream", "int"])
def test_a_stream_given_takes_the_one_call_path_on_that_stream(given, gen):
    """stream= as a torch.cuda.Stream or its int handle: the core reads it (run_tensors takes the
    run) and queues the kernel there, behind that stream's work, not on torch's current stream."""
    plan = plan_for()
    A, B = rand_int(M, K, BF16, ROW, gen), rand_int(K, N, BF16, ROW, gen)
    expected = reference(A, B, None, 1.0, 0.0, BF16)
    # A kernel's first run in a process may wait for the device (loading it): not under test.
    plan.run(A, B, None, poisoned(M, N, BF16, ROW))
    for run in (lambda D, stream: plan._plan.run_tensors(A, B, None, D, 1.0, 0.0, False, stream),
                lambda D, stream: plan.run(A, B, None, D, sync=False, stream=stream)):
        D = poisoned(M, N, BF16, ROW)
        run_on_held_stream(lambda stream: run(D, stream), given)
        assert_exact(D, expected)


def test_one_call_path_host_time_beside_torch_matmul():
    """Measured, printed; the assertion only catches a path that fell back to Python's."""
    plan = plan_for()
    A, B, D = (torch.randn(64, 64, device="cuda", dtype=BF16) for _ in range(3))

    python_stream = general_path_stream()
    times = host_times_us({"ours": lambda: plan.run(A, B, None, D, sync=False),
                           "general": lambda: plan.run(A, B, None, D, sync=False, stream=python_stream),
                           "matmul": lambda: torch.matmul(A, B, out=D)})
    ours, general, matmul = times["ours"], times["general"], times["matmul"]
    print(f"64^3 bf16 host time per call: plan.run {ours:.2f} us (general path {general:.2f}), "
          f"torch.matmul {matmul:.2f} us")
    assert ours < general
