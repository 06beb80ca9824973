"""GEMM numerics on the GPU: bit-exact results against a float64 reference (see exact.py for why
integer-valued inputs make every result exact).

Every kernel the module needs is named with `plan.select` and compiled in one parallel
`cuforge.build` call before the first test runs (a module-scoped fixture).
"""

from dataclasses import dataclass
from typing import Optional

import time

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

import cuforge  # noqa: E402
from exact import COL, DTYPES, ROW, assert_exact, layout, poisoned, rand_int, reference  # noqa: E402
from prebuild import build_selected  # noqa: E402


@dataclass(frozen=True)
class Case:
    """One plan (types, layouts, kernel family) and one problem to run it on."""

    dtype: str
    layout_a: str
    layout_b: str
    layout_c: str
    kernel_cc: Optional[int]  # None: the default family (SM90 on the H200); 80: CUTLASS 2.x; 90: 3.x
    M: int
    N: int
    K: int
    alpha: float = 1.0
    beta: float = 0.0

    @property
    def id(self):
        cc = {80: "sm80", 90: "sm90"}.get(self.kernel_cc, "default")
        lay = self.layout_a[0] + self.layout_b[0] + self.layout_c[0]
        ab = f"-a{self.alpha:g}b{self.beta:g}" if (self.alpha, self.beta) != (1.0, 0.0) else ""
        return f"{self.dtype}-{lay}-{cc}-{self.M}x{self.N}x{self.K}{ab}"


def make_plan(case):
    dt = DTYPES[case.dtype]
    return cuforge.op.Gemm(
        element_A=dt, element_B=dt, element_C=dt, element_D=dt,
        element_accumulator=torch.float32,
        layout_A=layout(case.layout_a), layout_B=layout(case.layout_b), layout_C=layout(case.layout_c),
        kernel_cc=case.kernel_cc,
    )


def pinned(case, **tile_fields):
    """The case's plan and its first listed tile description with tile_fields changed (as the CUTLASS Python
    interface's tests pin tiles)."""
    plan = make_plan(case)
    tile = plan.tile_descriptions()[0]
    for field, value in tile_fields.items():
        setattr(tile, field, value)
    return plan, tile


def pinned_kernel(case, **tile_fields):
    plan, tile = pinned(case, **tile_fields)
    return plan.construct(tile, M=case.M, N=case.N, K=case.K).name


# M not a multiple of any tile; N and K multiples of 8 so every operand stays 16-byte aligned
# in either layout.
BASE = (264, 200, 136)

LAYOUT_CASES = [
    Case(dt, la, lb, ROW, cc, *BASE)
    for dt in ("f16", "bf16")
    for la in (ROW, COL)
    for lb in (ROW, COL)
    for cc in (None, 80)
]

# Odd leading dimensions (N = 257, K = 135) run on two-stage kernels loading one element at a time.
AWKWARD_CASES = [
    Case("f16", ROW, ROW, ROW, cc, M, N, K)
    for (M, N, K) in [(197, 262, 136), (136, 96, 8), (1, 256, 512), (129, 257, 135)]
    for cc in (None, 80)
] + [Case("bf16", ROW, COL, ROW, None, 197, 262, 136), Case("bf16", COL, ROW, COL, None, 129, 257, 135, beta=1.0),
     Case("f16", COL, COL, ROW, None, 4096, 64, 4095)]

EPILOGUE_CASES = [
    Case("f16", ROW, ROW, ROW, None, *BASE, alpha=1.0, beta=2.0),
    Case("f16", ROW, ROW, ROW, 80, *BASE, alpha=1.0, beta=2.0),
    Case("bf16", ROW, COL, ROW, None, *BASE, alpha=2.0, beta=-1.0),
]

COLUMN_C_CASES = [
    Case("f16", ROW, ROW, COL, None, *BASE),
    Case("f16", ROW, ROW, COL, None, *BASE, alpha=1.0, beta=2.0),
    Case("bf16", COL, COL, COL, 80, *BASE, alpha=1.0, beta=2.0),
]

