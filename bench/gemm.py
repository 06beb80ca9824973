#!/usr/bin/env python3
"""cuforge's default GEMM plan beside cuBLAS (torch.matmul), in one process, on the DESIGN.md shapes.

    python bench/gemm.py                         # all shapes, bf16 and fp16, plus startup costs
    python bench/gemm.py --dtypes bf16 --shapes 8192x8192x8192,16x4096x4096 --json out.json
    python bench/gemm.py --skip-startup

Shapes are M×N×K. GEMM times are GPU times, two ways: between CUDA events around each call (medians
of --repeats calls after warm-up, cuforge's and cuBLAS's calls taking turns on their own operands;
each kernel runs alone), and per call of calls queued back to back
between two events (as plan.profile times them; a kernel may start while the one before it ends, as
in a model's stream of GEMMs). The host enqueues the calls behind a held stream so that launch gaps
do not count. Small problems rotate through several input sets so that they are not served from L2.
cuBLAS runs with torch's default settings.
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import cuforge
from timing import back_to_back_ms, gpu_times_ms, host_times_us

DEFAULT_SHAPES = [
    (8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (1024, 1024, 1024),
    (16, 4096, 4096), (128, 14336, 4096), (4096, 14336, 4096), (8192, 1024, 8192),
]
# tf32: f32 tensors on the tensor cores, beside cuBLAS with torch.backends.cuda.matmul.allow_tf32.
# 3xtf32: f32 plans with math_operation=multiply_add_fast_f32 (near-f32 accuracy from the TF32 tensor
# cores), beside cuBLAS's f32 SGEMM (allow_tf32 off), the same accuracy class.
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "3xtf32": torch.float32}
FULL_F32 = {"3xtf32"}


def default_plan(name):
    math = cuforge.MathOperation.multiply_add_fast_f32 if name in FULL_F32 else None
    return cuforge.op.Gemm(element=DTYPES[name], layout=cuforge.LayoutType.RowMajor,
                           element_accumulator=torch.float32, math_operation=math)


# --------------------------------------------------------------------------------------------------
# GEMM throughput


def input_sets(M, N, K, dtype, l2_bytes):
    """Enough (A, B, C, D) sets that cycling through them touches about twice the L2 cache."""
    per_set = (M * K + K * N + 2 * M * N) * torch.finfo(dtype).bits // 8
    count = max(1, min(8, math.ceil(2 * l2_bytes / per_set)))
    sets = []
    for _ in range(count):
        A = torch.randn((M, K), device="cuda", dtype=dtype)
        B = torch.randn((K, N), device="cuda", dtype=dtype)
        C = torch.randn((M, N), device="cuda", dtype=dtype)
        D = torch.empty((M, N), device="cuda", dtype=dtype)
        sets.append((A, B, C, D))
    return sets


def bench_gemm(M, N, K, dtype_name, plan, args, l2_bytes):
    dtype = DTYPES[dtype_name]
    # Each side its own operands: timed in turn, neither reads the other's from L2.
    sets = input_sets(M, N, K, dtype, l2_bytes)
    cublas_sets = input_sets(M, N, K, dtype, l2_bytes)

    def run_cuforge(i):
        A, B, C, D = sets[i % len(sets)]
        plan.run(A, B, C, D, alpha=1.0, beta=0.0, sync=False)

    def run_cublas(i):
        A, B, _, D = cublas_sets[i % len(cublas_sets)]
        torch.matmul(A, B, out=D)

    full_f32 = dtype_name in FULL_F32
    torch.backends.cuda.matmul.allow_tf32 = not full_f32
    # Correctness sanity check on random data (tolerance, not bit-exact).
    A, B, C, D = sets[0]
    plan.run(A, B, C, D)
    ref = A.double() @ B.double() if full_f32 else torch.matmul(A.float(), B.float())
    rel_err = float((D.double() - ref).norm() / ref.norm())

    alone = gpu_times_ms({"cuforge": run_cuforge, "cublas": run_cublas}, args.repeats, args.warmup)
    t_cuforge, t_cublas = alone["cuforge"], alone["cublas"]
    b2b_cuforge = back_to_back_ms(run_cuforge)
    b2b_cublas = back_to_back_ms(run_cublas)
    torch.backends.cuda.matmul.allow_tf32 = True
    flops = 2.0 * M * N * K
    row = {
        "M": M, "N": N, "K": K, "dtype": dtype_name, "kernel": plan.select(M, N, K),
        "input_sets": len(sets), "cuforge_ms": t_cuforge, "cublas_ms": t_cublas,
        "cuforge_tflops": flops / t_cuforge / 1e9, "cublas_tflops": flops / t_cublas / 1e9,
        "ratio": t_cublas / t_cuforge, "rel_err": rel_err,
        "cuforge_b2b_ms": b2b_cuforge, "cublas_b2b_ms": b2b_cublas, "ratio_b2b": b2b_cublas / b2b_cuforge,
    }
    return row


def print_gemm_table(rows):
    kw = max([len("kernel")] + [len(r["kernel"]) for r in rows])
    head = (f"{'M×N×K':<20} {'dtype':<6} {'kernel':<{kw}} {'cuforge':>9} {'cuBLAS':>9} {'ratio':>6} "
            f"{'b2b':>6} {'rel err':>8}")
    print(head)
    print(f"{'':<20} {'':<6} {'':<{kw}} {'TFLOP/s':>9} {'TFLOP/s':>9} {'':>6} {'ratio':>6}")
    print("-" * len(head))
    for r in rows:
        shape = f"{r['M']}×{r['N']}×{r['K']}"
        print(f"{shape:<20} {r['dtype']:<6} {r['kernel']:<{kw}} {r['cuforge_tflops']:>9.1f} "
              f"{r['cublas_tflops']:>9.1f} {r['ratio']:>5.2f}× {r['ratio_b2b']:>5.2f}× {r['rel_err']:>8.1e}")
    for d in dict.fromkeys(r["dtype"] for r in rows):
        of = [r for r in rows if r["dtype"] == d]
        print(f"geomean {d}: {statistics.geometric_mean(r['ratio'] for r in of):.3f}× (each alone), "
              f"{statistics.geometric_mean(r['ratio_b2b'] for r in of):.3f}× (back to back)")


# --------------------------------------------------------------------------------------------------
# Host overhead and startup


def host_overhead_us():
    """Host time per call of 64³ bf16 runs (sync=False), cuforge and torch.matmul (timing.host_times_us,
    their rounds interleaved)."""
    A, B, C, D = (torch.randn((64, 64), device="cuda", dtype=torch.bfloat16) for _ in range(4))
    plan = default_plan("bf16")
    return host_times_us({"cuforge": lambda: plan.run(A, B, C, D, sync=False),
                          "torch.matmul": lambda: torch.matmul(A, B, out=D)})


CONSTRUCT_SCRIPT = """
import json, time, torch
t0 = time.perf_counter(); import cuforge; t1 = time.perf_counter()
plan = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor,
                       element_accumulator=torch.float32)
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "construct_s": t2 - t1}))
"""

COMPILE_SCRIPT = """
import json, time, torch, cuforge
plan = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor,
                       element_accumulator=torch.float32)
