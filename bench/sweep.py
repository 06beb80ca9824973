#!/usr/bin/env python3
"""Every tile description of a plan, timed on a set of shapes beside cuBLAS: the data the selection
heuristic is checked against. Prints, per shape, the measured best, the heuristic's choice and where
the choice ranks; writes all times as JSON.

    python bench/sweep.py --dtype bf16 --shapes 1024x1024x1024,16x4096x4096 --json sweep.json
"""

import argparse
import json
import os

import torch

import cuforge
from timing import gpu_time_ms

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
SHAPES = "8192x8192x8192,4096x4096x4096,2048x2048x2048,1024x1024x1024,16x4096x4096,128x14336x4096," \
         "4096x14336x4096,8192x1024x8192"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    p.add_argument("--shapes", default=SHAPES)
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()
    dtype = DTYPES[args.dtype]
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]

    plan = cuforge.op.Gemm(element=dtype, layout=cuforge.LayoutType.RowMajor)
    tiles = plan.tile_descriptions()
    names = []
    for td in tiles:
        plan.tile_description = td
        names.append(plan.select(4096, 4096, 4096))
    plan.tile_description = None
    cuforge.build(names, jobs=os.cpu_count())

    results = []
    for (M, N, K) in shapes:
        A = torch.randn((M, K), device="cuda", dtype=dtype)
        B = torch.randn((K, N), device="cuda", dtype=dtype)
        D = torch.empty((M, N), device="cuda", dtype=dtype)
        flops = 2.0 * M * N * K
        cublas = gpu_time_ms(lambda i: torch.matmul(A, B, out=D))
        chosen = plan.select(M, N, K)
        times = {}
        for td, name in zip(tiles, names):
            plan.tile_description = td
            times[name] = gpu_time_ms(lambda i: plan.run(A, B, None, D, sync=False))
        plan.tile_description = None
        ranked = sorted(times, key=times.get)
        best = ranked[0]
        results.append({"shape": [M, N, K], "cublas_ms": cublas, "times_ms": times, "chosen": chosen})
        print(f"{M}x{N}x{K}: cuBLAS {flops / cublas / 1e9:.0f} TFLOP/s; best {flops / times[best] / 1e9:.0f} "
              f"({cublas / times[best]:.2f}x) {best}; chosen rank {ranked.index(chosen) + 1}/{len(ranked)} "
              f"({cublas / times[chosen]:.2f}x) {chosen}")
        for name in ranked[:5]:
            print(f"    {cublas / times[name]:.2f}x  {name}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
