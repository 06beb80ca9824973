#!/usr/bin/env python3
"""Draw the profiles a `bench/conv.py --profile N --json F` run saved, one PNG per pass and layer, as
cuforge's profiler draws its own (`Profile.plot`: TFLOP/s per kernel, the cost model's pick in orange,
cuDNN as a line). Needs matplotlib, no GPU.

    python3 bench/plot_profile.py results/h200-2026-12-03-conv-fp16-profile-wgrad-28-held.json --out DIR
"""

import argparse
import json
import os
import re

from cuforge.profiler import Profile


def profiles(results):
    """(file stem, Profile) per pass and layer of a conv.py --profile JSON."""
    for p in results["profile"]:
        rows = [{k: float("nan") if v is None else v for k, v in row.items()} for row in p["candidates"]]
        stem = re.sub(r"[^0-9a-z]+", "-", f"{p['pass']} {p['layer']}".lower()).strip("-")
        yield stem, Profile(problem=p["problem"], flops=p["flops"], types=results["dtype"], rows=rows,
                            baseline_us=p["cudnn_us"], baseline_name="cuDNN")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="a bench/conv.py --profile results file")
    ap.add_argument("--out", default=".", help="directory for the PNGs")
    args = ap.parse_args()
    with open(args.json) as f:
        results = json.load(f)
    for stem, profile in profiles(results):
        path = os.path.join(args.out, f"{stem}.png")
        profile.plot(path)
        print(path)


if __name__ == "__main__":
    main()
