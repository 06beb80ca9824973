"""The entry-point fuzz run (entry_point_fuzz.py), in a child process with a fake toolkit and a
private cache: it must end with every case run and the child alive."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

from test_faults import fake_toolkit

HERE = pathlib.Path(__file__).parent


def test_selection_compile_and_cache_entry_points_survive_arbitrary_input(tmp_path):
    cases = int(os.environ.get("CUFORGE_FUZZ_CASES", "10000"))
    env = dict(os.environ, CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"), CUFORGE_CACHE_DIR=str(tmp_path / "c"),
               CUFORGE_FUZZ_CASES=str(cases))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                        str(HERE / "entry_point_fuzz.py")], capture_output=True, text=True, env=env, timeout=1800,
                       cwd=HERE)
    assert r.returncode == 0, f"exit status {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    found = re.search(r"FUZZ (\d+) cases .*, 0 crashes", r.stdout)
    assert found, r.stdout[-2000:]
    assert int(found.group(1)) >= cases, found.group(0)
    print(found.group(0))
