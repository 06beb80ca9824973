"""On the CPU: each template path of the catalog (tests/gpu/template_paths.py) is reachable, its plan
selecting exactly its kernel in every decomposition it runs, and each kernel emits distinct source.
The GPU half (tests/gpu/test_template_paths_gpu.py) builds and runs them."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "gpu"))
import template_paths  # noqa: E402

import cuforge  # noqa: E402

PATHS = template_paths.paths()


def test_the_sweep_covers_every_family_schedule_scheduler_and_epilogue():
    names = [p.kernel for p in PATHS]
    assert len(names) == len(set(names))
    kinds = {(p.base.arch, p.base.schedule, p.base.scheduler) for p in PATHS}
    assert {(90, "coop", "default"), (90, "coop", "streamk"), (90, "pingpong", "default"),
            (80, "multistage", "default"), (80, "multistage", "streamk")} <= kinds
    for part in ("_relu", "_leaky_relu", "_bias", "_gelu_bias", "_splitk", "_identity1_", "_c2x1x1_", "_a2x2x2"):
        assert any(part in n for n in names), part
    families = {p.base.family() for p in PATHS}
    catalog = {template_paths.Kernel.parse(n).family() for n in cuforge.list_gemms()}
    assert len(catalog - families) == 45, "every family but 18 of the 20 fp8 pairings and outputs, in each of " \
        "the two accumulation modes, and 9 of SIMT's 10"
    assert {lay for p in PATHS if p.base.arch == 90 for lay in [p.base.layouts]} == set(template_paths.LAYOUTS)


@pytest.mark.parametrize("path", PATHS, ids=[p.kernel[8:] for p in PATHS])
def test_each_path_selects_its_kernel(path):
    m, n, k = path.problem()
    align = {}
    if path.pad:
        align = dict(alignment_A=path.pad, alignment_B=path.pad, alignment_C=path.pad)
    for mode in path.modes:
        plan = path.plan(mode)
        assert plan.select(m, n, k, bias=path.bias, **align) == path.kernel, mode
    assert cuforge.emit.kernel_source(path.kernel)
