"""The data-type families of issue 4 on the GPU: SM90 int8 (into s32 and, saturating, into s8) and
fp8 (every e4m3/e5m2 pairing into bf16, f16, f32); f16 and bf16 into f32 outputs (SM90 and SM80);
SM80 int8 (saturating mma.sync into s32), f64 tensor cores, SIMT f32, f64, f16 and int8; 3xTF32 on both — each in the
layouts its kernels take, on SM90 kernels and with kernel_cc=80 where both families have it.

Inputs are small integers (exact.py): exact in every input type, e4m3 and e5m2 included, and every
product and partial sum exact in the accumulator, so results must equal a float64 reference bit
for bit. Integer outputs are the reference rounded half to even and, for s8, saturated, as
CUTLASS's converters do. Every kernel the module needs is compiled in one parallel build first.
"""

from dataclasses import dataclass, field
from typing import Optional

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
from exact import COL, ROW, assert_exact, layout, rand_int  # noqa: E402
from prebuild import build_selected, collected  # noqa: E402

if not hasattr(torch, "float8_e4m3fn"):  # pragma: no cover - torch older than 2.1
    pytest.skip("this torch has no float8 dtypes", allow_module_level=True)

TYPES = {
    "s8": torch.int8, "s32": torch.int32, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
    "f64": torch.float64, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
}
INTEGER = {"s8", "s32"}
FP8_OUT = {"e4m3", "e5m2"}
Simt = cuforge.OpcodeClass.Simt
FAST_F32 = cuforge.MathOperation.multiply_add_fast_f32
FAST_ACCUM = cuforge.MathOperation.multiply_add_fast_accum

# M not a multiple of any tile; N and K multiples of 16 so that 8-bit operands and s8 outputs stay
# 16-byte aligned (SM90 TMA) in either layout; K spans two and a bit 8-bit tiles (128).
BASE = (264, 208, 272)
ODD = (197, 131, 61)  # f64 and SIMT kernels load one element at a time: any extent runs


@dataclass(frozen=True)
class Case:
    a: str
    b: str
    out: str  # C and D
    layouts: str  # A, B, C/D as r/c
    kernel_cc: Optional[int]  # None: the default family (SM90 on the H200, SM80 where SM90 has none)
    shape: tuple = BASE
    alpha: float = 1.0
    beta: float = 0.0
    opclass: Optional[cuforge.OpcodeClass] = None
    math: Optional[cuforge.MathOperation] = None
    activation: Optional[str] = None
    bias: bool = False
    tile: tuple = ()  # a pinned tile description, as (field, value) pairs
    kernel_has: tuple = field(default=())  # parts the kernel's name must contain
    acc: Optional[str] = None  # the accumulator, where not the inputs' default (f16 accumulation)

    @property
    def id(self):
        parts = [f"{self.a}x{self.b}-{self.out}", self.layouts, "sm80" if self.kernel_cc == 80 else "default",
                 "x".join(map(str, self.shape))]
        if self.opclass == Simt:
            parts.append("simt")
        if self.math == FAST_F32:
            parts.append("3xtf32")
        if self.math == FAST_ACCUM:
            parts.append("fastaccum")
        if (self.alpha, self.beta) != (1.0, 0.0):
            parts.append(f"a{self.alpha:g}b{self.beta:g}")
        if self.activation:
            parts.append(self.activation)
        if self.bias:
            parts.append("bias")
        if self.tile:
            parts.append("tile" + "x".join(map(str, dict(self.tile)["threadblock_shape"])))
        if self.acc:
            parts.append(f"acc{self.acc}")
        return "-".join(parts)


def acc_of(case):
    if case.acc:
        return case.acc
    if case.a != case.b:
        return "f32"  # fp8 pairings, and s8 beside a 16-bit type
    return {"s8": "s32", "f64": "f64"}.get(case.a, "f32")


def make_plan(case):
    lay = [layout(ROW if ch == "r" else COL) for ch in case.layouts]
    plan = cuforge.op.Gemm(element_A=TYPES[case.a], element_B=TYPES[case.b], element_C=TYPES[case.out],
                           element_D=TYPES[case.out], element_accumulator=TYPES[acc_of(case)],
                           layout_A=lay[0], layout_B=lay[1], layout_C=lay[2], kernel_cc=case.kernel_cc,
                           opclass=case.opclass, math_operation=case.math)
    if case.activation:
        plan.activation = case.activation
    if case.tile:
        plan.tile_description = dict(case.tile)
    return plan


