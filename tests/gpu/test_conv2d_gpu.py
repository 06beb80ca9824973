"""Conv2d on the GPU, bit-exact on integer data against a float64 reference (torch's convolution and
its gradients in float64 on the GPU): fprop, dgrad and wgrad on both kernel families, SM90 (CUTLASS
3.x implicit GEMM, the default on Hopper) and SM80 (kernel_cc=80), 1 x 1, 3 x 3 and 7 x 7 filters,
stride, padding and dilation, odd H and W, N = 1, f16 and bf16 (and an f32 dw), a fused relu with a
per-channel bias or beta * C, channels_last and plain NHWC tensors, and D left untouched by a refused
run. What SM90's kernels cannot run (strided dgrad, serial split-K) is left to SM80 kernels by the
default choice. Parallel split-K (SM80 kernels writing f32 partial products, a reduction kernel
applying the epilogue) is exact too, asked for by a run (every kind) or chosen by the model for
wgrad's long K, and so are 1 x 1 fprop and dgrad run by the GEMM kernels the model picks for them
(pointwise kernels), and fprop of inputs of one vector of channels on fixed-channel kernels.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
F = torch.nn.functional

import cuforge  # noqa: E402
from conv_cases import (FAMILIES, FPROP, channels_last, fprop_is_exact, pair, plan, rand, ran, select,  # noqa: E402
                        tensors)
from exact import assert_exact  # noqa: E402
from prebuild import build_selected  # noqa: E402

DTYPES = [torch.float16, torch.bfloat16]
DTYPE_IDS = ["f16", "bf16"]
BACKWARD = [
    (1, 9, 7, 16, 32, 3, 3, 1, 1, 1),
    (2, 15, 13, 8, 16, 3, 3, 2, 1, 1),   # strided (SM90 kernels leave dgrad to SM80)
    (2, 8, 8, 32, 64, 1, 1, 1, 0, 1),
]


def case_id(case):
    return "x".join(map(str, case[:7])) + ("s2" if case[7] != 1 else "")


def default_plan(kind, dtype=torch.float16):
    """The default choice, no tile pinned: SM90 kernels where they can run the problem, else SM80."""
    return cuforge.op.Conv2d(kind=kind, element=dtype, element_accumulator=torch.float32)


def select_default(kind, case, kernel_cc=None):
    n, h, w, c, k, r, s, stride, padding, dilation = case
    return lambda: cuforge.op.Conv2d(kind=kind, element=torch.float16, element_accumulator=torch.float32,
                                     kernel_cc=kernel_cc).select(n, h, w, c, k, r, s, stride=pair(stride),
                                                                 padding=pair(padding), dilation=pair(dilation))


def parallel_default(case, splits, dtype, kind="wgrad", **settings):
    """The kernel a default plan runs for a run's split_k=("parallel", splits) on the case."""
    def chosen():
        n, h, w, c, k, r, s, stride, padding, dilation = case
        p = default_plan(kind, dtype)
        p.split_k_slices, p.decomposition = splits, cuforge.Decomposition.ParallelSplitK
        for name, value in settings.items():
            setattr(p, name, value)
        return p.select(n, h, w, c, k, r, s, stride=pair(stride), padding=pair(padding), dilation=pair(dilation),
                        bias=settings.get("activation") == "relu")
    return chosen


# fprop and dgrad split in parallel when a run asks (the seed's split_k=("parallel", n)): unit-stride
# dgrad, fprop also strided.
PARALLEL_FORWARD = {"fprop": [BACKWARD[0], FPROP[1], BACKWARD[2]], "dgrad": [BACKWARD[0], BACKWARD[2]]}


# SM90 tiles with few enough stages that two or three CTAs share an SM (library::ctas_per_sm), each
# kind over a problem of several waves of their tiles: 3 x 3 "same" on 24 x 20 images, 1 x 1 on 16 x 16.
SHARING_TILES = [[64, 64, 64, 3], [128, 64, 64, 4], [64, 128, 64, 4]]
SHARING_CASES = [(4, 24, 20, 32, 64, 3, 3, 1, 1, 1), (8, 16, 16, 64, 128, 1, 1, 1, 0, 1)]


