"""The selection cost model as a value (bench/refit.py evaluates candidate models through it): the
default model is the one selection ranks with, and the constants passed in are the ones used. No GPU
needed."""

from __future__ import annotations

import pathlib
import re

import pytest

import cuforge
from cuforge import _core
from cuforge.arguments import alignments

SHAPES = [(8192, 8192, 8192), (2048, 2048, 2048), (16, 4096, 4096), (256, 512, 32768)]


@pytest.mark.skipif(_core.device_count() > 0, reason="with a GPU the plan ranks for its SM count and tuning record")
def test_the_default_model_is_the_one_selection_ranks_with():
    plan = cuforge.op.Gemm(element="bf16", layout=cuforge.LayoutType.RowMajor)
    for m, n, k in SHAPES:
        chosen = plan._plan.select(m, n, k, 1, False, alignments(None, None, None))
        assert _core.estimated_time_us(chosen.name, m, n, k, 1, chosen.splits) == chosen.estimated_us
        assert _core.estimated_time_us(chosen.name, m, n, k, 1, chosen.splits,
                                       model=_core.CostModel()) == chosen.estimated_us


def test_the_model_passed_in_is_the_one_used():
    name = "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_128x64x64_c1x1x1_s0_pingpong_tma_default_a8x8x8"
    builtin = _core.estimated_time_us(name, 4096, 4096, 4096)

    slow_launch = _core.CostModel()
    slow_launch.launch_us += 47.0
    assert _core.estimated_time_us(name, 4096, 4096, 4096, model=slow_launch) == pytest.approx(builtin + 47.0)

    steeper = _core.CostModel()  # a 128x64 tile is below the best intensity: a steeper curve slows it
    steeper.tile_efficiency_exponent = 0.8
    assert _core.estimated_time_us(name, 4096, 4096, 4096, model=steeper) > builtin


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0])
def test_a_constant_no_model_has_is_refused(value):
    """NaN, an infinity or a negative number would make every estimate, and the ranking, nonsense."""
    model = _core.CostModel()
    with pytest.raises(cuforge.InvalidArgumentError, match="^CostModel.fp8_turn_factor: expected a finite number"):
        model.fp8_turn_factor = value
    assert model.fp8_turn_factor == _core.CostModel().fp8_turn_factor


def test_an_empty_shape_is_refused():
    name = _core.list_gemms(90, "*bf16_bf16_f32_bf16_bf16_rrr_128x64x64_c1x1x1*")[0]
    with pytest.raises(cuforge.InvalidArgumentError, match="expected M, N, batch >= 1"):
        _core.estimated_time_us(name, 0, 128, 128)
    with pytest.raises(cuforge.InvalidArgumentError, match="expected M, N, batch >= 1"):
        _core.tie_rank(name, 128, -5)


@pytest.mark.parametrize("splits, sm_count", [(0, 132), (-3, 132), (1, 0), (1, -1)])
def test_splits_and_sm_counts_below_one_are_refused(splits, sm_count):
    """The model clamps them (a slice, an SM); from a caller they are mistakes."""
    name = _core.list_gemms(90, "*bf16_bf16_f32_bf16_bf16_rrr_128x64x64_c1x1x1*")[0]
    conv = _core.list_gemms(90, "*fprop*")[0]
    for estimate in (lambda: _core.estimated_time_us(name, 128, 128, 128, 1, splits, True, sm_count),
                     lambda: _core.tie_rank(name, 128, 128, 1, splits, sm_count),
                     lambda: _core.estimated_conv_time_us(conv, *CONV_LAYER, splits, True, sm_count)):
        with pytest.raises(cuforge.InvalidArgumentError, match="expected splits and sm_count >= 1"):
            estimate()


CONV_LAYER = ([32, 14, 14, 256, 256, 3, 3], [1, 1], [1, 1], [1, 1])  # (N, H, W, C, K, R, S), stride, padding, dilation


@pytest.mark.skipif(_core.device_count() > 0, reason="with a GPU the plan ranks for its SM count and tuning record")
def test_a_convolutions_estimate_is_the_one_selection_ranks_with():
    for kind in ("fprop", "dgrad", "wgrad"):
        plan = cuforge.op.Conv2d(kind=kind, element="f16", element_accumulator="f32")
        extents, stride, padding, dilation = CONV_LAYER
        chosen = plan._plan.select(extents, stride, padding, dilation, False)
        assert _core.estimated_conv_time_us(chosen.name, *CONV_LAYER, chosen.splits) == chosen.estimated_us


def test_the_implicit_gemm_exponent_weighs_sm90_fprop_and_dgrad_tiles_only():
    def kernel(kind, layouts):
        return _core.list_gemms(90, f"*_{kind}_*_f16_f16_f32_f16_f16_{layouts}_64x64x64_c1x1x1_*")[0]

    flatter = _core.CostModel()
    flatter.implicit_gemm_tile_exponent = 0.4
    for kind, layouts in (("fprop", "rcr"), ("dgrad", "rrr")):
        name = kernel(kind, layouts)
        assert _core.estimated_conv_time_us(name, *CONV_LAYER, model=flatter) < \
            _core.estimated_conv_time_us(name, *CONV_LAYER)
    wgrad = kernel("wgrad", "crr")
    assert _core.estimated_conv_time_us(wgrad, *CONV_LAYER, model=flatter) == \
        _core.estimated_conv_time_us(wgrad, *CONV_LAYER)
    with pytest.raises(cuforge.InvalidArgumentError, match="is not a convolution kernel"):
        _core.estimated_conv_time_us(_core.list_gemms(90, "*_gemm_*")[0], *CONV_LAYER)


@pytest.mark.skipif(_core.device_count() > 0, reason="with a GPU the plan ranks for its SM count and tuning record")
@pytest.mark.parametrize("m, n, k, expected", [(128, 4096, 4096, "c2x1x1"), (128, 14336, 4096, "c1x1x1"),
                                              (1024, 1024, 1024, "c1x2x1")])
def test_refit_breaks_ties_as_the_selection_does(monkeypatch, m, n, k, expected):
    """Cluster shapes of one tile are estimated alike where none pads; refit.py picks among them as the
    selection does (select::tie_rank: the 2x1 cluster spanning 128 rows of 64-row tiles; at 1024³ the
    non-persistent kernel's 1x2, sharing A's tiles; else the catalog's order: 128-row tiles, which 2x1 would
    pad), not in the order a results file lists them."""
    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).parents[2] / "bench"))
    import refit

    chosen = cuforge.op.Gemm(element="bf16", element_accumulator="f32", layout=cuforge.LayoutType.RowMajor).select(m, n, k)
    cluster = re.search(r"_(c\dx\dx\d)_", chosen).group(1)
    assert cluster == expected, chosen
    twins = [chosen.replace(cluster, other) for other in ("c1x2x1", "c2x1x1", "c1x1x1")]
    alike = [name for name in twins
             if _core.estimated_time_us(name, m, n, k, 1, 1, True, refit.SM_COUNT) ==
             _core.estimated_time_us(chosen, m, n, k, 1, 1, True, refit.SM_COUNT)]
    assert len(alike) >= 2 and chosen in alike  # a tie to break
    case = refit.Case("test", (m, n, k), [(name, 1, 1.0) for name in alike])
    assert case.kernels[refit.pick(case, _core.CostModel())][0] == chosen