F32_CASES = [
    Case("f32", ROW, ROW, ROW, None, *BASE),
    Case("f32", ROW, ROW, ROW, 80, *BASE),
    Case("f32", COL, ROW, ROW, None, *BASE, alpha=1.0, beta=2.0),
    # SM90 kernels copy a column-major A and a row-major B K-major first (with a column-major D, the
    # transposed problem copies both).
    Case("f32", ROW, ROW, ROW, 90, *BASE),
    Case("f32", COL, COL, ROW, 90, *BASE, alpha=1.0, beta=2.0),
    Case("f32", COL, ROW, COL, 90, 264, 136, 132),
]

# The plan the asynchronous-run tests use (its kernel is one of the layout cases').
# Problems of two tiles of rows in a grid that fills the SMs: the default plan takes the tile in 2x1
# clusters spanning M (select::cluster_spans_m), the second tile of rows partly empty at 96 and 200.
CLUSTER_CASES = [
    Case("bf16", ROW, ROW, ROW, None, 128, 4096, 256),
    Case("bf16", ROW, ROW, ROW, None, 96, 4096, 256),
    Case("f16", ROW, COL, ROW, None, 256, 4096, 256, alpha=1.0, beta=2.0),
    Case("f16", ROW, ROW, ROW, None, 200, 2176, 136),
]
# Swapped kernels in 1x2 clusters (two tiles along M share each B^T tile), pinned (the model gives these
# problems to the non-persistent kernel): a second tile full or partly empty, both layouts of A and B, beta.
SWAPPED_CLUSTER_TILE = dict(threadblock_shape=[64, 32, 128], cluster_shape=[1, 2, 1], swap_ab=True,
                            kernel_schedule=cuforge.KernelScheduleType.TmaWarpSpecializedPingpong,
                            epilogue_schedule=cuforge.EpilogueScheduleType.TmaWarpSpecialized)
SWAPPED_CLUSTER_CASES = [
    Case("bf16", ROW, ROW, ROW, None, 64, 4096, 256),
    Case("bf16", COL, ROW, ROW, None, 48, 4096, 512),
    Case("f16", ROW, COL, ROW, None, 64, 4096, 256, alpha=1.0, beta=2.0),
    Case("f16", ROW, ROW, ROW, None, 40, 2176, 136),
]

# Problems whose 128-wide tiles leave the last wave nearly empty take the 128x192 cooperative tile
# (one wave): its last tile of columns partly empty (1480, 1496), both layouts of B, beta.
WIDE_TILE_CASES = [
    Case("bf16", ROW, ROW, ROW, None, 1536, 1536, 256),
    Case("bf16", ROW, COL, ROW, None, 1480, 1536, 256, alpha=1.0, beta=2.0),
    Case("f16", ROW, ROW, ROW, None, 1536, 1496, 264),
]

# Three waves of tiles or more: 16-bit GEMMs hand out their tiles along N in groups of four (select::rasterization),
# ragged edges and a column-major D (the transposed problem) among them.
TILE_ORDER_CASES = [
    Case("bf16", ROW, ROW, ROW, None, 4096, 4096, 64),
    Case("f16", ROW, COL, ROW, None, 4160, 4000, 72, alpha=1.0, beta=1.0),
    Case("bf16", ROW, ROW, COL, None, 3000, 5000, 64),
]

PLAIN = Case("f16", ROW, ROW, ROW, None, *BASE)

ALL_CASES = (LAYOUT_CASES + AWKWARD_CASES + EPILOGUE_CASES + COLUMN_C_CASES + F32_CASES + CLUSTER_CASES
             + SWAPPED_CLUSTER_CASES + WIDE_TILE_CASES + TILE_ORDER_CASES)


def seed_plans_and_shapes():
    """The plans the SEED_API.md snippets build, with the (M, N, K) each one runs."""
    f16 = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    f32_torch = cuforge.op.Gemm(element=torch.float32, layout=cuforge.LayoutType.RowMajor)
    f32_numpy = cuforge.op.Gemm(element=np.float32, layout=cuforge.LayoutType.RowMajor)
    seed_f32_shapes = [(128, 64, 256), (32, 256, 128)]
    return [
        (f16, [(1024, 1024, 1024), (128, 128, 128)]),
        (f32_torch, seed_f32_shapes),
        (f32_numpy, seed_f32_shapes),
    ]


