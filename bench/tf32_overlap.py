#!/usr/bin/env python3
"""Can the K-major copy of a row-major B hide behind the TF32 GEMM? An f32 GEMM with a row-major B copies B
K-major (cuforge's staging kernel, 2·K·N·4 bytes at 3.3-3.7 TB/s on the H200) and then runs the SM90 kernel;
the copy cannot overlap the kernel that reads it. Cut into column chunks, though, each chunk's copy and GEMM
are independent of the other chunks': one chunk's copy may run on the SMs another chunk's GEMM leaves.

Times, beside cuBLAS (allow_tf32) in one process, on bench/gemm.py's large shapes:
  - "row-major B": the default plan (copy, then the GEMM), as today;
  - "N chunks": the same plan run on N column chunks, the chunks taking turns on two streams (each run
    copies its chunk and runs its GEMM on its stream);
  - "N piped": a pipeline: torch copies each chunk of B column-major on a low-priority stream, and the plan
    of a column-major B runs each chunk's GEMM on a high-priority stream once its copy is done, so that the
    copies take what SMs the GEMMs leave (torch's transposing copy, slower than cuforge's: its time alone is
    "copy" in the row);
  - "column-major B": that plan on the whole of a column-major B (no copy): what hiding the copy entirely
    would reach.
Each chunked result is checked against the whole run's.

    python3 bench/tf32_overlap.py [--shapes 4096x4096x4096,...] [--chunks 2,4,8] [--json out.json]
"""

import argparse
import json

import torch

import cuforge
from gemm import default_plan, parse_shapes
from timing import gpu_times_ms

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096), (8192, 1024, 8192), (2048, 2048, 2048)]


def chunked_call(plan, A, B, D, chunks, streams):
    """plan.run on `chunks` column chunks of B and D, the chunks taking turns on `streams`, which start after
    what the current stream queued before and which it waits for at the end."""
    N = B.shape[1]
    width = -(-N // chunks)
    columns = [(c, min(c + width, N)) for c in range(0, N, width)]

    def call(_):
        current = torch.cuda.current_stream()
        for s in streams:
            s.wait_stream(current)
        for i, (lo, hi) in enumerate(columns):
            s = streams[i % len(streams)]
            plan.run(A, B[:, lo:hi], D[:, lo:hi], D[:, lo:hi], alpha=1.0, beta=0.0, sync=False, stream=s)
        for s in streams:
            current.wait_stream(s)
    return call


def piped_call(plan, A, B, Bk, D, chunks, copies, gemms):
    """The chunks of B copied into the column-major Bk on stream `copies`, each chunk's GEMM (plan: a
    column-major B) on stream `gemms` after its copy; both start after what the current stream queued
    before, which waits for them at the end."""
    N = B.shape[1]
    width = -(-N // chunks)
    columns = [(c, min(c + width, N)) for c in range(0, N, width)]

    def call(_):
        current = torch.cuda.current_stream()
        copies.wait_stream(current)
        gemms.wait_stream(current)
        for lo, hi in columns:
            with torch.cuda.stream(copies):
                Bk[:, lo:hi].copy_(B[:, lo:hi])
                done = torch.cuda.Event()
                done.record(copies)
            gemms.wait_event(done)
            plan.run(A, Bk[:, lo:hi], D[:, lo:hi], D[:, lo:hi], alpha=1.0, beta=0.0, sync=False, stream=gemms)
        current.wait_stream(copies)
        current.wait_stream(gemms)
    return call


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", type=parse_shapes, default=SHAPES)
    p.add_argument("--chunks", default="2,4,8", help="comma list of column chunk counts")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    chunk_counts = [int(c) for c in args.chunks.split(",")]
    row_major = default_plan("tf32")
    col_major = cuforge.op.Gemm(element=torch.float32, layout_A=cuforge.LayoutType.RowMajor,
                                layout_B=cuforge.LayoutType.ColumnMajor, layout_C=cuforge.LayoutType.RowMajor,
                                element_accumulator=torch.float32)
    names = set()
    for M, N, K in args.shapes:
        names.add(row_major.select(M, N, K))
        names.add(col_major.select(M, N, K))
        for c in chunk_counts:
            names.add(row_major.select(M, -(-N // c), K))
            names.add(col_major.select(M, -(-N // c), K))
    cuforge.build(sorted(names))  # in parallel, before anything is timed
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    copies, gemms = torch.cuda.Stream(priority=0), torch.cuda.Stream(priority=-1)  # -1: the higher priority
    rows = []
    for M, N, K in args.shapes:
        A = torch.randn(M, K, device="cuda")
        B = torch.randn(K, N, device="cuda")
        Bk = B.t().contiguous().t()  # the same values, column-major
        whole, D = torch.empty(M, N, device="cuda"), torch.empty(M, N, device="cuda")
        row_major.run(A, B, whole, whole, alpha=1.0, beta=0.0)
        Bc = torch.empty_like(Bk)  # the pipeline's copies
        cublas = lambda _: torch.matmul(A, B)  # noqa: E731
        ms = gpu_times_ms({
            "cublas": cublas,
            "copy": lambda _: Bc.copy_(B),
            "row-major B": lambda _: row_major.run(A, B, D, D, alpha=1.0, beta=0.0, sync=False),
            "column-major B": lambda _: col_major.run(A, Bk, D, D, alpha=1.0, beta=0.0, sync=False),
        }, args.repeats)
        us = {name: round(t * 1e3, 2) for name, t in ms.items()}
        vs_cublas = {name: round(ms["cublas"] / t, 3) for name, t in ms.items() if name != "cublas"}
        errors = {}
        # Each chunk count timed on its own beside cuBLAS: a round of every variant queues too many launches.
        for c in chunk_counts:
            calls = {"cublas": cublas, f"{c} chunks": chunked_call(row_major, A, B, D, c, streams),
                     f"{c} piped": piped_call(col_major, A, B, Bc, D, c, copies, gemms)}
            for name, call in list(calls.items())[1:]:
                D.fill_(float("nan"))
                call(0)
                torch.cuda.synchronize()
                errors[name] = float((D - whole).abs().max())
            ms = gpu_times_ms(calls, args.repeats)
            us.update({name: round(t * 1e3, 2) for name, t in ms.items() if name != "cublas"})
            vs_cublas.update({name: round(ms["cublas"] / t, 3) for name, t in ms.items() if name != "cublas"})
        row = {"shape": [M, N, K], "us": us, "vs_cublas": vs_cublas, "max_abs_diff_from_whole": errors,
               "kernels": {"row-major B": row_major.select(M, N, K), "column-major B": col_major.select(M, N, K),
                           **{f"{c} chunks": row_major.select(M, -(-N // c), K) for c in chunk_counts},
                           **{f"{c} piped": col_major.select(M, -(-N // c), K) for c in chunk_counts}}}
        rows.append(row)
        print(f"{M}x{N}x{K}: cuBLAS {row['us']['cublas']:.1f} us; " +
              ", ".join(f"{name} {row['us'][name]:.1f} ({row['vs_cublas'][name]:.3f}x)" for name in row["vs_cublas"]) +
              "; max |diff| from the whole run: " + ", ".join(f"{c} {e:.3g}" for c, e in errors.items()), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
