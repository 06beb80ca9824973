"""What the Conv2d GPU test modules share: a pinned tile per kernel family, the fprop cases, integer
tensors in channels_last memory, and plans of a family (test_conv2d_gpu, test_conv2d_runs_gpu)."""

import cuforge
import torch
from exact import assert_exact

FAMILIES = ["sm90", "sm80"]
# One tile per family, so that a module builds one kernel per (family, kind, type, epilogue).
TILES = {
    "sm90": {"threadblock_shape": [128, 64, 64], "cluster_shape": [1, 1, 1], "stages": 0},
    "sm80": {"threadblock_shape": [128, 128, 32], "warp_count": [2, 2, 1], "stages": 4},
}
# (N, H, W, C, K, R, S, stride, padding, dilation)
FPROP = [
    (1, 9, 7, 16, 32, 3, 3, 1, 1, 1),    # N = 1, odd H and W, 3 x 3 "same"
    (2, 15, 13, 8, 16, 7, 7, 2, 3, 1),   # 7 x 7 stride 2
    (2, 8, 8, 32, 64, 1, 1, 1, 0, 1),    # 1 x 1
    (2, 11, 9, 16, 24, 3, 3, 1, 2, 2),   # dilation 2
    (3, 10, 12, 24, 8, 3, 3, (2, 1), (0, 1), 1),  # a stride and padding per axis
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


def plan(kind, family, dtype=torch.float16, out=None, **settings):
    """A plan of the family with its one pinned tile: SM90 by default on Hopper, SM80 with kernel_cc=80."""
    p = cuforge.op.Conv2d(kind=kind, element=dtype, element_C=out or dtype, element_D=out or dtype,
                          element_accumulator=torch.float32, kernel_cc=80 if family == "sm80" else None)
    p.tile_description = TILES[family]
    for name, value in settings.items():
        setattr(p, name, value)
    return p


def ran(p, family, kind):
    assert p.last_kernel.startswith(f"cuforge_{family}_{kind}_"), p.last_kernel


def select(kind, family, dtype=torch.float16, out=None, bias=False, **settings):
    """The kernel name the family's plan picks (the pinned tile), as a call for prebuild.build_selected."""
    return lambda: plan(kind, family, dtype, out, **settings).select(2, 16, 16, 16, 32, 3, 3, padding=1, bias=bias)


def fprop_is_exact(p, case, dtype):
    """Runs the case's fprop on plan p into a NaN y, bit-exact against float64 torch."""
    x, w, g = tensors(case, dtype)
    ref = torch.nn.functional.conv2d(x.double(), w.double(), **g).to(dtype)
    y = channels_last(torch.full_like(ref, float("nan")))
    p.run(x, w, None, y, **g)
    assert_exact(y, ref)