KS, ES = cuforge.KernelScheduleType, cuforge.EpilogueScheduleType


def sm80_tile(shape, warps, stages):
    return (("threadblock_shape", shape), ("warp_count", warps), ("stages", stages))


# A second, larger tile per family: cooperative 2x1 clusters on SM90, 8 warps on SM80.
SM90_COOP = (("threadblock_shape", (128, 128, 128)), ("cluster_shape", (2, 1, 1)), ("stages", 0),
             ("kernel_schedule", KS.TmaWarpSpecializedCooperative),
             ("epilogue_schedule", ES.TmaWarpSpecializedCooperative))
# 3xTF32 on SM90: pinned, as the model weighs the copies of small problems against SM80's kernels.
SM90_TF32 = (("threadblock_shape", (128, 128, 32)), ("cluster_shape", (1, 1, 1)), ("stages", 0),
             ("kernel_schedule", KS.TmaWarpSpecializedCooperative),
             ("epilogue_schedule", ES.TmaWarpSpecializedCooperative))
# fp8 with fast accumulation holds one accumulator: the 128-register tile promoted fp8 spills.
SM90_COOP_256 = (("threadblock_shape", (256, 128, 128)),) + SM90_COOP[1:]
# The CUTLASS Python interface's ping-pong fp8 test: promoted, 2 x 128 accumulator registers, spilling.
SM90_PINGPONG_128 = (("threadblock_shape", (128, 128, 128)), ("cluster_shape", (2, 1, 1)), ("stages", 0),
                     ("kernel_schedule", KS.TmaWarpSpecializedPingpong),
                     ("epilogue_schedule", ES.TmaWarpSpecialized))


RCR = "rcr"
ALL_LAYOUTS = ["rcr", "rrr", "crr", "ccr"]
FP8 = [("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e5m2", "e5m2")]

