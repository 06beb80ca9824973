"""Every distinct template path the catalog can emit, as one kernel each and the plan that runs it.

A template path is what changes the emitted C++ beyond tile sizes: the kernel family, the data
types and accumulator (each math instruction and output), the layouts, the kernel and epilogue
schedules, the tile scheduler (SM80: the swizzle), the cluster, the operand alignment (SM80), the
epilogue (identity, an activation, a leaky_relu slope, a bias row), parallel split-K, fp8's
overlapped promotion (the 128x128 and 128x192 cooperative tiles' consumer loop), the swapped
kernels of small M (D^T = B^T A^T written column-major, the bias a column of it) and TF32's of a
row-major B (B^T read through registers), and, run on
the same kernel, the decompositions its scheduler is told at run time (data-parallel, split-K,
stream-K, serial split-K on SM80). Each path names the kernel its plan must select and how to run
it; tests/gpu/test_template_paths_gpu.py builds them all at once and runs each exactly on integer
data, tests/python/test_template_paths.py checks on the CPU that each plan selects its kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cuforge

LAYOUTS = ("rcr", "rrr", "ccr", "crr")
SCHEDULES = {"coop": cuforge.KernelScheduleType.TmaWarpSpecializedCooperative,
             "pingpong": cuforge.KernelScheduleType.TmaWarpSpecializedPingpong,
             "tmaws": cuforge.KernelScheduleType.TmaWarpSpecialized,
             "multistage": cuforge.KernelScheduleType.Multistage}
EPILOGUES = {"tmacoop": cuforge.EpilogueScheduleType.TmaWarpSpecializedCooperative,
             "tma": cuforge.EpilogueScheduleType.TmaWarpSpecialized,
             "default": cuforge.EpilogueScheduleType.Default}
SCHEDULERS = {"default": cuforge.TileSchedulerType.Default, "streamk": cuforge.TileSchedulerType.StreamK,
              "identity1": cuforge.TileSchedulerType.Identity1, "identity2": cuforge.TileSchedulerType.Identity2,
              "identity4": cuforge.TileSchedulerType.Identity4}
OPCLASS = {"tensorop": cuforge.OpcodeClass.TensorOp, "simt": cuforge.OpcodeClass.Simt}
MATH = {"mma": cuforge.MathOperation.multiply_add, "3xtf32": cuforge.MathOperation.multiply_add_fast_f32,
        "sat": cuforge.MathOperation.multiply_add_saturate, "fastaccum": cuforge.MathOperation.multiply_add_fast_accum,
        "mixed": cuforge.MathOperation.multiply_add_mixed_input_upcast}
LEAKY_SLOPE = 0.25  # exact in binary: leaky_relu of integers is exact


@dataclass(frozen=True)
class Kernel:
    """The fields of a catalog kernel's name (library/gemm_config.cpp)."""
    name: str
    arch: int
    opclass: str
    math: str
    a: str
    b: str
    acc: str
    d: str
    layouts: str
    tile: tuple
    shape2: tuple  # SM90: the cluster; SM80: the warps
    stages: int
    schedule: str
    epilogue: str
    scheduler: str
    align: tuple
    swap_ab: bool

    @staticmethod
    def parse(name: str) -> "Kernel":
        p = name.split("_")
        triple = lambda s: tuple(int(v) for v in s.split("x"))  # noqa: E731
        return Kernel(name, int(p[1][2:]), p[3], p[4], p[5], p[6], p[7], p[9], p[10], triple(p[11]),
                      triple(p[12][1:]), int(p[13][1:]), p[14], p[15], p[16], triple(p[17][1:]),
                      p[18:19] == ["swapab"])

    def family(self):
        return (self.arch, self.opclass, self.math, self.a, self.b, self.acc, self.d)


