"""The profiler: the candidates a GEMM, grouped GEMM or Conv2d plan's cost model ranks for one
problem, built in parallel and timed on the GPU (CUDA events, warm-up, rounds of launches), beside
cuBLAS (torch.matmul, torch._grouped_mm) or cuDNN (torch's convolution and its gradients) in the
same process; as a table, a CSV and a plot. And tune(): the tuning record filled offline for a list
of shapes. The command lines over them (`cuforge profile`, `cuforge tune`): cuforge.profile_command.
"""

from __future__ import annotations

import csv
import math
import os
import re
import textwrap
import time
from dataclasses import dataclass, field

import numpy as np

from . import _core
from ._core import DataType, DeviceBuffer, DeviceError, InvalidArgumentError, LayoutType
from .arguments import conv_geometry, file_path, flag, integer, jobs_count, text
from .build import progress_line

#: The CSV's columns, in order.
COLUMNS = ("kernel", "splits", "decomposition", "predicted_rank", "measured_rank", "predicted_us", "measured_us",
           "tflops", "error")

# torch's element types for the baseline (others have no torch.matmul to compare with).
_TORCH_TYPES = {DataType.f16: "float16", DataType.bf16: "bfloat16", DataType.f32: "float32",
                DataType.f64: "float64"}


@dataclass
class Profile:
    """What profile(), profile_grouped() or profile_conv() measured: one row per candidate (COLUMNS),
    best measured first, and the baseline's time (None without torch, or for types torch does not
    take)."""

    problem: str  # e.g. "4096x4096x4096 (batch 1)"
    flops: float  # of one run, for TFLOP/s
    types: str
    rows: list = field(default_factory=list)
    baseline_us: float | None = None
    baseline_name: str = "torch.matmul (cuBLAS)"

    def table(self) -> str:
        lines = [f"{self.problem} {self.types}: {len(self.rows)} candidates, best measured first"]
        lines.append(f"{'meas':>4} {'model':>5} {'us':>9} {'TFLOP/s':>8} {'model us':>9}  kernel")
        for r in self.rows:
            us = "failed" if math.isnan(r["measured_us"]) else f"{r['measured_us']:9.2f}"
            tflops = "" if math.isnan(r["tflops"]) else f"{r['tflops']:8.1f}"
            lines.append(f"{r['measured_rank']:>4} {r['predicted_rank']:>5} {us:>9} {tflops:>8} "
                         f"{r['predicted_us']:9.2f}  {r['kernel']} x{r['splits']} {r['decomposition']}"
                         + (f"  ({r['error']})" if r["error"] else ""))
        if self.baseline_us is not None:
            lines.append(f"{self.baseline_name}: {self.baseline_us:.2f} us, "
                         f"{self.flops / self.baseline_us / 1e6:.1f} TFLOP/s")
        return "\n".join(lines)

    def write_csv(self, path: str) -> None:
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            for r in self.rows:
                writer.writerow({c: r[c] for c in COLUMNS})
            if self.baseline_us is not None:
                writer.writerow(dict(kernel=self.baseline_name, splits=1, decomposition="", predicted_rank="",
                                     measured_rank="", predicted_us="", measured_us=self.baseline_us,
                                     tflops=self.flops / self.baseline_us / 1e6, error=""))

    def save(self, csv: str | None = None, plot: str | None = None) -> "Profile":
        """Writes the CSV and draws the PNG where paths are given; returns the profile."""
        for name, path, write in (("csv", csv, self.write_csv), ("plot", plot, self.plot)):
            if path is not None and path != "":
                path = _writable(path, name)
                try:
                    write(path)
                except OSError as e:
                    raise InvalidArgumentError(f"{name}: cannot write {path!r}: {e.strerror or e}") from None
        return self

    def plot(self, path: str) -> None:
        """TFLOP/s per kernel (bars, labelled with the model's rank), the baseline as a line."""
        plt = _pyplot()
        rows = [r for r in self.rows if not math.isnan(r["measured_us"])]
        fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.8))
        labels = [f"{_short_name(r['kernel'])} x{r['splits']}" for r in rows]
        bars = ax.barh(range(len(rows)), [r["tflops"] for r in rows],
                       color=["tab:orange" if r["predicted_rank"] == 0 else "tab:blue" for r in rows])
        for bar, r in zip(bars, rows):
            ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" model #{r['predicted_rank']}",
                    va="center", fontsize=8)
        baseline = [self.flops / self.baseline_us / 1e6] if self.baseline_us is not None else []
        if baseline:
            ax.axvline(baseline[0], color="black", linestyle="--", label=self.baseline_name)
            ax.legend(loc="lower right")
        ax.set_xlim(0, 1.15 * max([r["tflops"] for r in rows] + baseline + [1e-9]))  # room for the rank labels
        ax.set_yticks(range(len(rows)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("TFLOP/s")
        ax.set_title(textwrap.fill(f"{self.problem}, {self.types} (orange: the cost model's pick)", 80), fontsize=10)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)


def _short_name(kernel: str) -> str:
    """A kernel's family and what follows its tile (the types and layouts every candidate shares dropped):
    "sm90 128x128x64_c1x1x1_s0_tmaws_tma_default_a8x8x8_splitk"."""
    parts = kernel.split("_")
    tile = next((i for i, p in enumerate(parts) if re.fullmatch(r"\d+x\d+x\d+", p)), None)
    return kernel if tile is None or len(parts) < 2 else f"{parts[1]} " + "_".join(parts[tile:])


def _pyplot():
    """matplotlib's pyplot, drawing to files; a clear error where matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError as e:
        raise InvalidArgumentError("plot: drawing the plot needs matplotlib (pip install matplotlib, or "
                                   "cuforge's plot extra: pip install '.[plot]' from its checkout)") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# The host type holding each element type's bits (bf16 as its upper 16 bits of f32, fp8 as bytes).
_HOST_TYPES = {DataType.f16: np.float16, DataType.bf16: np.uint16, DataType.f32: np.float32,
               DataType.tf32: np.float32, DataType.f64: np.float64, DataType.s8: np.int8, DataType.u8: np.int8,
               DataType.s32: np.int32, DataType.e4m3: np.uint8, DataType.e5m2: np.uint8}


def _random_bytes(dtype: DataType, count: int, rng) -> np.ndarray:
    """Values of moderate size in the element type's bits (what the kernels read: the timing does not
    depend on them, the clocks a little)."""
    host = _HOST_TYPES[dtype]
    if dtype in (DataType.s8, DataType.u8, DataType.s32):
        return rng.integers(-3, 4, count).astype(host)
    if dtype in (DataType.e4m3, DataType.e5m2):  # random bits with the top exponent bit clear: finite, below 2
        return (rng.integers(0, 256, count).astype(np.uint8) & 0xBF).astype(host)
    normal = rng.standard_normal(count, dtype=np.float32)
    return (normal.view(np.uint32) >> 16).astype(host) if dtype == DataType.bf16 else normal.astype(host)


class _Operand:
    """A dense device tensor of random values (or of ``values``), described as the core takes
    operands: a matrix (or a batch of them) in a layout, or (with ``layout`` None) a tensor of
    ``shape`` (NHWC, or a vector)."""

    def __init__(self, dtype, shape, layout, device, rng, values: np.ndarray | None = None):
        self.itemsize = np.dtype(_HOST_TYPES[dtype]).itemsize
        count = math.prod(shape)
        too_big = InvalidArgumentError(f"profile: an operand of shape {tuple(shape)} does not fit in this machine's "
                                       "memory")
        if count * self.itemsize >= 2**63:
            raise too_big
        # The device's allocation first: one past the GPU's memory is refused at once, before the host draws it.
        self.buffer = DeviceBuffer(device, count * self.itemsize, 0)
        try:
            host = _random_bytes(dtype, count, rng) if values is None else values
        except (MemoryError, ValueError):  # NumPy: "array is too big" past its sizes
            raise too_big from None
        self.buffer.copy_from_host(host.ctypes.data, host.nbytes)
        ptr = self.buffer.data
        strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
        if layout == LayoutType.ColumnMajor:
            strides[-2:] = 1, shape[-2]
        self.descriptor = (ptr, dtype, tuple(shape), tuple(strides), device)

    def matrices(self) -> list:
        """One descriptor per matrix of a batch of them (of the whole operand where it is one matrix)."""
        ptr, dtype, shape, strides, device = self.descriptor
        if len(shape) == 2:
            return [self.descriptor]
        return [(ptr + i * strides[0] * self.itemsize, dtype, shape[1:], strides[1:], device) for i in range(shape[0])]


def _matrix(dtype, rows, cols, batch, layout, device, rng) -> _Operand:
    return _Operand(dtype, (batch, rows, cols) if batch > 1 else (rows, cols), layout, device, rng)


def _torch_dtype(plan):
    """torch's element type of every operand of the plan, else None (also without torch)."""
    try:
        import torch
    except ImportError:
        return None
    names = {_TORCH_TYPES.get(t) for t in (plan.element_A, plan.element_B, plan.element_D)}
    return getattr(torch, names.pop()) if len(names) == 1 and None not in names else None


