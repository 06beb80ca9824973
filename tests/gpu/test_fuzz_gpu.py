"""Random GEMMs against the exact reference (exact.py): sizes up to 600 (tiny, odd, next to tile
multiples), every layout of A, B and C/D, rank 2 or batches of 1 to 3, alpha and beta in
{0, 1, 2, -1}, with C, without it, or C aliasing D, f16 and bf16, packed or padded leading
dimensions, aligned for TMA or not.

An extent along which some operand is contiguous (K of a row-major A, N of a row-major B or D, M
of a column-major D, ...) must be a multiple of the kernel's alignment: CUTLASS's can_implement
requires it (odd ones take SM80's one-element kernels, which test_gemm_gpu.py runs; not fuzzed here). The
other extents are free.

Each case takes one of three families, each one kernel per element type and layout pair (a pinned
tile; a column-major D runs the transposed problem and shares the kernels of a row-major one):
- aligned: those extents and every leading dimension multiples of 8 elements: SM90 kernels;
- unaligned: those extents and every leading dimension 2 mod 4: SM80 kernels of alignment 2, the
  ones a plan falls back to for operands TMA cannot load;
- swapped: aligned as the first, on SM90 swapped kernels in 1x2 clusters (bf16 ping-pong, f16
  stream-K).
So at most 2 types x 4 layout pairs x 3 families = 24 kernels, all built in parallel first.

CUFORGE_FUZZ_SEED and CUFORGE_FUZZ_CASES set the seed (printed) and the number of cases.
"""

import os
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
from exact import COL, DTYPES, ROW, assert_exact, layout, poisoned, rand_int, reference  # noqa: E402


@dataclass(frozen=True)
class Family:
    kernel_cc: Optional[int]
    quantum: int  # contiguous extents and leading dimensions are `residue` mod `quantum`
    residue: int
    probe: tuple  # a packed problem of this family, to name its kernel with plan.select
    tiles: dict  # per element type, what the pinned tile description has

    def snap(self, extent):
        """The largest extent of this family up to `extent`, or the smallest."""
        snapped = extent - (extent - self.residue) % self.quantum
        return snapped if snapped > 0 else snapped + self.quantum


SM90_STREAM_K = dict(threadblock_shape=[128, 128, 64], cluster_shape=[2, 1, 1],
                     tile_scheduler=cuforge.TileSchedulerType.StreamK)
# A 64-row tile's ping-pong kernel is CUTLASS's builder's choice: listed with automatic schedules.
SM90_PINGPONG = dict(threadblock_shape=[64, 128, 64], cluster_shape=[1, 1, 1],
                     kernel_schedule=cuforge.KernelScheduleType.ScheduleAuto)
SM80_128 = dict(threadblock_shape=[128, 128, 32])
# Swapped kernels (D^T = B^T A^T) in 1x2 clusters, two tiles along M sharing each B^T tile; pinned, they run any M.
SWAPPED_PINGPONG = dict(threadblock_shape=[64, 32, 128], cluster_shape=[1, 2, 1], swap_ab=True,
                        kernel_schedule=cuforge.KernelScheduleType.ScheduleAuto)
SWAPPED_STREAM_K = dict(threadblock_shape=[128, 16, 128], cluster_shape=[1, 2, 1], swap_ab=True,
                        tile_scheduler=cuforge.TileSchedulerType.StreamK)
FAMILIES = {
    "aligned": Family(None, 8, 0, (128, 128, 128), {"f16": SM90_STREAM_K, "bf16": SM90_PINGPONG}),
    "unaligned": Family(80, 4, 2, (130, 130, 130), {"f16": SM80_128, "bf16": SM80_128}),
    "swapped": Family(None, 8, 0, (48, 128, 128), {"f16": SWAPPED_STREAM_K, "bf16": SWAPPED_PINGPONG}),
}


@lru_cache(maxsize=None)
def plan_for(dtype, la, lb, lc, family):
    dt = DTYPES[dtype]
    plan = cuforge.op.Gemm(element=dt, element_accumulator=torch.float32, layout_A=layout(la), layout_B=layout(lb),
                           layout_C=layout(lc), kernel_cc=FAMILIES[family].kernel_cc)
    want = FAMILIES[family].tiles[dtype]
    tiles = [t for t in plan.tile_descriptions() if all(getattr(t, k) == v for k, v in want.items())]
    assert tiles, f"no tile description with {want} among {plan.tile_descriptions()}"
    plan.tile_description = tiles[0]
    return plan


