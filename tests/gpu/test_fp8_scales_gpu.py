"""fp8 per-tensor scales on the GPU (issue 18): D = activation(alpha * scale_a * scale_b * A @ B + beta * C)
with scale_a and scale_b one float32 each on the device, read by the kernel when it runs, as
torch._scaled_mm takes them. Exact on integer data against a float64 reference (powers of two as
scales), on the promoted and the fast-accumulation kernels, with a bias row and an activation, a
column-major D (the transposed problem), parallel split-K (the scales applied to the partial
products) and stream-K; a changed scale between runs is read (not cached); bad scales are refused
before anything runs. And fp8 GEMMs whose C and D are of two types (the CUTLASS Python interface's fp8
catalog), exact where D's type holds the result and rounded as torch rounds it where it does not."""

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
from exact import COL, ROW, assert_exact, layout, rand_int  # noqa: E402
from prebuild import build_selected  # noqa: E402

if not hasattr(torch, "float8_e4m3fn"):  # pragma: no cover - torch older than 2.1
    pytest.skip("this torch has no float8 dtypes", allow_module_level=True)

E4M3 = torch.float8_e4m3fn
SHAPE = (264, 208, 512)


def plan_of(d_layout=ROW, fast_accum=False, activation=None, decomposition=None):
    plan = cuforge.op.Gemm(element_A=E4M3, element_B=E4M3, element_C=torch.bfloat16, element_D=torch.bfloat16,
                           element_accumulator=torch.float32, layout_A=cuforge.LayoutType.RowMajor,
                           layout_B=cuforge.LayoutType.ColumnMajor, layout_C=layout(d_layout))
    plan.fp8_fast_accum = fast_accum
    if activation:
        plan.activation = activation
    if decomposition is not None:
        plan.split_k_slices = 2
        plan.decomposition = decomposition
    return plan


CASES = {
    "promoted": dict(),
    "fast-accum": dict(fast_accum=True),
    "relu-bias": dict(activation="relu"),
    "column-major-D": dict(d_layout=COL),
    "parallel-split-k": dict(decomposition=cuforge.Decomposition.ParallelSplitK),
    "stream-k": dict(decomposition=cuforge.Decomposition.StreamK),
}


# (C, D): the interface's fp8 notebook's C f32 beside D e4m3, and others of its catalog.
MIXED = [(torch.float32, E4M3), (torch.bfloat16, E4M3), (E4M3, torch.float32), (torch.float8_e5m2, torch.bfloat16)]
MIXED_SHAPE = (264, 208, 64)


def mixed_plan(c_type, d_type):
    return cuforge.op.Gemm(element_A=E4M3, element_B=E4M3, element_C=c_type, element_D=d_type,
                           element_accumulator=torch.float32, layout_A=cuforge.LayoutType.RowMajor,
                           layout_B=cuforge.LayoutType.ColumnMajor, layout_C=cuforge.LayoutType.RowMajor)


@pytest.fixture(scope="module", autouse=True)
def prebuilt_kernels():
    selections = [lambda k=kw: plan_of(**k).select(*SHAPE, bias=k.get("activation") == "relu")
                  for kw in CASES.values()]
    return build_selected(selections + [lambda t=types: mixed_plan(*t).select(*MIXED_SHAPE) for types in MIXED])


def scalar(value):
    return torch.tensor(value, device="cuda", dtype=torch.float32)


@pytest.mark.parametrize("case", list(CASES))
def test_scales_multiply_alpha_exactly(case):
    kw = CASES[case]
    M, N, K = SHAPE
    g = torch.Generator(device="cuda").manual_seed(7)
    d_layout = kw.get("d_layout", ROW)
    A, B = rand_int(M, K, E4M3, ROW, g), rand_int(K, N, E4M3, COL, g)
    bias = kw.get("activation") == "relu"
    C = rand_int(1 if bias else M, N, torch.bfloat16, ROW if bias else d_layout, g)
    D = rand_int(M, N, torch.bfloat16, d_layout, g)
    plan = plan_of(**kw)
    product = A.double() @ B.double()
    for alpha, sa, sb, beta in [(1.0, 0.5, 4.0, 0.0), (2.0, 0.25, 0.5, 1.0), (1.0, 8.0, 0.125, -1.0)]:
        ref = alpha * sa * sb * product + beta * C.double()
        if bias:
            ref = ref.clamp(min=0)
        D.fill_(float("nan"))
        plan.run(A, B, C, D, alpha=alpha, beta=beta, scale_a=scalar(sa), scale_b=scalar(sb))
        assert_exact(D, ref.to(torch.bfloat16))
    if "fast" in case:
        assert "_fastaccum_" in plan.last_kernel
    if "split" in case:
        assert plan.last_splits == 2, plan.last_kernel