CASES = (
    # SM90 int8 -> s32 (int32 epilogue: integer alpha and beta), and SM80's saturating int8.
    [Case("s8", "s8", "s32", RCR, cc, kernel_has=("_s8_s8_s32_s32_s32_rcr_",)) for cc in (None, 80)]
    + [Case("s8", "s8", "s32", RCR, cc, alpha=2.0, beta=-1.0) for cc in (None, 80)]
    + [Case("s8", "s8", "s32", RCR, cc, beta=1.0, activation="relu", bias=True) for cc in (None, 80)]
    + [Case("s8", "s8", "s32", "rcc", None, beta=1.0),  # column-major D: the transposed problem
       Case("s8", "s8", "s32", RCR, None, shape=(197, 262, 144), kernel_has=("cuforge_sm80_", "_a8x8x2"))]
    # int8 -> s8 (SM90, and SM80's saturating int8): f32 epilogue, rounded half to even and saturated (K long
    # enough to saturate).
    + [Case("s8", "s8", "s8", RCR, cc, kernel_has=(f"cuforge_sm{cc or 90}_", "_s8_s8_s32_s8_s8_rcr_"))
       for cc in (None, 80)]
    + [Case("s8", "s8", "s8", RCR, cc, shape=(264, 208, 1024), alpha=0.5, beta=1.0) for cc in (None, 80)]
    # SM90 fp8: every pairing, every output at least once.
    + [Case(a, b, out, RCR, None, kernel_has=(f"_{a}_{b}_f32_{out}_{out}_rcr_",))
       for (a, b), out in zip(FP8, ["bf16", "f16", "f32", "bf16"])]
    + [Case("e4m3", "e4m3", out, RCR, None, alpha=1.0, beta=2.0) for out in ("f16", "f32")]
    + [Case("e5m2", "e4m3", "bf16", "rcc", None, beta=1.0, kernel_has=("_e4m3_e5m2_",))]  # D^T = B^T A^T
    # fp8 outputs (the CUTLASS interface's e4m3 -> e4m3 and e5m2 -> e5m2): f32 epilogue, rounded to nearest
    # even and saturated to the type's finite range (alpha = 8 takes many past e4m3's 448).
    + [Case(a, b, out, RCR, None, kernel_has=(f"_{a}_{b}_f32_{out}_{out}_rcr_",))
       for (a, b), out in zip(FP8, ["e4m3", "e5m2", "e4m3", "e5m2"])]
    + [Case("e4m3", "e4m3", "e4m3", RCR, None, alpha=0.5, beta=1.0, activation="relu", bias=True),
       Case("e4m3", "e4m3", "e4m3", RCR, None, alpha=8.0),
       # A column-major 8-bit D needs M in whole 16-byte vectors (TMA; fp8 has no SM80 kernels): not 264.
       Case("e5m2", "e5m2", "e5m2", "rcc", None, shape=(256, 208, 272), beta=1.0),
       Case("e4m3", "e4m3", "e4m3", RCR, None, beta=1.0, math=FAST_ACCUM, kernel_has=("_fastaccum_",)),
       Case("e4m3", "e4m3", "e4m3", RCR, None, tile=SM90_COOP, kernel_has=("_128x128x128_c2x1x1_",)),
       Case("e4m3", "e4m3", "e4m3", RCR, None, beta=1.0, tile=SM90_PINGPONG_128,
            kernel_has=("_128x128x128_c2x1x1_s0_pingpong_",))]
    # fp8 on the CUDA cores (the CUTLASS Python interface's SIMT e4m3 test: TNN, 64x32x8 in two stages), and its
    # layouts the tensor cores do not read.
    + [Case("e4m3", "e4m3", "e4m3", "rcc", None, shape=ODD, beta=1.0, opclass=Simt,
            tile=sm80_tile((64, 32, 8), (2, 1, 1), 2), kernel_has=("cuforge_sm80_gemm_simt_mma_e4m3_e4m3_f32_e4m3_",)),
       Case("e5m2", "e5m2", "f32", "rrr", None, shape=ODD, opclass=Simt, kernel_has=("_simt_mma_e5m2_e5m2_f32_f32_",))]
    # SM90 fp8 with fast accumulation (opt-in: plan.fp8_fast_accum); the sums here stay small enough
    # to be exact in the tensor core's own accumulator.
    + [Case("e4m3", "e4m3", "bf16", RCR, None, math=FAST_ACCUM, kernel_has=("_fastaccum_e4m3_e4m3_f32_bf16_bf16_rcr_",)),
       Case("e5m2", "e4m3", "f32", RCR, None, alpha=1.0, beta=2.0, math=FAST_ACCUM, activation="relu", bias=True,
            kernel_has=("_fastaccum_e5m2_e4m3_",)),
       Case("e4m3", "e5m2", "bf16", "rcc", None, beta=1.0, math=FAST_ACCUM, kernel_has=("_fastaccum_e5m2_e4m3_",)),
       Case("e4m3", "e4m3", "f16", RCR, None, math=FAST_ACCUM, tile=SM90_COOP_256,
            kernel_has=("_fastaccum_", "_256x128x128_c2x1x1_"))]
    # SM80 mixed inputs (s8 beside f16 or bf16, either way round: the s8 operand converted in registers), as
    # the CUTLASS interface's gemm_mixed_sm80 tests build them (their 128x128x64 tile; a column-major D too).
    + [Case(a, b, out, RCR, None, kernel_has=(f"cuforge_sm80_gemm_tensorop_mixed_{a}_{b}_f32_{out}_{out}_rcr_",))
       for a, b, out in [("s8", "f16", "f16"), ("f16", "s8", "f32"), ("s8", "bf16", "f32"), ("bf16", "s8", "bf16")]]
    + [Case("s8", "f16", "f16", "rcc", None, beta=1.0, kernel_has=("_mixed_f16_s8_",)),
       Case("f16", "s8", "f16", RCR, None, shape=(200, 136, 96), alpha=2.0, beta=-1.0, activation="relu", bias=True,
            kernel_has=("_mixed_f16_s8_",)),
       Case("s8", "f16", "f16", RCR, 80, tile=sm80_tile((128, 128, 64), (2, 2, 1), 3),
            kernel_has=("_mixed_s8_f16_", "_128x128x64_w2x2x1_s3_"))]
    # f16 and bf16 into f32 C and D (f32 epilogue, no conversion of the result), every layout.
    + [Case(t, t, "f32", lay, cc, kernel_has=(f"_{t}_{t}_f32_f32_f32_",))
       for t in ("f16", "bf16") for lay in ALL_LAYOUTS for cc in (None, 80)]
    + [Case(t, t, "f32", "rcr", cc, shape=(197, 136, 88), alpha=2.0, beta=-1.0, activation="relu", bias=True)
       for t in ("f16", "bf16") for cc in (None, 80)]
    # f16 accumulation into f32 C and D (SM80 kernels, an f32 epilogue), as the CUTLASS interface's conv tests
    # build it: SM90 has none, so the default plan takes SM80's.
    + [Case("f16", "f16", "f32", lay, None, acc="f16", kernel_has=("cuforge_sm80_gemm_tensorop_mma_f16_f16_f16_f32_f32_",))
       for lay in ("rcr", "crr")]
    + [Case("f16", "f16", "f32", "rrr", None, shape=(197, 136, 88), alpha=2.0, beta=-1.0, activation="relu", bias=True,
            acc="f16")]
    # 3xTF32 (f32 split into big and small TF32 halves): SM80's three mma.sync products and SM90's
    # pieces along a tripled K (its staging copies), every layout; odd M and K (the pieces' padding).
    + [Case("f32", "f32", "f32", lay, cc, math=FAST_F32, tile=SM90_TF32 if cc == 90 else (),
            kernel_has=(f"cuforge_sm{cc}_", "_3xtf32_")) for lay in ALL_LAYOUTS for cc in (80, 90)]
    + [Case("f32", "f32", "f32", "crr", 80, shape=(197, 131, 61), alpha=1.0, beta=2.0, math=FAST_F32),
       Case("f32", "f32", "f32", "crr", 90, shape=(197, 132, 61), alpha=1.0, beta=2.0, math=FAST_F32,
            activation="relu", bias=True, tile=SM90_TF32, kernel_has=("cuforge_sm90_", "_3xtf32_")),
       Case("f32", "f32", "f32", "rrc", 90, beta=1.0, math=FAST_F32, tile=SM90_TF32,
            kernel_has=("cuforge_sm90_", "_3xtf32_"))]
    # SM80 f64 tensor cores (DMMA), every layout; SIMT f32 and f64, every layout.
    + [Case("f64", "f64", "f64", lay, None, kernel_has=("cuforge_sm80_gemm_tensorop_mma_f64_",))
       for lay in ALL_LAYOUTS]
    + [Case("f64", "f64", "f64", "rrr", None, shape=ODD, alpha=2.0, beta=-1.0, activation="relu", bias=True)]
    + [Case(t, t, t, lay, None, opclass=Simt, kernel_has=(f"cuforge_sm80_gemm_simt_mma_{t}_",))
       for t in ("f32", "f64") for lay in ALL_LAYOUTS]
    + [Case(t, t, t, "crr", None, shape=ODD, alpha=1.0, beta=2.0, opclass=Simt) for t in ("f32", "f64")]
    # SIMT f16 (an f16 plan switched to SIMT, as the CUTLASS Python interface's tests do): CUTLASS's
    # two-stage pipelined mainloop, f32 accumulation, every layout; odd extents, relu and a bias row.
    + [Case("f16", "f16", "f16", lay, None, opclass=Simt, kernel_has=("cuforge_sm80_gemm_simt_mma_f16_", "_s2_"))
       for lay in ALL_LAYOUTS]
    + [Case("f16", "f16", "f16", "crr", None, shape=ODD, alpha=1.0, beta=2.0, opclass=Simt, activation="relu",
            bias=True)]
    # SIMT int8 (the CUTLASS Python interface's opclass = Simt s8 tests): integer multiply-adds into s32, two
    # stages, every layout; into s8 through an f32 epilogue, saturated; a row-major B without opclass falls back
    # to them (a warning), as in the interface; the interface's own tiles.
    + [Case("s8", "s8", "s32", lay, None, opclass=Simt, kernel_has=("cuforge_sm80_gemm_simt_mma_s8_", "_s2_"))
       for lay in ALL_LAYOUTS]
    + [Case("s8", "s8", "s32", "rrr", None, shape=ODD, alpha=2.0, beta=-1.0, opclass=Simt, activation="relu",
            bias=True),
       Case("s8", "s8", "s8", "crr", None, shape=(264, 208, 1024), alpha=0.5, beta=1.0, opclass=Simt),
       Case("s8", "s8", "s8", "rrr", None, kernel_has=("cuforge_sm80_gemm_simt_mma_s8_s8_s32_s8_s8_rrr_",)),
       Case("s8", "s8", "s8", "ccr", 80, opclass=Simt, tile=sm80_tile((128, 128, 8), (2, 2, 1), 2),
            kernel_has=("_128x128x8_w2x2x1_s2_",)),
       Case("s8", "s8", "s32", "rrr", 80, opclass=Simt, tile=sm80_tile((64, 64, 8), (1, 1, 1), 2),
            kernel_has=("_64x64x8_w1x1x1_s2_",))]
    # The larger tiles.
    + [Case("s8", "s8", "s32", RCR, None, beta=1.0, tile=SM90_COOP, kernel_has=("_128x128x128_c2x1x1_",)),
       Case("e5m2", "e5m2", "f16", RCR, None, tile=SM90_COOP, kernel_has=("_128x128x128_c2x1x1_",)),
       Case("s8", "s8", "s32", RCR, 80, tile=sm80_tile((128, 128, 64), (2, 2, 1), 4),
            kernel_has=("_128x128x64_w2x2x1_s4_",)),
       # A K of 32 s8 (32-byte swizzle), as the interface's SM90 int8 test pins it.
       Case("s8", "s8", "s8", RCR, None, tile=(("threadblock_shape", (128, 64, 32)), ("cluster_shape", (1, 1, 1))),
            kernel_has=("cuforge_sm90_", "_128x64x32_")),
       Case("s8", "s8", "s8", RCR, 80, tile=sm80_tile((256, 128, 64), (4, 2, 1), 3),
            kernel_has=("_256x128x64_w4x2x1_s3_", "_a16x16x8")),  # the CUTLASS interface's tile
       Case("f64", "f64", "f64", "ccr", None, beta=1.0, tile=sm80_tile((128, 128, 16), (4, 2, 1), 3),
            kernel_has=("_128x128x16_w4x2x1_s3_",)),
       Case("f32", "f32", "f32", "rcr", None, opclass=Simt, tile=sm80_tile((128, 128, 8), (4, 2, 1), 5),
            kernel_has=("_128x128x8_w4x2x1_s5_",)),
       Case("f64", "f64", "f64", "crr", None, opclass=Simt, tile=sm80_tile((128, 128, 8), (4, 2, 1), 3),
            kernel_has=("_128x128x8_w4x2x1_s3_",)),
       # The CUTLASS Python interface's f64 SIMT tile: 64x64 doubles a warp, spilling, but exact.
       Case("f64", "f64", "f64", "ccc", None, opclass=Simt, tile=sm80_tile((128, 128, 8), (2, 2, 1), 2),
            kernel_has=("_128x128x8_w2x2x1_s2_",))]
)


