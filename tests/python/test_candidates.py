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
