"""Conv2d on the CUDA cores (SM80's SIMT implicit GEMM, `plan.opclass = Simt`, as the CUTLASS Python
interface's conv2d tests switch their plans), bit-exact on integer data against float64: fprop, dgrad
(strided too) and wgrad (serially split too), f16 on CUTLASS's two-stage pipelined mainloop and f32 on
its multistage one, at the tiles those tests pin, f64 (which no tensor-core convolution computes) at the
model's pick, and channels that no tensor-core kernel reads (3 in, 5 out: one element at a time).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
F = torch.nn.functional

import cuforge  # noqa: E402
from conv_cases import channels_last, fprop_is_exact, pair, rand, tensors  # noqa: E402
from exact import assert_exact  # noqa: E402
from prebuild import build_selected  # noqa: E402

# The interface's SIMT tiles (conv2d_sm80.py): f16 in two stages, f32 in four; f64 left to the model.
TILES = {
    torch.float16: {"threadblock_shape": [128, 128, 8], "warp_count": [4, 2, 1], "stages": 2,
                    "instruction_shape": [1, 1, 1]},
    torch.float32: {"threadblock_shape": [128, 128, 8], "warp_count": [4, 2, 1], "stages": 4,
                    "instruction_shape": [1, 1, 1]},
    torch.float64: None,
}
DTYPE_IDS = {torch.float16: "f16", torch.float32: "f32", torch.float64: "f64"}
# (N, H, W, C, K, R, S, stride, padding, dilation)
CASES = [
    (1, 9, 7, 16, 32, 3, 3, 1, 1, 1),
    (2, 15, 13, 8, 16, 3, 3, 2, 1, 1),  # strided
    (2, 11, 9, 3, 5, 3, 3, 1, 1, 1),    # 3 channels in, 5 out
]


def case_id(case):
    return "x".join(map(str, case[:7])) + ("s2" if case[7] != 1 else "")


def simt_plan(kind, dtype):
    p = cuforge.op.Conv2d(kind=kind, element=dtype, element_accumulator=torch.float64 if dtype == torch.float64
                          else torch.float32)
    p.opclass = cuforge.OpcodeClass.Simt
    if TILES[dtype] is not None:
        p.tile_description = TILES[dtype]
    return p


def select(kind, dtype, case):
    n, h, w, c, k, r, s, stride, padding, dilation = case
    return lambda: simt_plan(kind, dtype).select(n, h, w, c, k, r, s, stride=pair(stride), padding=pair(padding),
                                                 dilation=pair(dilation))


@pytest.fixture(scope="module", autouse=True)
def kernels():
    return build_selected(select(kind, dtype, case) for kind in ("fprop", "dgrad", "wgrad") for dtype in TILES
                          for case in CASES)


def ran_simt(p, kind):
    assert p.last_kernel.startswith(f"cuforge_sm80_{kind}_simt_"), p.last_kernel


@pytest.mark.parametrize("dtype", list(TILES), ids=DTYPE_IDS.get)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_fprop(case, dtype):
    p = simt_plan("fprop", dtype)
    fprop_is_exact(p, case, dtype)
    ran_simt(p, "fprop")


@pytest.mark.parametrize("dtype", list(TILES), ids=DTYPE_IDS.get)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_dgrad(case, dtype):
    x, w, g = tensors(case, dtype)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, dtype))
    ref = torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), **g).to(dtype)
    dx = channels_last(torch.full_like(x, float("nan")))
    p = simt_plan("dgrad", dtype)
    p.run(dy, w, None, dx, **g)
    assert_exact(dx, ref)
    ran_simt(p, "dgrad")


@pytest.mark.parametrize("splits", [1, 2])
@pytest.mark.parametrize("dtype", list(TILES), ids=DTYPE_IDS.get)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_wgrad(case, dtype, splits):
    x, w, g = tensors(case, dtype)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, dtype))
    ref = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g).to(dtype)
    dw = channels_last(torch.full_like(w, float("nan")))
    p = simt_plan("wgrad", dtype)
    p.run(dy, x, None, dw, split_k=("serial", splits), **g)
    assert_exact(dw, ref)
    ran_simt(p, "wgrad")