def sharing_plan(kind, tile):
    p = cuforge.op.Conv2d(kind=kind, element=torch.float16, element_accumulator=torch.float32)
    p.tile_description = {"threadblock_shape": tile[:3], "cluster_shape": [1, 1, 1], "stages": tile[3]}
    return p


def select_sharing(kind, tile, case, splits=None):
    def chosen():
        n, h, w, c, k, r, s, stride, padding, dilation = case
        p = sharing_plan(kind, tile)
        if splits:
            p.split_k_slices, p.decomposition = splits, cuforge.Decomposition.ParallelSplitK
        return p.select(n, h, w, c, k, r, s, stride=pair(stride), padding=pair(padding))
    return chosen


# ResNet-50's 56 x 56 x 64 -> 64 3 x 3 layer at N = 4: 9 output tiles of 64 x 64 over K = N·P·Q = 12544.
RESNET_WGRAD = (4, 56, 56, 64, 64, 3, 3, 1, 1, 1)


# Inputs of exactly one vector of channels (the 3-channel stem padded to 8, or to 4; a grayscale one of 1, read
# an element at a time in two stages): SM80 kernels with fixed-channel iterators, packing the taps into each K
# tile (the model's choice).
STEM = [(2, 30, 28, 8, 16, 7, 7, 2, 3, 1), (1, 17, 19, 4, 32, 7, 7, 2, 3, 1), (2, 16, 16, 1, 16, 3, 3, 1, 1, 1)]


def select_stem(case, dtype, relu=False):
    def chosen():
        n, h, w, c, k, r, s, stride, padding, dilation = case
        p = default_plan("fprop", dtype)
        if relu:
            p.activation = "relu"
        return p.select(n, h, w, c, k, r, s, stride=pair(stride), padding=pair(padding), bias=relu)
    return chosen


# A 1 x 1 convolution of unit stride, ResNet-50's 56 x 56 x 256 -> 64 at N = 32: a GEMM of 100352
# pixels by 64 channels over 256, which the model gives to the SM90 GEMM kernels (pointwise kernels)
# for fprop and dgrad (on the H200 0.95x and 1.02x cuDNN, where the best implicit GEMM ran dgrad 0.75x).
POINTWISE = (32, 56, 56, 256, 64, 1, 1, 1, 0, 1)
# 28 x 28 x 256 -> 128 at N = 8: about one wave of tiles, which the model gives to the non-persistent
# GEMM kernel (tmaws) for fprop and dgrad.
POINTWISE_ONE_WAVE = (8, 28, 28, 256, 128, 1, 1, 1, 0, 1)


def pointwise_relu_bias(kind):
    def chosen():
        p = default_plan(kind)
        p.activation = "relu"
        return p.select(*POINTWISE[:7], bias=True)
    return chosen