def _best_us(run) -> float:
    """GPU time of one call of ``run`` (torch's work on its current stream), measured as the
    kernels are (``_core.time_launches``: calls queued while the stream is held, so that neither
    side's host time counts)."""
    import torch

    return _core.time_launches(run, torch.cuda.current_stream().cuda_stream)


def _torch_baseline_us(plan, m, n, k, batch) -> float | None:
    dtype = _torch_dtype(plan)
    if dtype is None:
        return None
    import torch

    shape = (batch,) if batch > 1 else ()
    a = torch.randn(*shape, m, k, device="cuda", dtype=dtype)
    b = torch.randn(*shape, k, n, device="cuda", dtype=dtype)
    if plan.layout_A == LayoutType.ColumnMajor:
        a = a.transpose(-1, -2).contiguous().transpose(-1, -2)
    if plan.layout_B == LayoutType.ColumnMajor:
        b = b.transpose(-1, -2).contiguous().transpose(-1, -2)
    d = torch.empty(*shape, m, n, device="cuda", dtype=dtype)
    tf32 = torch.backends.cuda.matmul.allow_tf32
    # f32 plans compute in TF32 unless they ask for 3xTF32: cuBLAS likewise
    torch.backends.cuda.matmul.allow_tf32 = plan.math_operation != _core.MathOperation.multiply_add_fast_f32
    try:
        return _best_us(lambda: torch.matmul(a, b, out=d))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32


