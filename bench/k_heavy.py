#!/usr/bin/env python3
"""K-heavy GEMMs: cuforge's data-parallel, stream-K and split-K kernels beside cuBLAS, and a fused
GEMM + activation beside torch.matmul followed by the torch activation.

    python bench/k_heavy.py                        # the issue's shapes, bf16
    python bench/k_heavy.py --shapes 128x128x65536 --splits 4,16 --json out.json
    python bench/k_heavy.py --sweep-parallel --json sweep.json   # every data-parallel tile x slices

Few output tiles and a long K leave most SMs idle under a data-parallel schedule; stream-K and
split-K divide K across them. Times are GPU times between CUDA events (median of --repeats),
measured in one process with cuBLAS (torch.matmul) on the same inputs; the K-heavy variants and
cuBLAS take turns over --rounds rounds, and each ratio is the median of the rounds' ratios (the
shared machine's speed drifts between rounds).
"""

import argparse
import json
import os
import statistics
import time

import torch

import cuforge
from gemm import parse_shapes
from timing import gpu_time_ms, interleaved_ms

SHAPES = [(128, 128, 65536), (256, 512, 32768), (1024, 1024, 16384)]
ACTIVATION_SHAPE = (4096, 4096, 4096)
ACTIVATIONS = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu}


def plan(**settings):
    p = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor,
                        element_accumulator=torch.float32)
    for name, value in settings.items():
        setattr(p, name, value)
    return p


def operands(M, N, K):
    """Random bf16 A (M x K) and B (K x N), and D (M x N) to write."""
    A = torch.randn((M, K), device="cuda", dtype=torch.bfloat16)
    B = torch.randn((K, N), device="cuda", dtype=torch.bfloat16)
    return A, B, torch.empty((M, N), device="cuda", dtype=torch.bfloat16)


def write_json(path, results):
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=1)
        print(f"\nwrote {path}")


def variants(splits):
    """name -> plan: the default choice, each decomposition forced, split-K in the kernel ("split_k",
    SM90's stream-K scheduler) and parallel split-K (the slices as a batch, then a reduction kernel)
    at each slice count; "_nd": partial tiles summed as they arrive (deterministic=False) instead of
    in K order."""
    out = {"default": plan(), "default_nd": plan(deterministic=False),
           "data_parallel": plan(decomposition=cuforge.Decomposition.DataParallel),
           "stream_k": plan(decomposition=cuforge.Decomposition.StreamK),
           "stream_k_nd": plan(decomposition=cuforge.Decomposition.StreamK, deterministic=False)}
    for s in splits:
        out[f"split_k{s}_nd"] = plan(split_k_slices=s, deterministic=False)
        out[f"parallel_split_k{s}"] = plan(split_k_slices=s, decomposition=cuforge.Decomposition.ParallelSplitK)
    return out


def rel_err(p, A, B, D):
    p.run(A, B, None, D)
    ref = torch.matmul(A.float(), B.float())
    return float((D.float() - ref).norm() / ref.norm())


def bench_k_heavy(shapes, splits, args):
    """Each variant and cuBLAS in --rounds interleaved rounds: a variant's time is its median, its
    ratios the medians of each round's ratios."""
    rows = []
    for (M, N, K) in shapes:
        A, B, D = operands(M, N, K)
        plans = variants(splits)
        errors = {name: rel_err(p, A, B, D) for name, p in plans.items()}
        calls = {"cublas": lambda i: torch.matmul(A, B, out=D)}
        calls.update({name: (lambda i, p=p: p.run(A, B, None, D, sync=False)) for name, p in plans.items()})
        times = interleaved_ms(calls, args.rounds, args.repeats, args.warmup)
        cublas = times.pop("cublas")
        row = {"M": M, "N": N, "K": K, "cublas_ms": statistics.median(cublas), "cublas_rounds_ms": cublas,
               "variants": {}}
        dp = times["data_parallel"]
        for name, t in times.items():
            row["variants"][name] = {
                "ms": statistics.median(t), "rounds_ms": t, "rel_err": errors[name], "kernel": plans[name].last_kernel,
                "vs_cublas": statistics.median(c / x for c, x in zip(cublas, t)),
                "vs_data_parallel": statistics.median(d / x for d, x in zip(dp, t))}
        rows.append(row)
    return rows


def print_k_heavy(rows):
    for r in rows:
        flops = 2.0 * r["M"] * r["N"] * r["K"]
        print(f"\n{r['M']}×{r['N']}×{r['K']} bf16: cuBLAS {r['cublas_ms'] * 1e3:.1f} µs "
              f"({flops / r['cublas_ms'] / 1e9:.0f} TFLOP/s)")
        print(f"  {'variant':<20} {'µs':>8} {'TFLOP/s':>8} {'×cuBLAS':>8} {'×data-par.':>10} {'rel err':>8}  kernel")
        for name, v in r["variants"].items():
            print(f"  {name:<20} {v['ms'] * 1e3:>8.1f} {flops / v['ms'] / 1e9:>8.0f} {v['vs_cublas']:>7.2f}× "
                  f"{v['vs_data_parallel']:>9.2f}× {v['rel_err']:>8.1e}  {v['kernel']}")


