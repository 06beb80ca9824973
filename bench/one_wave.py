#!/usr/bin/env python3
"""Problems of about one wave of tiles, where a kernel's setup and epilogue are much of its run: every
tile of a set (by default the 16-bit tiles of up to 128x128, persistent cooperative and ping-pong in
1x1 clusters, and CUTLASS's non-persistent kernel, a CTA per tile, in every cluster), pinned, timed
beside cuBLAS on each shape; with the model's pick and its estimate for each kernel.

    python bench/one_wave.py                                    # bf16, the shapes below
    python bench/one_wave.py --shapes 1024x1024x1024 --json out.json
    python bench/one_wave.py --schedules tmaws --tiles 128x64
    python bench/one_wave.py --shapes 64x4096x1024 --schedules tmaws --also <a swapped kernel's name>

Times: "alone", each kernel taking turns with cuBLAS call by call, each on its own operands, between
CUDA events behind a held stream (timing.gpu_times_ms), reported as cuBLAS's time over the kernel's
in the same measurement; and "b2b", per call of calls queued back to back (timing.back_to_back_ms).
"""

import argparse
import json
import statistics
import sys

import torch

import cuforge
from gemm import DTYPES, input_sets, parse_shapes, schedule_of
from timing import back_to_back_ms, gpu_times_ms

SHAPES = "512x512x512,768x768x768,1024x1024x1024,1024x1024x4096,1536x1536x1536,2048x2048x2048,2048x1024x2048"
SCHEDULES = ("coop", "pingpong", "tmaws")  # as kernel names spell them


def label(plan, td) -> str:
    return "{}x{}_{}_c{}x{}{}".format(*td.threadblock_shape[:2], schedule_of(plan, td), *td.cluster_shape[:2],
                                      "_swapab" if td.swap_ab else "")


def chosen_name(plan, td, m, n, k):
    """The kernel `plan` with `td` pinned would run on M x N x K (None where it cannot)."""
    try:
        return plan.construct(td, M=m, N=n, K=k).name
    except cuforge.InvalidArgumentError:
        return None


def tiles(plan, args) -> list:
    """The plan's data-parallel tile descriptions in the sets asked for (persistent ones in 1x1 clusters),
    and those of the kernels named by --also (swapped ones too: named as chosen for the first shape)."""
    wanted_tiles = {tuple(int(v) for v in t.split("x")) for t in args.tiles.split(",")}
    wanted = set(args.schedules.split(","))
    also = set(filter(None, args.also.split(",")))
    out = []
    for td in plan.tile_descriptions():
        if td.tile_scheduler != cuforge.TileSchedulerType.Default:
            continue
        schedule = schedule_of(plan, td)
        if (not td.swap_ab and schedule in wanted and tuple(td.threadblock_shape[:2]) in wanted_tiles
                and (schedule == "tmaws" or list(td.cluster_shape) == [1, 1, 1])):
            out.append(td)
        elif also and chosen_name(plan, td, *args.shapes[0]) in also:
            out.append(td)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    p.add_argument("--shapes", type=parse_shapes, default=parse_shapes(SHAPES), help="comma list of MxNxK")
    p.add_argument("--tiles", default="64x64,64x128,64x256,128x64,128x128", help="comma list of tile MxN")
    p.add_argument("--schedules", default="coop,pingpong,tmaws", help="comma list of " + ", ".join(SCHEDULES))
    p.add_argument("--also", default="", help="comma list of data-parallel kernel names to time as well (swapped "
                   "ones named as the first shape selects them)")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--jobs", type=int, default=None, help="parallel compiles (default: one per core)")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()

    dtype = DTYPES[args.dtype]
    make = lambda: cuforge.op.Gemm(element=dtype, element_accumulator=torch.float32,  # noqa: E731
                                   layout=cuforge.LayoutType.RowMajor)
    default = make()
    plans = {}
    for td in tiles(default, args):
        key = label(default, td)
        plans[key] = make()
        plans[key].tile_description = td
        plans[key].decomposition = cuforge.Decomposition.DataParallel
    m0, n0, k0 = args.shapes[0]
    names = {key: plan.construct(M=m0, N=n0, K=k0).name for key, plan in plans.items()}
    picks = sorted({default.select(m, n, k) for m, n, k in args.shapes} - set(names.values()))
    cuforge.build(list(names.values()) + picks, jobs=args.jobs)

    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    out = {"device": torch.cuda.get_device_name(), "dtype": args.dtype, "command": " ".join(sys.argv), "shapes": []}
    for m, n, k in args.shapes:
        pick = default.select(m, n, k)
        cublas_sets = input_sets(m, n, k, dtype, l2_bytes)
        cublas = lambda i: torch.matmul(*cublas_sets[i % len(cublas_sets)][:2],  # noqa: E731
                                        out=cublas_sets[i % len(cublas_sets)][3])
        row = {"shape": [m, n, k], "pick": pick, "cublas_b2b_us": back_to_back_ms(cublas) * 1e3, "kernels": []}
        runs = dict(plans)
        if pick not in names.values():
            runs["pick"] = default
        for key, plan in runs.items():
            name = pick if key == "pick" else names[key]
            sets = input_sets(m, n, k, dtype, l2_bytes)
            A, B, _, D = sets[0]
            plan.run(A, B, None, D)
            error = float((D.float() - A.float() @ B.float()).norm() / (A.float() @ B.float()).norm())
            run = lambda i, s=sets, plan=plan: plan.run(s[i % len(s)][0], s[i % len(s)][1], None,  # noqa: E731
                                                         s[i % len(s)][3], sync=False)
            alone = gpu_times_ms({"kernel": run, "cublas": cublas}, args.repeats)
            row["kernels"].append({
                "label": key, "kernel": name, "picked": name == pick, "rel_err": error,
                "predicted_us": cuforge._core.estimated_time_us(name, m, n, k),
                "alone_us": alone["kernel"] * 1e3, "cublas_alone_us": alone["cublas"] * 1e3,
                "ratio_alone": alone["cublas"] / alone["kernel"], "b2b_us": back_to_back_ms(run) * 1e3})
        row["kernels"].sort(key=lambda r: -r["ratio_alone"])
        print(f"{m}x{n}x{k} {args.dtype}: cuBLAS back to back {row['cublas_b2b_us']:.2f} us; pick {pick}")
        print(f"  {'kernel':<28} {'alone':>7} {'cuBLAS':>7} {'ratio':>6} {'b2b':>7} {'model':>7}")
        for r in row["kernels"]:
            mark = " <- pick" if r["picked"] else ""
            print(f"  {r['label']:<28} {r['alone_us']:7.2f} {r['cublas_alone_us']:7.2f} {r['ratio_alone']:6.3f} "
                  f"{r['b2b_us']:7.2f} {r['predicted_us']:7.2f}{mark}")
        by_schedule = {}
        for r in row["kernels"]:
            by_schedule.setdefault(r["label"].split("_")[1] if r["label"] != "pick" else "pick", []).append(r)
        print("  best alone per schedule: " + ", ".join(
            f"{s} {max(x['ratio_alone'] for x in rs):.3f}" for s, rs in by_schedule.items()), flush=True)
        out["shapes"].append(row)
    ratios = [next(r for r in s["kernels"] if r["picked"])["ratio_alone"] for s in out["shapes"]]
    print(f"the picks alone: geomean {statistics.geometric_mean(ratios):.3f}x cuBLAS, worst {min(ratios):.3f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