def _grouped_baseline(plan, groups, m, n, k) -> tuple[str, float] | None:
    """torch._grouped_mm's time on the offsets form of the groups (B as this build takes it), else a
    loop of torch.matmul's; None without torch or for types it does not take."""
    dtype = _torch_dtype(plan)
    if dtype is None:
        return None
    import torch

    a = torch.randn(groups * m, k, device="cuda", dtype=dtype)
    b = torch.randn(groups, k, n, device="cuda", dtype=dtype)
    offs = torch.arange(1, groups + 1, device="cuda", dtype=torch.int32) * m
    if hasattr(torch, "_grouped_mm"):
        for layout in (b, b.transpose(1, 2).contiguous().transpose(1, 2)):
            try:
                torch._grouped_mm(a, layout, offs=offs)
            except RuntimeError:
                continue
            return "torch._grouped_mm", _best_us(lambda: torch._grouped_mm(a, layout, offs=offs))
    rows = a.split(m)
    return "torch.matmul loop", _best_us(lambda: [torch.matmul(x, b[g]) for g, x in enumerate(rows)])


def _cudnn_baseline_us(plan, kind, x_shape, w_shape, y_shape, geometry) -> float | None:
    """cuDNN's time (through torch, channels_last) for the convolution pass: fprop conv2d, dgrad
    and wgrad convolution_backward computing that gradient alone."""
    dtype = _torch_dtype(plan)
    if dtype is None:
        return None
    import torch

    def nchw(nhwc):  # a channels_last tensor of the NHWC extents
        n, h, w, c = nhwc
        return torch.randn(n, c, h, w, device="cuda", dtype=dtype).contiguous(memory_format=torch.channels_last)

    x, w, dy = nchw(x_shape), nchw(w_shape), nchw(y_shape)
    stride, padding, dilation = geometry
    tf32 = torch.backends.cudnn.allow_tf32
    # f32 convolutions compute in TF32 unless the plan asks for 3xTF32: cuDNN likewise
    torch.backends.cudnn.allow_tf32 = plan.math_operation != _core.MathOperation.multiply_add_fast_f32
    try:
        if kind == "fprop":
            return _best_us(lambda: torch.nn.functional.conv2d(x, w, None, stride, padding, dilation))
        mask = [kind == "dgrad", kind == "wgrad", False]
        return _best_us(lambda: torch.ops.aten.convolution_backward(dy, x, w, None, stride, padding, dilation, False,
                                                                    [0, 0], 1, mask))
    finally:
        torch.backends.cudnn.allow_tf32 = tf32


