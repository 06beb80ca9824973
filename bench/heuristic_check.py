#!/usr/bin/env python3
"""How good is the selection heuristic on measured data? Reads the JSON of bench/sweep.py and, for
each shape, reports the measured speed of the kernel `plan.select` picks relative to the fastest
one measured (1.00 = the heuristic picked the best). Runs on any machine: selection needs no GPU.

    python bench/heuristic_check.py sweep.json
"""

import argparse
import json

import cuforge


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sweep_json")
    p.add_argument("--dtype", default="bf16")
    args = p.parse_args()
    plan = cuforge.op.Gemm(element=args.dtype, layout=cuforge.LayoutType.RowMajor)
    worst = 1.0
    for row in json.load(open(args.sweep_json)):
        M, N, K = row["shape"]
        times = row["times_ms"]
        best = min(times.values())
        chosen = plan.select(M, N, K)
        quality = best / times[chosen] if chosen in times else float("nan")
        worst = min(worst, quality)
        rank = sorted(times, key=times.get).index(chosen) + 1 if chosen in times else "-"
        print(f"{M}x{N}x{K}: chosen at {quality:.2f} of the best (rank {rank}/{len(times)}), "
              f"{row['cublas_ms'] / times.get(chosen, float('nan')):.2f}x cuBLAS  {chosen}")
    print(f"worst: {worst:.2f} of the best measured kernel")


if __name__ == "__main__":
    main()
