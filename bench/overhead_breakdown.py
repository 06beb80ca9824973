#!/usr/bin/env python3
"""Where the host time of one small run goes, step by step: reading the torch tensors' attributes
(each, then all five of the three operands), describing the operands, finding the stream, the
core's checks alone, the core's run (checks, lookup, the kernel's launch, event) on descriptors and
on the tensors themselves (the one-call path), the whole `plan.run` (one call) and with a stream
given (the general path), and torch.matmul for scale. 64x64x64 bf16, sync=False, microseconds of
host time per call (bench/timing.py: the median of 9 rounds of 200 calls, each queued behind a GPU
sleep, so that no kernel runs while they are timed).

    python bench/overhead_breakdown.py [--json FILE]
"""

import argparse
import json

import torch

import cuforge
from cuforge.arrays import current_stream, describe
from timing import host_time_us


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()

    plan = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor)
    A, B, D = (torch.randn(64, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    descs = [describe(x, name) for x, name in zip((A, B, D), "ABD")]
    stream = current_stream((A,), None)
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
        ("plan.run", lambda: plan.run(A, B, None, D, sync=False)),
        ("torch.matmul", lambda: torch.matmul(A, B, out=D)),
    ]
    results = {}
    for name, call in rows:
        results[name] = host_time_us(call)
        print(f"{name:22s} {results[name]:6.2f} µs", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "problem": "64x64x64 bf16", "us_per_call": results},
                      f, indent=1)


if __name__ == "__main__":
    main()
