#!/usr/bin/env python3
"""Where an f32 (TF32) GEMM with a row-major B spends its time: cuforge's default plan's kernels, read
from torch.profiler (the K-major copy of B, then the SM90 GEMM), the copy's bandwidth beside torch's own
transposing copy of B (`B.t().contiguous()`) and a plain copy (`B.clone()`), and cuBLAS's TF32 GEMM,
all in one process on bench/gemm.py's shapes.

    python3 bench/tf32_staging.py [--shapes 8192x8192x8192,...] [--json out.json]

The copy moves 2·K·N·4 bytes (read and write); its bandwidth is that over its GPU time.
"""

import argparse
import json

import torch

import cuforge
from gemm import DEFAULT_SHAPES, default_plan, parse_shapes
from vendor_kernels import kernels_of

STAGING_KERNEL = "stage_k_major"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", type=parse_shapes, default=DEFAULT_SHAPES)
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    plan = default_plan("tf32")
    cuforge.build(sorted({plan.select(M, N, K) for M, N, K in args.shapes}))  # in parallel, before timing
    rows = []
    print(f"{'M x N x K':>18s} {'copy us':>8s} {'TB/s':>5s} {'gemm us':>8s} {'torch.t us':>10s} {'TB/s':>5s} "
          f"{'clone us':>8s} {'TB/s':>5s} {'cuBLAS us':>9s}  kernel")
    for M, N, K in args.shapes:
        A = torch.randn(M, K, device="cuda")
        B = torch.randn(K, N, device="cuda")
        D = torch.empty(M, N, device="cuda")
        plan.run(A, B, D, D, alpha=1.0, beta=0.0)
        torch.cuda.synchronize()
        kernels = kernels_of(lambda: plan.run(A, B, D, D, alpha=1.0, beta=0.0, sync=False))
        staging = sum(us for name, us in kernels if STAGING_KERNEL in name)
        gemm = sum(us for name, us in kernels if STAGING_KERNEL not in name)
        transposed = sum(us for _, us in kernels_of(lambda: B.t().contiguous()))
        cloned = sum(us for _, us in kernels_of(lambda: B.clone()))
        cublas = sum(us for _, us in kernels_of(lambda: torch.matmul(A, B)))
        moved = 2 * K * N * 4
        tbps = lambda us: moved / us / 1e6 if us else 0.0  # noqa: E731
        row = {"shape": [M, N, K], "staging_us": round(staging, 2), "staging_tbps": round(tbps(staging), 3),
               "gemm_us": round(gemm, 2), "torch_transpose_us": round(transposed, 2), "torch_transpose_tbps": round(tbps(transposed), 3),
               "clone_us": round(cloned, 2), "clone_tbps": round(tbps(cloned), 3), "cublas_us": round(cublas, 2),
               "kernels": [{"kernel": k, "us": round(us, 2)} for k, us in kernels]}
        rows.append(row)
        name = max(kernels, key=lambda r: r[1])[0] if kernels else "-"
        print(f"{M:>6d}x{N:>5d}x{K:>5d} {staging:8.1f} {tbps(staging):5.2f} {gemm:8.1f} {transposed:10.1f} "
              f"{tbps(transposed):5.2f} {cloned:8.1f} {tbps(cloned):5.2f} {cublas:9.1f}  {name[:70]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
