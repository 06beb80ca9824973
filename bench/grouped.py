#!/usr/bin/env python3
"""cuforge's grouped GEMM beside torch (a loop of torch.matmul, torch._grouped_mm) in one process.

    python bench/grouped.py                 # the four cases of issue 13 and the host time of one run()
    python bench/grouped.py --json out.json --rounds 3
    python bench/grouped.py --sweep         # the offsets form of the MoE case on every tile the plan has
    python bench/grouped.py --sweep G=64    # ... of the first case named so
    python bench/grouped.py --host          # only the host time of one run(), lists of 1 to 64 groups

bf16. GPU times are CUDA events around each call, medians of repeats, the calls queued behind a
GPU sleep (bench/timing.py); each case's times are taken in interleaved rounds and each ratio is
the median of the rounds' ratios. cuforge runs the offsets form (what torch._grouped_mm computes)
and the list form; TFLOP/s count 2 * sum(M_g * N * K) per run.
"""

import argparse
import fnmatch
import json
import statistics
import time

import numpy as np
import torch

import cuforge
from timing import host_time_us, host_times_us, interleaved_ms

DT = torch.bfloat16


def zipf_sizes(groups, tokens, seed=0):
    """Tokens routed to experts by a fixed-seed Zipf draw: some experts get many, some none."""
    rng = np.random.default_rng(seed)
    expert = (rng.zipf(1.3, tokens) - 1) % groups
    return np.bincount(expert, minlength=groups).tolist()


CASES = {
    "G=8, 1024x4096x4096": ([1024] * 8, 4096, 4096),
    "G=64, 128x2048x2048": ([128] * 64, 2048, 2048),
    "G=16, 512x7168x2048": ([512] * 16, 7168, 2048),
    "MoE 64 experts, 16384 tokens (Zipf), N=4096, K=2048": (zipf_sizes(64, 16384), 4096, 2048),
}


def operands(sizes, n, k):
    g, total = len(sizes), sum(sizes)
    A = torch.randn(total, k, device="cuda", dtype=DT)
    B = torch.randn(g, k, n, device="cuda", dtype=DT)
    D = torch.empty(total, n, device="cuda", dtype=DT)
    offs = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    return A, B, D, offs


def torch_grouped(A, B, offs):
    """torch._grouped_mm with B as it takes it (some builds want each group's B column-major)."""
    for b in (B, B.transpose(1, 2).contiguous().transpose(1, 2)):
        try:
            torch._grouped_mm(A, b, offs=offs)
            return lambda i, b=b: torch._grouped_mm(A, b, offs=offs)
        except RuntimeError:
            continue
    return None


def bench_case(name, sizes, n, k, plan, rounds):
    A, B, D, offs = operands(sizes, n, k)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    As = [A[s:s + m] for s, m in zip(starts, sizes)]
    Ds = [D[s:s + m] for s, m in zip(starts, sizes)]
    Bs = list(B)
    calls = {
        "cuforge offsets": lambda i: plan.run(A, B, None, D, offsets=offs, sync=False),
        "cuforge lists": lambda i: plan.run(As, Bs, None, Ds, sync=False),
        "torch.matmul loop": lambda i: [torch.matmul(a, b, out=d) for a, b, d in zip(As, Bs, Ds) if a.shape[0]],
    }
    grouped_mm = torch_grouped(A, B, offs)
    if grouped_mm:
        calls["torch._grouped_mm"] = grouped_mm
    plan.run(A, B, None, D, offsets=offs)
    ref = torch.cat([a.float() @ b.float() for a, b in zip(As, Bs)])
    err = float(((D.float() - ref).abs().max() / ref.abs().max()).item())
    kernel = plan.last_kernel
    times = interleaved_ms(calls, rounds)
    flops = 2.0 * sum(sizes) * n * k
    best_torch = [t for t in ("torch.matmul loop", "torch._grouped_mm") if t in times]
    row = {"case": name, "groups": len(sizes), "sizes": sizes, "n": n, "k": k, "kernel": kernel, "rel_err": err,
           "ms": {c: statistics.median(v) for c, v in times.items()},
           "tflops": {c: flops / statistics.median(v) / 1e9 for c, v in times.items()}}
    for form in ("cuforge offsets", "cuforge lists"):
        row[f"ratio {form}"] = {t: statistics.median(b / a for a, b in zip(times[form], times[t])) for t in best_torch}
    return row


HOST_GROUPS = (1, 4, 16, 64)


def list_form_host_us(plan):
    """Host time of one run() (timing.host_times_us, sync=False) of G = 1 to 64 lists of torch
    tensors (128x256x256 each), beside reading the same tensors' attributes in a Python loop (what
    any run must learn of each: address, element type, shape, strides, device), and of the offsets
    form with 64 groups: the list form's cost per group, and its floor."""
    out = {"lists": {}, "attributes": {}}
    for groups in HOST_GROUPS:
        As = [torch.randn(128, 256, device="cuda", dtype=DT) for _ in range(groups)]
        Bs = [torch.randn(256, 256, device="cuda", dtype=DT) for _ in range(groups)]
        Ds = [torch.empty(128, 256, device="cuda", dtype=DT) for _ in range(groups)]
        tensors = As + Bs + Ds

        def attributes():
            for x in tensors:
                x.data_ptr(), x.dtype, x.shape, x.stride(), x.get_device()

        times = host_times_us({"run": lambda: plan.run(As, Bs, None, Ds, sync=False), "attributes": attributes},
                              calls=20)
        out["lists"][groups], out["attributes"][groups] = times["run"], times["attributes"]
    A, B, D, offs = operands([128] * 64, 256, 256)
    out["offsets_64"] = host_time_us(lambda: plan.run(A, B, None, D, offsets=offs, sync=False), calls=20)
    return out