def sweep_parallel_split_k(shapes, args):
    """Parallel split-K with every data-parallel tile description (clusters included) at each slice
    count that fills at most two waves: the data the selection's parallel split-K estimate is
    checked against."""
    base = plan(decomposition=cuforge.Decomposition.DataParallel)
    tiles = [t for t in base.tile_descriptions() if t.tile_scheduler == cuforge.TileSchedulerType.Default]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    runs = []  # (shape, tile, slices, plan)
    for (M, N, K) in shapes:
        for t in tiles:
            tm, tn, _ = t.threadblock_shape
            output_tiles = -(-M // tm) * -(-N // tn)
            for s in (2, 4, 8, 16, 32, 64, 128):
                if output_tiles * s <= 2 * sms and K % (8 * s) == 0:
                    p = plan(tile_description=t, split_k_slices=s, decomposition=cuforge.Decomposition.ParallelSplitK)
                    runs.append(((M, N, K), t, s, p))
    cuforge.build(sorted({p.select(*shape) for shape, _, _, p in runs}), jobs=args.jobs)
    rows = []
    for (M, N, K) in shapes:
        A, B, D = operands(M, N, K)
        cublas = gpu_time_ms(lambda i: torch.matmul(A, B, out=D), args.repeats, args.warmup)
        times = {}
        for shape, t, s, p in runs:
            if shape == (M, N, K):
                ms = gpu_time_ms(lambda i: p.run(A, B, None, D, sync=False), args.repeats, args.warmup)
                times[f"{p.last_kernel}@{s}"] = ms
        ranked = sorted(times, key=times.get)
        print(f"\n{M}x{N}x{K}: cuBLAS {cublas * 1e3:.1f} µs; parallel split-K, best first (kernel@slices)")
        for name in ranked[:8]:
            print(f"  {times[name] * 1e3:7.1f} µs {cublas / times[name]:5.2f}x  {name}")
        rows.append({"shape": [M, N, K], "cublas_ms": cublas, "times_ms": times})
    return rows


def bench_activations(args):
    A, B, D = operands(*ACTIVATION_SHAPE)
    rows = []
    for name, torch_fn in ACTIVATIONS.items():
        fused = plan(activation=name)
        fused.run(A, B, None, D)
        ref = torch_fn(torch.matmul(A.float(), B.float()))
        rel_err = float((D.float() - ref).norm() / ref.norm())
        t_fused = gpu_time_ms(lambda i: fused.run(A, B, None, D, sync=False), args.repeats, args.warmup)
        t_torch = gpu_time_ms(lambda i: torch_fn(torch.matmul(A, B)), args.repeats, args.warmup)
        rows.append({"activation": name, "cuforge_fused_ms": t_fused, "torch_two_step_ms": t_torch,
                     "speedup": t_torch / t_fused, "rel_err": rel_err, "kernel": fused.last_kernel})
    return rows


def print_activations(rows):
    M, N, K = ACTIVATION_SHAPE
    print(f"\nGEMM + activation, {M}×{N}×{K} bf16: cuforge fused epilogue vs torch.matmul then the activation")
    print(f"  {'activation':<10} {'fused µs':>9} {'torch µs':>9} {'speedup':>8} {'rel err':>8}")
    for r in rows:
        print(f"  {r['activation']:<10} {r['cuforge_fused_ms'] * 1e3:>9.1f} {r['torch_two_step_ms'] * 1e3:>9.1f} "
              f"{r['speedup']:>7.2f}× {r['rel_err']:>8.1e}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", type=parse_shapes, default=SHAPES, help="comma list of MxNxK")
    p.add_argument("--splits", default="4,16,64", help="split-K slice counts to try")
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds of every K-heavy variant and cuBLAS")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--sweep-parallel", action="store_true", help="time parallel split-K over tiles and slices")
    args = p.parse_args()
    splits = [int(s) for s in args.splits.split(",") if s]

    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, torch {torch.__version__}")
    if args.sweep_parallel:
        write_json(args.json, {"device": props.name, "parallel_split_k": sweep_parallel_split_k(args.shapes, args)})
        return
    names = {v.select(*shape) for shape in args.shapes for v in variants(splits).values()}
    names |= {plan(activation=a).select(*ACTIVATION_SHAPE) for a in ACTIVATIONS}
    t0 = time.perf_counter()
    cuforge.build(sorted(names), jobs=args.jobs)
    print(f"prebuilt {len(names)} kernels in {time.perf_counter() - t0:.1f} s")

    torch.manual_seed(0)
    results = {"device": props.name, "k_heavy": bench_k_heavy(args.shapes, splits, args),
               "activations": bench_activations(args)}
    print_k_heavy(results["k_heavy"])
    print_activations(results["activations"])
    write_json(args.json, results)


if __name__ == "__main__":
    main()
