"""On the GPU: the profiler (plan.profile, `cuforge profile --csv --plot`) and autotuning with its
persistent tuning record: measured once, used by later processes without timing again, never
writing the user's D while measuring, safe with concurrent writers, a corrupted record ignored
with a warning and rewritten."""

import csv
import json
import logging
import os
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
from cuforge import _core  # noqa: E402
from cuforge.profiler import COLUMNS  # noqa: E402
from exact import ROW, assert_exact, rand_int, reference  # noqa: E402

BF16 = torch.bfloat16
SHAPES = [(256, 384, 512), (128, 256, 1024), (192, 128, 768), (320, 256, 512)]


def plan_for(autotune, candidates=3):
    plan = cuforge.op.Gemm(element=BF16, layout=cuforge.LayoutType.RowMajor)
    plan.autotune = autotune
    plan.autotune_candidates = candidates
    return plan


@pytest.fixture(autouse=True)
def empty_record():
    _core.tuning_record_clear()
    yield
    _core.tuning_record_clear()


@pytest.fixture
def messages():
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append((record.levelno, record.getMessage()))

    handler = Keep(level=logging.DEBUG)
    logger = logging.getLogger("cuforge")
    old = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    yield seen
    logger.removeHandler(handler)
    logger.setLevel(old)


def test_launches_are_timed_by_the_gpu_not_by_the_host():
    """Calls whose host time (1 ms of sleep) outlasts their kernel (filling 4 MB) are timed by the
    kernel: the profiler's and autotuning's rounds are queued while the stream is held. Launches
    timed as they come would read at least 1000 us each."""
    x = torch.empty(1 << 20, device="cuda")

    def run():
        time.sleep(1e-3)
        x.fill_(1.0)

    us = _core.time_launches(run, torch.cuda.current_stream().cuda_stream)
    assert 0 < us < 200, us


@pytest.mark.parametrize("host", [False, True], ids=["torch", "numpy"])
def test_the_interfaces_profiler_times_a_plans_runs_on_the_gpu(host):
    """cutlass.utils.profiler.CUDAEventProfiler(plan, warmup, iterations, A, B, C, D)(): a first run writes D,
    then the mean milliseconds of the runs, near the time the profiler's rounds give (NumPy operands timed on
    their device copies, as the interface timed its own: not their copies each run, which would take longer)."""
    from cuforge.utils.profiler import CUDAEventProfiler

    plan = cuforge.op.Gemm(element=torch.float16, layout=cuforge.LayoutType.RowMajor)
    A, B, C = (rand_int(1024, 1024, torch.float16, ROW) for _ in range(3))
    D = torch.zeros_like(C)
    ref = reference(A, B, C, 1.0, 0.0, torch.float16)
    operands = [x.cpu().numpy() for x in (A, B, C, D)] if host else [A, B, C, D]
    profiler = CUDAEventProfiler(plan, 5, 50, *operands)
    assert_exact(torch.from_numpy(operands[3]).cuda() if host else D, ref)
    ms = profiler()
    us = _core.time_launches(lambda: plan.run(A, B, C, D, sync=False), torch.cuda.current_stream().cuda_stream)
    assert 0.5 < ms * 1e3 / us < 2.0, (ms * 1e3, us)


def test_profile_times_the_models_best_and_writes_csv_and_plot(tmp_path):
    plan = plan_for(False)
    result = plan.profile(512, 768, 1024, top=3, csv=str(tmp_path / "p.csv"), plot=str(tmp_path / "p.png"))
    print(result.table())
    assert len(result.rows) == 3
    assert sorted(r["predicted_rank"] for r in result.rows) == [0, 1, 2]
    measured = [r["measured_us"] for r in result.rows]
    assert all(us > 0 for us in measured) and measured == sorted(measured)
    assert result.baseline_us and result.baseline_us > 0
    with open(tmp_path / "p.csv") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0].keys()) == COLUMNS
    assert len(rows) == 4 and rows[-1]["kernel"].startswith("torch.matmul")
    import matplotlib.image

    assert matplotlib.image.imread(str(tmp_path / "p.png")).shape[0] > 100