t0 = time.perf_counter(); plan.compile(); t1 = time.perf_counter()
print(json.dumps({"compile_s": t1 - t0}))
"""


def run_child(script, env=None):
    """Runs a script in a fresh interpreter and returns the JSON object on its last stdout line."""
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"child process failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def startup_costs():
    result = {"first_plan": run_child(CONSTRUCT_SCRIPT)}
    cache = tempfile.mkdtemp(prefix="cuforge-bench-cache-")
    try:
        env = dict(os.environ, CUFORGE_CACHE_DIR=cache)
        result["compile_cold"] = run_child(COMPILE_SCRIPT, env)  # empty cache: nvcc runs
        result["compile_warm"] = run_child(COMPILE_SCRIPT, env)  # new process, cache filled
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return result


def print_startup(overhead, startup):
    print("\nhost time per run() call, 64³ bf16, sync=False (calls queued behind a GPU sleep):")
    for name, us in overhead.items():
        print(f"  {name:<13} {us:8.2f} µs/call")
    fp = startup["first_plan"]
    print(f"first plan construction (fresh process): {fp['construct_s'] * 1e3:.1f} ms"
          f"  (import cuforge {fp['import_s'] * 1e3:.0f} ms)")
    print(f"first compile, empty cache:              {startup['compile_cold']['compile_s']:.2f} s")
    print(f"compile from the cache, new process:     {startup['compile_warm']['compile_s'] * 1e3:.1f} ms")


# --------------------------------------------------------------------------------------------------


def schedule_of(plan, td) -> str:
    """The kernel schedule a tile description runs, as kernel names spell it (coop, pingpong, tmaws,
    multistage): a listed description's automatic schedules are CUTLASS's builder's."""
    return re.search(r"_s\d+_([a-z]+)_", plan.construct(td).name).group(1)


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        dims = item.lower().replace("×", "x").split("x")
        if len(dims) != 3:
            raise argparse.ArgumentTypeError(f"expected a shape MxNxK, got {item!r}")
        shapes.append(tuple(int(d) for d in dims))
    return shapes