@pytest.fixture(scope="module", autouse=True)
def kernels():
    selections = [select_default("fprop", (2, 56, 56, 64, 64, 3, 3, 1, 1, 1)), select_default("dgrad", BACKWARD[1])]
    # A run's serial split-K takes the SM80 kernel the model picks for the class.
    selections += [select_default("wgrad", case, kernel_cc=80) for case in BACKWARD]
    for family in FAMILIES:
        for dtype in DTYPES:
            selections += [select(kind, family, dtype) for kind in ("fprop", "dgrad", "wgrad")]
        selections += [select(kind, family, bias=True, activation="relu") for kind in ("fprop", "dgrad")]
        selections += [select("wgrad", family, activation="relu"), select("wgrad", family, out=torch.float32)]
    # Parallel split-K: the pinned tiles (each type, relu, an f32 dw), and the model's pick for a default
    # plan's run that asks for it and for the ResNet layer it splits unasked.
    parallel = dict(split_k_slices=2, decomposition=cuforge.Decomposition.ParallelSplitK)
    for family in FAMILIES:
        selections += [select("wgrad", family, dtype, **parallel) for dtype in DTYPES]
        selections += [select("wgrad", family, activation="relu", **parallel),
                       select("wgrad", family, out=torch.float32, **parallel)]
    selections += [parallel_default(case, splits, dtype) for case in BACKWARD for splits in (2, 5) for dtype in DTYPES]
    selections += [parallel_default(case, 3, dtype, kind) for kind, cases in PARALLEL_FORWARD.items()
                   for case in cases for dtype in DTYPES]
    selections += [parallel_default(BACKWARD[0], 2, torch.float16, "fprop", activation="relu"),
                   parallel_default(BACKWARD[0], 2, torch.float16, "dgrad")]
    selections.append(select_default("wgrad", RESNET_WGRAD))
    selections += [select_default(kind, case) for kind in ("fprop", "dgrad") for case in (POINTWISE, POINTWISE_ONE_WAVE)]
    selections += [select_stem(case, dtype) for case in STEM for dtype in DTYPES]
    selections.append(select_stem(STEM[0], torch.float16, relu=True))
    selections += [pointwise_relu_bias(kind) for kind in ("fprop", "dgrad")]
    selections += [select_sharing(kind, tile, case) for kind in ("fprop", "dgrad", "wgrad") for tile in SHARING_TILES
                   for case in SHARING_CASES]
    selections += [select_sharing("wgrad", tile, case, splits=3) for tile in SHARING_TILES for case in SHARING_CASES]
    return build_selected(selections)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", FPROP, ids=case_id)
def test_fprop_is_exact(case, dtype, family):
    p = plan("fprop", family, dtype)
    fprop_is_exact(p, case, dtype)
    ran(p, family, "fprop")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", BACKWARD, ids=case_id)
def test_dgrad_is_exact(case, dtype, family):
    x, w, g = tensors(case, dtype)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, dtype))
    ref = torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), **g).to(dtype)
    dx = channels_last(torch.full_like(x, float("nan")))
    strided = g["stride"] != (1, 1)
    if family == "sm90" and strided:
        # SM90's implicit GEMM has no strided dgrad: the default choice runs an SM80 kernel, and a
        # plan pinned to an SM90 tile refuses the problem before launching anything.
        with pytest.raises(cuforge.InvalidArgumentError, match="only SM80 kernels run this convolution"):
            plan("dgrad", family, dtype).run(dy, w, None, dx, **g)
        p = default_plan("dgrad", dtype)
        p.run(dy, w, None, dx, **g)
        ran(p, "sm80", "dgrad")
    else:
        p = plan("dgrad", family, dtype)
        p.run(dy, w, None, dx, **g)
        ran(p, family, "dgrad")
    assert_exact(dx, ref)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", BACKWARD, ids=case_id)
def test_wgrad_is_exact(case, dtype, splits, family):
    x, w, g = tensors(case, dtype)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, dtype))
    ref = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g).to(dtype)
    dw = channels_last(torch.full_like(w, float("nan")))
    if family == "sm90" and splits > 1:
        # SM90's implicit GEMM does not split K: a run's serial split-K takes an SM80 kernel.
        p = default_plan("wgrad", dtype)
        p.run(dy, x, None, dw, split_k=("serial", splits), **g)
        ran(p, "sm80", "wgrad")
    else:
        p = plan("wgrad", family, dtype)
        p.run(dy, x, None, dw, split_k=("serial", splits), **g)
        ran(p, family, "wgrad")
    assert_exact(dw, ref)


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
@pytest.mark.parametrize("tile", SHARING_TILES, ids=lambda t: "{}x{}x{}_s{}".format(*t))
def test_sm90_tiles_sharing_an_sm_are_exact(tile, kind):
    for case in SHARING_CASES:
        x, w, g = tensors(case, torch.float16)
        dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
        p = sharing_plan(kind, tile)
        if kind == "fprop":
            ref, out = F.conv2d(x.double(), w.double(), **g), (x, w)
        elif kind == "dgrad":
            ref, out = torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), **g), (dy, w)
        else:
            ref, out = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g), (dy, x)
        ref = ref.to(torch.float16)
        got = channels_last(torch.full_like(ref, float("nan")))
        p.run(*out, None, got, **g)
        assert_exact(got, ref)
        ran(p, "sm90", kind)
        assert "x64_c1x1x1_s{}_".format(tile[3]) in p.last_kernel, p.last_kernel
        if kind == "wgrad":  # the images split between slices, each slice's CTAs sharing SMs
            got.fill_(float("nan"))
            p.run(*out, None, got, split_k=("parallel", 3), **g)
            assert_exact(got, ref)
            assert p.last_kernel.endswith("_splitk"), p.last_kernel