def profile(plan, M: int, N: int, K: int, batch: int = 1, *, top: int = 6, filter: str | None = None,
            jobs: int | None = None, baseline: bool = True, progress: bool = True, seed: int = 0,
            csv: str | None = None, plot: str | None = None) -> Profile:
    """Build and time the cost model's best ``top`` candidates (those matching the shell glob
    ``filter``) for ``plan`` on an M x N x K problem of random operands; torch.matmul beside them.
    ``csv`` and ``plot``: where to write the rows and draw the PNG (Profile.save)."""

    m, n, k, b = (integer(v, name, 1) for v, name in ((M, "M"), (N, "N"), (K, "K"), (batch, "batch")))
    plan.select(m, n, k, b)  # refuses what no kernel runs before anything is allocated
    options = _options(top, filter, jobs, csv, plot)
    rng = np.random.default_rng(seed)
    device = plan._plan.device
    a = _matrix(plan.element_A, m, k, b, plan.layout_A, device, rng)
    bb = _matrix(plan.element_B, k, n, b, plan.layout_B, device, rng)
    d = _matrix(plan.element_D, m, n, b, plan.layout_C, device, rng)
    rows = plan._plan.profile(a.descriptor, bb.descriptor, None, d.descriptor, 1.0, 0.0, *options, 0,
                              progress_line() if progress else None)
    result = _profile(plan, f"{m}x{n}x{k} (batch {b})", 2.0 * m * n * k * b, rows)
    if baseline:
        result.baseline_us = _torch_baseline_us(plan, m, n, k, b)
    return result.save(csv, plot)


