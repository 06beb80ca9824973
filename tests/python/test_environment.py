"""The module-level surface of the CUTLASS Python interface: the toolkit, the driver, the GPU, the
CUTLASS tree and the log level."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys

import pytest

import cuforge
import cuforge as cutlass
from fake_arrays import no_gpu


def test_the_toolkit_and_the_cutlass_tree():
    assert os.access(os.path.join(cutlass.cuda_install_path(), "bin", "nvcc"), os.X_OK)
    # The release, as the interface's: float(cutlass.nvcc_version()) >= 12.0 is how its users test it.
    assert re.fullmatch(r"\d+\.\d+", cutlass.nvcc_version()) and float(cutlass.nvcc_version()) >= 12.4
    assert os.path.isfile(os.path.join(cutlass.CUTLASS_PATH, "include", "cutlass", "cutlass.h"))


def test_a_relative_cutlass_path_is_taken_from_where_cuforge_is_imported(tmp_path):
    """Builds after os.chdir found no headers under a relative CUTLASS_PATH (fault probe 10)."""
    tree = os.path.relpath(cutlass.CUTLASS_PATH, tmp_path)
    script = ("import os, cuforge; os.chdir('/'); print(cuforge.CUTLASS_PATH); print(os.environ['CUTLASS_PATH']); "
              "print(cuforge.toolchain()['cutlass'])")
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env={**os.environ, "CUTLASS_PATH": tree},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [os.path.abspath(os.path.join(tmp_path, tree))] * 3, r.stdout
    # Without a current directory (removed), it stays as given: the import raised FileNotFoundError.
    gone = tmp_path / "gone"
    gone.mkdir()
    r = subprocess.run([sys.executable, "-c", "import os; os.rmdir(os.getcwd()); import cuforge; "
                                              "print(cuforge.CUTLASS_PATH)"],
                       cwd=gone, env={**os.environ, "CUTLASS_PATH": "rel"}, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.split() == ["rel"], (r.stdout, r.stderr)


def test_cuda_versions_name_each_party():
    versions = cutlass.check_cuda_versions()
    assert versions["toolkit"] == cutlass.nvcc_version()
    assert "driver" in versions


@no_gpu
def test_without_a_gpu():
    assert cutlass.device_id() == 0
    with pytest.raises(cuforge.DeviceError):
        cutlass.device_cc()
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        cutlass.initialize_cuda_context()  # the interface's: the versions checked, then the GPU opened


def test_the_interfaces_option_registry_is_refused_with_what_to_use():
    with pytest.raises(AttributeError, match="get_option_registry: the interface's tables of default kernels; "
                                             "cuforge's catalog holds them: plan.tile_descriptions()"):
        cutlass.get_option_registry()


def test_set_log_level():
    before = cuforge.logger.level
    try:
        cutlass.set_log_level("info")
        assert cuforge.logger.level == logging.INFO
        cutlass.set_log_level(logging.DEBUG)
        assert cuforge.logger.level == logging.DEBUG
        with pytest.raises(cuforge.InvalidArgumentError, match="^set_log_level: expected a logging level"):
            cutlass.set_log_level("loud")
    finally:
        cuforge.logger.setLevel(before)


def test_a_failing_log_sink_is_reported_and_breaks_nothing():
    # The core's warning about CUFORGE_FIRST_RUN goes to a sink that raises: the plan is still made,
    # and the sink's exception reaches sys.unraisablehook (Python prints it) instead of vanishing.
    code = ("import cuforge, numpy as np, sys\n"
            "seen = []\n"
            "sys.unraisablehook = lambda u: seen.append(f'{u.exc_type.__name__}: {u.exc_value}')\n"
            "def sink(level, message): raise RuntimeError('logger is broken')\n"
            "cuforge._core.set_log_sink(sink)\n"
            "print(cuforge.op.Gemm(element=np.float16).first_run, seen)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "CUFORGE_FIRST_RUN": "soon"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "wait ['RuntimeError: logger is broken']"


@pytest.mark.parametrize("variable", ["CUFORGE_FIRST_RUN", "CUFORGE_AUTOTUNE"])
def test_a_log_handler_that_builds_a_plan_on_the_variables_warning_does_not_hang(variable):
    """The warning about a bad CUFORGE_FIRST_RUN or CUFORGE_AUTOTUNE was said inside std::call_once: a handler
    that made a plan on hearing it (or another thread making one while the handler let the GIL go) waited on
    that call_once forever."""
    code = ("import logging, threading, numpy as np, cuforge\n"
            "class Handler(logging.Handler):\n"
            "    def emit(self, record):\n"
            "        cuforge.op.Gemm(element=np.float16)\n"
            "cuforge.logger.addHandler(Handler())\n"
            "threads = [threading.Thread(target=cuforge.op.GroupedGemm, kwargs=dict(element=np.float16))\n"
            "           for _ in range(8)]\n"
            "[t.start() for t in threads]\n"
            "cuforge.op.Gemm(element=np.float16)\n"
            "[t.join() for t in threads]\n"
            "print('made')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, variable: "zz"})
    assert out.returncode == 0 and out.stdout.strip() == "made", out.stderr


@pytest.mark.parametrize("value", ["abc", "-1", "3x", "64", "2147483648", "99999999999999999999", " 1", "1 ", "+1"])
def test_a_device_id_that_is_no_ordinal_is_refused(value):
    """CUTLASS_CUDA_DEVICE_ID is read when a plan is made: beyond 32 bits it wrapped to a negative ordinal."""
    from test_faults import run_python

    r = run_python("""
        import cuforge
        try:
            cuforge.op.Gemm(element="f16", layout=cuforge.LayoutType.RowMajor)
        except cuforge.DeviceError as e:
            print(e)
    """, CUTLASS_CUDA_DEVICE_ID=value)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"CUTLASS_CUDA_DEVICE_ID is '{value}', expected a device ordinal (0 to 63)", r.stdout
