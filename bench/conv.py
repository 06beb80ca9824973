#!/usr/bin/env python3
"""cuforge's Conv2d beside cuDNN (through torch) in one process, on ResNet-50 layers, N = 32.

    python bench/conv.py                    # fprop, dgrad and wgrad of issue 14's layers, fp16
    python bench/conv.py --dtype bf16 --json out.json --rounds 3
    python bench/conv.py --kernel-cc 80     # SM80 kernels only (the default chooses SM90 where they run)
    python bench/conv.py --autotune 6       # each plan times the model's best 6 on its first run
    python bench/conv.py --passes fprop --relu-bias    # fused relu(conv + bias) beside conv2d(bias) + relu
    python bench/conv.py --autotune 64 --json sweep.json   # ... and the JSON keeps every kernel timed
    python bench/conv.py --sweep-wgrad --json s.json   # every SM80 wgrad tile x parallel split-K slices
    python bench/conv.py --sweep-wgrad --kernel-cc 90  # ... every SM90 tile, stage count and cluster instead
    python bench/conv.py --sweep-wgrad --kernel-cc 90 --tiles "*_64x64x64_*"   # ... of these tiles only
    python bench/conv.py --profile 48 --json p.json    # plan.profile: the model's best 48 per pass and layer

Tensors are channels_last. fprop is compared with torch.nn.functional.conv2d; dgrad and wgrad
with torch.ops.aten.convolution_backward computing the input's or the filters' gradient alone.
The 3-channel stem layer runs cuforge on channels padded with zeros to 8 (`--pad-channels 4`: to 4;
the kernels read channels in vectors), cuDNN on the 3 channels; TFLOP/s count the 3-channel
convolution for both.
GPU times are CUDA events around each call, medians of repeats in interleaved rounds (bench/timing.py);
each ratio is the median of the rounds' ratios (cuDNN time / cuforge time: above 1 is faster). Each
row names the kernel family that ran (sm90: CUTLASS 3.x implicit GEMM; sm80: CUTLASS 2.x) and the kernel.
"""

import argparse
import fnmatch
import json
import statistics
import time
from types import SimpleNamespace

import torch
import torch.nn.functional as F

import cuforge
from resnet50 import LAYERS, N
from timing import gpu_time_ms, interleaved_ms

PAD_CHANNELS = 8  # what cuforge's stem layer runs on (--pad-channels)
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def channels_last(t):
    return t.contiguous(memory_format=torch.channels_last)


def layer_tensors(h, c, k, r, stride, padding, dt):
    x = channels_last(torch.randn(N, c, h, h, device="cuda", dtype=dt))
    w = channels_last(torch.randn(k, c, r, r, device="cuda", dtype=dt))
    p = (h + 2 * padding - r) // stride + 1
    dy = channels_last(torch.randn(N, k, p, p, device="cuda", dtype=dt))
    return x, w, dy


