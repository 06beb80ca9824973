"""Conv2d's run from Python on the GPU, on torch tensors: one call into the core (run_tensors) on
torch's current stream or a stream given, both tensor forms (channels_last N, C, H, W and plain N, H,
W, C), and a kernel keeping each thread's latest run's parameters only while nothing changes; every
result bit-exact on integer data against torch's convolution in float64."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
F = torch.nn.functional

from conv_cases import FAMILIES, FPROP, channels_last, plan, rand, ran, select, tensors  # noqa: E402
from exact import assert_exact  # noqa: E402
from paths import run_on_held_stream  # noqa: E402
from prebuild import build_selected  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def kernels():
    """Each family's fprop kernel built, and run once: a kernel's first run in a process may wait for
    the device (loading it), which the tests of queued runs below do not test."""
    build_selected([select("fprop", family) for family in FAMILIES])
    for family in FAMILIES:
        x, w, g = tensors(FPROP[0], torch.float16)
        plan("fprop", family).run(x, w, None, channels_last(torch.empty_like(F.conv2d(x, w, **g))), **g)


def test_torch_runs_are_one_call_on_torch_current_stream():
    """Conv2d.run on CUDA torch tensors (channels_last or plain NHWC) with int or pair geometry and
    a split_k tuple is one call into the core (run_tensors), queued on torch's current stream."""
    x, w, g = tensors(FPROP[0], torch.float16)
    ref = F.conv2d(x.double(), w.double(), **g).half()
    p = plan("fprop", "sm90")
    for operands in ((x, w), (x.permute(0, 2, 3, 1).contiguous(), w.permute(0, 2, 3, 1).contiguous())):
        plain = operands[0].is_contiguous()
        y = torch.full((1, 9, 7, 32) if plain else ref.shape, float("nan"), device="cuda", dtype=torch.float16)
        y = y if plain else channels_last(y)
        side = torch.cuda.Stream()
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)  # about a tenth of a second of GPU clock cycles
            handle = p._plan.run_tensors(*operands, None, y, 1, [1, 1], (1, 1), 1.0, 0.0, ("serial", 1), False)
        assert handle is not None, "the core left a run on torch tensors to the Python layer"
        assert not side.query() and not handle.done(), "the run was not queued on torch's current stream"
        handle.sync()
        assert_exact(y.permute(0, 3, 1, 2) if plain else y, ref)


@pytest.mark.parametrize("given", ["torch_stream", "int"])
def test_a_stream_given_takes_one_call_on_that_stream(given):
    """stream= as a torch.cuda.Stream or its int handle: the core reads it and queues the run there,
    not on torch's current stream."""
    x, w, g = tensors(FPROP[0], torch.float16)
    ref = F.conv2d(x.double(), w.double(), **g).half()
    p = plan("fprop", "sm90")
    for run in (lambda y, stream: p._plan.run_tensors(x, w, None, y, 1, 1, 1, 1.0, 0.0, None, False, stream),
                lambda y, stream: p.run(x, w, None, y, sync=False, stream=stream, **g)):
        y = channels_last(torch.full(ref.shape, float("nan"), device="cuda", dtype=torch.float16))
        run_on_held_stream(lambda stream: run(y, stream), given)
        assert_exact(y, ref)


@pytest.mark.parametrize("family", FAMILIES)
def test_runs_alternating_between_problems_are_exact(family):
    """A kernel keeps each thread's latest run's parameters: repeats, runs of another problem in
    between, new values in the same tensors and another alpha all compute what they are given."""
    p = plan("fprop", family)
    runs = [tensors(case, torch.float16) for case in (FPROP[0], FPROP[2], FPROP[0])]
    outs = [channels_last(torch.full_like(F.conv2d(x.double(), w.double(), **g).half(), float("nan")))
            for x, w, g in runs]
    for step in range(3):
        for (x, w, g), y in zip(runs, outs):
            if step == 2:
                x.copy_(rand(x.shape, x.dtype))  # the same tensors, other values
            alpha = 1.0 if step == 0 else -1.0
            for _ in range(2):  # the second a repeat
                y.fill_(float("nan"))
                p.run(x, w, None, y, alpha=alpha, **g)
                assert_exact(y, (alpha * F.conv2d(x.double(), w.double(), **g)).half())
    ran(p, family, "fprop")