def profile_grouped(plan, groups: int, M: int, N: int, K: int, *, offsets: bool = False, top: int = 6,
                    filter: str | None = None, jobs: int | None = None, baseline: bool = True, progress: bool = True,
                    seed: int = 0, csv: str | None = None, plot: str | None = None) -> Profile:
    """Build and time the cost model's best ``top`` candidates (those matching the shell glob
    ``filter``) for a grouped ``plan`` on ``groups`` groups of M x N x K of random operands: lists of
    one tensor per group, or (``offsets``) the offsets form; torch._grouped_mm (or a loop of
    torch.matmul) beside them. ``csv`` and ``plot`` as for profile()."""

    g, m, n, k = (integer(v, name, 1) for v, name in ((groups, "groups"), (M, "M"), (N, "N"), (K, "K")))
    offsets = flag(offsets, "offsets")
    plan.select(g, m, n, k, ragged=offsets)  # refuses what no kernel runs before anything is allocated
    rng = np.random.default_rng(seed)
    device = plan._plan.device
    options = (*_options(top, filter, jobs, csv, plot), 0, progress_line() if progress else None)
    if offsets:
        a = _matrix(plan.element_A, g * m, k, 1, plan.layout_A, device, rng)
        b = _matrix(plan.element_B, k, n, g, plan.layout_B, device, rng)
        d = _matrix(plan.element_D, g * m, n, 1, plan.layout_C, device, rng)
        ends = _Operand(DataType.s32, (g,), None, device, rng, np.arange(1, g + 1, dtype=np.int32) * m)
        rows = plan._plan.profile_offsets(a.descriptor, b.descriptor, None, d.descriptor, ends.descriptor, 1.0, 0.0,
                                          *options)
    else:
        # Each operand's groups are matrices of one allocation (held until the timing ends).
        a, b, d = (_matrix(t, rows, cols, g, layout, device, rng)
                   for t, rows, cols, layout in ((plan.element_A, m, k, plan.layout_A),
                                                 (plan.element_B, k, n, plan.layout_B),
                                                 (plan.element_D, m, n, plan.layout_C)))
        rows = plan._plan.profile(a.matrices(), b.matrices(), [], d.matrices(), 1.0, 0.0, *options)
    result = _profile(plan, f"{g} groups of {m}x{n}x{k} ({'offsets' if offsets else 'lists'})", 2.0 * g * m * n * k,
                      rows)
    if baseline and (measured := _grouped_baseline(plan, g, m, n, k)):
        result.baseline_name, result.baseline_us = measured
    return result.save(csv, plot)


def profile_conv(plan, N: int, H: int, W: int, C: int, K: int, R: int, S: int, stride=(1, 1), padding=(0, 0),
                 dilation=(1, 1), *, top: int = 6, filter: str | None = None, jobs: int | None = None,
                 baseline: bool = True, progress: bool = True, seed: int = 0, csv: str | None = None,
                 plot: str | None = None) -> Profile:
    """Build and time the cost model's best ``top`` candidates (those matching the shell glob
    ``filter``) for a Conv2d ``plan`` on dense NHWC tensors of random values (x N x H x W x C, filters
    K x R x S x C); cuDNN beside them (through torch, channels_last). ``csv`` and ``plot`` as for
    profile()."""

    n, h, w, c, k, r, s = (integer(v, name, 1) for v, name in zip((N, H, W, C, K, R, S), "NHWCKRS"))
    geometry = conv_geometry(stride, padding, dilation)
    plan._plan.select([n, h, w, c, k, r, s], *geometry, False)  # the geometry checked before anything is allocated
    p, q = _core.conv_output_size((n, h, w, c, k, r, s), *geometry)
    x_shape, w_shape, y_shape = (n, h, w, c), (k, r, s, c), (n, p, q, k)
    kind = plan.conv_kind
    a_shape, b_shape, d_shape = {"fprop": (x_shape, w_shape, y_shape), "dgrad": (y_shape, w_shape, x_shape),
                                 "wgrad": (y_shape, x_shape, w_shape)}[kind]
    options = _options(top, filter, jobs, csv, plot)
    rng = np.random.default_rng(seed)
    device = plan._plan.device
    a, b, d = (_Operand(t, shape, None, device, rng)
               for t, shape in ((plan.element_A, a_shape), (plan.element_B, b_shape), (plan.element_D, d_shape)))
    rows = plan._plan.profile(a.descriptor, b.descriptor, None, d.descriptor, *geometry, 0.0, *options, 0,
                              progress_line() if progress else None)
    label = (f"{kind} {n}x{h}x{w}x{c} -> {k}, {r}x{s} filters, stride {geometry[0]}, padding {geometry[1]}, "
             f"dilation {geometry[2]}")
    result = _profile(plan, label, 2.0 * n * p * q * k * c * r * s, rows)
    if baseline:
        result.baseline_name = "cuDNN (torch " + ("conv2d)" if kind == "fprop" else f"convolution_backward, {kind})")
        result.baseline_us = _cudnn_baseline_us(plan, kind, x_shape, w_shape, y_shape, geometry)
    return result.save(csv, plot)


