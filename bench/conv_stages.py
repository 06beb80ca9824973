#!/usr/bin/env python3
"""SM90 convolution tiles pinned with each stage count (0: as many as fit, one CTA to an SM; 3 or 4: two
or three CTAs sharing an SM, library::ctas_per_sm) beside cuDNN in one process, fprop and dgrad on
bench/conv.py's wide layers (fp16, N = 32): what the catalog's fewer-stage rows and the cost model's
sharing are measured against (bench/refit.py reads the JSON).

    python3 bench/conv_stages.py --json out.json [--clusters 1x1,1x2,2x1]

Times: medians of three interleaved rounds (bench/timing.py); ratio = cuDNN time / cuforge time.
"""

import argparse
import json
import statistics

import torch
import torch.nn.functional as F

import cuforge
from conv import cudnn_backward, layer_problem
from resnet50 import LAYERS, N
from timing import interleaved_ms

TILES = [(64, 64, 0), (64, 64, 3), (64, 64, 4), (128, 64, 0), (128, 64, 3), (128, 64, 4), (64, 128, 0),
         (64, 128, 4), (128, 128, 0), (256, 64, 0)]
CLUSTERS = {"1x1": (1, 1, 1), "1x2": (1, 2, 1), "2x1": (2, 1, 1)}  # the catalog's, along M x N
WIDE_LAYERS = [name for name, (h, c, *_) in LAYERS.items() if c % 8 == 0]  # the stem runs on SM80


def pinned_plans(kind, clusters):
    """(plan, kernel name) per tile, stage count and cluster, all built in one parallel step."""
    plans = []
    for tm, tn, stages in TILES:
        for cluster in clusters:
            p = cuforge.op.Conv2d(kind=kind, element=torch.float16, element_accumulator=torch.float32, kernel_cc=90)
            p.tile_description = {"threadblock_shape": [tm, tn, 64], "cluster_shape": list(cluster), "stages": stages}
            plans.append((p, p.select(N, 56, 56, 64, 64, 3, 3, padding=1)))
    cuforge.build(sorted({name for _, name in plans}))
    return plans


def time_layer(kind, name, plans):
    layer = layer_problem(name, torch.float16)
    out = torch.empty_like(layer.dy if kind == "fprop" else layer.xp)
    a = layer.xp if kind == "fprop" else layer.dy
    calls = {"cudnn": (lambda i: F.conv2d(layer.x, layer.w, stride=layer.stride, padding=layer.padding))
             if kind == "fprop" else cudnn_backward(layer, kind)}
    for p, kernel in plans:
        calls[kernel] = lambda i, p=p: p.run(a, layer.wp, None, out, sync=False, **layer.geometry)  # noqa: E731
    times = {k: statistics.median(v) for k, v in interleaved_ms(calls, 3).items()}
    cudnn = times.pop("cudnn")
    rows = sorted(({"kind": kind, "layer": name, "kernel": k, "ms": ms, "ratio": cudnn / ms} for k, ms in times.items()),
                  key=lambda r: r["ms"])
    print(f"{kind} {name}: cuDNN {cudnn * 1e3:.1f} us")
    for r in rows:
        print(f"   {r['ms'] * 1e3:7.1f} us {r['ratio']:.3f}x  {r['kernel']}", flush=True)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--clusters", default=",".join(CLUSTERS), help="comma-separated cluster shapes (default: all)")
    args = p.parse_args()
    clusters = [CLUSTERS[c] for c in args.clusters.split(",")]
    rows = []
    for kind in ("fprop", "dgrad"):
        plans = pinned_plans(kind, clusters)
        for name in WIDE_LAYERS:
            rows += time_layer(kind, name, plans)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=0)


if __name__ == "__main__":
    main()