@pytest.fixture(scope="module", autouse=True)
def prebuilt_kernels():
    """Compile every kernel this module runs in one parallel step.

    A problem the catalog has no kernel for is left to its own test (which then fails with
    cuforge's error) rather than failing every test of the module here.
    """
    problems = [(make_plan(c), [(c.M, c.N, c.K)]) for c in ALL_CASES] + seed_plans_and_shapes()
    problems += [(c_beside_f32_d_plan(dtype, layout_c), [shape]) for dtype, layout_c, _, shape in C_BESIDE_F32_D_CASES]
    selections = [lambda p=plan, s=shape: p.select(*s) for plan, shapes in problems for shape in shapes]
    selections += [lambda c=case, s=shape: pinned_kernel(c, threadblock_shape=s) for case, shape, _ in K32_CASES]
    selections += [lambda c=case, cl=cluster: pinned_kernel(c, threadblock_shape=[64, 128, 64], cluster_shape=cl)
                   for case, cluster in CLUSTER8_CASES]
    return build_selected(selections)


# --------------------------------------------------------------------------------------------------
# Operands and reference


@pytest.fixture
def gen():
    g = torch.Generator(device="cuda")
    g.manual_seed(2024)
    return g


def operands(case, gen):
    dt = DTYPES[case.dtype]
    A = rand_int(case.M, case.K, dt, case.layout_a, gen)
    B = rand_int(case.K, case.N, dt, case.layout_b, gen)
    C = rand_int(case.M, case.N, dt, case.layout_c, gen)
    D = poisoned(case.M, case.N, dt, case.layout_c)
    return A, B, C, D


def run_case(case, gen, tile=None):
    plan = make_plan(case)
    plan.tile_description = tile
    A, B, C, D = operands(case, gen)
    plan.run(A, B, C, D, alpha=case.alpha, beta=case.beta)
    assert_exact(D, reference(A, B, C, case.alpha, case.beta, DTYPES[case.dtype]))
    if case.layout_c == COL:
        assert D.stride() == (1, case.M), "D must keep its column-major strides"


# --------------------------------------------------------------------------------------------------
# Numerics


@pytest.mark.parametrize("case", LAYOUT_CASES, ids=lambda c: c.id)
def test_layouts(case, gen):
    run_case(case, gen)


@pytest.mark.parametrize("case", AWKWARD_CASES, ids=lambda c: c.id)
def test_awkward_sizes(case, gen):
    run_case(case, gen)


@pytest.mark.parametrize("case", EPILOGUE_CASES, ids=lambda c: c.id)
def test_alpha_beta(case, gen):
    run_case(case, gen)


@pytest.mark.parametrize("case", COLUMN_C_CASES, ids=lambda c: c.id)
def test_column_major_c_d(case, gen):
    run_case(case, gen)


@pytest.mark.parametrize("case", F32_CASES, ids=lambda c: c.id)
def test_f32_tf32(case, gen):
    run_case(case, gen)


@pytest.mark.parametrize("case", CLUSTER_CASES, ids=lambda c: c.id)
def test_clusters_spanning_m(case, gen):
    assert "_c2x1x1_" in make_plan(case).select(case.M, case.N, case.K)
    run_case(case, gen)


# SM90 16-bit tiles of K = 32 (64-byte swizzle atoms), as the CUTLASS Python interface's tests pin them
# (not in the catalog): the first listed description's shape changed, so the builder's schedule for it.
K32_CASES = [
    (Case("f16", ROW, COL, ROW, None, 264, 200, 136, alpha=1.0, beta=2.0), [128, 128, 32], "_coop_tmacoop_"),
    (Case("bf16", ROW, ROW, ROW, None, 264, 200, 136), [64, 128, 32], "_pingpong_tma_"),
    (Case("f16", COL, ROW, COL, None, 136, 72, 264), [128, 64, 32], "_coop_tmacoop_"),
]


@pytest.mark.parametrize("case, shape, schedule", K32_CASES, ids=lambda c: getattr(c, "id", None))
def test_sm90_tiles_of_k32(case, shape, schedule, gen):
    plan, tile = pinned(case, threadblock_shape=shape)
    name = plan.construct(tile, M=case.M, N=case.N, K=case.K).name
    assert "_sm90_" in name and f"_{shape[0]}x{shape[1]}x32_" in name and schedule in name, name
    run_case(case, gen, tile)