def test_profile_command_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "cuforge.cli", "profile", "--m", "256", "--n", "256", "--k", "256",
                          "--top", "2", "--csv", str(tmp_path / "c.csv"), "--plot", str(tmp_path / "c.png")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "torch.matmul" in out.stdout
    assert (tmp_path / "c.csv").stat().st_size > 0 and (tmp_path / "c.png").stat().st_size > 0
    bad = subprocess.run([sys.executable, "-m", "cuforge.cli", "profile", "--m", "256", "--n", "256", "--k", "256",
                          "--filter", "no_such_kernel*"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "no candidate" in bad.stderr


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
def test_profile_a_convolution_beside_cudnn(kind, tmp_path):
    plan = cuforge.op.Conv2d(kind=kind, element=torch.float16, element_accumulator=torch.float32)
    result = plan.profile(4, 14, 14, 64, 64, 3, 3, padding=1, top=2, csv=str(tmp_path / "v.csv"),
                          plot=str(tmp_path / "v.png"))
    print(result.table())
    assert result.problem.startswith(f"{kind} 4x14x14x64 -> 64, 3x3 filters")
    assert result.flops == 2.0 * 4 * 14 * 14 * 64 * 64 * 9
    measured = [r["measured_us"] for r in result.rows]
    assert len(measured) == 2 and all(us > 0 for us in measured) and measured == sorted(measured)
    assert all(f"_{kind}_" in r["kernel"] for r in result.rows)
    assert result.baseline_us > 0 and result.baseline_name.startswith("cuDNN")
    with open(tmp_path / "v.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3 and rows[-1]["kernel"].startswith("cuDNN")
    assert (tmp_path / "v.png").stat().st_size > 0


@pytest.mark.parametrize("offsets", [False, True], ids=["lists", "offsets"])
def test_profile_a_grouped_gemm_beside_torch(offsets, tmp_path):
    plan = cuforge.op.GroupedGemm(element=BF16, layout=cuforge.LayoutType.RowMajor, element_accumulator=torch.float32)
    result = plan.profile(8, 256, 512, 384, offsets=offsets, top=2, csv=str(tmp_path / "g.csv"))
    print(result.table())
    assert result.problem == f"8 groups of 256x512x384 ({'offsets' if offsets else 'lists'})"
    assert result.flops == 2.0 * 8 * 256 * 512 * 384
    measured = [r["measured_us"] for r in result.rows]
    assert len(measured) == 2 and all(us > 0 for us in measured) and measured == sorted(measured), result.table()
    assert all("_grouped_" in r["kernel"] for r in result.rows)
    assert result.baseline_us > 0 and result.baseline_name.startswith("torch.")
    with open(tmp_path / "g.csv") as f:
        assert len(list(csv.DictReader(f))) == 3


def test_a_grouped_profile_past_the_gpus_memory_is_refused_at_once():
    """Each operand's groups share one allocation: 2**31 - 1 groups (17 TiB of A) fail on it, before any
    host data is drawn, rather than after filling the GPU group by group."""
    plan = cuforge.op.GroupedGemm(element=BF16, layout=cuforge.LayoutType.RowMajor, element_accumulator=torch.float32)
    start = time.monotonic()
    with pytest.raises(cuforge.DeviceError, match="out of memory"):
        plan.profile(2**31 - 1, 64, 64, 64, top=1, baseline=False, progress=False)
    assert time.monotonic() - start < 5


def test_profile_command_line_for_a_grouped_gemm():
    out = subprocess.run([sys.executable, "-m", "cuforge.cli", "profile", "--op", "grouped", "--groups", "4", "--m",
                          "128", "--n", "256", "--k", "256", "--offsets", "--top", "2"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "4 groups of 128x256x256 (offsets)" in out.stdout and "torch." in out.stdout


def test_profile_command_line_for_a_convolution():
    out = subprocess.run([sys.executable, "-m", "cuforge.cli", "profile", "--op", "dgrad", "--conv", "2,9,7,16,32,3,3",
                          "--padding", "1", "--dtype", "f16", "--acc", "f32", "--top", "2"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "dgrad 2x9x7x16 -> 32" in out.stdout and "cuDNN" in out.stdout


def test_autotune_measures_once_records_and_never_writes_d_while_measuring(messages):
    gen = torch.Generator(device="cuda").manual_seed(3)
    plan = plan_for(True)
    M, N, K = SHAPES[0]
    A, B = rand_int(M, K, BF16, ROW, gen), rand_int(K, N, BF16, ROW, gen)
    D = rand_int(M, N, BF16, ROW, gen)
    expected = reference(A, B, D, 1.0, 1.0, BF16)
    plan.run(A, B, D, D, beta=1.0)  # C is D: a measurement writing D would add A @ B more than once
    assert_exact(D, expected)
    path, entries = _core.tuning_record()
    assert len(entries) == 1
    entry = entries[0]
    assert entry["kernel"] == plan.last_kernel
    assert len(entry["measured"]) >= 2 and entry["us"] == min(us for _, us in entry["measured"])
    assert sum("autotuned" in m for _, m in messages) == 1
    mtime = os.stat(path).st_mtime_ns
    for _ in range(3):  # the class is chosen: no more timing
        plan.run(A, B, None, D)
    assert sum("autotuned" in m for _, m in messages) == 1
    assert os.stat(path).st_mtime_ns == mtime


@pytest.mark.parametrize("offsets", [False, True], ids=["lists", "offsets"])
def test_a_grouped_plan_autotunes_without_writing_d_while_measuring(offsets, messages):
    gen = torch.Generator(device="cuda").manual_seed(5)
    plan = cuforge.op.GroupedGemm(element=BF16, layout=cuforge.LayoutType.RowMajor, element_accumulator=torch.float32)
    plan.autotune, plan.autotune_candidates = True, 3
    sizes, N, K = [128, 64, 192, 256], 256, 384
    As = [rand_int(m, K, BF16, ROW, gen) for m in sizes]
    Bs = [rand_int(K, N, BF16, ROW, gen) for _ in sizes]
    Ds = [rand_int(m, N, BF16, ROW, gen) for m in sizes]
    expected = [reference(a, b, d, 1.0, 1.0, BF16) for a, b, d in zip(As, Bs, Ds)]
    if offsets:  # C is D: a measurement writing D would add A @ B more than once
        A, B, D = torch.cat(As), torch.stack(Bs), torch.cat(Ds)
        ends = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0).to(torch.int32)
        plan.run(A, B, D, D, beta=1.0, offsets=ends)
        assert_exact(D, torch.cat(expected))
    else:
        plan.run(As, Bs, Ds, Ds, beta=1.0)
        for d, e in zip(Ds, expected):
            assert_exact(d, e)
    _, entries = _core.tuning_record()
    assert len(entries) == 1 and entries[0]["kernel"] == plan.last_kernel and "_grouped_" in plan.last_kernel
    assert sum("autotuned" in m for _, m in messages) == 1


def test_the_record_survives_a_new_process_and_is_used_without_timing():
    M, N, K = SHAPES[1]
    plan = plan_for(True)
    A, B = torch.ones(M, K, device="cuda", dtype=BF16), torch.ones(K, N, device="cuda", dtype=BF16)
    D = torch.empty(M, N, device="cuda", dtype=BF16)
    plan.run(A, B, None, D)
    tuned = plan.last_kernel
    child = f"""
import logging, torch, cuforge
seen = []
class Keep(logging.Handler):
    def emit(self, record): seen.append(record.getMessage())
logging.getLogger("cuforge").addHandler(Keep()); logging.getLogger("cuforge").setLevel(logging.DEBUG)
plan = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor)   # autotune off
A, B = torch.ones({M}, {K}, device="cuda", dtype=torch.bfloat16), torch.ones({K}, {N}, device="cuda", dtype=torch.bfloat16)
D = torch.empty({M}, {N}, device="cuda", dtype=torch.bfloat16)
plan.run(A, B, None, D)
assert bool((D == {K}).all())
print(plan.last_kernel, sum("autotuned" in m for m in seen), sum("tuning record" in m for m in seen))
"""
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    kernel, timed, used = out.stdout.split()
    assert kernel == tuned and timed == "0" and used == "1"


def test_an_autotune_asking_for_more_candidates_than_the_record_tried_measures_again(messages):
    """A record made over the model's best 2 serves a plan asking for 2 or fewer (or no autotune); one
    asking for 3 times again and replaces it, even with the record's kernel compiled."""
    M, N, K = SHAPES[0]
    A, B = torch.ones(M, K, device="cuda", dtype=BF16), torch.ones(K, N, device="cuda", dtype=BF16)
    D = torch.empty(M, N, device="cuda", dtype=BF16)

    def autotuned():
        return sum("autotuned" in m for _, m in messages)

    plan_for(True, candidates=2).run(A, B, None, D)
    (entry,) = _core.tuning_record()[1]
    assert entry["candidates"] == 2 and autotuned() == 1
    plan_for(True, candidates=2).run(A, B, None, D)
    assert autotuned() == 1
    wider = plan_for(True, candidates=3)
    wider.compile(M=M, N=N, K=K)  # builds the record's kernel, which would otherwise serve the class
    wider.run(A, B, None, D)
    assert autotuned() == 2 and any("autotune_candidates asks for 3" in m for _, m in messages)
    (entry,) = _core.tuning_record()[1]
    assert entry["candidates"] == 3
    for plan in (plan_for(True, candidates=1), plan_for(False)):
        plan.run(A, B, None, D)
        assert plan.last_kernel == entry["kernel"]
    assert autotuned() == 2
    assert bool((D == K).all())


def test_concurrent_autotuning_processes_leave_a_valid_record_with_every_entry():
    child = """
import sys, torch, cuforge
M, N, K = (int(x) for x in sys.argv[1:4])
plan = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor)
plan.autotune, plan.autotune_candidates = True, 2
plan.run(torch.ones(M, K, device="cuda", dtype=torch.bfloat16), torch.ones(K, N, device="cuda", dtype=torch.bfloat16),
         None, torch.empty(M, N, device="cuda", dtype=torch.bfloat16))
"""
    procs = [subprocess.Popen([sys.executable, "-c", child, *map(str, shape)]) for shape in SHAPES]
    assert all(p.wait(timeout=600) == 0 for p in procs)
    path, entries = _core.tuning_record()
    assert len(entries) == len(SHAPES)
    json.load(open(path))  # whole


def test_a_corrupted_record_is_ignored_with_a_warning_and_rewritten(messages):
    plan = plan_for(True, candidates=2)
    M, N, K = SHAPES[2]
    A, B = torch.ones(M, K, device="cuda", dtype=BF16), torch.ones(K, N, device="cuda", dtype=BF16)
    D = torch.empty(M, N, device="cuda", dtype=BF16)
    plan.run(A, B, None, D)
    path, _ = _core.tuning_record()
    with open(path, "w") as f:
        f.write('{"format": 1, "entries": {"trunc')
    M, N, K = SHAPES[3]
    A, B = torch.ones(M, K, device="cuda", dtype=BF16), torch.ones(K, N, device="cuda", dtype=BF16)
    D = torch.empty(M, N, device="cuda", dtype=BF16)
    plan.run(A, B, None, D)
    assert bool((D == K).all())
    assert any(level == logging.WARNING and "unreadable" in m for level, m in messages)
    _, entries = _core.tuning_record()
    assert len(entries) == 1  # rewritten, valid, with the new class


def test_no_measurement_while_a_graph_is_captured():
    plan = plan_for(True)
    M, N, K = SHAPES[3]
    A, B = torch.ones(M, K, device="cuda", dtype=BF16), torch.ones(K, N, device="cuda", dtype=BF16)
    D = torch.zeros(M, N, device="cuda", dtype=BF16)
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        plan.run(A, B, None, D, sync=False)
    graph.replay()
    torch.cuda.synchronize()
    assert bool((D == K).all())
    assert _core.tuning_record()[1] == []