def cuforge_channels(c):
    """The channels cuforge runs a layer of c channels on: c, or the stem's 3 padded."""
    return c if c % 8 == 0 else -(-c // PAD_CHANNELS) * PAD_CHANNELS


def padded(t, channels):
    """t (N, C, H, W) with zero channels appended up to `channels`, channels_last."""
    return channels_last(F.pad(t, (0, 0, 0, 0, 0, channels - t.shape[1])))


def family(kernel):
    """'sm90' or 'sm80', from a kernel's name."""
    return kernel.split("_")[1]


def layer_problem(name, dt):
    """A layer's tensors (x, w, dy, and xp, wp with the channels padded for cuforge), its geometry,
    and the FLOPs of its (unpadded) convolution."""
    h, c, k, r, stride, padding = LAYERS[name]
    x, w, dy = layer_tensors(h, c, k, r, stride, padding, dt)
    xp, wp = (padded(x, cuforge_channels(c)), padded(w, cuforge_channels(c))) if c % 8 else (x, w)
    return SimpleNamespace(x=x, w=w, dy=dy, xp=xp, wp=wp, stride=stride, padding=padding,
                           geometry=dict(stride=(stride, stride), padding=(padding, padding)),
                           flops=2.0 * N * dy.shape[2] * dy.shape[3] * k * c * r * r)


def cudnn_backward(layer, kind):
    """cuDNN (through torch) computing the layer's input (dgrad) or filters' (wgrad) gradient alone."""
    mask = [kind == "dgrad", kind == "wgrad", False]
    return lambda i: torch.ops.aten.convolution_backward(  # noqa: E731
        layer.dy, layer.x, layer.w, None, [layer.stride] * 2, [layer.padding] * 2, [1, 1], False, [0, 0], 1, mask)


def bench_layer(name, dt, passes, rounds, kernel_cc, autotune, relu_bias=False):
    layer = layer_problem(name, dt)
    x, w, dy, xp, wp = layer.x, layer.w, layer.dy, layer.xp, layer.wp
    stride, padding, geometry, flops = layer.stride, layer.padding, layer.geometry, layer.flops
    y = torch.empty_like(dy)
    dx, dw = torch.empty_like(xp), torch.empty_like(wp)
    rows = []
    for kind in passes:
        plan = cuforge.op.Conv2d(kind=kind, element=dt, element_accumulator=torch.float32, kernel_cc=kernel_cc)
        if autotune:
            plan.autotune, plan.autotune_candidates = True, autotune
        if kind == "fprop" and relu_bias:  # one kernel beside cuDNN's conv with its bias, then torch's relu
            plan.activation = "relu"
            bias = torch.randn(w.shape[0], device="cuda", dtype=dt)
            ours = lambda i: plan.run(xp, wp, bias, y, beta=1.0, sync=False, **geometry)  # noqa: E731
            theirs = lambda i: torch.relu(F.conv2d(x, w, bias, stride=stride, padding=padding))  # noqa: E731
            check = (y, torch.relu(F.conv2d(xp.float(), wp.float(), bias.float(), stride=stride, padding=padding)))
        elif kind == "fprop":
            ours = lambda i: plan.run(xp, wp, None, y, sync=False, **geometry)  # noqa: E731
            theirs = lambda i: F.conv2d(x, w, stride=stride, padding=padding)  # noqa: E731
            check = (y, F.conv2d(xp.float(), wp.float(), stride=stride, padding=padding))
        else:
            theirs = cudnn_backward(layer, kind)
            if kind == "dgrad":
                ours = lambda i: plan.run(dy, wp, None, dx, sync=False, **geometry)  # noqa: E731
                ref = torch.nn.grad.conv2d_input(xp.shape, wp.float(), dy.float(), stride=stride, padding=padding)
                check = (dx, ref)
            else:
                ours = lambda i: plan.run(dy, xp, None, dw, sync=False, **geometry)  # noqa: E731
                ref = torch.nn.grad.conv2d_weight(xp.float(), wp.shape, dy.float(), stride=stride, padding=padding)
                check = (dw, ref)
        ours(0)
        torch.cuda.synchronize()
        got, ref = check
        err = float(((got.float() - ref).abs().max() / ref.abs().max()).item())
        times = interleaved_ms({"cuforge": ours, "cudnn": theirs}, rounds)
        ms = {t: statistics.median(v) for t, v in times.items()}
        rows.append({"layer": name, "pass": kind + ("+relu+bias" if relu_bias and kind == "fprop" else ""),
                     "family": family(plan.last_kernel), "kernel": plan.last_kernel,
                     "splits": plan.last_splits, "rel_err": err, "ms": ms,
                     "tflops": {t: flops / v / 1e9 for t, v in ms.items()},
                     "ratio": statistics.median(b / a for a, b in zip(times["cuforge"], times["cudnn"]))})
        row = rows[-1]
        print(f"{name:22s} {kind}  cuforge {row['tflops']['cuforge']:6.1f}  cuDNN {row['tflops']['cudnn']:6.1f} "
              f"TFLOP/s  {row['ratio']:.2f}x  err {err:.1e}  {row['family']} x{row['splits']} {row['kernel']}",
              flush=True)
    return rows


SWEEP_SPLITS = (1, 2, 4, 8, 16, 32, 64, 128)


def sweep_wgrad(dt, layers, rounds, kernel_cc, tiles="*"):
    """Every wgrad tile of the kernel family (SM80 unless kernel_cc is 90; 16-byte vectors; those whose
    split kernel matches one of the comma-separated globs `tiles`) with each parallel split-K slice
    count in SWEEP_SPLITS (SM90: up to the images), beside cuDNN, per layer: what the cost model's
    parallel split-K choice is measured against. Yields a row per timing."""
    plan = cuforge.op.Conv2d(kind="wgrad", element=dt, element_accumulator=torch.float32, kernel_cc=kernel_cc)
    pinned, names = [], set()
    for td in plan.tile_descriptions():
        p = cuforge.op.Conv2d(kind="wgrad", element=dt, element_accumulator=torch.float32, kernel_cc=kernel_cc)
        p.tile_description = td
        tile_names = []
        try:  # the unsplit kernel a single slice runs and the split one, both built before any is timed
            for decomposition in (cuforge.Decomposition.DataParallel, cuforge.Decomposition.ParallelSplitK):
                p.split_k_slices, p.decomposition = 2, decomposition
                tile_names.append(p.select(N, 56, 56, 64, 64, 3, 3, padding=1))
        except cuforge.Error:
            continue
        if not any(fnmatch.fnmatch(tile_names[-1], glob) for glob in tiles.split(",")):
            continue
        if all(n.split("_a")[-1].startswith("8x8x8") for n in tile_names):
            pinned.append((p, tile_names))
            names |= set(tile_names)
    cuforge.build(sorted(names))
    for layer_name in layers:
        layer = layer_problem(layer_name, dt)
        dw = torch.empty_like(layer.wp)
        cudnn = gpu_time_ms(cudnn_backward(layer, "wgrad"))
        for p, tile_names in pinned:
            for splits in SWEEP_SPLITS:
                name = tile_names[splits > 1]
                if kernel_cc == 90 and splits > N:  # an SM90 slice holds whole images
                    continue
                try:
                    call = lambda i, p=p, s=splits: p.run(layer.dy, layer.xp, None, dw,  # noqa: E731
                                                          split_k=("parallel", s), sync=False, **layer.geometry)
                    ms = statistics.median(interleaved_ms({"c": call}, rounds)["c"])
                except cuforge.Error as e:
                    print(f"{layer_name:22s} {name} x{splits}: {e}")
                    continue
                print(f"{layer_name:22s} x{splits:<3d} {layer.flops / ms / 1e9:6.1f} TFLOP/s  {cudnn / ms:.2f}x cuDNN  "
                      f"{name}", flush=True)
                yield {"layer": layer_name, "kernel": name, "splits": splits, "ms": ms, "cudnn_ms": cudnn,
                       "tflops": layer.flops / ms / 1e9}


def profile_layers(dt, passes, layers, top):
    """plan.profile per pass and layer: the cost model's best `top` candidates built and timed, with
    the model's estimates, cuDNN beside them (the stem on channels padded to 8 on both sides): the
    data the model's ranking of convolution kernels is checked against. Yields a row per profile."""
    for kind in passes:
        plan = cuforge.op.Conv2d(kind=kind, element=dt, element_accumulator=torch.float32)
        for name in layers:
            h, c, k, r, stride, padding = LAYERS[name]
            result = plan.profile(N, h, h, cuforge_channels(c), k, r, r, stride, padding, top=top)
            print(result.table(), flush=True)
            candidates = [{key: (None if isinstance(v, float) and v != v else v) for key, v in row.items()}
                          for row in result.rows]  # NaN (not built or run) as null
            yield {"layer": name, "pass": kind, "problem": result.problem, "flops": result.flops,
                   "cudnn_us": result.baseline_us, "candidates": candidates}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", choices=DTYPES, default="fp16")
    p.add_argument("--passes", default="fprop,dgrad,wgrad")
    p.add_argument("--layers", default=",".join(LAYERS), help="comma-separated names of LAYERS")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--kernel-cc", type=int, choices=[80, 90],
                   help="kernel family (default: the selection's, SM90 on Hopper where its kernels run the layer)")
    p.add_argument("--autotune", type=int, metavar="N",
                   help="plans with autotune, timing the model's best N per layer (the tuning record is cleared first)")
    p.add_argument("--sweep-wgrad", action="store_true",
                   help="time every wgrad tile (SM80's, or SM90's with --kernel-cc 90) with parallel split-K "
                        "slice counts instead")
    p.add_argument("--tiles", default="*", metavar="GLOBS",
                   help="--sweep-wgrad only the tiles whose split kernel matches one of these comma-separated "
                        "globs (a sweep in parts, each within a device call)")
    p.add_argument("--relu-bias", action="store_true",
                   help="fprop with a fused relu and per-channel bias (torch: conv2d with its bias, then relu)")
    p.add_argument("--profile", type=int, metavar="N",
                   help="profile the model's best N candidates per pass and layer instead (plan.profile)")
    p.add_argument("--pad-channels", type=int, choices=[4, 8], default=8,
                   help="the channels cuforge runs the 3-channel stem on (default 8)")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()
    global PAD_CHANNELS
    PAD_CHANNELS = args.pad_channels
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    dt = DTYPES[args.dtype]
    passes = args.passes.split(",")
    layers = [name for name in LAYERS if name in args.layers.split(",")]
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {args.dtype}, N = {N}")
    if args.sweep_wgrad or args.profile:
        key, rows = (("sweep_wgrad", sweep_wgrad(dt, layers, args.rounds, args.kernel_cc or 80,
                                                   args.tiles))
                     if args.sweep_wgrad else ("profile", profile_layers(dt, passes, layers, args.profile)))
        kept = []
        for row in rows:  # written as they come: a long sweep cut short keeps what it measured
            kept.append(row)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump({"device": props.name, "dtype": args.dtype, "n": N, key: kept}, f, indent=2)
        return
    t0 = time.perf_counter()
    names = set()
    if args.autotune:
        cuforge._core.tuning_record_clear()
    for kind in passes if not args.autotune else []:
        plan = cuforge.op.Conv2d(kind=kind, element=dt, element_accumulator=torch.float32, kernel_cc=args.kernel_cc)
        fused = args.relu_bias and kind == "fprop"
        if fused:
            plan.activation = "relu"
        for name in layers:
            h, c, k, r, stride, padding = LAYERS[name]
            names.add(plan.select(N, h, h, cuforge_channels(c), k, r, r, stride=stride, padding=padding, bias=fused))
    if names:
        cuforge.build(sorted(names))
        print(f"prebuilt {len(names)} kernels in {time.perf_counter() - t0:.0f} s", flush=True)
    results = {"device": props.name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
               "dtype": args.dtype, "n": N, "rounds": args.rounds, "kernel_cc": args.kernel_cc,
               "pad_channels": PAD_CHANNELS, "autotune_candidates": args.autotune, "rows": []}
    for name in layers:
        results["rows"] += bench_layer(name, dt, passes, args.rounds, args.kernel_cc, args.autotune, args.relu_bias)
        if args.autotune:  # every candidate timed per class (its key), for refitting the cost model
            results["tuning_record"] = [dict(e, decomposition=e["decomposition"].name,
                                             measured=[list(m) for m in e["measured"]])
                                        for e in cuforge.tuning_record()[1]]
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
    by_pass = {}
    for row in results["rows"]:
        by_pass.setdefault(row["pass"], []).append(row)
    for kind, rows in by_pass.items():
        ratios = [r["ratio"] for r in rows]
        families = ", ".join(f"{f} {sum(r['family'] == f for r in rows)}" for f in sorted({r["family"] for r in rows}))
        print(f"{kind}: geomean {statistics.geometric_mean(ratios):.2f}x cuDNN, lowest {min(ratios):.2f}x "
              f"(layers per kernel family: {families})")


if __name__ == "__main__":
    main()