@pytest.fixture(scope="module", autouse=True)
def prebuilt_kernels(request):
    """The kernel of every case the session runs (-k may pick a few of the module's 100 or so), compiled in one
    parallel build."""
    return build_selected(lambda c=case: make_plan(c).select(*c.shape, bias=c.bias)
                          for case in collected(request, "case", CASES))


@pytest.fixture
def gen():
    g = torch.Generator(device="cuda")
    g.manual_seed(4)
    return g


def expected(case, A, B, C):
    ref = case.alpha * (A.double() @ B.double())
    if case.beta != 0.0:
        ref = ref + case.beta * C.double()
    if case.activation == "relu":
        ref = ref.clamp(min=0)
    if case.out in INTEGER:
        info = torch.iinfo(TYPES[case.out])
        ref = torch.round(ref).clamp(info.min, info.max)  # half to even, saturated
    if case.out in FP8_OUT:
        top = torch.finfo(TYPES[case.out]).max
        ref = ref.clamp(-top, top).float()  # saturated, as the kernel's conversion (torch's gives NaN)
    return ref.to(TYPES[case.out])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bit_exact(case, gen):
    M, N, K = case.shape
    la, lb, lc = (ROW if ch == "r" else COL for ch in case.layouts)
    A = rand_int(M, K, TYPES[case.a], la, gen)
    B = rand_int(K, N, TYPES[case.b], lb, gen)
    C = rand_int(1 if case.bias else M, N, TYPES[case.out], ROW if case.bias else lc, gen)
    D = rand_int(M, N, TYPES[case.out], lc, gen)
    ref = expected(case, A, B, C)
    plan = make_plan(case)
    # Poison D: NaN for float outputs; for integer outputs two runs over two fill values, so an
    # element the kernel leaves unwritten cannot match the reference both times.
    poisons = [-77, 55] if case.out in INTEGER else [float("nan")]
    for poison in poisons:
        if case.out in FP8_OUT:
            D.view(torch.uint8).fill_(0x7F)  # NaN in e4m3fn and e5m2
        else:
            D.fill_(poison)
        plan.run(A, B, C, D, alpha=case.alpha, beta=case.beta)
        if case.out in FP8_OUT:
            assert_exact(D.float(), ref.float())
        else:
            assert_exact(D, ref)
    kernel = plan.last_kernel
    for part in case.kernel_has:
        assert part in kernel, kernel
    if case.kernel_cc == 80 or case.a == "f64" or case.opclass == Simt:
        assert kernel.startswith("cuforge_sm80_"), kernel
    if case.bias:
        assert kernel.endswith("_bias"), kernel
    if lc == COL:
        assert D.stride() == (1, M), "D keeps its column-major strides"