@dataclass
class Path:
    kernel: str  # the name the plan must select
    base: Kernel
    settings: dict = field(default_factory=dict)
    bias: bool = False
    k: int = 512
    modes: tuple = ("heuristic",)  # decompositions run on the same kernel
    pad: int = 0  # leading dimensions padded by this many elements: aligned to it, not twice it
    m: int = 264  # a swapped kernel's path runs an M that fits its cluster's tiles along N

    def plan(self, mode="heuristic"):
        """The plan that selects this path's kernel, in decomposition `mode`."""
        kern = self.base
        dt = cuforge.DataType.__members__
        lay = {"r": cuforge.LayoutType.RowMajor, "c": cuforge.LayoutType.ColumnMajor}
        plan = cuforge.op.Gemm(element_A=dt[kern.a], element_B=dt[kern.b], element_C=dt[kern.d], element_D=dt[kern.d],
                               element_accumulator=dt[kern.acc], layout_A=lay[kern.layouts[0]],
                               layout_B=lay[kern.layouts[1]], layout_C=lay[kern.layouts[2]], kernel_cc=kern.arch,
                               opclass=OPCLASS[kern.opclass], math_operation=MATH[kern.math])
        tile = dict(threadblock_shape=list(kern.tile), stages=kern.stages, kernel_schedule=SCHEDULES[kern.schedule],
                    epilogue_schedule=EPILOGUES[kern.epilogue], tile_scheduler=SCHEDULERS[kern.scheduler],
                    swap_ab=kern.swap_ab)
        tile["cluster_shape" if kern.arch >= 90 else "warp_count"] = list(kern.shape2)
        plan.tile_description = tile
        plan.swizzling_functor = SCHEDULERS[kern.scheduler]
        for name, value in self.settings.items():
            setattr(plan, name, value)
        if mode == "data_parallel":
            plan.decomposition = cuforge.Decomposition.DataParallel
        elif mode == "split_k4":
            plan.split_k_slices = 4
        elif mode == "stream_k":
            plan.decomposition = cuforge.Decomposition.StreamK
        return plan

    def problem(self):
        """(M, N, K): N a multiple of 16 bytes of every type."""
        return self.m, 208 if self.base.a in ("s8", "e4m3", "e5m2") else 200, self.k


def _modes(kern: Kernel):
    if kern.scheduler == "streamk":
        return ("heuristic", "data_parallel", "split_k4", "stream_k")
    if kern.arch == 80:  # serial split-K, not into an 8-bit D (it would round or saturate each slice's sum); SIMT
        # kernels whole (the model splits these small problems in parallel)
        first = "data_parallel" if kern.opclass == "simt" else "heuristic"
        return (first,) if kern.d in ("s8", "e4m3", "e5m2") else (first, "split_k4")
    return ("heuristic",)


