#!/usr/bin/env python3
"""Where the host time of one small run goes, step by step: reading the torch tensors' attributes
(each, then all five of the three operands), describing the operands, finding the stream, the
core's checks alone, the core's run (checks, lookup, the kernel's launch, event) on descriptors and
on the tensors themselves (the one-call path), the whole `plan.run` (one call, also with a stream
given as an int) and by the general path (a stream handed over as CuPy's, which only Python reads),
and torch.matmul for scale. 64x64x64 bf16, sync=False, microseconds of
host time per call (bench/timing.py: the median of 9 rounds of 200 calls, wgrad's 20, each queued behind a GPU
sleep, so that no kernel runs while they are timed; the rows' rounds interleaved, so that the host's drift
moves them alike). --op fprop and --op wgrad: the same steps for a
convolution's run (channels_last fp16; fprop 1x8x8x64->64 3x3, wgrad ResNet-50's 32x28x28x128->128 3x3
in the parallel slices the model picks), torch's conv2d or its weight gradient for scale.

    python bench/overhead_breakdown.py [--op gemm|fprop|wgrad] [--json FILE]
"""

import argparse
import json
import types

import torch

import cuforge
from cuforge.arrays import current_stream, describe
from cuforge.op.conv2d import _nhwc_views
from timing import host_times_us


def gemm_rows():
    plan = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor)
    A, B, D = (torch.randn(64, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    descs = [describe(x, name) for x, name in zip((A, B, D), "ABD")]
    stream = current_stream((A,), None)
    python_stream = types.SimpleNamespace(ptr=stream)  # as CuPy hands a stream over: read in Python only
    core = plan._plan

    def attributes():
        for x in (A, B, D):
            x.data_ptr(), x.dtype, x.shape, x.stride(), x.get_device()

    rows = [
        ("A.data_ptr()", A.data_ptr),
        ("A.dtype", lambda: A.dtype),
        ("A.shape", lambda: A.shape),
        ("A.stride()", A.stride),
        ("A.get_device()", A.get_device),
        ("torch attributes x3", attributes),
        ("describe A, B, D", lambda: [describe(x, name) for x, name in zip((A, B, D), "ABD")]),
        ("current_stream", lambda: current_stream((A, B, None, D), None)),
        ("core check", lambda: core.check(descs[0], descs[1], None, descs[2], 1.0, 0.0)),
        ("core run", lambda: core.run(descs[0], descs[1], None, descs[2], 1.0, 0.0, stream, None)),
        ("core run_tensors", lambda: core.run_tensors(A, B, None, D, 1.0, 0.0, False)),
        ("plan.run, stream given", lambda: plan.run(A, B, None, D, sync=False, stream=stream)),
        ("plan.run, general path", lambda: plan.run(A, B, None, D, sync=False, stream=python_stream)),
        ("plan.run", lambda: plan.run(A, B, None, D, sync=False)),
        ("torch.matmul", lambda: torch.matmul(A, B, out=D)),
    ]
    return "64x64x64 bf16", rows


def conv_rows(kind):
    n, h, c, k = (1, 8, 64, 64) if kind == "fprop" else (32, 28, 128, 128)
    geometry = dict(stride=(1, 1), padding=(1, 1), dilation=(1, 1))

    def channels_last(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.float16).contiguous(memory_format=torch.channels_last)

    x, w, y = channels_last(n, c, h, h), channels_last(k, c, 3, 3), channels_last(n, k, h, h)
    A, B, D = (x, w, y) if kind == "fprop" else (y, x, w)  # wgrad: dy, x, dw
    plan = cuforge.op.Conv2d(kind=kind, element=torch.float16, element_accumulator=torch.float32)
    plan.run(A, B, None, D, **geometry)  # builds the kernel the model picks
    print(f"{kind}: {plan.last_kernel}", flush=True)
    views = _nhwc_views((A, B, D))
    descs = [describe(v, name) for v, name in zip(views, "ABD")]
    stream = current_stream((A,), None)
    python_stream = types.SimpleNamespace(ptr=stream)  # as CuPy hands a stream over: read in Python only
    core, g = plan._plan, tuple(geometry.values())
    if kind == "fprop":
        baseline = ("torch conv2d", lambda: torch.nn.functional.conv2d(x, w, padding=1))
    else:
        baseline = ("torch weight gradient", lambda: torch.ops.aten.convolution_backward(
            y, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [False, True, False]))
    rows = [
        ("NHWC views", lambda: _nhwc_views((A, B, D))),
        ("describe A, B, D", lambda: [describe(v, name) for v, name in zip(views, "ABD")]),
        ("core check", lambda: core.check(descs[0], descs[1], None, descs[2], *g, 0.0, 0, False)),
        ("core run", lambda: core.run(descs[0], descs[1], None, descs[2], *g, 1.0, 0.0, 0, False, stream, None)),
        ("core run_tensors", lambda: core.run_tensors(A, B, None, D, 1, 1, 1, 1.0, 0.0, None, False)),
        ("plan.run, stream given", lambda: plan.run(A, B, None, D, sync=False, stream=stream, **geometry)),
        ("plan.run, general path", lambda: plan.run(A, B, None, D, sync=False, stream=python_stream, **geometry)),
        ("plan.run", lambda: plan.run(A, B, None, D, sync=False, **geometry)),
        baseline,
    ]
    return f"{kind} {n}x{h}x{h}x{c}->{k} 3x3 fp16", rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", choices=["gemm", "fprop", "wgrad"], default="gemm")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()

    problem, rows = gemm_rows() if args.op == "gemm" else conv_rows(args.op)
    # A split wgrad queues a few launches per run: 200 runs would fill the launch queue, and wait.
    calls = 20 if args.op == "wgrad" else 200
    results = host_times_us(dict(rows), calls=calls)
    for name, us in results.items():
        print(f"{name:22s} {us:6.2f} µs", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "problem": problem, "us_per_call": results},
                      f, indent=1)


if __name__ == "__main__":
    main()