@pytest.mark.parametrize("splits", [2, 5])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", BACKWARD, ids=case_id)
def test_wgrad_parallel_split_k_is_exact(case, dtype, splits):
    """Pinned SM80 and SM90 tiles and the model's pick. SM90 kernels cut K between the images: a pinned
    SM90 tile refuses more slices than images before launching, the default plan takes SM80 then."""
    x, w, g = tensors(case, dtype)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, dtype))
    ref = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g).to(dtype)
    images = x.shape[0]
    for family in ("sm80", "sm90", None):
        p = default_plan("wgrad", dtype) if family is None else plan("wgrad", family, dtype)
        dw = channels_last(torch.full_like(w, float("nan")))
        if family == "sm90" and splits > images:
            with pytest.raises(cuforge.InvalidArgumentError, match="only SM80 kernels run this convolution"):
                p.run(dy, x, None, dw, split_k=("parallel", splits), **g)
            assert torch.isnan(dw).all()
            continue
        p.run(dy, x, None, dw, split_k=("parallel", splits), **g)
        assert_exact(dw, ref)
        if family or splits > images:
            ran(p, family or "sm80", "wgrad")
        assert p.last_kernel.endswith("_splitk") and p.last_splits == splits, (p.last_kernel, p.last_splits)


# SM90 wgrad's slices of images: 7 images in 3 uneven slices, and one image a slice over more slices than
# one launch takes (the kernel's parameters hold a bounded number of slices' TMA descriptors).
SM90_SLICES = [((7, 9, 11, 16, 32, 3, 3, 1, 1, 1), 3), ((72, 6, 5, 8, 16, 3, 3, 1, 1, 1), 72)]


@pytest.mark.parametrize("case, splits", SM90_SLICES, ids=lambda v: case_id(v) if isinstance(v, tuple) else str(v))
def test_sm90_wgrad_splits_between_images(case, splits):
    """Each slice's partial dw is its images' alone, the reduction applies alpha, beta * C and relu, C may
    alias D, and an f32 dw takes the sum as it is."""
    x, w, g = tensors(case, torch.float16)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
    C = channels_last(rand(w.shape, torch.float16))
    grad = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g)
    split = dict(split_k=("parallel", splits), **g)
    p = plan("wgrad", "sm90", activation="relu")
    dw = channels_last(torch.full_like(w, float("nan")))
    p.run(dy, x, C, dw, alpha=2.0, beta=-1.0, **split)
    assert_exact(dw, torch.relu(2.0 * grad - C.double()).half())
    ran(p, "sm90", "wgrad")
    assert p.last_kernel.endswith("_splitk_relu") and p.last_splits == splits, (p.last_kernel, p.last_splits)
    dw32 = channels_last(torch.full(w.shape, float("nan"), device="cuda", dtype=torch.float32))
    plan("wgrad", "sm90", out=torch.float32).run(dy, x, None, dw32, **split)
    assert_exact(dw32, grad.float())
    dw.copy_(C)
    plan("wgrad", "sm90").run(dy, x, dw, dw, beta=1.0, **split)
    assert_exact(dw, (grad + C.double()).half())


