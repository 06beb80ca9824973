"""GPU timing shared by the benchmarks: CUDA events around each call, median of repeats."""

import statistics

import torch


def gpu_time_ms(call, repeats: int = 20, warmup: int = 3) -> float:
    """Median GPU time of `call(i)` (i = 0, 1, ...), in milliseconds.

    The timed calls are queued behind a GPU sleep, so host time between launches (longer than a
    small GEMM's run time) is not counted: this measures the kernels, not the launch rate.
    """
    for i in range(warmup):
        call(i)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    torch.cuda._sleep(repeats * 100_000)  # ~50 µs of GPU cycles per queued call
    for i, (start, end) in enumerate(zip(starts, ends)):
        start.record()
        call(i)
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def interleaved_ms(calls: dict, rounds: int, repeats: int = 20, warmup: int = 3) -> dict:
    """`gpu_time_ms` of each named call, `rounds` times over, the calls taken in turn within each
    round: the shared machine's clocks drift over seconds, so each round's ratios compare calls
    timed moments apart. Returns name -> the rounds' times (ms)."""
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            times[name].append(gpu_time_ms(call, repeats, warmup))
    return times
