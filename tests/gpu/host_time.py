"""Host time of a call as the GPU tests print it: wall-clock microseconds per call, after warm-up
calls, with the GPU's queue drained before and after the timed calls."""

import time

import torch


def per_call_us(call, calls, warmup):
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6
