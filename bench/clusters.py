#!/usr/bin/env python3
"""Cluster shapes of SM90 GEMM tiles where a problem has a few M tiles: the cost model's best candidates
and a filtered set (by default every tile in 2x1 clusters, whose M tiles share each B panel by
multicast) timed by plan.profile on several shapes, beside cuBLAS. Writes the JSON bench/refit.py
reads as a case source (`gemm_profile_cases`).

    python bench/clusters.py                                        # bf16, row-major, the shapes below
    python bench/clusters.py --shapes 96x4096x4096,128x4096x4096 --json out.json
    python bench/clusters.py --filter '*_c1x2x1_*'                  # the 1x2 clusters instead
    python bench/clusters.py --filter '*_swapab' --shapes 64x4096x4096   # swapped tiles, 1x1 and 1x2

Times as `cuforge profile` takes them: calls queued back to back on the same operands (bench/NOTES.md,
"clusters along M").
"""

import argparse
import json
import math
import sys

import torch

import cuforge
from gemm import parse_shapes

SHAPES = "64x4096x4096,96x4096x4096,128x4096x4096,192x4096x4096,256x4096x4096,128x14336x4096,128x8192x8192"


def measured(profile):
    """The profile's rows that ran, with what refit.py reads."""
    keys = ("kernel", "splits", "decomposition", "predicted_rank", "predicted_us", "measured_us")
    return [{k: r[k] for k in keys} for r in profile.rows if not math.isnan(r["measured_us"])]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    p.add_argument("--shapes", type=parse_shapes, default=parse_shapes(SHAPES), help="comma list of MxNxK")
    p.add_argument("--top", type=int, default=12, help="the model's best candidates timed per shape")
    p.add_argument("--filter", default="*_c2x1x1_*", help="shell glob on kernel names: the second set")
    p.add_argument("--filter-top", type=int, default=6, help="the model's best of the second set timed")
    p.add_argument("--jobs", type=int, default=None, help="parallel compiles (default: one per core)")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()

    plan = cuforge.op.Gemm(element=args.dtype, element_accumulator="f32", layout=cuforge.LayoutType.RowMajor)
    out = {"device": torch.cuda.get_device_name(), "dtype": args.dtype, "layout": "rrr",
           "command": " ".join(sys.argv), "filter": args.filter, "profile": []}
    for m, n, k in args.shapes:
        top = plan.profile(m, n, k, top=args.top, jobs=args.jobs)
        filtered = plan.profile(m, n, k, top=args.filter_top, filter=args.filter, jobs=args.jobs)
        print(top.table(), filtered.table(), "", sep="\n", flush=True)
        out["profile"].append({"shape": [m, n, k], "cublas_us": [top.baseline_us, filtered.baseline_us],
                               "top": measured(top), "filtered": measured(filtered)})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