def test_wgrad_parallel_split_k_epilogues():
    """The reduction applies alpha, beta * C and relu to the summed f32 partials; an f32 dw as well."""
    x, w, g = tensors(BACKWARD[0], torch.float16)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
    C = channels_last(rand(w.shape, torch.float16))
    grad = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g)
    dw = channels_last(torch.full_like(w, float("nan")))
    p = plan("wgrad", "sm80", activation="relu")
    p.run(dy, x, C, dw, alpha=2.0, beta=-1.0, split_k=("parallel", 3), **g)
    assert_exact(dw, torch.relu(2.0 * grad - C.double()).half())
    assert p.last_kernel.endswith("_splitk_relu"), p.last_kernel
    dw32 = channels_last(torch.full(w.shape, float("nan"), device="cuda", dtype=torch.float32))
    plan("wgrad", "sm80", out=torch.float32).run(dy, x, None, dw32, split_k=("parallel", 4), **g)
    assert_exact(dw32, grad.float())
    # C aliasing D: the reduction reads each vector of C before it writes that vector of D.
    dw.copy_(C)
    plan("wgrad", "sm80").run(dy, x, dw, dw, beta=1.0, split_k=("parallel", 2), **g)
    assert_exact(dw, (grad + C.double()).half())


def test_default_wgrad_splits_a_long_k_in_parallel():
    """The model cuts the ResNet layer's K = 12544 over 9 output tiles into parallel slices."""
    x, w, g = tensors(RESNET_WGRAD, torch.float16)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
    ref = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g).half()
    dw = channels_last(torch.full_like(w, float("nan")))
    p = default_plan("wgrad")
    p.run(dy, x, None, dw, **g)
    assert_exact(dw, ref)
    ran(p, "sm80", "wgrad")
    assert p.last_kernel.endswith("_splitk") and p.last_splits > 1, (p.last_kernel, p.last_splits)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("kind, case", [(kind, case) for kind, cases in PARALLEL_FORWARD.items() for case in cases],
                         ids=lambda v: v if isinstance(v, str) else case_id(v))
def test_fprop_and_dgrad_parallel_split_k_are_exact(kind, case, dtype):
    """The seed's split_k=("parallel", n) for fprop and dgrad: SM80 kernels writing f32 partial y or dx."""
    x, w, g = tensors(case, dtype)
    y = F.conv2d(x.double(), w.double(), **g)
    if kind == "fprop":
        a, ref = x, y
    else:
        a = channels_last(rand(y.shape, dtype))
        ref = torch.nn.grad.conv2d_input(x.shape, w.double(), a.double(), **g)
    d = channels_last(torch.full(ref.shape, float("nan"), device="cuda", dtype=dtype))
    p = default_plan(kind, dtype)
    p.run(a, w, None, d, split_k=("parallel", 3), **g)
    assert_exact(d, ref.to(dtype))
    ran(p, "sm80", kind)
    assert p.last_kernel.endswith("_splitk") and p.last_splits == 3, (p.last_kernel, p.last_splits)


def fprop_relu_bias(case, alpha=1.0, **run):
    """fprop of the case with relu and a per-channel bias (beta 1) on a default plan, exact against
    float64; the plan, which names the kernel it ran."""
    x, w, g = tensors(case, torch.float16)
    bias = rand((w.shape[0],), torch.float16)
    y = channels_last(torch.full_like(F.conv2d(x, w, **g), float("nan")))
    p = default_plan("fprop")
    p.activation = "relu"
    p.run(x, w, bias, y, alpha=alpha, beta=1.0, **run, **g)
    assert_exact(y, torch.relu(alpha * F.conv2d(x.double(), w.double(), **g) + bias.double().view(1, -1, 1, 1)).half())
    return p


