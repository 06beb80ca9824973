"""plan.candidates() on the CPU: the cost model's ranking a plan picks from (what autotune times and profile
builds), for GEMM, grouped GEMM and Conv2d plans. Nothing is compiled."""

import numpy as np
import pytest

import cuforge

RowMajor = cuforge.LayoutType.RowMajor


def test_candidates_are_the_ranking_select_takes_its_pick_from():
    catalog = set(cuforge.list_gemms())
    plan = cuforge.op.Gemm(element="bf16", layout=RowMajor)
    for problem in [(4096, 4096, 4096), (16, 4096, 4096), (128, 128, 65536), (197, 262, 136)]:
        ranked = plan.candidates(*problem)
        # Catalog kernels, or their parallel split-K forms (the slices as a batch, then a reduction).
        assert len(ranked) > 6 and {c.name.removesuffix("_splitk") for c in ranked} <= catalog, problem
        assert ranked[0].name == plan.select(*problem), problem  # no tuning record, nothing compiled
        estimates = [c.estimated_us for c in ranked]
        assert estimates == sorted(estimates) and estimates[0] > 0, problem
        assert all(c.splits >= 1 for c in ranked)
    # K-heavy: split-K candidates among them, a kernel ranked once per slice count.
    assert any(c.splits > 1 for c in plan.candidates(128, 128, 65536))
    top = plan.candidates(4096, 4096, 4096, top=3)
    assert [(c.name, c.splits) for c in top] == [(c.name, c.splits) for c in plan.candidates(4096, 4096, 4096)[:3]]
    with pytest.raises(cuforge.InvalidArgumentError, match="^top: expected at least 1"):
        plan.candidates(64, 64, 64, top=0)
    with pytest.raises(cuforge.InvalidArgumentError, match="empty output"):
        plan.candidates(0, 64, 64)


def test_grouped_and_conv_candidates_rank_what_select_picks_from():
    grouped = cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor)
    ranked = grouped.candidates(64, 128, 2048, 2048, ragged=True)
    assert ranked[0].name == grouped.select(64, 128, 2048, 2048, ragged=True)
    assert all(c.name.startswith("cuforge_sm") and "_grouped_" in c.name for c in ranked)
    assert [c.name for c in grouped.candidates(64, 128, 2048, 2048, ragged=True, top=2)] == [c.name for c in ranked[:2]]
    conv = cuforge.op.Conv2d(kind="wgrad", element=np.float16)
    geometry = dict(stride=(1, 1), padding=(1, 1), dilation=(1, 1))
    ranked = conv.candidates(32, 28, 28, 128, 128, 3, 3, **geometry)
    assert ranked[0].name == conv.select(32, 28, 28, 128, 128, 3, 3, **geometry)
    assert any(c.splits > 1 for c in ranked), "wgrad's long K splits in parallel"
    estimates = [c.estimated_us for c in ranked]
    assert estimates == sorted(estimates)
    with pytest.raises(cuforge.InvalidArgumentError, match="^top: expected at least 1"):
        conv.candidates(32, 28, 28, 128, 128, 3, 3, top=-1)


def test_3xtf32_past_the_kernels_extents_along_its_tripled_k_runs_on_sm80():
    """SM90's 3xTF32 runs its pieces along K three times as long: where that passes 32 bits (the kernel's K
    once truncated to an int, summing a fraction of K), only SM80's, which issue the three products, are offered."""
    plan = cuforge.op.Gemm(element=np.float32, layout_A=cuforge.LayoutType.RowMajor,
                           layout_B=cuforge.LayoutType.ColumnMajor, layout_C=cuforge.LayoutType.RowMajor,
                           math_operation=cuforge.MathOperation.multiply_add_fast_f32)
    assert any("_sm90_" in c.name for c in plan.candidates(16, 16, 4096))
    for k in (800_000_000, 1_500_000_000):  # 3 x K past 2^31: negative, and positive but short, as an int
        ranked = plan.candidates(16, 16, k)
        assert ranked and all("_sm80_" in c.name for c in ranked)
