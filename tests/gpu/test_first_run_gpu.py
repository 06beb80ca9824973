"""On the GPU: plan.first_run = "fallback" with an empty cache. The first run does not wait for the
chosen SM90 kernel: it runs a quick SM80 stand-in (exact), the chosen kernel builds in the
background, and runs switch to it once it is ready (exact). A process exiting while such a build
runs waits for it (the entry is published); a process killed midway leaves a cache that verifies
clean and builds the kernel again. Each scenario runs in a process of its own, on a cache of its
own (the cache directory is read once per process)."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

pytest.importorskip("torch")

CHILD_PRELUDE = textwrap.dedent("""
    import os, sys, time
    import torch
    import cuforge
    sys.path.insert(0, {tests!r})
    from exact import ROW, rand_int, reference

    def plan(dtype):
        p = cuforge.op.Gemm(element=dtype, layout=cuforge.LayoutType.RowMajor, element_accumulator=torch.float32)
        p.first_run = "fallback"
        return p

    def operands(m, n, k, dtype, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        A, B = rand_int(m, k, dtype, ROW, g), rand_int(k, n, dtype, ROW, g)
        return A, B, torch.empty(m, n, device="cuda", dtype=dtype)

    def exact(A, B, D):
        return bool(torch.equal(D, reference(A, B, None, 1.0, 0.0, D.dtype)))
""")


def run_child(body, cache_dir, timeout=540):
    tests = os.path.dirname(os.path.abspath(__file__))
    code = CHILD_PRELUDE.format(tests=tests) + textwrap.dedent(body)
    env = dict(os.environ, CUFORGE_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)


def test_a_first_run_falls_back_then_switches_to_the_chosen_kernel(tmp_path):
    out = run_child("""
        p = plan(torch.bfloat16)
        A, B, D = operands(512, 384, 256, torch.bfloat16, 1)
        chosen = p.select(512, 384, 256)
        t0 = time.perf_counter()
        p.run(A, B, None, D)
        first = time.perf_counter() - t0
        print("first", p.last_kernel, exact(A, B, D), f"{first:.1f}")
        deadline = time.perf_counter() + 480
        while p.last_kernel != chosen and time.perf_counter() < deadline:
            time.sleep(0.5)
            D.zero_()
            p.run(A, B, None, D)
        print("later", p.last_kernel == chosen, exact(A, B, D), f"{time.perf_counter() - t0:.1f}")
    """, tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    first, later = out.stdout.split("\n")[:2]
    _, kernel, first_exact, seconds = first.split()
    print(out.stdout)  # the first result's and the switch's wall times, for the log
    assert kernel.startswith("cuforge_sm80_gemm_"), "the stand-in is the quick SM80 kernel"
    assert first_exact == "True"
    assert later.split()[1:3] == ["True", "True"], "runs switched to the chosen kernel, exact"


def test_exiting_during_a_background_build_publishes_it_and_a_kill_leaves_the_cache_valid(tmp_path):
    cache = tmp_path / "cache"
    start = """
        p = plan(torch.float16)
        A, B, D = operands(256, 256, 512, torch.float16, 2)
        p.run(A, B, None, D)
        print(p.select(256, 256, 512), p.last_kernel, exact(A, B, D), flush=True)
    """
    exited = run_child(start, cache)  # returns at once; the interpreter's exit waits for the build
    assert exited.returncode == 0, exited.stderr
    chosen, stand_in, ok = exited.stdout.split()
    assert stand_in != chosen and ok == "True"
    again = run_child("""
        p = plan(torch.float16)
        A, B, D = operands(256, 256, 512, torch.float16, 2)
        p.run(A, B, None, D)
        print(p.last_kernel, exact(A, B, D), len(cuforge.cache_verify()))
    """, cache)
    assert again.returncode == 0, again.stderr
    assert again.stdout.split()[:2] == [chosen, "True"], "the next process finds the chosen kernel built"

    # A process killed while its background build runs (another class, whose chosen kernel differs):
    # the cache verifies clean, and the next process builds that kernel and reclaims the dead staging.
    killed = run_child("""
        p = plan(torch.float16)
        A, B, D = operands(2048, 2048, 2048, torch.float16, 3)
        p.run(A, B, None, D)
        print(p.select(2048, 2048, 2048), p.last_kernel, exact(A, B, D), flush=True)
        os.kill(os.getpid(), 9)
    """, cache)
    assert killed.returncode == -9, killed.stderr
    chosen, stand_in, ok = killed.stdout.split()
    assert stand_in != chosen and ok == "True", "the killed process ran a stand-in while the chosen kernel built"
    after = run_child("""
        problems = [e for e in cuforge.cache_verify() if e["problem"]]
        p = plan(torch.float16)
        p.first_run = "wait"
        A, B, D = operands(2048, 2048, 2048, torch.float16, 3)
        p.run(A, B, None, D)
        print(len(problems), p.last_kernel == p.select(2048, 2048, 2048), exact(A, B, D),
              cuforge.compile_statistics()["builds"], cuforge.cache_info()["staging"])
    """, cache)
    assert after.returncode == 0, after.stderr
    n_problems, ran_chosen, ok, builds, staging = after.stdout.split()
    assert (n_problems, ran_chosen, ok, staging) == ("0", "True", "True", "0")
    assert int(builds) == 1, "the killed build left no entry: the next process built the kernel"


def test_other_threads_go_on_while_a_first_run_builds(tmp_path):
    """A first run that waits for its kernel's build (first_run = "wait", an empty cache) lets the GIL
    go meanwhile, as Python does while it waits for a subprocess: a thread ticking every 10 ms keeps
    ticking through the build."""
    out = run_child("""
        import threading
        ticks, stop = [0], threading.Event()

        def tick():
            while not stop.wait(0.01):
                ticks[0] += 1

        ticker = threading.Thread(target=tick)
        ticker.start()
        p = plan(torch.float16)
        p.first_run = "wait"
        A, B, D = operands(256, 384, 512, torch.float16, 4)
        t0, before = time.perf_counter(), ticks[0]
        p.run(A, B, None, D)
        took, during = time.perf_counter() - t0, ticks[0] - before
        stop.set()
        ticker.join()
        print(f"{took:.1f}", during, exact(A, B, D), cuforge.compile_statistics()["builds"])
    """, tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    took, during, ok, builds = out.stdout.split()
    print(out.stdout)
    assert ok == "True" and int(builds) == 1, "the run built its kernel and ran it exactly"
    assert float(took) > 5, "a build of an SM90 kernel takes longer than this"
    assert int(during) > 25 * float(took), f"{during} ticks in {took} s: the thread was held back"
