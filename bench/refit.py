#!/usr/bin/env python3
"""Refit the selection cost model's constants to the H200 measurements under bench/results, and report,
on shapes held out of the fit, how far the model's pick is from the measured best. Needs no GPU.

Each measured shape is a case: the kernels timed on it (with their K slices) and their times. The
model picks the kernel it estimates fastest among those; the case's score is the measured best time
over the pick's measured time (1.00: the model picked the best). A coordinate descent over a few
constants, each on a fixed grid within sane bounds, maximises worst + mean score on the fitting set.
Issue 16's measure is printed beside it: the pick against the best measured of the model's own first
`autotune_candidates` (what autotuning would time), those taken among the kernels measured on the case
(so cases of at most that many kernels score 1, and a case whose sweep left out kernels the model ranks
first scores higher than autotuning would).

    python bench/refit.py [--write constants.txt]
"""

import argparse
import csv
import json
import os
import re
import statistics
from dataclasses import dataclass

from cuforge import _core
from resnet50 import LAYERS

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
SM_COUNT = 132  # the H200 the data was measured on

# The constants fitted, each with its grid (the defaults' neighbourhoods; the device rates, the
# SM80, arrival-order and transpose constants have no data here and keep their values).
GRIDS = {
    "tile_efficiency_exponent": [0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 1.0],
    "implicit_gemm_tile_exponent": [0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 2.0],
    "pingpong_edge": [0.95, 0.98, 1.0, 1.02, 1.04, 1.05, 1.06, 1.08, 1.1, 1.15],
    "tall_tile_edge": [0.98, 1.0, 1.01, 1.02, 1.03, 1.04, 1.06],
    "launch_us": [1.0, 2.0, 3.0, 4.0, 6.0],
    "stream_k_overhead": [1.0, 1.05, 1.1, 1.15, 1.2, 1.3, 1.4],
    "reduction_turn_us": [0.2, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0],
    "fixup_bytes_per_second": [30e9, 50e9, 75e9, 100e9, 150e9, 200e9, 300e9],
    "reduction_launch_us": [0.5, 1.0, 1.5, 2.0, 3.0, 4.0],
    "partial_bytes_per_second": [1e12, 2e12, 3e12, 5e12, 7e12, 10e12],
    "lone_pingpong_fraction": [0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0],
    "lone_mma_sync_fraction": [0.5, 0.6, 0.7, 0.8, 0.9],
    "unhidden_fraction": [0.0, 0.1, 0.2, 0.3, 0.4, 0.6],
    "wave_latency_us": [0.0, 0.05, 0.1, 0.2, 0.3, 0.5],
    "panel_bytes_per_second": [4e12, 6e12, 7e12, 8.5e12, 10e12, 12e12, 16e12],
    "cp_async_panel_fraction": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
    "lone_implicit_gemm_wave_us": [0.0, 0.5, 1.0, 1.5, 2.0, 3.0],
    "per_tile_setup_saving_us": [0.0, 0.3, 0.6, 0.9, 1.2, 1.8],
    "per_tile_wave_us": [0.5, 1.0, 1.5, 1.9, 2.5, 3.0],
    "per_tile_narrow_fraction": [0.8, 0.85, 0.9, 0.95, 1.0],
    "sm80_tf32_time_factor": [1.0, 1.1, 1.2, 1.25, 1.3, 1.4],
    "overlapped_promotion_edge": [1.0, 1.04, 1.06, 1.08, 1.1, 1.13],
    "register_sourced_fraction": [0.5, 0.55, 0.6, 0.63, 0.66, 0.7, 0.75],
    "register_sourced_wide_fraction": [0.7, 0.75, 0.8, 0.85, 0.9, 0.95],
    "register_sourced_lone_fraction": [0.8, 0.87, 0.9, 0.95, 1.0, 1.05, 1.1],
    "register_sourced_stream_k_overhead": [1.0, 1.1, 1.15, 1.2, 1.25, 1.3, 1.4],
    "cluster_of_four_sm_fraction": [0.85, 0.88, 0.91, 0.94, 0.97, 1.0],
}
ROUNDS = 4