def sweep(plan, rounds, prefix, tiles="*"):
    """A case's offsets form (the first case whose name starts with `prefix`) on every tile
    description of the plan whose kernel matches one of the comma-separated globs `tiles` (each
    pinned in turn), beside the plan's own choice and torch._grouped_mm: how far the choice is
    from the best tile."""
    name = next((c for c in CASES if c.startswith(prefix)), None)
    if name is None:
        raise SystemExit(f"--sweep: no case starts with {prefix!r}; the cases: {', '.join(CASES)}")
    sizes, n, k = CASES[name]
    A, B, D, offs = operands(sizes, n, k)
    problem = dict(groups=len(sizes), M=-(-sum(sizes) // len(sizes)), N=n, K=k)
    chosen = plan.select(problem["groups"], problem["M"], n, k, ragged=True)
    pinned = {}
    for td in plan.tile_descriptions():
        try:
            kernel = plan.construct(td, **problem).name
        except cuforge.Error:  # a tile this class cannot use
            continue
        if any(fnmatch.fnmatch(kernel, glob) for glob in tiles.split(",")):
            pinned[kernel] = td
    cuforge.build(sorted(set(pinned) | {chosen}))
    calls = {chosen: lambda i: plan.run(A, B, None, D, offsets=offs, sync=False)}
    for kernel, td in pinned.items():
        tile_plan = cuforge.op.GroupedGemm(element=DT, layout=cuforge.LayoutType.RowMajor,
                                           element_accumulator=torch.float32)
        tile_plan.tile_description = td
        calls[kernel] = lambda i, p=tile_plan: p.run(A, B, None, D, offsets=offs, sync=False)
    grouped_mm = torch_grouped(A, B, offs)
    if grouped_mm:
        calls["torch._grouped_mm"] = grouped_mm
    times = {c: statistics.median(v) for c, v in interleaved_ms(calls, rounds).items()}
    flops = 2.0 * sum(sizes) * n * k
    print(f"\n{name}, offsets form, every tile (the plan chooses {chosen}):")
    for c, t in sorted(times.items(), key=lambda x: x[1]):
        mark = "  <- chosen" if c == chosen else ""
        print(f"  {t * 1e3:9.1f} µs  {flops / t / 1e9:7.1f} TFLOP/s  {c}{mark}")
    best = min(t for c, t in times.items() if c != "torch._grouped_mm")
    print(f"chosen / best tile: {best / times[chosen]:.3f}")
    return {"case": name, "chosen": chosen, "ms": times}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--sweep", nargs="?", const="MoE", metavar="CASE",
                   help="time a case's offsets form on every tile (the case whose name starts with CASE; MoE)")
    p.add_argument("--tiles", default="*", metavar="GLOBS",
                   help="--sweep only the kernels matching one of these comma-separated globs")
    p.add_argument("--host", action="store_true", help="only the host time of one run()")
    args = p.parse_args()
    torch.manual_seed(0)
    plan = cuforge.op.GroupedGemm(element=DT, layout=cuforge.LayoutType.RowMajor, element_accumulator=torch.float32)
    props = torch.cuda.get_device_properties(0)
    results = {"device": props.name, "torch": torch.__version__, "rounds": args.rounds, "cases": []}
    print(f"{props.name}, torch {torch.__version__}")
    if args.sweep:
        results["sweep"] = sweep(plan, args.rounds, args.sweep, args.tiles)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
        return
    # The list form's class is ragged where the sizes differ; the offsets form's always is.
    cases = {} if args.host else CASES
    classes = [((len(s), -(-sum(s) // len(s)), n, k), ragged) for s, n, k in cases.values()
               for ragged in {True, len(set(s)) > 1}]
    classes += [((g, 128, 256, 256), False) for g in HOST_GROUPS] + [((64, 128, 256, 256), True)]
    t0 = time.perf_counter()
    cuforge.build(sorted({plan.select(*c, ragged=ragged) for c, ragged in classes}))
    print(f"prebuilt in {time.perf_counter() - t0:.0f} s")
    for name, (sizes, n, k) in cases.items():
        row = bench_case(name, sizes, n, k, plan, args.rounds)
        results["cases"].append(row)
        tf = row["tflops"]
        print(f"\n{name}: {row['kernel']} (rel err {row['rel_err']:.1e})")
        for c, v in tf.items():
            print(f"  {c:20s} {row['ms'][c] * 1e3:9.1f} µs  {v:7.1f} TFLOP/s")
        for form in ("cuforge offsets", "cuforge lists"):
            print(f"  {form} vs " + ", ".join(f"{t}: {r:.2f}x" for t, r in row[f'ratio {form}'].items()))
        torch.cuda.empty_cache()
    host = results["host_us"] = list_form_host_us(plan)
    print("\nhost time per run() (µs), lists of G groups of torch tensors, beside reading their attributes "
          "in Python:")
    for groups in HOST_GROUPS:
        print(f"  G={groups:<3} run {host['lists'][groups]:7.1f}   attributes of {3 * groups:3d} tensors "
              f"{host['attributes'][groups]:7.1f}")
    print(f"  the offsets form, G=64: {host['offsets_64']:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
