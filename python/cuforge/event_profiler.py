"""The CUTLASS Python interface's profiler of a plan's runs (``cutlass.utils.profiler.CUDAEventProfiler``):
GPU time of a plan's run on the operands given, timed as cuforge's profiler times kernels (runs queued behind
holds of the stream, between CUDA events)."""

from __future__ import annotations

import numpy as np

from . import _core
from ._core import InvalidArgumentError


class CUDAEventProfiler:
    """The CUTLASS Python interface's profiler of a plan's run (``cutlass.utils.profiler``)::

        duration_ms = CUDAEventProfiler(plan, warmup_iterations, iterations, A, B, C, D)()

    Made, it runs ``plan.run(*args, **kwargs)`` once, as the interface does (checked, built, D written). Called,
    it runs the same again ``warmup_iterations`` times, then ``iterations`` times queued behind holds of the
    stream (200 runs a hold), and returns the mean GPU milliseconds of a run between CUDA events. NumPy operands
    are timed on device copies made once (by torch, else CuPy), as the interface timed its device copies; where
    neither is installed they are copied every run, and a warning says that the time includes the copies."""

    def __init__(self, op, warmup_iterations: int = 500, iterations: int = 500, *args, **kwargs) -> None:
        from .arguments import integer
        from .op.plan import Plan

        if not isinstance(op, Plan):
            raise InvalidArgumentError(f"CUDAEventProfiler: expected a cuforge plan (cutlass.op.Gemm, GroupedGemm, "
                                       f"Conv2d...), got {type(op).__name__}")
        self.warmup_iterations = integer(warmup_iterations, "warmup_iterations", 0)
        self.iterations = integer(iterations, "iterations", 1)
        if self.iterations > 2**31 - 1:
            raise InvalidArgumentError(f"iterations: expected at most {2**31 - 1}, got {self.iterations}")
        self.operation = op
        self.arguments = op.run(*args, **kwargs)
        if not args and not any(_is_array(v) for v in kwargs.values()):  # the operands the plan was built with
            args = tuple(getattr(op, name, None) for name in "ABCD")
        self._args = tuple(_on_device(x, op._plan.device) for x in args)
        self._kwargs = {k: _on_device(v, op._plan.device) for k, v in kwargs.items()}
        self._kwargs["sync"] = False
        operands = _flattened(list(self._args) + list(self._kwargs.values()))
        if any(isinstance(x, np.ndarray) for x in operands):
            import warnings

            warnings.warn("CUDAEventProfiler: neither torch nor CuPy can hold the NumPy operands on the GPU: each "
                          "timed run copies them there and D back, and the time includes the copies", stacklevel=2)
        from .arrays import current_stream

        # The stream of the first run, named to each timed run: the one the hold and the events are on.
        self._stream = self._kwargs["stream"] = current_stream(operands, kwargs.get("stream"))

    def _rerun(self):
        self.operation.run(*self._args, **self._kwargs)

    def __call__(self) -> float:
        for _ in range(self.warmup_iterations):
            self._rerun()
        return _core.time_round(self._rerun, self._stream, self.iterations) / 1e3


def _is_array(x) -> bool:
    return isinstance(x, np.ndarray) or isinstance(x, (list, tuple)) and any(map(_is_array, x)) or \
        hasattr(x, "__dlpack__") or hasattr(x, "__cuda_array_interface__")


def _flattened(values) -> list:
    """The arrays among values, lists and tuples (a grouped run's) opened."""
    out = []
    for v in values:
        out.extend(_flattened(v) if isinstance(v, (list, tuple)) else [v])
    return out


def _on_device(x, device: int):
    """A NumPy array's copy on the GPU (torch's, else CuPy's), a list's or tuple's of each; else x itself."""
    if isinstance(x, (list, tuple)):
        return type(x)(_on_device(v, device) for v in x)
    if not isinstance(x, np.ndarray):
        return x
    import warnings

    try:
        import torch

        with warnings.catch_warnings():  # torch's of a read-only array: the copy is never written
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(x).to(f"cuda:{device}")  # the strides kept (a column-major matrix stays one)
    except (ImportError, TypeError, ValueError, RuntimeError, AssertionError):  # no torch, a type or negative stride
        pass  # it lacks, no CUDA (a CPU build's AssertionError)
    try:
        import cupy

        with cupy.cuda.Device(device):
            return cupy.array(x, order="K")
    except (ImportError, TypeError, ValueError, RuntimeError):
        return x