def test_a_scale_changed_between_runs_is_read_and_numbers_fold_into_alpha():
    M, N, K = SHAPE
    g = torch.Generator(device="cuda").manual_seed(8)
    A, B = rand_int(M, K, E4M3, ROW, g), rand_int(K, N, E4M3, COL, g)
    D = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    plan = plan_of()
    sa, sb, other = scalar(1.0), scalar(1.0), scalar(2.0)
    product = A.double() @ B.double()
    for value in (1.0, 4.0, 0.5):
        sa.fill_(value)  # the same pointer: the kernel's cached parameters must not hold the value
        plan.run(A, B, None, D, scale_a=sa, scale_b=sb)
        assert_exact(D, (value * product).to(torch.bfloat16))
        plan.run(A, B, None, D, scale_a=sa, scale_b=other)  # another pointer, all else the same
        assert_exact(D, (2 * value * product).to(torch.bfloat16))
    plan.run(A, B, None, D, scale_a=0.25, scale_b=sb)  # a Python number multiplies alpha
    assert_exact(D, (0.25 * product).to(torch.bfloat16))


def test_bad_scales_are_refused_before_anything_runs():
    M, N, K = SHAPE
    A = torch.zeros(M, K, device="cuda").to(E4M3)
    B = torch.zeros(N, K, device="cuda").to(E4M3).t()
    D = torch.full((M, N), 3.0, device="cuda", dtype=torch.bfloat16)
    plan = plan_of()
    bad = [
        (dict(scale_a=torch.tensor(1.0)), cuforge.InvalidArgumentError, "scale_a: expected a tensor on cuda:0"),
        (dict(scale_b=scalar([1.0, 2.0])), cuforge.InvalidArgumentError, "scale_b: expected one f32 value"),
        (dict(scale_a=torch.tensor(1.0, device="cuda", dtype=torch.bfloat16)), cuforge.DataTypeError,
         "scale_a: expected one f32 value"),
    ]
    for kwargs, error, words in bad:
        with pytest.raises(error, match=words):
            plan.run(A, B, None, D, **kwargs)
    simt = cuforge.op.Gemm(element_A=E4M3, element_B=E4M3, element_C=torch.bfloat16, element_D=torch.bfloat16,
                           element_accumulator=torch.float32, layout_A=cuforge.LayoutType.RowMajor,
                           layout_B=cuforge.LayoutType.ColumnMajor, layout_C=cuforge.LayoutType.RowMajor,
                           opclass=cuforge.OpcodeClass.Simt)
    with pytest.raises(cuforge.InvalidArgumentError, match="scale_a, scale_b: this plan's SIMT kernels read no scales"):
        simt.run(A, B, None, D, scale_a=scalar(1.0))
    assert bool((D == 3.0).all()), "D untouched"
    bf16 = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor)
    X, Y, Z = (torch.zeros(64, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    with pytest.raises(cuforge.InvalidArgumentError, match="per-tensor scales apply to fp8"):
        bf16.run(X, Y, None, Z, scale_a=scalar(1.0))


def test_a_simt_plan_refuses_device_scales_before_copying_numpy_operands(monkeypatch):
    np = pytest.importorskip("numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import cuforge.op.plan

    M, N, K = SHAPE
    A = np.zeros((M, K), dtype=ml_dtypes.float8_e4m3fn)
    B = np.zeros((N, K), dtype=ml_dtypes.float8_e4m3fn).T
    D = np.full((M, N), 3.0, dtype=ml_dtypes.bfloat16)
    simt = cuforge.op.Gemm(element_A=E4M3, element_B=E4M3, element_C=torch.bfloat16, element_D=torch.bfloat16,
                           element_accumulator=torch.float32, layout_A=cuforge.LayoutType.RowMajor,
                           layout_B=cuforge.LayoutType.ColumnMajor, layout_C=cuforge.LayoutType.RowMajor,
                           opclass=cuforge.OpcodeClass.Simt)

    def copied(*args, **kwargs):
        raise AssertionError("an operand was copied to the GPU before the refusal")

    monkeypatch.setattr(cuforge.op.plan, "stage", copied)
    with pytest.raises(cuforge.InvalidArgumentError, match="scale_a, scale_b: this plan's SIMT kernels read no scales"):
        simt.run(A, B, None, D, scale_b=scalar(1.0))
    assert bool((D == 3.0).all()), "D untouched"


@pytest.mark.parametrize("c_type, d_type", MIXED, ids=lambda t: str(t).split(".")[-1])
def test_c_and_d_of_two_types(c_type, d_type):
    """D = A @ B / 16 + C with integers: every value is exact in f32 (the epilogue's), so D is the reference
    rounded to D's type once, as torch rounds it (an e4m3 D holds integers to 16, then even ones to 32...)."""
    M, N, K = MIXED_SHAPE
    g = torch.Generator(device="cuda").manual_seed(9)
    A, B = rand_int(M, K, E4M3, ROW, g), rand_int(K, N, E4M3, COL, g)
    C = rand_int(M, N, c_type, ROW, g)
    D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float32).to(d_type)
    plan = mixed_plan(c_type, d_type)
    plan.run(A, B, C, D, alpha=1 / 16, beta=1.0)
    ref = (A.double() @ B.double() / 16 + C.double()).to(d_type)
    assert_exact(D.float(), ref.float())
    names = {torch.float32: "f32", torch.bfloat16: "bf16", E4M3: "e4m3", torch.float8_e5m2: "e5m2"}
    assert f"_f32_{names[c_type]}_{names[d_type]}_" in plan.last_kernel, plan.last_kernel