@dataclass
class Case:
    source: str
    shape: tuple  # (M, N, K), or a convolution's ((N, H, W, C, K, R, S), stride, padding, dilation)
    kernels: list  # [(name, splits, measured time)]
    conv: bool = False
    groups: int = 1  # a grouped GEMM's groups (the shape: their mean extents)
    ragged: bool = False  # groups of differing M (the offsets form)

    def label(self):
        extents = self.shape[0] if self.conv else self.shape
        return f"{self.source} {'x'.join(map(str, extents))}"

    def estimate(self, name, splits, model):
        if self.conv:
            return _core.estimated_conv_time_us(name, *self.shape, splits, True, SM_COUNT, model)
        m, n, k = self.shape
        return _core.estimated_time_us(name, m, n, k, self.groups, splits, True, SM_COUNT, model, self.ragged)


def named(key):
    """(kernel name, splits) of a sweep's key: parallel split-K sweeps write 'name@slices'."""
    name, _, splits = key.partition("@")
    return name, int(splits or 1)


def sweep_cases(source, rows):
    """bench/sweep.py's rows (and bench/k_heavy.py --sweep-parallel's): shape and times_ms."""
    return [Case(source, tuple(r["shape"]), [(*named(k), t) for k, t in r["times_ms"].items()]) for r in rows]


def gemm_py_cases(source, rows):
    """bench/fp8.py --sweep's rows: one per (shape, plan); a kernel timed twice keeps its faster time."""
    shapes = {}
    for r in rows:
        times = shapes.setdefault((r["M"], r["N"], r["K"]), {})
        times[r["kernel"]] = min(r["ms"], times.get(r["kernel"], float("inf")))
    return [Case(source, s, [(k, 1, t) for k, t in times.items()]) for s, times in shapes.items()]


def swapped_rows(name):
    """The rows of M a swapped kernel's cluster holds (its tile's N times the cluster's N), by its name,
    else None."""
    if not name.endswith("_swapab"):
        return None
    tile, cluster = short(name).split("_")[:2]
    return int(tile.split("x")[1]) * int(cluster[1:].split("x")[1])


def small_m_cases(source, rows):
    """bench/small_m.py: per shape, the default and every swapped tile pinned, less the swapped tiles
    whose cluster holds fewer rows than M (the selection offers a swapped kernel only where M fits its
    cluster's tiles along N); a kernel timed under two labels keeps its faster time."""
    cases = []
    for r in rows:
        times = {}
        for x in r["rows"]:
            if (swapped_rows(x["kernel"]) or r["shape"][0]) < r["shape"][0]:
                continue
            key = (x["kernel"], x["splits"])
            times[key] = min(x["us"], times.get(key, float("inf")))
        cases.append(Case(source, tuple(r["shape"]), [(k, s, t) for (k, s), t in times.items()]))
    return cases


def trial_cases(source, trial):
    """The selection trial: two kernels per shape, each timed in its own process beside cuBLAS; the
    times are compared as ratios to that process's cuBLAS."""
    cases = []
    for old, new in zip(trial["old"], trial["new"]):
        kernels = [(r["kernel"], r["splits"], min(r["us"]) / min(r["cublas_us"])) for r in (old, new)]
        cases.append(Case(source, tuple(old["shape"]), kernels))
    return cases


def layer_problem(name, n):
    """A bench/conv.py layer (resnet50.LAYERS) as the convolution of n images these results ran: the
    stem's 3 channels padded to 8."""
    h, c, k, r, stride, padding = LAYERS[name]
    return (n, h, h, c if c % 8 == 0 else 8, k, r, r), (stride, stride), (padding, padding), (1, 1)


def conv_profile_cases(source, profile):
    """bench/conv.py --profile: per pass and layer, the candidates plan.profile timed."""
    cases = []
    for r in profile["profile"]:
        kernels = [(x["kernel"], x["splits"], x["measured_us"]) for x in r["candidates"] if x["measured_us"]]
        cases.append(Case(f"{source} {r['pass']}", layer_problem(r["layer"], profile["n"]), kernels, conv=True))
    return cases


def wgrad_sweep_cases(source, sweep):
    """bench/conv.py --sweep-wgrad: every SM80 wgrad tile with 1 to 128 parallel slices, per layer."""
    layers = {}
    for r in sweep["sweep_wgrad"]:
        layers.setdefault(r["layer"], []).append((r["kernel"], r["splits"], r["ms"]))
    return [Case(source, layer_problem(name, sweep["n"]), kernels, conv=True) for name, kernels in layers.items()]


