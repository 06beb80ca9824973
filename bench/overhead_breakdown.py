#!/usr/bin/env python3
"""Where the host time of one small run goes: describing the operands (Python), the core's run
(checks, lookup, CUTLASS's parameter setup, launch, event), the whole `plan.run`, and torch.matmul
for scale. 64x64x64 bf16, sync=False, microseconds per call over 2000 calls.

    python bench/overhead_breakdown.py
"""

import time

import torch

import cuforge
from cuforge.arrays import current_stream, describe


def per_call_us(call, calls=2000):
    for _ in range(100):
        call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def main():
    plan = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor)
    A, B, D = (torch.randn(64, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    descs = [describe(x, name) for x, name in zip((A, B, D), "ABD")]
    stream = current_stream((A,), None)
    rows = [
        ("describe A, B, D", lambda: [describe(x, name) for x, name in zip((A, B, D), "ABD")]),
        ("core run", lambda: plan._plan.run(descs[0], descs[1], None, descs[2], 1.0, 0.0, stream, None)),
        ("plan.run", lambda: plan.run(A, B, None, D, sync=False)),
        ("torch.matmul", lambda: torch.matmul(A, B, out=D)),
    ]
    for name, call in rows:
        print(f"{name:18s} {per_call_us(call):6.2f} µs")


if __name__ == "__main__":
    main()
