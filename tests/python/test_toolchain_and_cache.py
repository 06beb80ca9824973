"""The toolchain and the kernel cache from Python, each test in a fresh process: the cache directory
cuforge uses, clearing it, and a missing CUTLASS or nvcc reported when compiling, not at import."""

from __future__ import annotations

import re

from fresh_process import run_python


def test_cache_dir_follows_cuforge_cache_dir(tmp_path):
    result = run_python("import cuforge; print('CACHE=' + cuforge.cache_dir())", CUFORGE_CACHE_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"CACHE={tmp_path}/v1" in result.stdout


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
