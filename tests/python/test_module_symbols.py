"""The extension module keeps what it links to itself: it exports its init function only, so that
nothing loaded after it (PyTorch's libstdc++ among them) binds to its copies of shared code."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import pytest

import cuforge


def test_the_module_exports_its_init_function_only():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed: the module's dynamic symbols cannot be listed")
    out = subprocess.run([nm, "-D", "--defined-only", cuforge._core.__file__], capture_output=True, text=True,
                         check=True).stdout
    assert [line.split()[-1] for line in out.splitlines()] == ["PyInit__core"]


def test_torch_imports_after_the_toolchain_was_read():
    # On the H200 machine, whose compiler links libstdc++ into the module statically, reading the
    # toolchain (a string stream) and then importing torch crashed with a segmentation fault while the
    # module exported that libstdc++'s symbols.
    if importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed")
    code = "import cuforge; cuforge._core.toolchain(); import torch; print(torch.ones(3).sum().item())"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "3.0"