def paths() -> list[Path]:
    names = cuforge.list_gemms(kind=cuforge.KernelKind.Gemm)
    swapped = [Kernel.parse(n) for n in names if n.endswith("_swapab")]
    kernels = [Kernel.parse(n) for n in names if not n.endswith("_swapab")]
    full = {k.name: k for k in kernels}
    out: list[Path] = []

    def smallest(candidates):
        return min(candidates, key=lambda k: (k.tile[0] * k.tile[1] * k.tile[2], k.name))

    def fully_aligned(k):
        return k.align[0] == max(c.align[0] for c in kernels if c.family() == k.family())

    # Each family, kernel schedule and tile scheduler: the smallest tile, cluster 1x1, full alignment,
    # the layouts taking turns so that every layout a family has appears.
    fp8 = {("e4m3", "e4m3", "bf16"), ("e5m2", "e4m3", "f32")}  # two of the twenty fp8 pairings and outputs
    simt_fp8 = {("e4m3", "e4m3", "e4m3")}  # one of SIMT's ten: the CUTLASS Python interface's
    families = sorted({k.family() for k in kernels})
    for i, fam in enumerate(families):
        if fam[3] in ("e4m3", "e5m2") and (fam[3], fam[4], fam[6]) not in (simt_fp8 if fam[1] == "simt" else fp8):
            continue
        members = [k for k in kernels if k.family() == fam and fully_aligned(k)]
        layouts = [lay for lay in LAYOUTS if any(k.layouts == lay for k in members)]
        for j, key in enumerate(sorted({(k.schedule, k.scheduler) for k in members})):
            lay = layouts[(i + j) % len(layouts)]
            choice = [k for k in members if (k.schedule, k.scheduler) == key and k.layouts == lay
                      and (k.arch == 80 or k.shape2 == (1, 1, 1))]
            base = smallest(choice)
            # f16 accumulation stays exact over a short K; SM80's 3xTF32 (three products a step) splits
            # a longer one in parallel by the model's choice.
            short_k = fam[5] == "f16" or (base.arch == 80 and base.math == "3xtf32")
            out.append(Path(base.name, base, k=128 if short_k else 512, modes=_modes(base)))

    def base_of(arch, schedule, a, d, scheduler="default", opclass="tensorop", layouts="rcr", align=None):
        return smallest([k for k in kernels if k.arch == arch and k.schedule == schedule and k.a == a and k.d == d
                         and k.acc in ("f32", "f64") and k.scheduler == scheduler and k.opclass == opclass
                         and k.math == "mma" and k.layouts == layouts and (k.arch == 80 or k.shape2 == (1, 1, 1))
                         and (k.align[0] == align if align else fully_aligned(k))])

    # Clusters, of the persistent and the non-persistent kernel.
    for schedule in ("coop", "tmaws"):
        for cluster in ((2, 1, 1), (1, 2, 1)):
            b = base_of(90, schedule, "bf16", "bf16")
            name = b.name.replace("_c1x1x1_", "_c{}x{}x{}_".format(*cluster))
            out.append(Path(name, full[name]))
    # The 128x192 cooperative tile (96 accumulator registers a thread, data-parallel) in each family that
    # gained it besides promoted fp8: 16-bit into 16-bit and f32, TF32, int8, fp8 with fast accumulation;
    # N = 200 leaves its second tile of columns mostly empty. Pinned data-parallel: the model splits
    # TF32's K = 512 over this tile in parallel.
    def wide_of(a, d, math="mma"):
        return next(k for k in kernels if k.arch == 90 and k.tile[:2] == (128, 192) and k.a == a and k.d == d
                    and k.math == math and k.layouts == "rcr" and k.shape2 == (1, 1, 1) and fully_aligned(k))
    for b in (wide_of("bf16", "bf16"), wide_of("f16", "f32"), wide_of("f32", "f32"), wide_of("s8", "s32"),
              wide_of("e4m3", "bf16", "fastaccum")):
        out.append(Path(b.name, b, modes=("data_parallel",)))
    # Epilogues: activations, leaky_relu's slope, bias rows, on each kernel schedule.
    for arch, schedule in ((90, "coop"), (90, "pingpong"), (90, "tmaws"), (80, "multistage")):
        b = base_of(arch, schedule, "bf16", "bf16")
        out.append(Path(b.name + "_relu", b, dict(activation=cuforge.epilogue.relu)))
        out.append(Path(b.name + "_leaky_relu", b, dict(activation=(cuforge.epilogue.leaky_relu, LEAKY_SLOPE))))
        out.append(Path(b.name + "_bias", b, bias=True))
        out.append(Path(b.name + "_gelu_bias", b, dict(activation=cuforge.epilogue.gelu), bias=True))
    # Parallel split-K: the slices' GEMM on each schedule and opcode class, and its reduction's epilogue.
    split = dict(split_k_slices=4, decomposition=cuforge.Decomposition.ParallelSplitK)
    for b in (base_of(90, "coop", "f16", "f16"), base_of(90, "pingpong", "f16", "f16"),
              base_of(80, "multistage", "f16", "f16"), base_of(80, "multistage", "f32", "f32"),
              base_of(80, "multistage", "f32", "f32", opclass="simt")):
        out.append(Path(b.name + "_splitk", b, split))
    b = base_of(90, "pingpong", "bf16", "bf16")
    out.append(Path(b.name + "_splitk_leaky_relu_bias", b,
                    dict(split, activation=(cuforge.epilogue.leaky_relu, LEAKY_SLOPE)), bias=True))
    # Swapped kernels (M = 13 or 16 on the tile's N): each schedule, tile scheduler and operand layout (A and
    # B read K-major or MN-major as B^T and A^T), fp8 (promoted and fast accumulation) and int8, an
    # activation and the bias column.
    def swapped_of(a, d, layouts, tile, scheduler="default", math="mma", cluster=(1, 1, 1)):
        return next(k for k in swapped if k.a == a and k.d == d and k.layouts == layouts and k.tile[:2] == tile
                    and k.scheduler == scheduler and k.math == math and k.acc in ("f32", "s32")
                    and k.shape2 == cluster)
    for b in (swapped_of("bf16", "bf16", "rrr", (64, 16)), swapped_of("f16", "f16", "rcr", (128, 16), "streamk"),
              swapped_of("bf16", "f32", "ccr", (128, 32)), swapped_of("f16", "f16", "crr", (64, 32)),
              swapped_of("e4m3", "bf16", "rcr", (128, 16)), swapped_of("e4m3", "bf16", "rcr", (64, 16), math="fastaccum"),
              swapped_of("s8", "s32", "rcr", (64, 16))):
        out.append(Path(b.name, b, k=512, modes=_modes(b), m=13 if b.layouts[0] == "r" else 16))  # TMA: 16-byte lda
    for b in (swapped_of("bf16", "bf16", "rrr", (64, 16)), swapped_of("bf16", "bf16", "rcr", (128, 16), "streamk")):
        out.append(Path(b.name + "_relu", b, dict(activation=cuforge.epilogue.relu), m=13))
        out.append(Path(b.name + "_bias", b, bias=True, modes=_modes(b), m=13))
    # In 1x2 clusters (two tiles along M share each B^T tile): the second tile partly empty (M = 48 on
    # 32-wide tiles, 29 on 16-wide ones), and the stream-K scheduler's decompositions.
    for b, m in ((swapped_of("bf16", "bf16", "rrr", (64, 32), cluster=(1, 2, 1)), 48),
                 (swapped_of("f16", "f16", "rcr", (128, 16), "streamk", cluster=(1, 2, 1)), 29)):
        out.append(Path(b.name, b, k=512, modes=_modes(b), m=m))
    b = swapped_of("bf16", "bf16", "rrr", (64, 32), cluster=(1, 2, 1))
    out.append(Path(b.name + "_bias", b, bias=True, m=48))
    for b, m in ((swapped_of("e4m3", "bf16", "rcr", (64, 32), cluster=(1, 2, 1)), 48),
                 (swapped_of("s8", "s32", "rcr", (64, 32), cluster=(1, 2, 1)), 40)):
        out.append(Path(b.name, b, k=512, m=m))
    # fp8's overlapped promotion (the 128x128 and 128x192 cooperative tiles' own consumer loop): a K of
    # one turn of four k-tiles and two single ones (704, the last partial), in each decomposition the
    # stream-K scheduler takes, and in parallel split-K's slices, with relu and a bias row; and pinned in
    # the clusters of two the selection takes for it: 1x2 (two column tiles, the last partial, sharing each
    # A tile) and 2x1 (here padded: three row tiles and an empty fourth; two column tiles of 192, the second
    # mostly empty).
    def overlapped(tile, scheduler, cluster):
        return next(k for k in kernels if k.a == "e4m3" and k.b == "e4m3" and k.d == "bf16" and k.math == "mma"
                    and k.layouts == "rcr" and k.tile == tile and k.schedule == "coop" and k.scheduler == scheduler
                    and k.shape2 == cluster)
    for tile in ((128, 128, 128), (128, 192, 128)):
        b = overlapped(tile, "streamk", (1, 1, 1))
        out.append(Path(b.name, b, k=704, modes=_modes(b)))
    b = overlapped((128, 128, 128), "default", (1, 1, 1))
    out.append(Path(b.name + "_splitk_relu_bias", b, dict(split, activation=cuforge.epilogue.relu), bias=True, k=704))
    for tile, cluster in (((128, 128, 128), (1, 2, 1)), ((128, 192, 128), (2, 1, 1))):
        b = overlapped(tile, "default", cluster)
        out.append(Path(b.name, b, k=704))
    # fp8 with fast accumulation in the 1x2 clusters the selection prefers for it too (the 256x128 tile).
    b = next(k for k in kernels if k.a == "e4m3" and k.b == "e4m3" and k.d == "bf16" and k.math == "fastaccum"
             and k.layouts == "rcr" and k.tile[:2] == (256, 128) and k.schedule == "coop" and k.scheduler == "default"
             and k.shape2 == (1, 2, 1))
    out.append(Path(b.name, b, modes=("data_parallel",)))
    # TF32 swapped for a row-major B (B^T through registers, no copy): each tile, cluster and tile scheduler
    # (stream-K in each decomposition it takes) at an M of three column tiles, and relu with the bias column.
    for b in (k for k in swapped if k.a == "f32"):
        out.append(Path(b.name, b, m=264, modes=_modes(b)))
    b = next(k for k in swapped if k.a == "f32" and k.tile[:2] == (128, 128))
    out.append(Path(b.name + "_relu_bias", b, dict(activation=cuforge.epilogue.relu), bias=True, m=264))
    # SM80 swizzles and lower alignments.
    for swizzle in ("identity1", "identity2", "identity4"):
        parts = base_of(80, "multistage", "f16", "f16").name.split("_")
        parts[16] = swizzle
        out.append(Path("_".join(parts), Kernel.parse("_".join(parts))))
    for align in (4, 2):
        b = base_of(80, "multistage", "f16", "f16", align=align)
        out.append(Path(b.name, b, modes=_modes(b), pad=align))
    return out