def _writable(path, name: str) -> str:
    """A file path the CSV or plot can be written to, else an InvalidArgumentError naming the argument."""

    path = file_path(path, name, "a file path")
    if not os.path.isdir(os.path.dirname(path) or "."):
        raise InvalidArgumentError(f"{name}: {path!r} is in no directory that exists")
    if os.path.isdir(path):
        raise InvalidArgumentError(f"{name}: {path!r} is a directory; name the file to write")
    if os.path.exists(path) and not os.path.isfile(path):  # a FIFO would block the writer, a device take anything
        raise InvalidArgumentError(f"{name}: {path!r} is not a regular file")
    # Opened as the write will open it (a name too long, a directory or file the user may not write, a link that
    # loops), before minutes of timing are spent. A file that is not there yet (a link's target among them) is made
    # and removed: only one this made (O_EXCL), never one another process made meanwhile.
    def cannot(e: OSError):
        return InvalidArgumentError(f"{name}: cannot write {path!r}: {e.strerror or e}")

    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))
        return path
    except FileNotFoundError:
        pass
    except OSError as e:
        raise cannot(e) from None
    target = os.path.realpath(path)
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except FileExistsError:
        return path  # made meanwhile: there to be written
    except OSError as e:
        raise cannot(e) from None
    os.unlink(target)
    return path


def check_outputs(csv, plot) -> None:
    """Refuses a CSV or plot path that cannot be written, and a plot without matplotlib."""
    for name, path in (("csv", csv), ("plot", plot)):
        if path is not None and path != "":
            _writable(path, name)
    if plot:
        _pyplot()


def _options(top, filter, jobs, csv, plot) -> tuple:
    """The core's (top, filter, jobs). Before anything is built or allocated: a CSV or plot that
    cannot be written refused, and a machine without a GPU (whose host would fill the operands for
    nothing)."""

    check_outputs(csv, plot)
    filter = "" if filter is None else text(filter, "filter", "a shell pattern on kernel names")
    _core.check_glob(filter)
    top = integer(top, "top", 1)
    options = min(top, 2**31 - 1), filter, jobs_count(jobs)
    if _core.device_count() == 0:
        raise DeviceError("profile: no CUDA GPU was found; profiling times kernels on one")
    return options


def _profile(plan, problem: str, flops: float, rows) -> Profile:
    """The core's rows, ranked as measured, with TFLOP/s."""
    for rank, r in enumerate(rows):
        r["decomposition"] = r["decomposition"].name
        r["measured_rank"] = rank if not math.isnan(r["measured_us"]) else ""
        r["tflops"] = flops / r["measured_us"] / 1e6 if not math.isnan(r["measured_us"]) else math.nan
    types = "/".join(t.name for t in (plan.element_A, plan.element_B, plan.element_accumulator, plan.element_D))
    return Profile(problem, flops, types, rows)


def tune(plan, shapes, candidates):
    """Runs each (M, N, K, batch) of ``shapes`` once on ``plan`` with autotune on, timing its model's first
    ``candidates`` kernels: the first run of each problem class measures them and keeps the winner in the
    tuning record (``cuforge tune``)."""
    plan.autotune = True
    plan.autotune_candidates = candidates
    rng = np.random.default_rng(0)
    device = plan._plan.device
    for m, n, k, batch in shapes:  # every shape checked (what no kernel runs refused) before anything runs
        plan.select(m, n, k, batch)
    if _core.device_count() == 0:  # before the host fills any operand
        raise DeviceError("no CUDA GPU was found; tuning times kernels on one")
    for m, n, k, batch in shapes:
        a = _matrix(plan.element_A, m, k, batch, plan.layout_A, device, rng)
        b = _matrix(plan.element_B, k, n, batch, plan.layout_B, device, rng)
        d = _matrix(plan.element_D, m, n, batch, plan.layout_C, device, rng)
        started = time.monotonic()
        plan._plan.run(a.descriptor, b.descriptor, None, d.descriptor, 1.0, 0.0, 0, None).sync()
        print(f"{m}x{n}x{k} batch {batch}: {plan.last_kernel} ({time.monotonic() - started:.1f} s)", flush=True)