# Clusters of 8 CTAs (the portable limit; the catalog lists 1x1, 2x1 and 1x2, and 4x1 for TF32's swapped 128x128
# tile), pinned as the interface's SM90 tests pin them on a 64x128 tile: problems whose tiles fill whole clusters and
# ones that leave clusters partly empty.
CLUSTER8_CASES = [
    (Case("f16", ROW, ROW, ROW, None, 512, 1024, 256), [2, 4, 1]),
    (Case("f16", ROW, COL, COL, None, 264, 1032, 136, alpha=1.0, beta=2.0), [2, 4, 1]),
    (Case("bf16", ROW, ROW, ROW, None, 520, 392, 200, alpha=1.0, beta=1.0), [4, 2, 1]),
]


@pytest.mark.parametrize("case, cluster", CLUSTER8_CASES, ids=lambda c: getattr(c, "id", None))
def test_clusters_of_8_ctas(case, cluster, gen):
    plan, tile = pinned(case, threadblock_shape=[64, 128, 64], cluster_shape=cluster)
    name = plan.construct(tile, M=case.M, N=case.N, K=case.K).name
    assert "_sm90_" in name and "_c{}x{}x1_".format(*cluster) in name, name
    run_case(case, gen, tile)


C_BESIDE_F32_D_CASES = [
    ("f16", ROW, 2.0, (264, 200, 136)), ("bf16", COL, 1.0, (264, 200, 136)), ("f16", ROW, 0.0, (264, 200, 136)),
    ("bf16", ROW, 1.0, (16, 4096, 4096)),  # a swapped kernel
    ("f16", ROW, 1.0, (2048, 2048, 2048)),  # a persistent cooperative one
]


def c_beside_f32_d_plan(dtype, layout_c):
    dt = DTYPES[dtype]
    return cuforge.op.Gemm(element_A=dt, element_B=dt, element_C=dt, element_D=torch.float32,
                           element_accumulator=torch.float32, layout_A=layout(ROW), layout_B=layout(ROW),
                           layout_C=layout(layout_c))


@pytest.mark.parametrize("dtype, layout_c, beta, shape", C_BESIDE_F32_D_CASES)
def test_c_of_the_inputs_type_beside_an_f32_d(dtype, layout_c, beta, shape, gen):
    """SM90 GEMMs read C of the 16-bit inputs' type beside an f32 D (the CUTLASS Python interface's SM90 tests
    build such plans): exact, both layouts of D, with and without C."""
    dt = DTYPES[dtype]
    M, N, K = shape
    plan = c_beside_f32_d_plan(dtype, layout_c)
    A, B = rand_int(M, K, dt, ROW, gen), rand_int(K, N, dt, ROW, gen)
    C = rand_int(M, N, dt, layout_c, gen) if beta else None
    D = poisoned(M, N, torch.float32, layout_c)
    plan.run(A, B, C, D, alpha=1.0, beta=beta)
    assert f"_{dtype}_{dtype}_f32_{dtype}_f32_" in plan.last_kernel, plan.last_kernel
    assert_exact(D, reference(A, B, C, 1.0, beta, torch.float32))


@pytest.mark.parametrize("case", SWAPPED_CLUSTER_CASES, ids=lambda c: c.id)
def test_swapped_clusters_spanning_m(case, gen):
    plan = make_plan(case)
    plan.tile_description = SWAPPED_CLUSTER_TILE
    name = plan.select(case.M, case.N, case.K)
    assert "_64x32x128_c1x2x1_" in name and name.endswith("_swapab"), name
    run_case(case, gen, SWAPPED_CLUSTER_TILE)


@pytest.mark.parametrize("case", WIDE_TILE_CASES, ids=lambda c: c.id)
def test_wide_tiles_of_one_wave(case, gen):
    name = make_plan(case).select(case.M, case.N, case.K)
    assert "_128x192x64_" in name and "_coop_" in name, name
    run_case(case, gen)


@pytest.mark.parametrize("case", TILE_ORDER_CASES, ids=lambda c: c.id)
def test_tiles_handed_out_along_n_in_groups(case, gen):
    run_case(case, gen)


