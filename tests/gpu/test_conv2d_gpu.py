"""Conv2d on the GPU, bit-exact on integer data against a float64 reference (torch's convolution and
its gradients in float64 on the GPU): fprop, dgrad and wgrad on SM80 implicit-GEMM kernels, 1 x 1,
3 x 3 and 7 x 7 filters, stride, padding and dilation, odd H and W, N = 1, serial split-K, f16 and
bf16, a fused relu with a per-channel bias, beta * C, channels_last and plain NHWC tensors, and
D left untouched by a refused run.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
F = torch.nn.functional

import cuforge  # noqa: E402
from exact import assert_exact  # noqa: E402
from prebuild import build_selected  # noqa: E402

# One tile per plan, so that the module builds one kernel per (kind, type, epilogue).
TILE = {"threadblock_shape": [128, 128, 32], "warp_count": [2, 2, 1], "stages": 4}
# (N, H, W, C, K, R, S, stride, padding, dilation)
FPROP = [
    (1, 9, 7, 16, 32, 3, 3, 1, 1, 1),    # N = 1, odd H and W, 3 x 3 "same"
    (2, 15, 13, 8, 16, 7, 7, 2, 3, 1),   # 7 x 7 stride 2
    (2, 8, 8, 32, 64, 1, 1, 1, 0, 1),    # 1 x 1
    (2, 11, 9, 16, 24, 3, 3, 1, 2, 2),   # dilation 2
    (3, 10, 12, 24, 8, 3, 3, (2, 1), (0, 1), 1),  # a stride and padding per axis
]
BACKWARD = [
    (1, 9, 7, 16, 32, 3, 3, 1, 1, 1),
    (2, 15, 13, 8, 16, 3, 3, 2, 1, 1),   # strided dgrad
    (2, 8, 8, 32, 64, 1, 1, 1, 0, 1),
]


def pair(v):
    return (v, v) if isinstance(v, int) else v


def rand(shape, dtype, low=-2, high=3):
    return torch.randint(low, high, shape, device="cuda").to(dtype)


def channels_last(t):
    return t.contiguous(memory_format=torch.channels_last)


def tensors(case, dtype):
    """x (N, C, H, W) and w (K, C, R, S), channels_last, and the geometry."""
    n, h, w, c, k, r, s, stride, padding, dilation = case
    x = channels_last(rand((n, c, h, w), dtype))
    wt = channels_last(rand((k, c, r, s), dtype, -1, 2))
    return x, wt, dict(stride=pair(stride), padding=pair(padding), dilation=pair(dilation))


def plan(kind, dtype=torch.float16, **settings):
    p = cuforge.op.Conv2d(kind=kind, element=dtype, element_accumulator=torch.float32)
    p.tile_description = TILE
    for name, value in settings.items():
        setattr(p, name, value)
    return p


def select(kind, dtype=torch.float16, bias=False, **settings):
    return lambda: plan(kind, dtype, **settings).select(2, 16, 16, 16, 32, 3, 3, padding=1, bias=bias)


@pytest.fixture(scope="module", autouse=True)
def kernels():
    return build_selected([
        select("fprop"), select("fprop", torch.bfloat16), select("fprop", bias=True, activation="relu"),
        select("dgrad"), select("wgrad"),
        lambda: cuforge.op.Conv2d(kind="fprop", element=torch.float16).select(2, 56, 56, 64, 64, 3, 3, padding=1),
    ])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("case", FPROP, ids=lambda c: "x".join(map(str, c[:7])))
def test_fprop_is_exact(case, dtype):
    x, w, g = tensors(case, dtype)
    ref = F.conv2d(x.double(), w.double(), **g).to(dtype)
    y = channels_last(torch.full_like(ref, float("nan")))
    plan("fprop", dtype).run(x, w, None, y, **g)
    assert_exact(y, ref)


@pytest.mark.parametrize("case", BACKWARD, ids=lambda c: "x".join(map(str, c[:7])))
def test_dgrad_is_exact(case):
    x, w, g = tensors(case, torch.float16)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
    ref = torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), **g).half()
    dx = channels_last(torch.full_like(x, float("nan")))
    plan("dgrad").run(dy, w, None, dx, **g)
    assert_exact(dx, ref)


@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("case", BACKWARD, ids=lambda c: "x".join(map(str, c[:7])))
def test_wgrad_is_exact(case, splits):
    x, w, g = tensors(case, torch.float16)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
    ref = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g).half()
    dw = channels_last(torch.full_like(w, float("nan")))
    plan("wgrad").run(dy, x, None, dw, split_k=("serial", splits), **g)
    assert_exact(dw, ref)


def test_relu_with_a_per_channel_bias_and_beta_c():
    x, w, g = tensors(FPROP[0], torch.float16)
    bias = rand((w.shape[0],), torch.float16)
    conv = F.conv2d(x.double(), w.double(), **g)
    ref = torch.relu(2.0 * conv + bias.double().view(1, -1, 1, 1)).half()
    y = channels_last(torch.full_like(ref, float("nan")))
    plan("fprop", activation="relu").run(x, w, bias, y, alpha=2.0, beta=1.0, **g)
    assert_exact(y, ref)
    C = channels_last(rand(ref.shape, torch.float16))
    y2 = channels_last(torch.full_like(ref, float("nan")))
    plan("fprop").run(x, w, C, y2, beta=-1.0, **g)
    assert_exact(y2, (conv - C.double()).half())


def test_plain_nhwc_tensors_and_the_default_choice():
    x, w, g = tensors((2, 56, 56, 64, 64, 3, 3, 1, 1, 1), torch.float16)
    ref = F.conv2d(x.double(), w.double(), **g).half()
    xh, wh = x.permute(0, 2, 3, 1).contiguous(), w.permute(0, 2, 3, 1).contiguous()  # plain NHWC
    y = torch.full((2, 56, 56, 64), float("nan"), device="cuda", dtype=torch.float16)
    p = cuforge.op.Conv2d(kind="fprop", element=torch.float16)
    p.run(xh, wh, None, y, **g)
    assert_exact(y.permute(0, 3, 1, 2), ref)
    assert p.last_kernel.startswith("cuforge_sm80_fprop_")
    # A 1 x 1 filter (64, 1, 1, 32) reads as N, H, W, C and as channels_last N, C, H, W alike: the
    # other operands decide.
    x1 = rand((2, 8, 8, 32), torch.float16)
    w1 = rand((64, 1, 1, 32), torch.float16, -1, 2)
    y1 = torch.full((2, 8, 8, 64), float("nan"), device="cuda", dtype=torch.float16)
    plan("fprop").run(x1, w1, None, y1)
    ref1 = F.conv2d(x1.permute(0, 3, 1, 2).double(), w1.permute(0, 3, 1, 2).double()).half()
    assert_exact(y1.permute(0, 3, 1, 2), ref1)


def test_a_refused_run_leaves_d_untouched():
    x, w, g = tensors(FPROP[0], torch.float16)
    y = channels_last(torch.full((1, 32, 9, 7), 7.0, device="cuda", dtype=torch.float16))
    with pytest.raises(cuforge.InvalidArgumentError, match="P"):
        plan("fprop").run(x, w, None, y, stride=2, padding=1)
    with pytest.raises(cuforge.InvalidArgumentError, match="host memory"):
        plan("fprop").run(x.cpu(), w, None, y, padding=1)
    torch.cuda.synchronize()
    assert bool((y == 7.0).all())
