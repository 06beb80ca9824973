"""The toolchain and the kernel cache from Python, each test in a fresh process: the cache directory
cuforge uses, clearing it, and a missing CUTLASS or nvcc reported when compiling, not at import."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from fresh_process import run_python


def test_cache_dir_follows_cuforge_cache_dir(tmp_path):
    result = run_python("import cuforge; print('CACHE=' + cuforge.cache_dir())", CUFORGE_CACHE_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"CACHE={tmp_path}/v1" in result.stdout


def test_a_relative_cache_directory_stays_where_it_was_and_a_relative_xdg_is_ignored(tmp_path):
    """A relative CUFORGE_CACHE_DIR is taken against the working directory of the first use, once: after a
    chdir the cache and its tuning record were elsewhere. A relative XDG_CACHE_HOME is ignored (the XDG
    specification), the cache then under HOME."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    code = ("import os, cuforge\n"
            "first = cuforge.cache_dir()\n"
            "os.chdir('../b')\n"
            "cuforge._core.cache_subdirectory('locks')  # makes the cache (listings make none)\n"
            "print(first == cuforge.cache_dir() == cuforge.cache_info()['root'], first)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CUFORGE_CACHE_DIR", "XDG_CACHE_HOME")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path / "a",
                         env=dict(env, CUFORGE_CACHE_DIR="rel"), timeout=120)
    assert out.returncode == 0 and out.stdout.split() == ["True", str(tmp_path / "a" / "rel" / "v1")], out
    assert (tmp_path / "a" / "rel" / "v1" / "locks").is_dir() and not (tmp_path / "b" / "rel").exists()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path / "a",
                         env=dict(env, XDG_CACHE_HOME="relcache", HOME=str(tmp_path / "home")), timeout=120)
    home_cache = tmp_path / "home" / ".cache" / "cuforge" / "v1"
    assert out.returncode == 0 and out.stdout.split() == ["True", str(home_cache)], out
    assert (home_cache / "locks").is_dir() and not (tmp_path / "a" / "relcache").exists()


def test_cache_clear_removes_the_kernels_and_keeps_the_tuning_record(tmp_path):
    root = tmp_path / "v1"
    for sub in ("kernels/some_kernel", "failed/a_failed_build", "tuning"):
        (root / sub).mkdir(parents=True, mode=0o700)
    (root / "kernels/some_kernel/kernel.so").write_bytes(b"\0")
    (root / "tuning/record.json").write_text("{}")
    for d in (tmp_path, root):
        d.chmod(0o700)
    result = run_python("import cuforge; cuforge.cache_clear(); print('ENTRIES=%d' % cuforge.cache_info()['entries'])",
                        CUFORGE_CACHE_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "ENTRIES=0" in result.stdout
    assert not (root / "kernels/some_kernel").exists() and not (root / "failed/a_failed_build").exists()
    assert (root / "tuning/record.json").read_text() == "{}"


def test_the_tuning_record_is_read_with_its_measurements(tmp_path):
    root = tmp_path / "v1"
    (root / "tuning").mkdir(parents=True, mode=0o700)
    for d in (tmp_path, root):
        d.chmod(0o700)
    entry = {"kernel": "k", "splits": 1, "decomposition": "data_parallel", "us": 10.5,
             "measured": {"k x1": 10.5, "other x2": 12.0}, "candidates": 2}
    (root / "tuning/record.json").write_text(json.dumps({"format": 1, "entries": {"a class": entry}}))
    (root / "tuning/record.json").chmod(0o600)
    result = run_python("import cuforge, json; print(json.dumps(cuforge.tuning_record(), default=lambda e: e.name))",
                        CUFORGE_CACHE_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    path, entries = json.loads(result.stdout)
    assert path == str(root / "tuning/record.json") and len(entries) == 1, result.stdout
    assert entries[0] == {"key": "a class", "kernel": "k", "splits": 1, "decomposition": "DataParallel", "us": 10.5,
                          "measured": [["k x1", 10.5], ["other x2", 12.0]], "candidates": 2}


def test_a_cache_clear_waiting_for_a_hold_stops_at_ctrl_c_and_one_under_its_own_hold_is_refused(tmp_path):
    result = run_python("""
        import os, signal, threading, cuforge
        held, done = threading.Event(), threading.Event()
        def hold():
            with cuforge._core.cache_hold():
                held.set()
                done.wait()
        holder = threading.Thread(target=hold)
        holder.start()
        held.wait()
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            cuforge.cache_clear()
            print("cleared under another thread's hold")
        except KeyboardInterrupt:
            print("interrupted")
        done.set()
        holder.join()
        with cuforge._core.cache_hold():
            try:
                cuforge.cache_clear()
                print("cleared under its own hold")
            except cuforge.CacheError as e:
                print("refused:", e)
        cuforge.cache_clear()
        print("cleared")
    """, CUFORGE_CACHE_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "interrupted" and lines[2] == "cleared", result.stdout
    assert lines[1].startswith("refused: cannot clear the cache") and "while this thread holds it" in lines[1]


def test_missing_cutlass_is_reported_when_compiling_not_at_import(tmp_path):
    result = run_python("""
        import numpy as np
        import cuforge
        plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
        print("IMPORTED")
        try:
            plan.compile(M=256, N=256, K=256)
        except cuforge.ToolchainError as e:
            print("TOOLCHAIN_ERROR=" + str(e).replace("\\n", " "))
    """, CUTLASS_PATH=str(tmp_path / "nowhere"), CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    assert "IMPORTED" in result.stdout
    error = re.search(r"TOOLCHAIN_ERROR=(.*)", result.stdout).group(1)
    assert "CUTLASS_PATH" in error and "include/cutlass/version.h" in error
    assert not (tmp_path / "cache" / "v1" / "kernels").exists() or not any((tmp_path / "cache" / "v1" / "kernels").iterdir())


def test_missing_nvcc_is_a_toolchain_error(tmp_path):
    result = run_python("""
        import cuforge
        try:
            cuforge.toolchain()
        except cuforge.ToolchainError as e:
            print("TOOLCHAIN_ERROR=" + str(e).replace("\\n", " "))
    """, CUDA_INSTALL_PATH=str(tmp_path))
    assert result.returncode == 0, result.stderr
    error = re.search(r"TOOLCHAIN_ERROR=(.*)", result.stdout).group(1)
    assert "CUDA_INSTALL_PATH" in error and "bin/nvcc" in error


def test_a_process_ignoring_sigchld_is_told_why_it_cannot_build(tmp_path):
    """With SIGCHLD ignored the kernel reaps cuforge's children unasked: their exit status is lost (it read as 0:
    "nvcc failed (exit status 0)"), and nvcc, which inherited the setting, failed its own steps. Now a
    ToolchainError says so, and what to do."""
    result = run_python("""
        import signal, numpy as np, cuforge
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        try:
            cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor, cc=80).compile()
        except cuforge.ToolchainError as e:
            print("REFUSED", e)
        """, CUFORGE_CACHE_DIR=str(tmp_path))
    assert "REFUSED" in result.stdout and "this process ignores SIGCHLD" in result.stdout, result.stdout + result.stderr
    assert "signal.SIG_DFL" in result.stdout