def test_tf32_copies_of_batched_and_broadcast_operands(gen):
    """SM90 TF32 with a row-major B copied K-major per batch, or once when it is broadcast."""
    plan = make_plan(Case("f32", ROW, ROW, ROW, 90, 0, 0, 0))
    plan.tile_description = plan.tile_descriptions()[0]  # an SM90 tile: no SM80 kernel beside it
    A = torch.randint(-3, 4, (3, 128, 64), device="cuda", generator=gen).float()
    for B in (torch.randint(-3, 4, (64, 96), device="cuda", generator=gen).float(),
              torch.randint(-3, 4, (3, 64, 96), device="cuda", generator=gen).float()):
        D = torch.full((3, 128, 96), float("nan"), device="cuda")
        plan.run(A, B, None, D)
        assert "sm90" in plan.last_kernel
        assert_exact(D, reference(A, B, None, 1.0, 0.0, torch.float32))


def test_tf32_copies_of_operands_not_16_byte_aligned(gen):
    """A pinned SM90 TF32 tile (no SM80 fallback) copies a column-major A whose columns of 263
    elements are not 16-byte multiples element by element, and a row-major B in 16-byte vectors."""
    case = Case("f32", COL, ROW, ROW, 90, 263, 136, 132)
    plan = make_plan(case)
    plan.tile_description = plan.tile_descriptions()[0]
    A, B, C, D = operands(case, gen)
    assert A.stride() == (1, 263)
    plan.run(A, B, C, D, alpha=1.0, beta=1.0)
    assert "sm90" in plan.last_kernel, plan.last_kernel
    assert_exact(D, reference(A, B, C, 1.0, 1.0, torch.float32))


def test_a_pinned_sm90_tile_runs_sm80s_kernel_of_it_on_operands_tma_cannot_load(gen):
    """As the CUTLASS Python interface's SM90 tests pin a tile (automatic schedules and stages, a cluster of
    one): f16 rows of K = 132 (264 bytes, 8-byte aligned) run SM80's kernel of the same threadblock shape."""
    case = Case("f16", ROW, COL, ROW, 90, 200, 136, 132)
    plan, tile = pinned(case, threadblock_shape=[128, 128, 32], stages=None, cluster_shape=[1, 1, 1])
    plan.tile_description = tile
    A, B, C, D = operands(case, gen)
    plan.run(A, B, C, D, alpha=1.0, beta=1.0)
    assert plan.last_kernel.startswith("cuforge_sm80_") and "_128x128x32_" in plan.last_kernel, plan.last_kernel
    assert_exact(D, reference(A, B, C, 1.0, 1.0, torch.float16))


def test_a_pinned_sm80_tile_has_hoppers_shared_memory(gen):
    """The interface's SM90 f64 tile: 128x128x32 in 4x2x1 warps of 3 stages, 192 KB of shared memory (more than an
    A100's 163 KB), on column-major A and B."""
    plan = cuforge.op.Gemm(element=torch.float64, element_accumulator=torch.float64, layout_A=layout(COL),
                           layout_B=layout(COL), layout_C=layout(ROW))
    plan.tile_description = {"threadblock_shape": [128, 128, 32], "warp_count": [4, 2, 1], "stages": 3}
    A = torch.randint(-3, 4, (136, 200), device="cuda", generator=gen).double().t()
    B = torch.randint(-3, 4, (96, 136), device="cuda", generator=gen).double().t()
    C = torch.randint(-3, 4, (200, 96), device="cuda", generator=gen).double()
    D = torch.full((200, 96), float("nan"), device="cuda", dtype=torch.float64)
    plan.run(A, B, C, D, beta=1.0)
    assert "_128x128x32_w4x2x1_s3_" in plan.last_kernel, plan.last_kernel
    assert_exact(D, reference(A, B, C, 1.0, 1.0, torch.float64))