@dataclass(frozen=True)
class Case:
    dtype: str
    layouts: tuple  # of A, B, C/D
    family: str
    M: int
    N: int
    K: int
    batch: Optional[int]  # None: rank 2
    ld: tuple  # leading dimensions of A, B, C, D
    alpha: float
    beta: float
    c: str  # "none", "own" or "D" (C is D)

    def plan(self):
        return plan_for(self.dtype, *self.layouts, self.family)

    def __str__(self):
        lay = "".join(x[0] for x in self.layouts)
        return (f"{self.dtype} {lay} {self.family} {self.M}x{self.N}x{self.K} batch={self.batch} ld={self.ld} "
                f"alpha={self.alpha:g} beta={self.beta:g} C={self.c}")


def extent(rng):
    """1 to 600: tiny a fifth of the time, next to a multiple of 64 another fifth."""
    tiny, anywhere, near_64 = rng.randint(1, 8), rng.randint(1, 600), 64 * rng.randint(1, 9) + rng.choice([-1, 0, 1])
    return rng.choice([tiny, anywhere, anywhere, anywhere, near_64])


def draw(rng):
    dtype = rng.choice(["f16", "bf16"])
    la, lb, lc = (rng.choice([ROW, COL]) for _ in range(3))
    family = rng.choice(["aligned", "aligned", "aligned", "unaligned", "swapped"])
    fam = FAMILIES[family]
    along = ("K" if la == ROW else "M", "N" if lb == ROW else "K", "N" if lc == ROW else "M")  # A, B, C/D
    size = {d: fam.snap(extent(rng)) if d in along else extent(rng) for d in "MNK"}
    ld = tuple(size[d] + fam.quantum * rng.choice([0, 0, 0, 1, 4]) for d in (*along, along[2]))
    c = rng.choice(["none", "own", "own", "D"])
    beta = rng.choice([0.0, 1.0, 2.0, -1.0]) if c != "none" else 0.0
    return Case(dtype, (la, lb, lc), family, size["M"], size["N"], size["K"], rng.choice([None, None, 1, 2, 3]), ld,
                rng.choice([0.0, 1.0, 2.0, -1.0]), beta, c)


def run_case(case, gen):
    dt, (la, lb, lc), b = DTYPES[case.dtype], case.layouts, case.batch
    A = rand_int(case.M, case.K, dt, la, gen, batch=b, ld=case.ld[0])
    B = rand_int(case.K, case.N, dt, lb, gen, batch=b, ld=case.ld[1])
    C = None if case.c == "none" else rand_int(case.M, case.N, dt, lc, gen, batch=b, ld=case.ld[2])
    D = C if case.c == "D" else poisoned(case.M, case.N, dt, lc, batch=b, ld=case.ld[3])
    expected = reference(A, B, C, case.alpha, case.beta, dt)  # before the run: C may be D
    case.plan().run(A, B, C, D, alpha=case.alpha, beta=case.beta)
    assert_exact(D, expected)


def test_random_gemms_are_exact():
    seed = int(os.environ.get("CUFORGE_FUZZ_SEED", "20261201"))
    count = int(os.environ.get("CUFORGE_FUZZ_CASES", "300"))
    rng = random.Random(seed)
    cases = [draw(rng) for _ in range(count)]
    kernels = sorted({case.plan().select(*FAMILIES[case.family].probe) for case in cases})
    print(f"\nfuzz: seed {seed}, {count} cases, building {len(kernels)} kernels")
    cuforge.build(kernels)

    gen = torch.Generator(device="cuda").manual_seed(seed)
    mismatches, refusals = [], []
    for i, case in enumerate(cases):
        try:
            run_case(case, gen)
        except AssertionError as e:
            mismatches.append(f"case {i} ({case}): {e}")
        except cuforge.Error as e:
            refusals.append(f"case {i} ({case}): {type(e).__name__}: {e}")
    print(f"fuzz: {count} cases, {len(mismatches)} mismatches, {len(refusals)} refused, {len(kernels)} kernels "
          f"(CUFORGE_FUZZ_SEED={seed})")
    assert not mismatches + refusals, "\n".join((mismatches + refusals)[:20])
