"""The profiler's parts that need no GPU: its table and CSV, and the command line's refusals."""

import csv
import math
import sys
import time

import numpy as np
import pytest

import cuforge
from cuforge import profile_command, profiler
from cuforge._core import Decomposition
from fake_arrays import no_gpu


def rows():
    raw = [dict(kernel="cuforge_sm90_fprop_fast", splits=1, decomposition=Decomposition.Heuristic, predicted_rank=1,
                predicted_us=12.0, measured_us=10.0, error=""),
           dict(kernel="cuforge_sm80_fprop_slow", splits=2, decomposition=Decomposition.SplitK, predicted_rank=0,
                predicted_us=9.0, measured_us=20.0, error=""),
           dict(kernel="cuforge_sm90_fprop_broken", splits=1, decomposition=Decomposition.Heuristic, predicted_rank=2,
                predicted_us=15.0, measured_us=math.nan, error="nvcc failed")]
    return raw


class Types:
    element_A = element_B = element_D = cuforge.DataType.f16
    element_accumulator = cuforge.DataType.f32


def test_a_profile_ranks_as_measured_and_writes_its_csv(tmp_path):
    result = profiler._profile(Types, "fprop 2x9x7x16 -> 32", 2e9, rows())
    result.baseline_us, result.baseline_name = 8.0, "cuDNN (torch conv2d)"
    table = result.table()
    assert table.splitlines()[0] == "fprop 2x9x7x16 -> 32 f16/f16/f32/f16: 3 candidates, best measured first"
    assert "200.0" in table and "nvcc failed" in table and "cuDNN (torch conv2d): 8.00 us, 250.0 TFLOP/s" in table
    assert [r["measured_rank"] for r in result.rows] == [0, 1, ""]
    result.write_csv(tmp_path / "p.csv")
    with open(tmp_path / "p.csv") as f:
        written = list(csv.DictReader(f))
    assert tuple(written[0]) == profiler.COLUMNS
    assert [r["kernel"] for r in written][-1] == "cuDNN (torch conv2d)"
    assert written[1]["decomposition"] == "SplitK"


@pytest.mark.parametrize("argv, says", [
    (["profile", "--op", "fprop", "--m", "4", "--n", "4", "--k", "4"], "takes --conv N,H,W,C,K,R,S"),
    (["profile", "--m", "4", "--n", "4"], "takes --m, --n and --k"),
    (["profile", "--m", "4", "--n", "4", "--k", "4", "--groups", "2"], "(and no --conv, --groups, --offsets"),
    # Options of another operation, once dropped without a word.
    (["profile", "--m", "4", "--n", "4", "--k", "4", "--stride", "2"], "--stride, --padding, --dilation)"),
    (["profile", "--op", "grouped", "--groups", "2", "--m", "4", "--n", "4", "--k", "4", "--batch", "3"],
     "(and no --conv, --batch"),
    (["profile", "--op", "fprop", "--conv", "1,9,9,8,8,3,3", "--layouts", "rcr"], "--layouts, --offsets: its tensors"),
    (["profile", "--op", "dgrad", "--conv", "1,9,9,8,8,3,3", "--batch", "2"], "--batch, --layouts"),
    (["profile", "--op", "grouped", "--m", "4", "--n", "4", "--k", "4"], "takes --groups, --m, --n and --k"),
    (["profile", "--op", "wgrad", "--conv", "1,9,9,8,8,3,3", "--offsets"], "(and no --m, --n, --k, --groups"),
    (["profile", "--op", "fprop", "--conv", "1,2,3"], "expected seven integers"),
    (["profile", "--op", "fprop", "--conv", "1,9,9,8,8,3,3", "--stride", "1,2,3"], "an integer or two"),
    # Digits of other scripts, which int() reads (a shapes file refuses them).
    (["profile", "--m", "\u0661\u0662", "--n", "4", "--k", "4"], "expected an integer in decimal digits"),
    (["profile", "--op", "fprop", "--conv", "1,9,9,8,8,3,3", "--padding", "\u0661"], "an integer or two"),
    # A leading zero, which the C++ commands refuse too (C reads 010 as octal).
    (["profile", "--m", "010", "--n", "4", "--k", "4"], "expected an integer in decimal digits"),
    # The interface's spellings of the operations, as `cuforge list --op` takes them.
    (["profile", "--op", "conv2d_dgrad", "--m", "4", "--n", "4", "--k", "4"], "profile --op dgrad takes --conv"),
    (["profile", "--op", "grouped_gemm", "--m", "4", "--n", "4", "--k", "4"], "profile --op grouped takes --groups"),
])
def test_the_command_line_refuses_what_it_cannot_profile(argv, says, capsys):
    with pytest.raises(SystemExit) as exit:
        profile_command.main(argv)
    assert exit.value.code == 2 and says in capsys.readouterr().err