def pinned_conv_cases(source, rows, n=32):
    """A probe's convolution rows (kind, layer, kernel, ms): pinned tiles per pass and layer (rows of
    several runs of the probe, each on other clusters, make one case per pass and layer)."""
    cases = {}
    for r in rows:
        if r["kernel"].startswith("cuforge_"):
            cases.setdefault((r["kind"], r["layer"]), []).append((r["kernel"], 1, r["ms"]))
    return [Case(f"{source} {kind}", layer_problem(layer, n), kernels, conv=True)
            for (kind, layer), kernels in cases.items()]


def gemm_profile_cases(source, results):
    """bench/clusters.py (or a file of its form): per GEMM shape, the model's top candidates and a
    filtered set as plan.profile timed them; a kernel timed in both keeps its faster time."""
    cases = []
    for r in results["profile"]:
        times = {}
        for x in r["top"] + r["filtered"]:
            key = (x["kernel"], x["splits"])
            times[key] = min(x["measured_us"], times.get(key, float("inf")))
        cases.append(Case(source, tuple(r["shape"]), [(k, s, t) for (k, s), t in times.items()]))
    return cases


def one_wave_cases(source, results):
    """bench/one_wave.py: per GEMM shape, tiles pinned (and the model's pick), each timed alone in turn
    with cuBLAS: one-wave problems, whose kernels' setup and epilogue back-to-back launches would hide."""
    return [Case(source, tuple(r["shape"]), [(k["kernel"], 1, k["alone_us"]) for k in r["kernels"]])
            for r in results["shapes"]]


def profile_csv_cases(source, names):
    """plan.profile's CSV files (csv=), named ...-MxNxK.csv: the candidates it timed on that GEMM shape."""
    cases = []
    for name in names:
        shape = tuple(int(v) for v in re.search(r"(\d+)x(\d+)x(\d+)\.csv$", name).groups())
        with open(os.path.join(RESULTS, name)) as f:
            rows = [r for r in csv.DictReader(f) if r["kernel"].startswith("cuforge_") and r["measured_us"]]
        cases.append(Case(source, shape, [(r["kernel"], int(r["splits"]), float(r["measured_us"])) for r in rows]))
    return cases


def grouped_sweep_cases(source, results):
    """bench/grouped.py --sweep: the offsets form (a ragged class) of one case on every tile pinned."""
    sweep = results["sweep"]
    groups, m, n, k = (int(v) for v in re.match(r"G=(\d+), (\d+)x(\d+)x(\d+)", sweep["case"]).groups())
    kernels = [(name, 1, ms) for name, ms in sweep["ms"].items() if name.startswith("cuforge_")]
    return [Case(source, (m, n, k), kernels, groups=groups, ragged=True)]


def load(name):
    with open(os.path.join(RESULTS, name)) as f:
        return json.load(f)


