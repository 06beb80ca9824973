"""Timing shared by the benchmarks and the GPU tests: GPU time (CUDA events around each call, median
of repeats, the calls compared taking turns; or per call of calls queued back to back) and host time
(wall clock per call while the GPU runs none of them)."""

import itertools
import statistics
import time

import torch

import cuforge


def gpu_time_ms(call, repeats: int = 20, warmup: int = 3) -> float:
    """Median GPU time of `call(i)` (i = 0, 1, ...), in milliseconds (`gpu_times_ms` of one call)."""
    return gpu_times_ms({"call": call}, repeats, warmup)["call"]


def gpu_times_ms(calls: dict, repeats: int = 20, warmup: int = 3) -> dict:
    """Median GPU time of each named `call(i)` (i = 0, 1, ...), in milliseconds, the calls taken in
    turn (the first call's i-th run, the second's, ..., then every call's (i+1)-th), each between
    CUDA events: a GPU at its power limit changes clocks over the milliseconds of a measurement, and
    two calls' ratio moved by up to 0.19 on the H200 with which was timed first when each call's runs
    were timed together (bench/NOTES.md, "Timing in turn"). Calls that read the same operands read
    them from L2 after the call before them: give each its own.

    The timed calls are queued behind a GPU sleep that outlasts their host time (twice the warm-up's
    fastest round, per round; lengthened twice where a shared host's slower calls outlast it), so host
    time between launches (longer than a small kernel's run time, and a convolution's split into many
    slices costs more) is not counted: this measures the kernels, not the launch rate. Raises
    RuntimeError when the sleep ended before the last call was queued even at its longest (a call
    waits for the GPU: synchronizes; or, likely, more launches and events were queued than CUDA holds
    pending, which blocks the host: 16 calls x 50 repeats raised on the H200 where 16 x 15 did not).
    """
    host_ms = float("inf")
    for i in range(max(warmup, 1)):
        begin = time.perf_counter()
        for call in calls.values():
            call(i)
        host_ms = min(host_ms, (time.perf_counter() - begin) * 1e3)
    torch.cuda.synchronize()
    events = {name: [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                     for _ in range(repeats)] for name in calls}

    def timed_calls():
        for i in range(repeats):
            for name, call in calls.items():
                start, end = events[name][i]
                start.record()
                call(i)
                end.record()

    for hold_ms in (2 * repeats * host_ms + 0.5, 8 * repeats * host_ms + 2.0, 32 * repeats * host_ms + 20.0):
        if behind_sleep(hold_ms, timed_calls)[0]:
            return {name: statistics.median(s.elapsed_time(e) for s, e in pairs) for name, pairs in events.items()}
    raise RuntimeError(f"gpu_times_ms: {repeats} rounds of {len(calls)} calls outlasted a GPU sleep of {hold_ms:.1f} "
                       "ms: a call waits for the GPU (sync=False?)")


def back_to_back_ms(call) -> float:
    """GPU time per call of `call(i)` (i = 0, 1, ...), the calls queued back to back between two
    events behind a held stream (cuforge's `time_launches`, as plan.profile times kernels): a kernel
    may start while the one before it ends where both allow it (programmatic dependent launch), as
    in a model's stream of GEMMs. The fastest round's mean, in milliseconds."""
    calls = itertools.count()
    return cuforge._core.time_launches(lambda: call(next(calls)), torch.cuda.current_stream().cuda_stream) / 1e3


def interleaved_ms(calls: dict, rounds: int, repeats: int = 20, warmup: int = 3) -> dict:
    """`gpu_time_ms` of each named call, `rounds` times over, the calls taken in turn within each
    round: the shared machine's clocks drift over seconds, so each round's ratios compare calls
    timed moments apart (`gpu_times_ms` takes turns call by call). Returns name -> the rounds'
    times (ms)."""
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            times[name].append(gpu_time_ms(call, repeats, warmup))
    return times


_cycles_per_ms = None


def behind_sleep(hold_ms: float, queue):
    """Runs `queue()` (which queues GPU work) behind a GPU sleep of about `hold_ms`, then waits for
    the GPU. Returns whether the sleep was still running when `queue()` returned, and its result."""
    torch.cuda._sleep(_sleep_cycles(hold_ms))
    slept = torch.cuda.Event()
    slept.record()
    result = queue()
    held = not slept.query()
    torch.cuda.synchronize()
    return held, result


def _sleep_cycles(ms: float) -> int:
    """GPU clock cycles of torch.cuda._sleep lasting about `ms` milliseconds (measured once)."""
    global _cycles_per_ms
    if _cycles_per_ms is None:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(10_000_000)
        end.record()
        end.synchronize()
        _cycles_per_ms = 10_000_000 / start.elapsed_time(end)
    return int(_cycles_per_ms * ms)


def host_time_us(call, calls: int = 200, rounds: int = 9, warmup: int = 200, hold_ms: float = 100.0) -> float:
    """Host time of one `call()` in microseconds: the median over `rounds` of the wall clock of
    `calls` calls, each round queued behind a GPU sleep of `hold_ms` that outlasts it.

    A loop of calls timed while the GPU runs them measures the slower of the host and the GPU: the
    launch queue fills, and each call then waits for a kernel to finish. Behind the sleep no kernel
    runs until the round is over, so this is the host's work alone. Raises RuntimeError when the
    sleep ended before the round did (it had finished when the round ended, or the round took longer
    than half of it): then the figure would include waiting for the GPU.
    """
    return host_times_us({"call": call}, calls, rounds, warmup, hold_ms)["call"]


def host_times_us(calls_by_name: dict, calls: int = 200, rounds: int = 9, warmup: int = 200,
                  hold_ms: float = 100.0) -> dict:
    """host_time_us of several calls, their rounds interleaved (every call's first round, then every
    call's second, ...), so that a host that runs faster or slower over the minutes of a measurement
    moves every figure alike: their differences hold where figures measured one after another did
    not (a shared machine's host, 2026-12-04: a row 2 µs above the rows that contain it)."""
    for call in calls_by_name.values():
        for _ in range(warmup):
            call()
    torch.cuda.synchronize()

    def round_s(call):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        return time.perf_counter() - start

    times = {name: [] for name in calls_by_name}
    for r in range(rounds + 1):  # the first round held too, discarded: pools grow to a held round's needs
        for name, call in calls_by_name.items():
            held, elapsed = behind_sleep(hold_ms, lambda: round_s(call))
            if not held or elapsed * 1e3 > hold_ms / 2:
                raise RuntimeError(f"host_time_us: {calls} calls of {name} took {elapsed * 1e3:.1f} ms, not well "
                                   f"inside the GPU's {hold_ms:.0f} ms sleep: the calls waited for the GPU (time fewer)")
            if r:
                times[name].append(elapsed / calls * 1e6)
    return {name: statistics.median(t) for name, t in times.items()}
