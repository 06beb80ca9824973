#!/usr/bin/env python3
"""Where an SM90 cooperative GEMM kernel's time goes inside each CTA: a copy of CUTLASS's headers
whose cooperative kernel (and its mainloop's first wait) stamps %globaltimer and clock64() at each
phase into a device buffer, the kernel built against that copy (a private cache), run alone beside
cuBLAS (CUDA events around each call, the calls taking turns on their own operands), and the
phases' medians over the CTAs and rounds printed relative to the first CTA's entry. Bf16, row-major,
the plan pinned to one tile so that every shape runs the same kernel.

    python bench/kernel_stamps.py --shapes 1024x1024x1024,512x512x512 --json out.json
    python bench/kernel_stamps.py --back-to-back    # two runs queued together: the second's stamps

The stamps' buffer address is compiled into the kernel (it is made first, then the headers copied
and patched), so the kernel runs correctly in this process only. Each stamp is a global store: the
phases read a few cycles long, the whole CTA a little longer than unpatched.
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import sys
import tempfile

import torch

from gemm import parse_shapes
from timing import behind_sleep

SLOTS = 32      # stamps per CTA
MAX_CTAS = 1024
PHASES = [      # slot, name; stamped by thread 0 (the mainloop producer) or 128 (the first consumer)
    (0, "entry"), (1, "TMA descriptors prefetched"), (2, "mainloop pipeline built"), (3, "before the CTA barrier"),
    (4, "after the CTA barrier"), (5, "first tile known (producer)"), (6, "producer registers released"),
    (7, "producer's grid dependency wait done"), (8, "consumer registers taken"), (9, "first k-tile arrived"),
    (10, "last load issued"), (11, "mainloop done"), (12, "epilogue stored"), (13, "consumer done"),
]

KERNEL = "cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_cooperative.hpp"
MAINLOOP = "cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp"


def stamp(slot, thread):
    return f"if (threadIdx.x == {thread}) CUFORGE_STAMP({slot});\n"


# (file, text, what goes before it, what goes after it), at the text's first occurrence: each must
# occur in CUTLASS 4.2.
PATCHES = [
    (KERNEL, "SharedStorage& shared_storage = *reinterpret_cast<SharedStorage*>(smem_buf);\n", "", stamp(0, 0)),
    (KERNEL, "      CollectiveEpilogue::prefetch_tma_descriptors(params.epilogue);\n    }\n", "", stamp(1, 0)),
    (KERNEL, "    MainloopPipeline mainloop_pipeline(shared_storage.pipelines.mainloop, mainloop_pipeline_params, "
             "ClusterShape{});\n", "", stamp(2, 0)),
    (KERNEL, "    cluster_wait_fn();\n", stamp(3, 0), stamp(4, 0)),
    (KERNEL, "      cutlass::arch::warpgroup_reg_dealloc<LoadRegisterRequirement>();\n", stamp(5, 0), stamp(6, 0)),
    (KERNEL, "        cutlass::arch::wait_on_dependent_grids();\n        bool do_load_order_arrive = true;\n",
     "", stamp(7, 0)),
    (KERNEL, "      cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();\n", "", stamp(8, 128)),
    (MAINLOOP, "      pipeline.consumer_wait(smem_pipe_read, barrier_token);\n", "", stamp(9, 128)),  # the first wait
    (KERNEL, "          // Update starting pipeline state for the next tile\n          mainloop_pipe_producer_state.advance(",
     stamp(10, 0), ""),
    (KERNEL, "          // Update starting mainloop pipeline state for the next tile\n", stamp(11, 128), ""),
    (KERNEL, "          epi_load_pipe_consumer_state = epi_load_pipe_consumer_state_next;\n", stamp(12, 128), ""),
    (KERNEL, "    } // Consumer Warp Groups End\n", stamp(13, 128), ""),
]


def patched_cutlass(source: pathlib.Path, target: pathlib.Path, address: int):
    shutil.copytree(source / "include", target / "include")
    if (source / "tools").is_dir():
        shutil.copytree(source / "tools", target / "tools")
    (target / "include/cutlass/probe_stamps.h").write_text(
        "#pragma once\n"
        "#define CUFORGE_STAMP(i) do { unsigned long long t_; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t_) :: "
        "\"memory\"); const unsigned cta_ = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); "
        f"reinterpret_cast<unsigned long long*>({address}ull)[cta_ * {SLOTS} + (i)] = t_; "
        f"reinterpret_cast<long long*>({address}ull)[({MAX_CTAS} + cta_) * {SLOTS} + (i)] = clock64(); }} while (0)\n")
    texts = {}
    for name, text, before, after in PATCHES:
        path = target / "include" / name
        body = texts.setdefault(name, path.read_text().replace("#pragma once", '#pragma once\n#include "cutlass/probe_stamps.h"', 1))
        if text not in body:
            sys.exit(f"{name}: {text!r} not found: these patches are for CUTLASS 4.2")
        texts[name] = body.replace(text, before + text + after, 1)
    for name, body in texts.items():
        (target / "include" / name).write_text(body)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", type=parse_shapes, default=parse_shapes("1024x1024x1024,512x512x512"))
    p.add_argument("--tile", default="128x64x64", help="the cooperative tile the plan is pinned to")
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--back-to-back", action="store_true",
                   help="queue two runs with nothing between (the second a dependent launch) and keep the second's "
                        "stamps: its setup with the code and parameters just used on the SM")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()

    stamps = torch.zeros(2 * MAX_CTAS * SLOTS, dtype=torch.int64, device="cuda")
    work = pathlib.Path(tempfile.mkdtemp(prefix="cuforge-stamps-"))
    import cuforge  # reads CUTLASS_PATH and the cache directory at its first build, after the lines below
    patched_cutlass(pathlib.Path(cuforge.CUTLASS_PATH), work / "cutlass", stamps.data_ptr())
    os.environ["CUTLASS_PATH"] = str(work / "cutlass")
    os.environ["CUFORGE_CACHE_DIR"] = str(work / "cache")

    tile = [int(x) for x in args.tile.split("x")]
    out = {"device": torch.cuda.get_device_name(), "command": " ".join(sys.argv), "back_to_back": args.back_to_back,
           "shapes": []}
    for m, n, k in args.shapes:
        plan = cuforge.op.Gemm(element="bf16", element_accumulator="f32", layout=cuforge.LayoutType.RowMajor)
        plan.tile_description = {"threadblock_shape": tile, "cluster_shape": [1, 1, 1],
                                 "kernel_schedule": cuforge.KernelScheduleType.TmaWarpSpecializedCooperative,
                                 "epilogue_schedule": cuforge.EpilogueScheduleType.TmaWarpSpecializedCooperative}
        a, b = torch.randn(m, k, device="cuda").bfloat16(), torch.randn(k, n, device="cuda").bfloat16()
        a2, b2, d = a.clone(), b.clone(), torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        plan.run(a, b, None, d)
        torch.testing.assert_close(d.float(), a.float() @ b.float(), rtol=2e-2, atol=0.5)
        ctas = -(-m // tile[0]) * -(-n // tile[1])
        events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        rounds = []
        def queue():
            events[0].record(), torch.matmul(a2, b2), events[1].record()
            events[2].record()
            for _ in range(2 if args.back_to_back else 1):
                plan.run(a, b, None, d, sync=False)
            events[3].record()

        for r in range(args.rounds + 5):
            stamps.zero_()
            # Both calls queued before either runs; a round whose calls outlasted the sleep is not
            # counted (the host's gaps would be in its event times).
            held, _ = behind_sleep(2.0, queue)
            if r < 5 or not held:
                continue
            table = stamps.view(2, MAX_CTAS, SLOTS)[:, :ctas].cpu().tolist()
            first = min(row[0] for row in table[0])
            rounds.append({"cublas_us": events[0].elapsed_time(events[1]) * 1e3,
                           "cuforge_us": events[2].elapsed_time(events[3]) * 1e3,
                           "us": [[(row[s] - first) / 1e3 for s, _ in PHASES] for row in table[0]],
                           "cycles": [[row[s] - row[0] for s, _ in PHASES] for row in table[1]]})

        def median_over_rounds(i, key, of):
            return statistics.median(of([row[i] for row in rd[key]]) for rd in rounds)

        phases = [{"phase": name, "us_median": median_over_rounds(i, "us", statistics.median),
                   "us_last_cta": median_over_rounds(i, "us", max),
                   "cycles_median": median_over_rounds(i, "cycles", statistics.median)} for i, (_, name) in enumerate(PHASES)]
        if not rounds:
            sys.exit(f"{m}x{n}x{k}: every round's calls outlasted the GPU sleep before them")
        result = {"shape": [m, n, k], "kernel": plan.last_kernel, "ctas": ctas, "rounds": len(rounds),
                  "cublas_us": statistics.median(rd["cublas_us"] for rd in rounds),
                  "cuforge_us": statistics.median(rd["cuforge_us"] for rd in rounds), "phases": phases}
        out["shapes"].append(result)
        print(f"{m}x{n}x{k} {plan.last_kernel} ({ctas} CTAs): events around the call{'s' if args.back_to_back else ''}, cuBLAS "
              f"{result['cublas_us']:.2f} us, cuforge {result['cuforge_us']:.2f} us")
        print(f"  {'phase':38s} {'us (median CTA)':>16s} {'us (last CTA)':>14s} {'cycles from entry':>18s}")
        for ph in phases:
            print(f"  {ph['phase']:38s} {ph['us_median']:16.3f} {ph['us_last_cta']:14.3f} {ph['cycles_median']:18.0f}")
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
