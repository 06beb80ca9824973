"""The profiler: the candidates a GEMM plan's cost model ranks for one problem, built in parallel
and timed on the GPU (CUDA events, warm-up, rounds of launches), beside torch.matmul (cuBLAS) in
the same process; as a table, a CSV and a plot. And `cuforge tune`: the tuning record filled
offline from a file of shapes.

    cuforge profile --m 4096 --n 4096 --k 4096 --dtype bf16 --csv p.csv --plot p.png
    cuforge tune shapes.txt --dtype bf16        # shapes.txt: "M N K [batch]" per line
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from . import _core
from ._core import DataType, DeviceBuffer, InvalidArgumentError, LayoutType

#: The CSV's columns, in order.
COLUMNS = ("kernel", "splits", "decomposition", "predicted_rank", "measured_rank", "predicted_us", "measured_us",
           "tflops", "error")

# torch's element types for the baseline (others have no torch.matmul to compare with).
_TORCH_TYPES = {DataType.f16: "float16", DataType.bf16: "bfloat16", DataType.f32: "float32",
                DataType.f64: "float64"}


@dataclass
class Profile:
    """What profile() measured: one row per candidate (COLUMNS), best measured first, and the
    baseline's time (None without torch, or for types torch.matmul does not take)."""

    problem: tuple  # (M, N, K, batch)
    types: str
    rows: list = field(default_factory=list)
    baseline_us: float | None = None
    baseline_name: str = "torch.matmul (cuBLAS)"

    def flops(self) -> float:
        m, n, k, batch = self.problem
        return 2.0 * m * n * k * batch

    def table(self) -> str:
        m, n, k, batch = self.problem
        lines = [f"{m}x{n}x{k} (batch {batch}) {self.types}: {len(self.rows)} candidates, best measured first"]
        lines.append(f"{'meas':>4} {'model':>5} {'us':>9} {'TFLOP/s':>8} {'model us':>9}  kernel")
        for r in self.rows:
            us = "failed" if math.isnan(r["measured_us"]) else f"{r['measured_us']:9.2f}"
            tflops = "" if math.isnan(r["tflops"]) else f"{r['tflops']:8.1f}"
            lines.append(f"{r['measured_rank']:>4} {r['predicted_rank']:>5} {us:>9} {tflops:>8} "
                         f"{r['predicted_us']:9.2f}  {r['kernel']} x{r['splits']} {r['decomposition']}"
                         + (f"  ({r['error']})" if r["error"] else ""))
        if self.baseline_us is not None:
            lines.append(f"{self.baseline_name}: {self.baseline_us:.2f} us, "
                         f"{self.flops() / self.baseline_us / 1e6:.1f} TFLOP/s")
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
                                     tflops=self.flops() / self.baseline_us / 1e6, error=""))

    def plot(self, path: str) -> None:
        """TFLOP/s per kernel (bars, labelled with the model's rank), the baseline as a line."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        rows = [r for r in self.rows if not math.isnan(r["measured_us"])]
        fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.8))
        labels = [f"{r['kernel'].split('_', 3)[-1][:70]} x{r['splits']}" for r in rows]
        bars = ax.barh(range(len(rows)), [r["tflops"] for r in rows],
                       color=["tab:orange" if r["predicted_rank"] == 0 else "tab:blue" for r in rows])
        for bar, r in zip(bars, rows):
            ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" model #{r['predicted_rank']}",
                    va="center", fontsize=8)
        if self.baseline_us is not None:
            ax.axvline(self.flops() / self.baseline_us / 1e6, color="black", linestyle="--",
                       label=self.baseline_name)
            ax.legend(loc="lower right")
        ax.set_yticks(range(len(rows)), labels, fontsize=7)
        ax.invert_yaxis()
        m, n, k, batch = self.problem
        ax.set_xlabel("TFLOP/s")
        ax.set_title(f"{m}x{n}x{k} batch {batch}, {self.types} (orange: the cost model's pick)")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)


def _random_bytes(dtype: DataType, count: int, rng) -> np.ndarray:
    """Values of moderate size in the element type's bits (what the kernels read: the timing does not
    depend on them, the clocks a little)."""
    normal = rng.standard_normal(count, dtype=np.float32)
    if dtype == DataType.f16:
        return normal.astype(np.float16)
    if dtype in (DataType.f32, DataType.tf32):
        return normal
    if dtype == DataType.f64:
        return normal.astype(np.float64)
    if dtype == DataType.bf16:
        return (normal.view(np.uint32) >> 16).astype(np.uint16)
    if dtype in (DataType.s8, DataType.u8):
        return rng.integers(-3, 4, count).astype(np.int8)
    if dtype == DataType.s32:
        return rng.integers(-3, 4, count).astype(np.int32)
    # fp8: random bits with the top exponent bit clear: finite, below 2 in magnitude
    return (rng.integers(0, 256, count).astype(np.uint8) & 0xBF).astype(np.uint8)


class _Operand:
    """A dense device matrix (or batch) of random values, described as the core takes operands."""

    def __init__(self, dtype, rows, cols, batch, layout, device, rng):
        host = _random_bytes(dtype, rows * cols * batch, rng)
        self.buffer = DeviceBuffer()
        ptr = self.buffer.reserve(device, host.nbytes)
        self.buffer.copy_from_host(host.ctypes.data, host.nbytes, 0)
        strides = (cols, 1) if layout == LayoutType.RowMajor else (1, rows)
        shape = (rows, cols)
        if batch > 1:
            shape, strides = (batch, *shape), (rows * cols, *strides)
        self.descriptor = (ptr, dtype, shape, strides, device)


def _torch_baseline_us(plan, m, n, k, batch) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    names = [_TORCH_TYPES.get(t) for t in (plan.element_A, plan.element_B, plan.element_D)]
    if None in names or len(set(names)) != 1:
        return None
    dtype = getattr(torch, names[0])
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
        for _ in range(3):
            torch.matmul(a, b, out=d)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        best = math.inf
        for _ in range(3):
            start.record()
            for _ in range(20):
                torch.matmul(a, b, out=d)
            stop.record()
            stop.synchronize()
            best = min(best, start.elapsed_time(stop) / 20 * 1e3)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    return best


def _progress_printer(stream=sys.stderr):
    started = time.monotonic()

    def show(done, total, failed, name):
        end = "\n" if done == total or not stream.isatty() else "\r"
        print(f"building {done}/{total} ({failed} failed, {time.monotonic() - started:.0f} s) {name}", end=end,
              file=stream, flush=True)

    return show


def profile(plan, M: int, N: int, K: int, batch: int = 1, *, top: int = 6, filter: str | None = None,
            jobs: int | None = None, baseline: bool = True, progress: bool = True, seed: int = 0) -> Profile:
    """Build and time the cost model's best ``top`` candidates (those matching the shell glob
    ``filter``) for ``plan`` on an M x N x K problem of random operands; torch.matmul beside them."""
    from .op.plan import integer

    m, n, k, b = (integer(v, name, 1) for v, name in ((M, "M"), (N, "N"), (K, "K"), (batch, "batch")))
    core = plan._plan
    rng = np.random.default_rng(seed)
    device = core.device
    a = _Operand(plan.element_A, m, k, b, plan.layout_A, device, rng)
    bb = _Operand(plan.element_B, k, n, b, plan.layout_B, device, rng)
    d = _Operand(plan.element_D, m, n, b, plan.layout_C, device, rng)
    rows = core.profile(a.descriptor, bb.descriptor, None, d.descriptor, 1.0, 0.0, integer(top, "top", 1),
                        filter or "", 0 if jobs is None else integer(jobs, "jobs", 0), 0,
                        _progress_printer() if progress else None)
    flops = 2.0 * m * n * k * b
    for rank, r in enumerate(rows):
        r["decomposition"] = r["decomposition"].name
        r["measured_rank"] = rank if not math.isnan(r["measured_us"]) else ""
        r["tflops"] = flops / r["measured_us"] / 1e6 if not math.isnan(r["measured_us"]) else math.nan
    types = "/".join(t.name for t in (plan.element_A, plan.element_B, plan.element_accumulator, plan.element_D))
    result = Profile((m, n, k, b), types, rows)
    if baseline:
        result.baseline_us = _torch_baseline_us(plan, m, n, k, b)
    return result


def _plan_from(args):
    from .op import Gemm

    layouts = {"r": LayoutType.RowMajor, "c": LayoutType.ColumnMajor}
    if len(args.layouts) != 3 or any(ch not in layouts for ch in args.layouts):
        raise InvalidArgumentError(f"--layouts takes three letters r/c (A, B, C), got {args.layouts!r}")
    return Gemm(element=args.dtype, element_A=args.a, element_B=args.b, element_C=args.c, element_D=args.d,
                element_accumulator=args.acc,
                layout_A=layouts[args.layouts[0]], layout_B=layouts[args.layouts[1]],
                layout_C=layouts[args.layouts[2]], kernel_cc=args.kernel_cc)


def _shapes(path):
    shapes = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split("#")[0].split()
            if not fields:
                continue
            if len(fields) not in (3, 4) or not all(x.isdigit() for x in fields):
                raise InvalidArgumentError(f"{path}:{number}: expected 'M N K [batch]', got {line.strip()!r}")
            shapes.append(tuple(int(x) for x in fields) + ((1,) if len(fields) == 3 else ()))
    return shapes


def _tune(plan, shapes, candidates):
    """Runs each shape once with autotune on: the first run of a class measures and records."""
    plan.autotune = True
    plan.autotune_candidates = candidates
    rng = np.random.default_rng(0)
    device = plan._plan.device
    for m, n, k, batch in shapes:
        a = _Operand(plan.element_A, m, k, batch, plan.layout_A, device, rng)
        b = _Operand(plan.element_B, k, n, batch, plan.layout_B, device, rng)
        d = _Operand(plan.element_D, m, n, batch, plan.layout_C, device, rng)
        started = time.monotonic()
        plan._plan.run(a.descriptor, b.descriptor, None, d.descriptor, 1.0, 0.0, 0, None).sync()
        print(f"{m}x{n}x{k} batch {batch}: {plan.last_kernel} ({time.monotonic() - started:.1f} s)", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="cuforge", description="time kernels on this machine's GPU")
    commands = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dtype", default="bf16", help="element type of every operand (default bf16)")
    for name in ("a", "b", "c", "d", "acc"):
        common.add_argument(f"--{name}", help=f"element type of {name.upper()} (default --dtype)")
    common.add_argument("--layouts", default="rrr", help="layouts of A, B, C as three letters r/c (default rrr)")
    common.add_argument("--kernel-cc", type=int, choices=(80, 90), help="kernel family (default: the newest)")
    p = commands.add_parser("profile", parents=[common], help="time the cost model's best candidates for a problem")
    for name in ("m", "n", "k"):
        p.add_argument(f"--{name}", type=int, required=True)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--top", type=int, default=6, help="candidates to time (default 6)")
    p.add_argument("--filter", help="shell glob on kernel names")
    p.add_argument("-j", "--jobs", type=int, help="nvcc processes at once (default: one per core)")
    p.add_argument("--csv", help="write the rows here")
    p.add_argument("--plot", help="draw TFLOP/s per kernel into this PNG")
    t = commands.add_parser("tune", parents=[common], help="fill the tuning record for a file of shapes")
    t.add_argument("shapes", help="a file of 'M N K [batch]' lines")
    t.add_argument("--candidates", type=int, default=6, help="candidates timed per shape (default 6)")
    args = parser.parse_args(argv)
    try:
        plan = _plan_from(args)
        if args.command == "tune":
            _tune(plan, _shapes(args.shapes), args.candidates)
            return 0
        result = profile(plan, args.m, args.n, args.k, args.batch, top=args.top, filter=args.filter, jobs=args.jobs)
        print(result.table())
        if args.csv:
            result.write_csv(args.csv)
        if args.plot:
            result.plot(args.plot)
        return 0
    except _core.Error as e:
        print(f"cuforge {args.command}: {e}", file=sys.stderr)
        return 2