def test_a_batch_over_one_b_runs_as_one_gemm_of_its_rows(gen):
    """64 batches of 16 rows times one B (and a batched C): folded into a 1024-row GEMM, exact."""
    plan = make_plan(PLAIN)
    A = torch.randint(-3, 4, (64, 16, 256), device="cuda", generator=gen).half()
    B = torch.randint(-3, 4, (256, 128), device="cuda", generator=gen).half()
    C = torch.randint(-3, 4, (64, 16, 128), device="cuda", generator=gen).half()
    D = torch.full((64, 16, 128), float("nan"), device="cuda", dtype=torch.float16)
    plan.run(A, B, C, D, beta=1.0)
    assert_exact(D, reference(A, B, C, 1.0, 1.0, torch.float16))
    assert plan.last_kernel == plan.select(1024, 128, 256), "the batch ran as one GEMM of 1024 rows"
    # One row per batch, the batches apart by a padded stride, and a bias vector: one GEMM of 40 rows with a bias.
    A1 = torch.randint(-3, 4, (40, 1, 264), device="cuda", generator=gen).half()[:, :, :256]
    bias = torch.randint(-3, 4, (128,), device="cuda", generator=gen).half()
    D1 = torch.full((40, 1, 128), float("nan"), device="cuda", dtype=torch.float16)
    plan.run(A1, B, bias, D1, beta=1.0)
    assert_exact(D1, reference(A1, B, bias, 1.0, 1.0, torch.float16))
    assert plan.last_kernel == plan.select(40, 128, 256, bias=True), plan.last_kernel
    # Each batch's own bias row, read by its 16 rows: a batch, not one GEMM (whose rows would read one row each).
    biases = torch.randint(-3, 4, (64, 1, 128), device="cuda", generator=gen).half()
    D.fill_(float("nan"))
    plan.run(A, B, biases, D, beta=1.0)
    assert_exact(D, reference(A, B, biases, 1.0, 1.0, torch.float16))


def test_one_plan_many_problems(gen):
    """A plan reused on problems of different shapes, back and forth (the remembered selection)."""
    plan = make_plan(PLAIN)
    for (M, N, K) in [BASE, (197, 262, 136), BASE, (1, 256, 512)]:
        case = Case("f16", ROW, ROW, ROW, None, M, N, K)
        A, B, C, D = operands(case, gen)
        plan.run(A, B, C, D)
        assert_exact(D, reference(A, B, C, 1.0, 0.0, torch.float16))


def test_several_batch_dimensions(gen):
    """(2, 3, M, K) @ (K, N) and a batched B of the same batch shape, as the seed takes them."""
    plan = make_plan(PLAIN)
    A = torch.randint(-3, 4, (2, 3, 64, 40), device="cuda", generator=gen).half()
    B = torch.randint(-3, 4, (40, 24), device="cuda", generator=gen).half()
    Bb = torch.randint(-3, 4, (2, 3, 40, 24), device="cuda", generator=gen).half()
    for b in (B, Bb):
        D = torch.full((2, 3, 64, 24), float("nan"), device="cuda", dtype=torch.float16)
        plan.run(A, b, None, D)
        assert_exact(D, (A.double() @ b.double()).half())


# --------------------------------------------------------------------------------------------------
# Asynchronous runs


def test_async_run_handle(gen):
    plan = make_plan(PLAIN)
    A, B, C, D = operands(PLAIN, gen)
    handle = plan.run(A, B, C, D, sync=False)
    assert handle is not None and hasattr(handle, "sync")
    handle.sync()
    assert_exact(D, reference(A, B, C, 1.0, 0.0, torch.float16))


def test_async_run_on_current_torch_stream(gen):
    """With stream=None the run goes on torch's current stream; the handle waits for it."""
    plan = make_plan(PLAIN)
    A, B, C, D = operands(PLAIN, gen)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        handle = plan.run(A, B, C, D, sync=False)
    handle.sync()
    assert_exact(D, reference(A, B, C, 1.0, 0.0, torch.float16))


# --------------------------------------------------------------------------------------------------
# SEED_API.md snippets, verbatim under `import cuforge as cutlass`


def test_seed_numpy_ones_1024():
    import cuforge as cutlass
    import numpy as np

    plan = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    A, B, C, D = [np.ones((1024, 1024), dtype=np.float16) for i in range(4)]
    plan.run(A, B, C, D)                       # D = A @ B (+ C with beta), on the GPU, result back in D

    assert D.dtype == np.float16 and D.shape == (1024, 1024)
    assert (D == np.float16(1024)).all()
    assert (A == 1).all() and (B == 1).all() and (C == 1).all()


def test_seed_installation_check_128():
    import cuforge as cutlass
    import numpy as np

    plan = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor)
    A, B, C, D = [np.ones((128, 128), dtype=np.float16) for i in range(4)]
    plan.run(A, B, C, D)

    assert (D == np.float16(128)).all()