def test_fprop_and_dgrad_parallel_split_k_epilogues():
    """The reduction applies fprop's bias and relu, and dgrad's beta * C, to the summed partials."""
    p = fprop_relu_bias(BACKWARD[0], alpha=2.0, split_k=("parallel", 2))
    assert p.last_kernel.endswith("_splitk_relu_bias"), p.last_kernel
    x, w, g = tensors(BACKWARD[0], torch.float16)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
    C = channels_last(rand(x.shape, torch.float16))
    dx = channels_last(torch.full_like(x, float("nan")))
    default_plan("dgrad").run(dy, w, C, dx, beta=-1.0, split_k=("parallel", 2), **g)
    assert_exact(dx, (torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), **g) - C.double()).half())


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", STEM, ids=case_id)
def test_fixed_channel_fprop_is_exact(case, dtype):
    p = default_plan("fprop", dtype)
    fprop_is_exact(p, case, dtype)
    ran(p, "sm80", "fprop")
    assert p.last_kernel.endswith(f"_a{case[3]}x{case[3]}x{case[3]}_fixedchannels"), p.last_kernel


def test_fixed_channel_fprop_relu_with_a_per_channel_bias():
    p = fprop_relu_bias(STEM[0])
    assert p.last_kernel.endswith("_fixedchannels_relu_bias"), p.last_kernel


def pointwise_case(kind, dtype=torch.float16, case=POINTWISE):
    """A 1 x 1 case's operands (A, B) for fprop or dgrad, the float64 reference and a NaN-filled D."""
    x, w, g = tensors(case, dtype)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, dtype))
    if kind == "fprop":
        return (x, w), F.conv2d(x.double(), w.double(), **g), channels_last(torch.full_like(dy, float("nan")))
    return (dy, w), torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), **g), \
        channels_last(torch.full_like(x, float("nan")))


@pytest.mark.parametrize("kind", ["fprop", "dgrad"])
@pytest.mark.parametrize("case, schedule", [(POINTWISE, ""), (POINTWISE_ONE_WAVE, "_tmaws_")], ids=["56x56", "28x28"])
def test_pointwise_convolutions_run_gemm_kernels(kind, case, schedule):
    (a, b), ref, d = pointwise_case(kind, case=case)
    p = default_plan(kind)
    p.run(a, b, None, d)
    assert_exact(d, ref.half())
    ran(p, "sm90", kind)
    assert "_pointwise" in p.last_kernel and schedule in p.last_kernel, p.last_kernel


@pytest.mark.parametrize("kind", ["fprop", "dgrad"])
def test_pointwise_relu_with_a_per_channel_bias(kind):
    (a, b), ref, d = pointwise_case(kind)
    bias = rand((d.shape[1],), torch.float16)
    p = default_plan(kind)
    p.activation = "relu"
    p.run(a, b, bias, d, alpha=2.0, beta=-1.0)
    assert_exact(d, torch.relu(2.0 * ref - bias.double().view(1, -1, 1, 1)).half())
    assert p.last_kernel.endswith("_pointwise_relu_bias"), p.last_kernel


@pytest.mark.parametrize("family", FAMILIES)
def test_wgrad_into_an_f32_dw(family):
    x, w, g = tensors(BACKWARD[0], torch.float16)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
    ref = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g).float()
    dw = channels_last(torch.full(w.shape, float("nan"), device="cuda", dtype=torch.float32))
    p = plan("wgrad", family, out=torch.float32)
    p.run(dy, x, None, dw, **g)
    assert_exact(dw, ref)
    ran(p, family, "wgrad")