def test_a_plot_without_matplotlib_is_refused_before_anything_is_built(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    argv = ["profile", "--m", "64", "--n", "64", "--k", "64", "--plot", str(tmp_path / "p.png")]
    assert profile_command.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("cuforge profile: plot: drawing the plot needs matplotlib") and len(err.splitlines()) == 1
    plan = cuforge.op.Conv2d(kind="fprop", element=np.float16)
    with pytest.raises(cuforge.InvalidArgumentError, match="needs matplotlib"):
        plan.profile(1, 8, 8, 8, 8, 3, 3, padding=1, plot=str(tmp_path / "p.png"))
    result = profiler._profile(Types, "fprop 2x9x7x16 -> 32", 2e9, rows())
    with pytest.raises(cuforge.InvalidArgumentError, match="needs matplotlib"):
        result.save(csv=str(tmp_path / "p.csv"), plot=str(tmp_path / "p.png"))
    assert (tmp_path / "p.csv").exists() and not (tmp_path / "p.png").exists(), "the CSV written first"


def test_the_plot_names_kernels_by_what_tells_them_apart(tmp_path):
    name = "cuforge_sm90_wgrad_tensorop_mma_f16_f16_f32_f16_f16_crr_128x128x64_c1x1x1_s0_tmaws_tma_default_a8x8x8_splitk"
    assert profiler._short_name(name) == "sm90 128x128x64_c1x1x1_s0_tmaws_tma_default_a8x8x8_splitk"
    assert profiler._short_name("cuDNN (torch conv2d)") == "cuDNN (torch conv2d)"
    pytest.importorskip("matplotlib", reason="matplotlib draws the plot (pip install matplotlib)")
    result = profiler._profile(Types, "fprop 2x9x7x16 -> 32", 2e9, rows())
    result.baseline_us = 8.0
    result.plot(str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_bad_geometry_is_refused_before_anything_is_allocated():
    plan = cuforge.op.Conv2d(kind="fprop", element=np.float16)
    with pytest.raises(cuforge.InvalidArgumentError, match="^R: the filter spans 7 rows"):
        plan.profile(1, 4, 4, 8, 8, 7, 7)


def test_tune_refuses_a_file_it_cannot_use(tmp_path, capsys):
    """A missing, unreadable, empty or malformed file of shapes: exit status 2 and one line naming it."""
    (tmp_path / "empty.txt").write_text("# only a comment\n\n")
    (tmp_path / "bad.txt").write_text("64 64 64\n64 x 64\n")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "huge.txt").write_text("64 64 64\n2147483648 16 2147483647\n")  # refused before the first runs
    (tmp_path / "superscript.txt").write_text("\u00b2\u00b2\u00b2 128 128\n")  # str.isdigit() but not int()
    (tmp_path / "digits.txt").write_text("1" * 5000 + " 1 1\n")  # past what int() reads (4300 digits)
    (tmp_path / "large.txt").write_text("64 64 64\n" * (2 << 20))  # 18 MiB: /dev/zero would be read for ever
    for name, says in (("missing.txt", "cannot read"), ("binary.txt", "cannot read"), ("empty.txt", "no 'M N K"),
                       ("bad.txt", "bad.txt:2: expected 'M N K [batch]'"), ("huge.txt", "exceeds the 32-bit range"),
                       ("superscript.txt", "superscript.txt:1: expected 'M N K [batch]'"),
                       ("large.txt", "more than 16 MiB"), ("digits.txt", "digits.txt:1: a size of more than 19 digits")):
        assert profile_command.main(["tune", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("cuforge tune: ") and says in err and len(err.splitlines()) == 1, err


def test_the_command_line_names_each_error_once(tmp_path, capsys):
    """An empty --layouts is refused (it meant rrr), and an error of plan.profile's is prefixed once."""
    (tmp_path / "shapes.txt").write_text("64 64 64\n")
    assert profile_command.main(["tune", str(tmp_path / "shapes.txt"), "--layouts", ""]) == 2
    assert capsys.readouterr().err == "cuforge tune: --layouts takes three letters r/c (A, B, C), got ''\n"
    if cuforge._core.device_count() == 0:
        assert profile_command.main(["profile", "--m", "64", "--n", "64", "--k", "64"]) == 2
        assert capsys.readouterr().err.startswith("cuforge profile: no CUDA GPU was found")


def test_tune_takes_each_shape_once(tmp_path):
    """A file repeating its shapes (a model's layers, say) tunes each once, in the file's order."""
    (tmp_path / "shapes.txt").write_text("64 64 64\n128 64 64 2\n64 64 64  # again\n64 64 64 1\n")
    assert profile_command._shapes(str(tmp_path / "shapes.txt")) == [(64, 64, 64, 1), (128, 64, 64, 2)]


def test_profile_and_compile_refuse_their_options_before_anything_is_allocated_or_built():
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    grouped = cuforge.op.GroupedGemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    for call, says in ((lambda: plan.profile(2**40, 64, 64), "exceeds the 32-bit range"),  # not 32 TiB of NumPy data
                       (lambda: grouped.profile(8, 64, 64, 2**40), "exceeds the 32-bit range"),
                       (lambda: plan.profile(64, 64, 64, filter=5), "^filter: expected a shell pattern"),
                       (lambda: plan.profile(64, 64, 64, filter="["), "^filter '\\[': '\\[' at position 0 opens"),
                       (lambda: plan.profile(64, 64, 64, csv=5), "^csv: expected a file path, got int"),
                       (lambda: plan.profile(64, 64, 64, csv="/nonexistent/p.csv"), "^csv: '/nonexistent/p.csv' is in no"),
                       (lambda: grouped.profile(8, 64, 64, 64, plot="/nonexistent/p.png"), "^plot: '/nonexistent/p.png'"),
                       (lambda: plan.compile(problems=True), "^problems: expected a list of .M, N, K. or"),
                       (lambda: grouped.compile(problems=(8, 64, 64, 64)), r"^problems: expected \(groups, M, N, K\)"),
                       (lambda: plan.compile(M=64, N=64, K=64, jobs=2**40), "^jobs: expected 0 .one per core. to")):
        with pytest.raises(cuforge.InvalidArgumentError, match=says):
            call()


@no_gpu
def test_profile_without_a_gpu_stops_before_filling_any_operand():
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    start = time.monotonic()
    with pytest.raises(cuforge.DeviceError, match="^profile: no CUDA GPU was found"):
        plan.profile(32768, 32768, 32768)  # 6 GiB of random host data before
    assert time.monotonic() - start < 5


def test_a_csv_path_that_is_a_directory_is_refused_first(tmp_path):
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="^csv: .* is a directory"):
        plan.profile(64, 64, 64, csv=str(tmp_path))