def cases_by_source():
    """The measured cases, by file. The other results files time one kernel per shape (gemm.py,
    tf32) or the K-heavy variants of separate runs, which the parallel sweep below covers. The
    2026-12-02 wgrad profile timed back-to-back launches, host time and all (bench/NOTES.md: split
    wgrad was host-bound); the 28² and 14² layers' profiles by GPU time (`-held`) replace 2026-12-03's
    back-to-back one."""
    return {
        "bf16": sweep_cases("bf16", load("h200-2026-11-30-sweep-bf16.json")),
        "fp8": gemm_py_cases("fp8", load("h200-2026-12-03-fp8-overlapped-sweep.json")["gemm"]),
        "fp8 clusters": gemm_py_cases("fp8 clusters", load("h200-2026-12-04-fp8-cluster-sweep.json")["gemm"]),
        "fp8 fast": gemm_py_cases("fp8 fast", load("h200-2026-12-04-fp8-fast-cluster-sweep.json")["gemm"]),
        "parallel": sweep_cases("parallel", load("h200-2026-11-30-sweep-parallel-small-m.json")["parallel_split_k"]),
        "trial": trial_cases("trial", load("h200-2026-11-30-selection-trial.json")),
        "small M": small_m_cases("small M", load("h200-2026-12-02-small-m-swapped-sweep.json")) +
        small_m_cases("small M", load("h200-2026-12-02-small-m-tile-k.json")) +
        small_m_cases("small M fp16", load("h200-2026-12-02-small-m-fp16-sweep.json")),
        "clusters": gemm_profile_cases("clusters", load("h200-2026-12-04-small-m-clusters-profile.json")),
        "swapped clusters": [case for name in ("profile", "picks", "k-heavy-profile") for case in gemm_profile_cases(
            "swapped clusters", load(f"h200-2026-12-04-swapped-clusters-{name}.json"))],
        "192-wide tiles": [case for name in ("profile", "picks") for case in gemm_profile_cases(
            "192-wide tiles", load(f"h200-2026-12-04-192-wide-{name}.json"))],
        "one wave": [case for name in ("tiles", "picks", "small-m") for case in one_wave_cases(
            "one wave", load(f"h200-2026-12-04-one-wave-{name}.json"))],
        "tf32 profile": profile_csv_cases("tf32 profile", [f"h200-2026-12-04-tf32-profile-{shape}.csv" for shape in (
            "1024x1024x1024", "128x14336x4096", "16x4096x4096")] + [f"h200-2026-12-05-tf32-profile-{shape}.csv" for shape in (
            "4096x4096x4096", "rcr-4096x4096x4096", "8192x8192x8192", "4096x14336x4096", "8192x1024x8192",
            "1024x1024x1024")] + [f"h200-2026-12-06-tf32-profile-{shape}.csv" for shape in (
            "1024x1024x1024", "768x768x768", "512x2048x2048")]),
        # An H100 (132 SMs as the H200; less DRAM bandwidth, which these compute-bound runs barely meet): the
        # register-sourced 128x128 in 4x1 clusters on 128 tiles ran a second wave (bench/NOTES.md).
        "tf32 profile (H100)": profile_csv_cases("tf32 profile (H100)", [
            f"h100-2026-12-06-tf32-profile-{shape}.csv" for shape in (
                "512x4096x4096", "256x4096x4096", "1024x4096x4096", "384x4096x4096", "2048x1024x2048",
                "256x14336x8192")]),
        "grouped": grouped_sweep_cases("grouped", load("h200-2026-12-02-grouped-g64-sweep.json")),
        "conv": conv_profile_cases("conv", load("h200-2026-12-02-conv-fp16-profile.json")) +
        conv_profile_cases("conv", load("h200-2026-12-02-conv-fp16-profile-dgrad.json")) +
        conv_profile_cases("conv", load("h200-2026-12-02-conv-fp16-profile-wgrad-split.json")) +
        conv_profile_cases("conv", load("h200-2026-12-03-conv-fp16-profile-wgrad-28-held.json")) +
        conv_profile_cases("conv", load("h200-2026-12-03-conv-fp16-profile-wgrad-14-held.json")),
        "wgrad": wgrad_sweep_cases("wgrad sweep", load("h200-2026-12-02-wgrad-sweep.json")),
        "conv stages": pinned_conv_cases("conv stages", load("h200-2026-12-03-conv-stages-probe.json") +
                                         load("h200-2026-12-03-conv-stages-cluster-2x1-probe.json")),
    }


def split(by_source):
    """Fitting and held-out sets: within each file, every third case (the 3rd, 6th, ...) is held out."""
    fitting, held_out = [], []
    for cases in by_source.values():
        for i, case in enumerate(cases):
            (held_out if i % 3 == 2 else fitting).append(case)
    return fitting, held_out


# The SM90 catalog's order, which the selection keeps among kernels it estimates alike; parallel
# split-K's kernels (`_splitk`) follow the whole catalog, and kernels since taken out of it (measured
# before) come last.
SM90_ORDER = {name: i for i, name in enumerate(_core.list_gemms(90))}


def tie_order(case, name, splits):
    """How the selection orders kernels it estimates alike (src/select/gemm_choice.cpp): SM90 ones first, by
    select::tie_rank (a GEMM whose cluster spans all of M's tiles, then the non-persistent kernel's cluster
    sharing the larger operand's tiles, ...), in the catalog's order; SM80 ones the deeper K tile first."""
    if "_sm80_" in name:
        return (1, 0, -int(re.search(r"_\d+x\d+x(\d+)_", name).group(1)))
    rank = 2 if case.conv else _core.tie_rank(name, case.shape[0], case.shape[1], splits=splits, sm_count=SM_COUNT)
    base = name.removesuffix("_splitk")
    return (0, rank, SM90_ORDER.get(base, 2 * len(SM90_ORDER)) + (len(SM90_ORDER) if base != name else 0))


# How many of the model's first candidates autotuning times (GemmSettings' default).
TOP_K = _core.GemmSettings().autotune_candidates


def ranked(case, model):
    """The kernels (indices) measured on the case in the model's order: the fastest estimate first, ties
    broken as the selection breaks them."""
    estimates = [case.estimate(name, splits, model) for name, splits, _ in case.kernels]
    return sorted(range(len(estimates)), key=lambda i: (estimates[i], tie_order(case, *case.kernels[i][:2])))


