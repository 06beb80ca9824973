#!/usr/bin/env python3
"""Small-M GEMMs (decode-style: M <= 64, N and K large) beside cuBLAS: the default plan, and every
swapped kernel (D^T = B^T A^T, M on the tile's N) pinned, data-parallel and, on the cooperative
stream-K kernels, K split in 2 to 8 slices and stream-K. The data the selection is fitted to.

    python bench/small_m.py                                  # the issue's shapes, bf16
    python bench/small_m.py --dtypes bf16,fp16 --shapes 16x4096x4096 --json out.json
    python bench/small_m.py --b-layout col --tile-k 64,128   # x @ W^T, and deeper K tiles

GPU time between CUDA events around each call, medians of --repeats calls queued behind a GPU
sleep (host time does not count), inputs rotating through enough sets to overflow L2 (B alone is
32 MB at 4096x4096 bf16; the H200's L2 holds 50 MB). Also prints the cost model's estimate beside
each measurement.
"""

import argparse
import itertools
import json
import os

import torch

import cuforge
from cuforge import _core
from gemm import DTYPES, input_sets
from timing import interleaved_ms

SHAPES = "1x4096x4096,16x4096x4096,64x4096x4096,16x14336x4096,32x8192x8192,8x4096x14336"
SWAPPED_TILES = [((128, 16), "coop"), ((128, 32), "coop"), ((128, 64), "coop"),
                 ((64, 16), "pingpong"), ((64, 32), "pingpong"), ((64, 64), "pingpong")]
SCHEDULES = {"coop": (cuforge.KernelScheduleType.TmaWarpSpecializedCooperative,
                      cuforge.EpilogueScheduleType.TmaWarpSpecializedCooperative),
             "pingpong": (cuforge.KernelScheduleType.TmaWarpSpecializedPingpong,
                          cuforge.EpilogueScheduleType.TmaWarpSpecialized)}


def plan_of(dtype, b_layout):
    """The default plan of row-major A and D, B of `b_layout` (col: x @ W^T of a PyTorch Linear)."""
    return cuforge.op.Gemm(element=dtype, element_accumulator=torch.float32,
                           layout_A=cuforge.LayoutType.RowMajor, layout_C=cuforge.LayoutType.RowMajor,
                           layout_B=cuforge.LayoutType.RowMajor if b_layout == "row" else cuforge.LayoutType.ColumnMajor)


def variants(dtype, b_layout, tile_ks, coop_splits):
    """(label, plan) for every swapped tile, tile K and split; the default plan first."""
    out = [("default", plan_of(dtype, b_layout))]
    for ((tm, tn), schedule), k in itertools.product(SWAPPED_TILES, tile_ks):
        kernel, epilogue = SCHEDULES[schedule]
        for splits in (coop_splits if schedule == "coop" else [1]):
            plan = plan_of(dtype, b_layout)
            plan.tile_description = dict(
                threadblock_shape=[tm, tn, k], cluster_shape=[1, 1, 1], kernel_schedule=kernel,
                epilogue_schedule=epilogue, swap_ab=True,
                tile_scheduler=cuforge.TileSchedulerType.Default if splits == 1 else cuforge.TileSchedulerType.StreamK)
            if splits == "stream-k":
                plan.decomposition = cuforge.Decomposition.StreamK
            elif splits > 1:
                plan.split_k_slices = splits
                plan.decomposition = cuforge.Decomposition.SplitK
            else:
                plan.decomposition = cuforge.Decomposition.DataParallel
            out.append((f"{tm}x{tn}x{k} {schedule} {splits if splits != 1 else 'data-parallel'}", plan))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtypes", default="bf16")
    p.add_argument("--shapes", default=SHAPES)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--b-layout", default="row", choices=["row", "col"])
    p.add_argument("--tile-k", default="128",
                   help="K of the swapped tiles, in elements (comma-separated; the catalog's: 128)")
    p.add_argument("--coop-splits", default="1,2,4,8,stream-k",
                   help="the cooperative tiles' K slices (stream-k: the stream-K decomposition)")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()
    tile_ks = [int(k) for k in args.tile_k.split(",")]
    coop_splits = [v if v == "stream-k" else int(v) for v in args.coop_splits.split(",")]
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count

    results = []
    for dtype_name in args.dtypes.split(","):
        dtype = DTYPES[dtype_name]
        plans = variants(dtype, args.b_layout, tile_ks, coop_splits)
        names = set()
        for M, N, K in shapes:
            for _, plan in plans:
                names.add(plan.select(M, N, K))
        cuforge.build(sorted(names), jobs=os.cpu_count())
        for M, N, K in shapes:
            sets = input_sets(M, N, K, dtype, l2_bytes)
            if args.b_layout == "col":  # B as a Linear's weight holds it: W (N x K) row-major, B = W^T
                sets = [(A, B.t().contiguous().t(), C, D) for A, B, C, D in sets]
            calls = {"cuBLAS": lambda i: torch.matmul(sets[i % len(sets)][0], sets[i % len(sets)][1],
                                                      out=sets[i % len(sets)][3])}
            for label, plan in plans:
                calls[label] = lambda i, plan=plan: plan.run(sets[i % len(sets)][0], sets[i % len(sets)][1], None,
                                                             sets[i % len(sets)][3], sync=False)
            times = interleaved_ms(calls, args.rounds, args.repeats)
            cublas_us = min(times["cuBLAS"]) * 1e3
            rows = []
            for label, plan in plans:
                plan.run(*sets[0][:2], None, sets[0][3])
                kernel, splits = plan.last_kernel, plan.last_splits
                us = sorted(times[label])[len(times[label]) // 2] * 1e3
                model = _core.estimated_time_us(kernel, M, N, K, 1, splits, True, sm_count, _core.CostModel())
                rows.append({"label": label, "kernel": kernel, "splits": splits, "us": us, "model_us": model,
                             "ratio": sorted(t / c for t, c in zip(times["cuBLAS"], times[label]))[args.rounds // 2]})
            results.append({"dtype": dtype_name, "b_layout": args.b_layout, "shape": [M, N, K], "cublas_us": cublas_us,
                            "cublas_rounds_ms": times["cuBLAS"], "rows": rows})
            print(f"{dtype_name} {M}x{N}x{K}: cuBLAS {cublas_us:.1f} us "
                  f"({(M * K + K * N + M * N) * torch.finfo(dtype).bits / 8 / cublas_us / 1e6:.2f} TB/s)")
            for r in sorted(rows, key=lambda r: r["us"]):
                print(f"  {r['ratio']:.2f}x {r['us']:7.1f} us (model {r['model_us']:6.1f})  {r['label']:<24} "
                      f"x{r['splits']} {r['kernel'][29:]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
