"""Every template path the catalog can emit (template_paths.py), built in one parallel build and run
once each on integer data: exact against a float64 reference (the gelu path within the rounding of
its bf16 output), in every decomposition its kernel's scheduler takes at run time.

Also a script: `python3 tests/gpu/test_template_paths_gpu.py` prints how many paths, kernels and
seconds the sweep took.
"""

from __future__ import annotations

import time
import zlib

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
import template_paths  # noqa: E402

PATHS = template_paths.paths()
TORCH = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
         "s8": torch.int8, "s32": torch.int32, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


@pytest.fixture(scope="module", autouse=True)
def prebuilt(request):
    """The kernels of the paths this session runs (all, unless -k selects some), in one build."""
    selected = {item.callspec.params["path"].kernel for item in request.session.items
                if item.module is request.module and hasattr(item, "callspec")}
    start = time.monotonic()
    cuforge.build(sorted(selected))
    print(f"\nbuilt {len(selected)} kernels in {time.monotonic() - start:.0f} s")


def operand(rows, cols, kind, layout, pad, gen):
    """Integers in [-3, 3] (so every product and sum is exact), `pad` elements past each row
    (column when column-major) of the allocation."""
    inner, outer = (cols, rows) if layout == "r" else (rows, cols)
    t = torch.randint(-3, 4, (outer, inner + pad), device="cuda", generator=gen).to(TORCH[kind])[:, :inner]
    return t if layout == "r" else t.transpose(0, 1)


def reference(path, A, B, C, mode):
    # SM80's serial split-K adds each slice into D in D's type; its stream-K kernel reduces the slices'
    # f32 accumulators in its workspace and rounds once, as the data-parallel kernels do.
    if (path.base.arch == 80 and mode == "split_k4" and path.base.d in ("f16", "bf16")
            and "_streamk_" not in path.kernel):
        return serial_split_k_reference(A, B, C, 4, TORCH[path.base.d])
    ref = A.double() @ B.double() + C.double()
    act = path.settings.get("activation")
    if act is cuforge.epilogue.relu:
        ref = torch.relu(ref)
    elif isinstance(act, tuple):
        ref = torch.where(ref >= 0, ref, ref * act[1])
    elif act is cuforge.epilogue.gelu:
        ref = torch.nn.functional.gelu(ref.float()).double()
    if path.base.d == "s8":
        ref = ref.round().clamp(-128, 127)  # computed in f32, rounded to nearest even and saturated
    return ref.to(TORCH[path.base.d])


def serial_split_k_reference(A, B, C, splits, dtype):
    """CUTLASS 2.x serial split-K: K in equal slices, each slice's product added in turn to D in D's
    own type (the first to beta * C), so the partial sums are rounded to D's type after each slice."""
    step = A.shape[1] // splits
    D = C.double()
    for s in range(splits):
        D = (A[:, s * step:(s + 1) * step].double() @ B[s * step:(s + 1) * step].double() + D).to(dtype).double()
    return D.to(dtype)


POISON = {"s8": -77, "s32": -777777}


@pytest.mark.parametrize("path", PATHS, ids=[p.kernel[8:] for p in PATHS])
def test_path_runs_exactly(path):
    gen = torch.Generator(device="cuda").manual_seed(zlib.crc32(path.kernel.encode()))  # the same in every process
    m, n, k = path.problem()
    lay = path.base.layouts
    A = operand(m, k, path.base.a, lay[0], path.pad, gen)
    B = operand(k, n, path.base.b, lay[1], path.pad, gen)
    C = operand(1 if path.bias else m, n, path.base.d, "r", path.pad, gen)
    if path.bias:
        C = C[0]
    for mode in path.modes:
        # Where the kernel writes nothing, a value no result here takes (integer outputs have no NaN; 0 is what
        # relu makes of half of them).
        D = operand(m, n, path.base.d, "r", path.pad, gen).fill_(POISON.get(path.base.d, float("nan")))
        plan = path.plan(mode)
        plan.run(A, B, C, D, beta=1.0)
        assert plan.last_kernel == path.kernel, mode
        ref = reference(path, A, B, C, mode)
        if path.settings.get("activation") is cuforge.epilogue.gelu:
            torch.testing.assert_close(D.float(), ref.float(), rtol=2e-2, atol=2e-2)
        else:
            assert torch.equal(D, ref), f"{mode}: {int((D.double() != ref.double()).sum())} elements differ"


if __name__ == "__main__":
    import sys

    start = time.monotonic()
    code = pytest.main([__file__, "-q", *sys.argv[1:]])
    print(f"{len(PATHS)} paths, {len({p.kernel for p in PATHS})} kernels, {time.monotonic() - start:.0f} s")
    raise SystemExit(code)