def pick(case, model):
    """The kernel (index) the model picks among those measured on the case."""
    return ranked(case, model)[0]


def score(case, model, top=None):
    """The best measured time, of every kernel or of the model's first `top`, over the pick's."""
    order = ranked(case, model)
    best = min(case.kernels[i][2] for i in order[:top])
    return best / case.kernels[order[0]][2]


def summary(cases, model, top=None):
    scores = [score(c, model, top) for c in cases]
    return min(scores), statistics.mean(scores)


def objective(cases, model):
    worst, mean = summary(cases, model)
    return worst + mean


def with_value(model, field, value):
    m = _core.CostModel()
    for f in GRIDS:
        setattr(m, f, getattr(model, f))
    setattr(m, field, value)
    return m


def refit(cases, model):
    """Coordinate descent: each constant in turn takes the grid value that scores best with the others
    held (the middle one of a tie; the current value unless another scores higher), until a round
    changes nothing."""
    current = objective(cases, model)
    for _ in range(ROUNDS):
        changed = False
        for field, grid in GRIDS.items():
            scored = [(objective(cases, with_value(model, field, v)), v) for v in grid]
            top = max(s for s, _ in scored)
            if top <= current + 1e-12:
                continue
            best = [v for s, v in scored if s >= top - 1e-12]
            model = with_value(model, field, best[len(best) // 2])
            current, changed = top, True
        if not changed:
            break
    return model


def short(name):
    """The tile, cluster and schedule of a kernel name."""
    parts = name.split("_")
    tile = next(i for i, p in enumerate(parts) if p.count("x") == 2 and p[0].isdigit())
    return "_".join(parts[tile:tile + 2] + parts[tile + 3:tile + 4] + parts[tile + 5:tile + 6])


def report(title, cases, before, after):
    print(f"\n{title}: the pick's measured time as a fraction of the best measured (before -> after)")
    for c in cases:
        b, a = before.get(id(c)), after.get(id(c))
        name, splits, _ = c.kernels[a[1]]
        print(f"  {c.label():<28} {b[0]:.3f} -> {a[0]:.3f}  ({len(c.kernels)} kernels; after: {short(name)}"
              f"{f' x{splits}' if splits > 1 else ''})")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", metavar="PATH", help="write the fitted constants as C++ initializers")
    args = p.parse_args()

    fitting, held_out = split(cases_by_source())
    default = _core.CostModel()
    fitted = refit(fitting, default)
    for title, cases in (("fitting set", fitting), ("held-out set", held_out)):
        before = {id(c): (score(c, default), pick(c, default)) for c in cases}
        after = {id(c): (score(c, fitted), pick(c, fitted)) for c in cases}
        report(title, cases, before, after)

    print("\n              worst before  worst after  mean before  mean after")
    for title, cases in (("fitting", fitting), ("held-out", held_out)):
        (wb, mb), (wa, ma) = summary(cases, default), summary(cases, fitted)
        print(f"  {title:<10} {wb:>12.3f} {wa:>12.3f} {mb:>12.3f} {ma:>11.3f}")
    print(f"  held out: every third case of each file ({len(held_out)} of {len(fitting) + len(held_out)})")
    print(f"\nagainst the best of the model's first {TOP_K} (issue 16's measure; cases of at most {TOP_K} kernels score 1)")
    for title, cases in (("fitting", fitting), ("held-out", held_out)):
        (wb, mb), (wa, ma) = summary(cases, default, TOP_K), summary(cases, fitted, TOP_K)
        under = sum(score(c, default, TOP_K) < 0.97 for c in cases)
        print(f"  {title:<10} {wb:>12.3f} {wa:>12.3f} {mb:>12.3f} {ma:>11.3f}   under 0.97 before: {under} of {len(cases)}")

    lines = [f"double {f} = {getattr(fitted, f):g};  // was {getattr(default, f):g}"
             for f in GRIDS if getattr(fitted, f) != getattr(default, f)]
    print("\nfitted constants (select::CostModel):" if lines else "\nno constant changed")
    for line in lines:
        print("  " + line)
    if args.write:
        with open(args.write, "w") as f:
            f.write("\n".join(f"double {k} = {getattr(fitted, k):g};" for k in GRIDS) + "\n")


if __name__ == "__main__":
    main()
