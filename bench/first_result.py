"""How long a new user waits (issue 19), each measurement in a fresh process on an empty cache:

- the cold build of the default bf16 SM90 kernel (256x128x64 cooperative) as one library;
- the first result of a new bf16 plan with `first_run = "fallback"`: from `plan.run()` to D on the host
  (a stand-in kernel built and run), then the time until runs switch to the chosen kernel, and the
  longest host time of a run after the switch (no pause on the run path);
- the same first result with `first_run = "wait"`, for comparison.

Usage: python3 bench/first_result.py [--json FILE] [--m 4096 --n 4096 --k 4096]
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap

DEFAULT_KERNEL = "cuforge_sm90_gemm_tensorop_mma_bf16_bf16_f32_bf16_bf16_rrr_256x128x64_c1x1x1_s0_coop_tmacoop_default_a8x8x8"

COLD_BUILD = """
    import json, time, cuforge
    t0 = time.perf_counter()
    cuforge.build([{kernel!r}], progress=False)  # raises CompilationError if nvcc fails
    print(json.dumps({{"seconds": time.perf_counter() - t0}}))
"""

FIRST_RESULT = """
    import json, time
    t_import = time.perf_counter()
    import torch, cuforge
    A = torch.randint(-2, 3, ({m}, {k}), device="cuda").to(torch.bfloat16)
    B = torch.randint(-2, 3, ({k}, {n}), device="cuda").to(torch.bfloat16)
    D = torch.empty({m}, {n}, device="cuda", dtype=torch.bfloat16)
    expected = (A.double() @ B.double()).to(torch.bfloat16)
    torch.cuda.synchronize()
    plan = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor)
    plan.first_run = {mode!r}
    chosen = plan.select({m}, {n}, {k})
    t0 = time.perf_counter()
    plan.run(A, B, None, D)
    first = time.perf_counter() - t0
    out = {{"first_s": first, "first_kernel": plan.last_kernel, "exact": bool(torch.equal(D, expected)),
           "chosen": chosen, "import_and_setup_s": t0 - t_import}}
    if plan.last_kernel != chosen:
        host = []
        while plan.last_kernel != chosen and time.perf_counter() - t0 < 500:
            time.sleep(0.05)
            plan.run(A, B, None, D)
        out["switch_s"] = time.perf_counter() - t0
        for _ in range(200):
            t = time.perf_counter()
            plan.run(A, B, None, D, sync=False)
            host.append(time.perf_counter() - t)
        torch.cuda.synchronize()
        out["after_switch_exact"] = bool(torch.equal(D, expected))
        out["after_switch_max_host_us"] = max(host) * 1e6
        out["after_switch_median_host_us"] = sorted(host)[len(host) // 2] * 1e6
    print(json.dumps(out))
"""


def child(body: str, **fields) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, CUFORGE_CACHE_DIR=cache)
        code = textwrap.dedent(body.format(**fields))
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=580)
    if done.returncode != 0:
        raise SystemExit(f"first_result: the child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--k", type=int, default=4096)
    parser.add_argument("--skip-wait", action="store_true", help="do not measure first_run='wait'")
    args = parser.parse_args()

    results = {"machine": platform.node(), "cores": os.cpu_count(), "shape": [args.m, args.n, args.k]}
    results["cold_build"] = child(COLD_BUILD, kernel=DEFAULT_KERNEL)
    results["cold_build"]["kernel"] = DEFAULT_KERNEL
    print(f"cold build of {DEFAULT_KERNEL}: {results['cold_build']['seconds']:.1f} s", flush=True)
    modes = ["fallback"] if args.skip_wait else ["fallback", "wait"]
    for mode in modes:
        r = child(FIRST_RESULT, mode=mode, m=args.m, n=args.n, k=args.k)
        results[f"first_run_{mode}"] = r
        line = f"first_run={mode}: first result {r['first_s']:.1f} s on {r['first_kernel']} (exact: {r['exact']})"
        if "switch_s" in r:
            line += (f"; switched to the chosen kernel at {r['switch_s']:.1f} s (exact: {r['after_switch_exact']}),"
                     f" host time after it: median {r['after_switch_median_host_us']:.1f} µs,"
                     f" max {r['after_switch_max_host_us']:.1f} µs")
        print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
