#!/usr/bin/env python3
"""cuforge's default fp8 e4m3 -> bf16 GEMM plan beside torch._scaled_mm (cuBLAS), in one process.

    python bench/fp8.py                                   # the four large shapes of issue 18
    python bench/fp8.py --shapes 8192x8192x8192 --sweep --json out.json
    python bench/fp8.py --fast-accum                      # both sides with fast accumulation
    python bench/fp8.py --shapes 1024x1024x1024 --sweep --sweep-tiles 128x64,64x128

A is row-major M x K, B column-major K x N (the layout both sides need), D bf16. Both sides take
the same per-tensor scales (unit f32 scalars on the device, read by the kernels); _scaled_mm runs
with its default accumulation (use_fast_accum=False), cuforge with its promoted fp8 mainloop: the
same accumulation mode on both sides. With --fast-accum, _scaled_mm(use_fast_accum=True)
beside plans with fp8_fast_accum = True. Times are medians of CUDA-event times over
interleaved rounds (bench/timing.py). --sweep also times every data-parallel SM90 tile of the plan
(each pinned), to check the cost model's ranking against the GPU.
"""

import argparse
import json
import os
import statistics
import time

import torch

import cuforge
from gemm import schedule_of
from timing import interleaved_ms

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 14336, 4096), (8192, 1024, 8192)]
E4M3 = torch.float8_e4m3fn


def fp8_plan(fast_accum, tile=None):
    plan = cuforge.op.Gemm(element_A=E4M3, element_B=E4M3, element_C=torch.bfloat16, element_D=torch.bfloat16,
                           element_accumulator=torch.float32, layout_A=cuforge.LayoutType.RowMajor,
                           layout_B=cuforge.LayoutType.ColumnMajor, layout_C=cuforge.LayoutType.RowMajor)
    plan.fp8_fast_accum = fast_accum
    if tile is not None:
        plan.tile_description = tile
    return plan


def operands(M, N, K):
    """Small integers (exact in e4m3), so that both sides' results can be compared exactly."""
    A = torch.randint(-4, 5, (M, K), device="cuda").to(E4M3)
    B = torch.randint(-4, 5, (N, K), device="cuda").to(E4M3).t()  # K x N, column-major
    C = torch.zeros((M, N), device="cuda", dtype=torch.bfloat16)
    return A, B, C, torch.empty_like(C)


def bench_shape(M, N, K, plans, args):
    A, B, C, D = operands(M, N, K)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    calls = {"torch._scaled_mm": lambda i: torch._scaled_mm(A, B, one, one, out_dtype=torch.bfloat16,
                                                              use_fast_accum=args.fast_accum)}
    for label, plan in plans.items():
        calls[label] = lambda i, plan=plan: plan.run(A, B, C, D, alpha=1.0, beta=0.0, sync=False, scale_a=one,
                                                     scale_b=one)
    ref = calls["torch._scaled_mm"](0).float()
    mismatch = {}
    for label, plan in plans.items():
        D.fill_(float("nan"))
        plan.run(A, B, C, D, scale_a=one, scale_b=one)
        mismatch[label] = float((D.float() - ref).abs().max())  # 0: integer products, sums exact in f32
    times = interleaved_ms(calls, args.rounds, args.repeats, args.warmup)
    flops = 2.0 * M * N * K
    base = statistics.median(times["torch._scaled_mm"])
    rows = []
    for label, plan in plans.items():
        t = statistics.median(times[label])
        rows.append({"M": M, "N": N, "K": K, "plan": label, "kernel": plan.select(M, N, K), "ms": t,
                     "tflops": flops / t / 1e9, "scaled_mm_ms": base, "scaled_mm_tflops": flops / base / 1e9,
                     "ratio": base / t, "max_abs_diff": mismatch[label], "rounds_ms": times[label],
                     "scaled_mm_rounds_ms": times["torch._scaled_mm"]})
    return rows


def parse_shapes(text):
    return [tuple(int(d) for d in s.lower().replace("×", "x").split("x")) for s in text.split(",")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", type=parse_shapes, default=SHAPES, help="comma list of MxNxK")
    p.add_argument("--sweep", action="store_true", help="also time every data-parallel SM90 tile, pinned")
    p.add_argument("--sweep-tiles", default="", metavar="MxN,...",
                   help="with --sweep: only these tile shapes (every schedule and cluster of each)")
    p.add_argument("--fast-accum", action="store_true", help="fast accumulation on both sides")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()

    props = torch.cuda.get_device_properties(0)
    results = {"device": props.name, "torch": torch.__version__, "args": {k: v for k, v in vars(args).items()}}
    plans = {"default": fp8_plan(args.fast_accum)}
    if args.sweep:
        only = {tuple(int(v) for v in t.split("x")) for t in args.sweep_tiles.split(",") if t}
        listing = fp8_plan(args.fast_accum)
        for td in listing.tile_descriptions():
            if td.tile_scheduler == cuforge.TileSchedulerType.StreamK or td.swap_ab:
                continue
            t = td.threadblock_shape
            if only and tuple(t[:2]) not in only:
                continue
            label = "{}x{}x{}_c{}x{}_{}".format(*t, *td.cluster_shape[:2], schedule_of(listing, td))
            plans[label] = fp8_plan(args.fast_accum, td)
    names = sorted({plan.select(M, N, K) for plan in plans.values() for (M, N, K) in args.shapes})
    t0 = time.perf_counter()
    cuforge.build(names, jobs=args.jobs, progress=True)
    results["prebuild"] = {"kernels": names, "seconds": time.perf_counter() - t0}

    rows = []
    for (M, N, K) in args.shapes:
        rows += bench_shape(M, N, K, plans, args)
        torch.cuda.empty_cache()
    results["gemm"] = rows
    mode = "fast" if args.fast_accum else "promoted (default)"
    print(f"{props.name}, torch {torch.__version__}: fp8 e4m3 -> bf16, {mode} accumulation on both sides, "
          "ratio = _scaled_mm time / cuforge time")
    for r in rows:
        print(f"{r['M']}x{r['N']}x{r['K']:<6} {r['plan']:<34} {r['tflops']:7.1f} TFLOP/s  _scaled_mm "
              f"{r['scaled_mm_tflops']:7.1f}  {r['ratio']:.2f}x  max|diff| {r['max_abs_diff']:g}  {r['kernel']}")
    default = [r["ratio"] for r in rows if r["plan"] == "default"]
    results["default_geomean"] = statistics.geometric_mean(default)
    print(f"default plan geomean: {results['default_geomean']:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