@pytest.mark.parametrize("family", FAMILIES)
def test_fprop_relu_with_a_per_channel_bias_and_beta_c(family):
    x, w, g = tensors(FPROP[0], torch.float16)
    bias = rand((w.shape[0],), torch.float16)
    conv = F.conv2d(x.double(), w.double(), **g)
    ref = torch.relu(2.0 * conv + bias.double().view(1, -1, 1, 1)).half()
    y = channels_last(torch.full_like(ref, float("nan")))
    p = plan("fprop", family, activation="relu")
    p.run(x, w, bias, y, alpha=2.0, beta=1.0, **g)
    assert_exact(y, ref)
    ran(p, family, "fprop")
    assert p.last_kernel.endswith("_relu_bias")
    C = channels_last(rand(ref.shape, torch.float16))
    y2 = channels_last(torch.full_like(ref, float("nan")))
    plan("fprop", family).run(x, w, C, y2, beta=-1.0, **g)
    assert_exact(y2, (conv - C.double()).half())


@pytest.mark.parametrize("family", FAMILIES)
def test_dgrad_relu_with_a_per_channel_bias(family):
    x, w, g = tensors(BACKWARD[0], torch.float16)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
    bias = rand((x.shape[1],), torch.float16)
    grad = torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), **g)
    ref = torch.relu(grad + 2.0 * bias.double().view(1, -1, 1, 1)).half()
    dx = channels_last(torch.full_like(x, float("nan")))
    p = plan("dgrad", family, activation="relu")
    p.run(dy, w, bias, dx, beta=2.0, **g)
    assert_exact(dx, ref)
    ran(p, family, "dgrad")
    assert p.last_kernel.endswith("_relu_bias")


@pytest.mark.parametrize("family", FAMILIES)
def test_wgrad_relu_with_beta_c(family):
    x, w, g = tensors(BACKWARD[0], torch.float16)
    dy = channels_last(rand(F.conv2d(x, w, **g).shape, torch.float16))
    C = channels_last(rand(w.shape, torch.float16))
    grad = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), **g)
    ref = torch.relu(grad - C.double()).half()
    dw = channels_last(torch.full_like(w, float("nan")))
    p = plan("wgrad", family, activation="relu")
    p.run(dy, x, C, dw, beta=-1.0, **g)
    assert_exact(dw, ref)
    ran(p, family, "wgrad")


def test_plain_nhwc_tensors_and_the_default_choice():
    x, w, g = tensors((2, 56, 56, 64, 64, 3, 3, 1, 1, 1), torch.float16)
    ref = F.conv2d(x.double(), w.double(), **g).half()
    xh, wh = x.permute(0, 2, 3, 1).contiguous(), w.permute(0, 2, 3, 1).contiguous()  # plain NHWC
    y = torch.full((2, 56, 56, 64), float("nan"), device="cuda", dtype=torch.float16)
    p = default_plan("fprop")
    p.run(xh, wh, None, y, **g)
    assert_exact(y.permute(0, 3, 1, 2), ref)
    assert "_fprop_" in p.last_kernel, p.last_kernel  # the model's choice of family
    # A 1 x 1 filter (64, 1, 1, 32) reads as N, H, W, C and as channels_last N, C, H, W alike: the
    # other operands decide.
    x1 = rand((2, 8, 8, 32), torch.float16)
    w1 = rand((64, 1, 1, 32), torch.float16, -1, 2)
    y1 = torch.full((2, 8, 8, 64), float("nan"), device="cuda", dtype=torch.float16)
    plan("fprop", "sm90").run(x1, w1, None, y1)
    ref1 = F.conv2d(x1.permute(0, 3, 1, 2).double(), w1.permute(0, 3, 1, 2).double()).half()
    assert_exact(y1.permute(0, 3, 1, 2), ref1)


def test_a_refused_run_leaves_d_untouched():
    x, w, g = tensors(FPROP[0], torch.float16)
    y = channels_last(torch.full((1, 32, 9, 7), 7.0, device="cuda", dtype=torch.float16))
    with pytest.raises(cuforge.InvalidArgumentError, match="P"):
        plan("fprop", "sm90").run(x, w, None, y, stride=2, padding=1)
    with pytest.raises(cuforge.InvalidArgumentError, match="host memory"):
        plan("fprop", "sm90").run(x.cpu(), w, None, y, padding=1)
    torch.cuda.synchronize()
    assert bool((y == 7.0).all())