@pytest.mark.parametrize("kernel_cc", [80, 90])
def test_3xtf32_is_near_f32_accuracy(gen, kernel_cc):
    """On values that are not integers, 3xTF32 keeps the error of an f32 GEMM (relative ~1e-7) where
    one TF32 product loses the low 13 bits of each input (~1e-4): the small halves are computed."""
    M, N, K = 256, 192, 1024
    A = torch.randn((M, K), device="cuda", generator=gen)
    B = torch.randn((K, N), device="cuda", generator=gen)
    ref = A.double() @ B.double()
    errors = {}
    for math in (FAST_F32, cuforge.MathOperation.multiply_add):
        plan = cuforge.op.Gemm(element=torch.float32, layout=cuforge.LayoutType.RowMajor, kernel_cc=kernel_cc,
                               math_operation=math)
        if kernel_cc == 90:
            plan.tile_description = dict(SM90_TF32)
        D = torch.full((M, N), float("nan"), device="cuda")
        plan.run(A, B, D, D)
        assert plan.last_kernel.startswith(f"cuforge_sm{kernel_cc}_"), plan.last_kernel
        errors[math] = float((D.double() - ref).norm() / ref.norm())
    print(f"sm{kernel_cc} relative error: 3xTF32 {errors[FAST_F32]:.2e}, "
          f"TF32 {errors[cuforge.MathOperation.multiply_add]:.2e}")
    # SM90's pieces run through wgmma's f32 accumulation over a K three times as long: 2.4e-6 on the
    # H200 (2026-12-03), where SM80's three mma.sync products a step keep 3.4e-7.
    assert errors[FAST_F32] < (2e-6 if kernel_cc == 80 else 5e-6)
    assert errors[cuforge.MathOperation.multiply_add] > 50 * errors[FAST_F32]


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
def test_f16_accumulation_into_f32_convolutions(kind):
    """f16 accumulation into an f32 output on SM80's convolution kernels (an f32 epilogue), as the CUTLASS
    interface's Conv2d tests build it; sums of a few hundred small integers, exact in f16."""
    F = torch.nn.functional
    g = dict(stride=(1, 1), padding=(1, 1), dilation=(1, 1))
    x = torch.randint(-2, 3, (1, 16, 9, 7), device="cuda").half().contiguous(memory_format=torch.channels_last)
    w = torch.randint(-1, 2, (32, 16, 3, 3), device="cuda").half().contiguous(memory_format=torch.channels_last)
    dy = torch.randint(-2, 3, (1, 32, 9, 7), device="cuda").half().contiguous(memory_format=torch.channels_last)
    if kind == "fprop":
        operands, ref = (x, w), F.conv2d(x.double(), w.double(), **g)
    elif kind == "dgrad":
        operands, ref = (dy, w), torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), **g)
    else:
        operands, ref = (dy, x), torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g)
    out = torch.full(ref.shape, float("nan"), device="cuda").contiguous(memory_format=torch.channels_last)
    plan = cuforge.op.Conv2d(kind=kind, element=torch.float16, element_C=torch.float32, element_D=torch.float32,
                             element_accumulator=torch.float16)
    plan.run(*operands, None, out, **g)
    assert_exact(out, ref.float())
    assert plan.last_kernel.startswith(f"cuforge_sm80_{kind}_tensorop_mma_f16_f16_f16_f32_f32_"), plan.last_kernel