def test_numpy_runs_in_flight_at_once_keep_their_own_copies():
    """Two NumPy runs queued before either is waited for, and one from each of four threads: each D gets its
    own product (the device copies were once one per plan, so a D copied back at sync() could hold a later
    run's result)."""
    import threading

    plan = cuforge.op.Gemm(element=np.float16, element_accumulator=np.float32, layout=cuforge.LayoutType.RowMajor)
    rng = np.random.default_rng(7)
    ints = lambda *shape: rng.integers(-3, 4, shape).astype(np.float16)  # noqa: E731 (exact in f16 sums)
    B = ints(256, 128)
    As = [ints(192, 256) for _ in range(6)]
    Ds = [np.zeros((192, 128), np.float16) for _ in range(6)]
    first = plan.run(As[0], B, None, Ds[0], sync=False)
    second = plan.run(As[1], B, None, Ds[1], sync=False)
    first.sync()
    second.sync()
    threads = [threading.Thread(target=lambda i=i: plan.run(As[i], B, None, Ds[i])) for i in range(2, 6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for A, D in zip(As, Ds):
        assert (D == (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float16)).all()


def _seed_torch_inputs():
    A0 = torch.rand((128, 256), device='cuda'); B0 = torch.rand((256, 64), device='cuda')
    C0 = torch.zeros((128, 64), device='cuda'); D0 = torch.zeros((128, 64), device='cuda')
    A1 = torch.rand((32, 128), device='cuda'); B1 = torch.rand((128, 256), device='cuda')
    C1 = torch.zeros((32, 256), device='cuda'); D1 = torch.zeros((32, 256), device='cuda')
    return A0, B0, C0, D0, A1, B1, C1, D1


def assert_close_tf32(D, A, B):
    # Inputs in [0, 1): every product is positive, so tf32 rounding of A and B (2^-11 relative
    # each) bounds the relative error of each element by about 1e-3.
    ref = A.double() @ B.double()
    torch.testing.assert_close(D.double(), ref, rtol=3e-3, atol=1e-3)


def test_seed_torch_f32_two_plans_two_shapes():
    import cuforge as cutlass
    cutlass_cppgen = cutlass

    plan_long = cutlass_cppgen.op.Gemm(element_A=torch.float32, element_B=torch.float32, element_C=torch.float32,
                                       element_D=torch.float32, element_accumulator=torch.float32,
                                       layout=cutlass_cppgen.LayoutType.RowMajor)
    plan = cutlass_cppgen.op.Gemm(element=torch.float32, layout=cutlass_cppgen.LayoutType.RowMajor)

    A0, B0, C0, D0, A1, B1, C1, D1 = _seed_torch_inputs()
    plan.run(A0, B0, C0, D0)
    plan.run(A1, B1, C1, D1)
    assert_close_tf32(D0, A0, B0)
    assert_close_tf32(D1, A1, B1)

    # "These two are equal": the same kernel for every problem, and the same numbers.
    assert plan_long.select(128, 64, 256) == plan.select(128, 64, 256)
    assert plan_long.select(32, 256, 128) == plan.select(32, 256, 128)
    E0, E1 = torch.zeros_like(D0), torch.zeros_like(D1)
    plan_long.run(A0, B0, C0, E0)
    plan_long.run(A1, B1, C1, E1)
    assert_close_tf32(E0, A0, B0)
    assert_close_tf32(E1, A1, B1)


def test_seed_compile_then_run():
    import cuforge as cutlass
    import numpy as np
    cutlass_cppgen = cutlass

    A0, B0, C0, D0, A1, B1, C1, D1 = _seed_torch_inputs()

    plan = cutlass_cppgen.op.Gemm(element=np.float32, layout=cutlass_cppgen.LayoutType.RowMajor)
    before = cuforge.compile_statistics()
    built = plan.compile()
    compiled = cuforge.compile_statistics()
    assert compiled["builds"] - before["builds"] == (0 if built.cache_hit else 1)
    # ... other work ...
    start = time.perf_counter()
    plan.run(A0, B0, C0, D0)
    first_run_ms = (time.perf_counter() - start) * 1e3
    assert plan.last_kernel == built.name
    plan.run(A1, B1, C1, D1)
    assert plan.last_kernel == built.name, "compile once, run later: the compiled kernel runs every problem"
    after = cuforge.compile_statistics()
    assert after["requests"] == compiled["requests"], "no compile was even asked for at run()"
    print(f"\ncompile(): {'cache hit' if built.cache_hit else 'built'}; first run() {first_run_ms:.1f} ms")
    assert first_run_ms < 50

    assert_close_tf32(D0, A0, B0)
    assert_close_tf32(D1, A1, B1)