def parse_dtypes(text):
    names = [d.strip() for d in text.split(",") if d.strip()]
    for d in names:
        if d not in DTYPES:
            raise argparse.ArgumentTypeError(f"expected dtypes among {sorted(DTYPES)}, got {d!r}")
    return names


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtypes", type=parse_dtypes, default=["bf16", "fp16"], help="comma list: bf16,fp16,tf32,3xtf32")
    p.add_argument("--shapes", type=parse_shapes, default=DEFAULT_SHAPES, help="comma list of MxNxK")
    p.add_argument("--repeats", type=int, default=100, help="timed calls per measurement (median)")
    p.add_argument("--warmup", type=int, default=10, help="untimed calls before timing")
    p.add_argument("--jobs", type=int, default=os.cpu_count(), help="parallel compiles for the prebuild")
    p.add_argument("--json", metavar="PATH", help="write all results to PATH")
    p.add_argument("--skip-startup", action="store_true",
                   help="skip host overhead, plan construction and compile timings")
    p.add_argument("--skip-gemm", action="store_true", help="skip the throughput table")
    p.add_argument("--autotune", type=int, metavar="N",
                   help="plans with autotune, timing the model's best N per shape (the tuning record is cleared first)")
    args = p.parse_args()

    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 50 * 2**20)
    results = {"device": props.name, "torch": torch.__version__,
               "cuforge": getattr(cuforge, "__version__", None), "repeats": args.repeats}
    print(f"{props.name}, torch {torch.__version__}, cuforge {results['cuforge']}")

    # Every kernel the run needs, compiled in one parallel step (the 64³ one for the overhead test too).
    plans = {d: default_plan(d) for d in args.dtypes}
    names = set()
    if args.autotune:
        cuforge._core.tuning_record_clear()
        for plan in plans.values():
            plan.autotune, plan.autotune_candidates = True, args.autotune
        results["autotune_candidates"] = args.autotune
        # What each plan's first run will time, built here in one parallel step rather than shape by shape.
        names.update(c.name for d in args.dtypes for (M, N, K) in args.shapes
                     for c in plans[d].candidates(M, N, K, top=args.autotune))
    elif not args.skip_gemm:
        names.update(plans[d].select(M, N, K) for d in args.dtypes for (M, N, K) in args.shapes)
    if not args.skip_startup:
        names.add(default_plan("bf16").select(64, 64, 64))
    names = sorted(names)
    if names:
        t0 = time.perf_counter()
        cuforge.build(names, jobs=args.jobs, progress=True)
        results["prebuild"] = {"kernels": names, "seconds": time.perf_counter() - t0}
        print(f"prebuilt {len(names)} kernels in {results['prebuild']['seconds']:.1f} s\n")

    if not args.skip_gemm:
        torch.manual_seed(0)
        rows = []
        for (M, N, K) in args.shapes:
            for d in args.dtypes:
                rows.append(bench_gemm(M, N, K, d, plans[d], args, l2_bytes))
                torch.cuda.empty_cache()  # the next shape's inputs start from a clean pool
        results["gemm"] = rows
        print_gemm_table(rows)

    if not args.skip_startup:
        results["host_overhead_64"] = host_overhead_us()
        results["startup"] = startup_costs()
        print_startup(results["host_overhead_64"], results["startup"])

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
