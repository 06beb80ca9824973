"""The kernels cuBLAS and cuDNN run (through torch) on the benchmarks' problems, read from
torch.profiler: their names carry the tile, cluster and schedule (e.g. nvjet_sm90_tst_128x256_64x4_2x1_v),
which says what a cuforge kernel has to match. No cuforge kernel runs here.

    python3 bench/vendor_kernels.py [--json out.json]
"""

import argparse
import json

import torch
from torch.profiler import ProfilerActivity, profile

from conv import DTYPES as CONV_DTYPES, cudnn_backward, layer_problem
from fp8 import SHAPES as FP8_SHAPES
from gemm import DEFAULT_SHAPES, DTYPES as GEMM_DTYPES, FULL_F32
from resnet50 import LAYERS

CALLS = 5


def kernels_of(call):
    """[(kernel name, GPU µs per call)] of what `call()` launches, slowest first."""
    call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            call()
        torch.cuda.synchronize()
    rows = [(e.key, e.device_time_total / CALLS) for e in prof.key_averages() if e.device_time_total > 0]
    return sorted(rows, key=lambda r: -r[1])


def gemm_problems():
    for name, dt in GEMM_DTYPES.items():
        if name in FULL_F32:  # cuBLAS's f32 SGEMM: the tf32 rows with allow_tf32 off
            continue
        for M, N, K in DEFAULT_SHAPES:
            A = torch.randn(M, K, device="cuda", dtype=dt)
            B = torch.randn(K, N, device="cuda", dtype=dt)
            yield f"{name} {M}x{N}x{K}", lambda A=A, B=B: torch.matmul(A, B)
    one = torch.ones((), device="cuda")
    for fast in (False, True):
        for M, N, K in FP8_SHAPES:
            A = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
            B = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
            yield (f"e4m3{' fast' if fast else ''} {M}x{N}x{K}",
                   lambda A=A, B=B, fast=fast: torch._scaled_mm(A, B, one, one, out_dtype=torch.bfloat16,
                                                                use_fast_accum=fast))


def conv_problems():
    for dt_name, dt in CONV_DTYPES.items():
        for name in LAYERS:
            layer = layer_problem(name, dt)
            yield (f"{dt_name} fprop {name}", lambda layer=layer: torch.nn.functional.conv2d(
                layer.x, layer.w, stride=layer.stride, padding=layer.padding))
            for kind in ("dgrad", "wgrad"):
                call = cudnn_backward(layer, kind)
                yield f"{dt_name} {kind} {name}", lambda call=call: call(0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", help="write the kernels per problem here")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(), "problems": {}}
    for problems in (gemm_problems(), conv_problems()):
        for label, call in problems:
            rows = kernels_of(call)
            out["problems"][label] = [{"kernel": k, "us": round(us, 2)} for k, us in rows]
            print(f"{label:40s} " + "; ".join(f"{k[:110]} {us:.1f} us" for k, us in rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
