"""What a hostile user or a bad disk can do, on the CPU: each case of the fault probe (issue 17) and
what cuforge does now — a cuforge.Error subclass naming the cause, a CLI exit status with the
message, never a dead interpreter. Cases that need nvcc use a fake toolkit (a script that writes an
empty library at once), so that nothing here compiles a real kernel."""

from __future__ import annotations

import copy
import json
import os
import pathlib
import pickle
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cuforge
from cuforge.arrays import current_stream, operand_extents
from cuforge.messages import shown
from fake_arrays import BASE, FakeDeviceArray, no_gpu

RowMajor = cuforge.LayoutType.RowMajor
CLI = [sys.executable, "-m", "cuforge.cli"]


def run(args, **env) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, **env), timeout=120)


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """In a fresh interpreter: a crash shows as a negative or >= 128 exit status, not as a failure here."""
    return run([sys.executable, "-c", textwrap.dedent(code)], **env)


def fake_toolkit(root) -> str:
    """A CUDA toolkit whose nvcc writes a library (-o) of an ELF header alone in an instant (a build that writes no
    shared library fails)."""
    nvcc = root / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text(textwrap.dedent("""\
        #!/bin/sh
        case "$*" in *--version*) echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0;; esac
        case "$*" in *--dryrun*) exit 1;; esac
        while [ $# -gt 0 ]; do [ "$1" = "-o" ] && printf '\\177ELF' > "$2"; shift; done
        """))
    nvcc.chmod(0o755)
    return str(root)


# --- The selection and compile entry points: sizes no run may have -----------------------------


@pytest.mark.parametrize("kernel_cc", [None, 80])
@pytest.mark.parametrize("m, n, k, batch, says", [
    (0, 0, 0, 1, "empty output"), (0, 64, 64, 1, "empty output"), (64, 0, 64, 1, "empty output"),
    (64, 64, 64, 0, "empty output"), (-1, 5, 5, 1, "^M: expected a size of 0 or more, got -1"),
    (-8, 8, 8, 1, "^M: "), (8, -8, 8, 1, "^N: "), (8, 8, -8, 1, "^K: "), (64, 64, 64, -3, "^batch: "),
    (2**40, 2**40, 2**40, 1, "exceeds the 32-bit range"), (2**40, 8, 8, 1, "^M: 1099511627776 exceeds"),
    (2**31, 8, 8, 1, "^M: 2147483648 exceeds"), (2**70, 8, 8, 1, "beyond any size"),
])
def test_select_and_compile_refuse_sizes_by_name(kernel_cc, m, n, k, batch, says):
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor, kernel_cc=kernel_cc)
    with pytest.raises(cuforge.InvalidArgumentError, match=says):
        plan.select(m, n, k, batch)
    with pytest.raises(cuforge.InvalidArgumentError, match=says):
        plan.compile(M=m, N=n, K=k, batch=batch)


def test_k_zero_selects_the_kernel_that_writes_beta_c():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    assert plan.select(64, 64, 0).startswith("cuforge_sm90_")


# --- Settings of the wrong kind --------------------------------------------------------------------


def test_settings_of_the_wrong_kind_are_named():
    with pytest.raises(cuforge.InvalidArgumentError, match="^layout: expected a cuforge.LayoutType"):
        cuforge.op.Gemm(element=np.float16, layout="diagonal")
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"threadblock_shape.*expected three integers"):
        plan.tile_description = {"threadblock_shape": "abc"}
    with pytest.raises(cuforge.InvalidArgumentError, match="^split_k_slices: expected 1 to 1024"):
        plan.split_k_slices = 2**31
    with pytest.raises(cuforge.InvalidArgumentError, match="^split_k_slices: expected an integer"):
        plan.split_k_slices = 2.5
    with pytest.raises(cuforge.InvalidArgumentError, match="leaky_relu's slope must be a real number"):
        plan.activation = (cuforge.epilogue.leaky_relu, "x")
    with pytest.raises(cuforge.InvalidArgumentError, match="^deterministic: expected True or False"):
        plan.deterministic = "no"
    assert plan.deterministic is True, "a refused setting leaves the plan as it was"
    with pytest.raises(cuforge.InvalidArgumentError, match="^opclass: expected a cuforge.OpcodeClass"):
        plan.opclass = "Tensor"
    with pytest.raises(cuforge.InvalidArgumentError, match="^cc: expected an integer"):
        cuforge.op.Gemm(element=np.float16, layout=RowMajor, cc="90")
    with pytest.raises(cuforge.InvalidArgumentError, match="compute capability 91 is not a GPU"):
        cuforge.op.Gemm(element=np.float16, layout=RowMajor, cc=91)
    with pytest.raises(cuforge.InvalidArgumentError, match="^alignment_A: expected a power of two from 1 to 8"):
        plan.compile(alignment_A=16)
    for select in (plan.select, cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor).select):
        with pytest.raises(cuforge.InvalidArgumentError, match="^alignment_B: expected a power of two"):
            select(8, 64, 64, 64, alignment_B=2**40)  # past the core's 32-bit alignments: named, not a TypeError


@pytest.mark.parametrize("value, says", [
    (np.ones((2, 2)), "ndarray of 4 elements"), ("two", "expected a real number, got 'two'"),
    (None, "expected a real number, got None"), (1j, "expected a real number"), (True, "expected a real number"),
    ([1.0], "expected a real number"),
])
def test_scalars_of_unsupported_kinds_are_named(value, says):
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A, B, C, D = [np.ones((8, 8), np.float16) for _ in range(4)]
    for name in ("alpha", "beta"):
        if value is not None:  # run(alpha=None) means the plan's own
            with pytest.raises(cuforge.InvalidArgumentError, match=f"^{name}: .*{says}"):
                plan.run(A, B, C, D, **{name: value})
    plan.alpha = value
    with pytest.raises(cuforge.InvalidArgumentError, match="^alpha: "):
        plan.run(A, B, C, D)


def test_one_element_arrays_are_scalars():
    from cuforge.op.arguments import scalar

    assert scalar(np.float32(2.5), "alpha") == 2.5
    assert scalar(np.array([[3.0]]), "beta") == 3.0


# --- The cache, the toolchain and the command line -------------------------------------------------


def test_cache_dir_that_is_a_file_is_an_error_everywhere(tmp_path):
    bogus = tmp_path / "file"
    bogus.write_text("not a directory")
    for action in ("info", "verify", "prune", "clear"):
        r = run(CLI + ["cache", action], CUFORGE_CACHE_DIR=str(bogus))
        assert r.returncode == 2, (action, r.stdout, r.stderr)
        assert "not a directory" in r.stderr or "cannot create" in r.stderr, r.stderr
    r = run_python("""
        import cuforge
        for call in (cuforge.cache_info, cuforge.cache_verify):
            try:
                call()
            except cuforge.CacheError as e:
                print("CacheError")
    """, CUFORGE_CACHE_DIR=str(bogus))
    assert r.stdout.split() == ["CacheError", "CacheError"], (r.stdout, r.stderr)


def test_paths_that_are_not_utf8_come_back_as_os_fsdecode_gives_them(tmp_path):
    """Found by a fault probe: Linux paths are bytes. A CUTLASS_PATH that is not UTF-8 broke `import
    cuforge`; such a cache directory broke cache_dir(), cache_info() and a build's result, and a damaged
    entry's unreadable JSON broke cache_verify() (UnicodeDecodeError each)."""
    cache = os.fsdecode(os.fsencode(tmp_path) + b"/cache\xfe")
    damaged = pathlib.Path(cache) / "v1" / "kernels" / "abc"
    damaged.mkdir(parents=True)
    (damaged / "entry.json").write_bytes(b"\xff")
    for file in ("kernel.so", "kernel.cu"):
        (damaged / file).write_bytes(b"")
    name, cutlass = cuforge.list_gemms(80)[0], os.fsdecode(b"/opt/cutl\xffass")
    r = run_python(f"""
        import cuforge
        print(cuforge.CUTLASS_PATH == {cutlass!r})
        try:
            cuforge.build([{name!r}], progress=False)
        except cuforge.ToolchainError as e:
            print("ToolchainError", "/opt/cutl" in str(e))
    """, CUTLASS_PATH=cutlass, CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"))
    assert r.returncode == 0 and r.stdout.split() == ["True", "ToolchainError", "True"], (r.stdout, r.stderr)
    r = run_python(f"""
        import os, cuforge
        print(cuforge.cache_dir() == os.path.join({cache!r}, "v1"), cuforge.cache_info()["root"] == cuforge.cache_dir())
        [bad] = cuforge.cache_verify()
        print(bad["key"], "unreadable" in bad["problem"])
        [built] = cuforge.build([{name!r}], progress=False)
        print(os.path.isfile(built["library"]) and built["library"].startswith({cache!r}))
    """, CUFORGE_CACHE_DIR=cache, CUDA_INSTALL_PATH=str(tmp_path / "cuda"))
    assert r.returncode == 0 and r.stdout.split() == ["True", "True", "abc", "True", "True"], (r.stdout, r.stderr)


def test_cache_open_to_others_is_refused_not_changed(tmp_path):
    root = tmp_path / "cache"
    (root / "v1").mkdir(parents=True)
    os.chmod(root / "v1", 0o777)
    r = run(CLI + ["cache", "verify"], CUFORGE_CACHE_DIR=str(root))
    assert r.returncode == 2 and "writable by other users" in r.stderr, (r.stdout, r.stderr)
    assert stat.S_IMODE(os.stat(root / "v1").st_mode) == 0o777


def test_build_reports_toolchain_and_cache_problems_as_what_they_are(tmp_path):
    name = cuforge.list_gemms(80)[0]
    bogus = tmp_path / "file"
    bogus.write_text("")
    r = run_python(f"""
        import cuforge
        try:
            cuforge.build([{name!r}], progress=False)
        except cuforge.Error as e:
            print(type(e).__name__)
    """, CUFORGE_CACHE_DIR=str(bogus), CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"))
    assert r.stdout.strip() == "CacheError", (r.stdout, r.stderr)
    old = tmp_path / "old" / "include" / "cutlass"
    old.mkdir(parents=True)
    (old / "version.h").write_text("#define CUTLASS_MAJOR 3\n#define CUTLASS_MINOR 9\n#define CUTLASS_PATCH 2\n")
    r = run_python(f"""
        import cuforge
        try:
            cuforge.build([{name!r}], progress=False)
        except cuforge.Error as e:
            print(type(e).__name__)
    """, CUTLASS_PATH=str(tmp_path / "old"), CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    assert r.stdout.strip() == "ToolchainError", (r.stdout, r.stderr)


def test_a_ctrl_c_stops_a_build(tmp_path):
    """The interpreter sees a Ctrl-C only when Python code runs: a build (every kernel, in threads of the core's)
    ran to its end, and the KeyboardInterrupt was lost in the log sink. It stops now: no further kernel starts,
    and the build raises KeyboardInterrupt."""
    cuda = fake_toolkit(tmp_path / "cuda")
    nvcc = pathlib.Path(cuda) / "bin" / "nvcc"
    nvcc.write_text(nvcc.read_text().replace('while [ $# -gt 0 ]', 'sleep 1; while [ $# -gt 0 ]'))
    names = cuforge.list_gemms(80)[:12]
    r = run_python(f"""
        import os, signal, threading, time, cuforge
        threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        start = time.monotonic()
        try:
            cuforge.build({names!r}, jobs=1, progress=False)
            print("finished")
        except KeyboardInterrupt:
            print("KeyboardInterrupt", time.monotonic() - start < 6)
    """, CUFORGE_CACHE_DIR=str(tmp_path / "cache"), CUDA_INSTALL_PATH=cuda)
    assert r.returncode == 0 and r.stdout.split() == ["KeyboardInterrupt", "True"], (r.stdout, r.stderr)
    assert "Exception ignored" not in r.stderr, r.stderr
    # A signal handler of the program's raising its own exception (a deadline's): that exception, not a
    # KeyboardInterrupt.
    r = run_python(f"""
        import os, signal, threading, cuforge
        def deadline(signum, frame):
            raise TimeoutError("my deadline")
        signal.signal(signal.SIGUSR1, deadline)
        threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        try:
            cuforge.build({names!r}, jobs=1, progress=False)
        except TimeoutError as e:
            print("TimeoutError", e)
    """, CUFORGE_CACHE_DIR=str(tmp_path / "cache2"), CUDA_INSTALL_PATH=cuda)
    assert r.returncode == 0 and r.stdout.strip() == "TimeoutError my deadline", (r.stdout, r.stderr)
    # An nvcc that hangs (a fault probe's): the Ctrl-C stops the builds under way too, killing the compiler's
    # processes, where the interpreter waited on nvcc for ever.
    nvcc.write_text(nvcc.read_text().replace("sleep 1; while", "sleep 7261; while"))
    r = run_python("""
        import os, signal, threading, time, cuforge
        threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        start = time.monotonic()
        try:
            cuforge.op.Gemm(element="f16", layout=cuforge.LayoutType.RowMajor, kernel_cc=80).compile(M=256, N=256, K=256)
            print("finished")
        except KeyboardInterrupt:
            print("KeyboardInterrupt", time.monotonic() - start < 6)
    """, CUFORGE_CACHE_DIR=str(tmp_path / "cache3"), CUDA_INSTALL_PATH=cuda)
    assert r.returncode == 0 and r.stdout.split() == ["KeyboardInterrupt", "True"], (r.stdout, r.stderr)
    left = [p for p in os.listdir("/proc") if p.isdigit() and b"sleep\x007261" in _cmdline(p)]
    assert not left, "the compiler's processes outlived the interrupt"
    assert not os.listdir(tmp_path / "cache3" / "v1" / "staging"), "nor is anything of the build left"


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def test_compiler_output_in_another_encoding_reaches_the_compilation_error(tmp_path):
    """nvcc's (or gcc's) messages in a non-UTF-8 locale: the CompilationError keeps its log, the bytes
    that are not UTF-8 replaced, where decoding them strictly once raised another error and lost it;
    plan.compile() and cuforge.build() alike name the kernel's kept source."""
    cuda = fake_toolkit(tmp_path / "cuda")
    nvcc = pathlib.Path(cuda) / "bin" / "nvcc"
    nvcc.write_text(nvcc.read_text() + "printf 'kernel.cu(1): error: \\377\\376 in Latin-1\\n' >&2; exit 1\n")
    name = cuforge.list_gemms(80)[0]
    r = run_python(f"""
        import cuforge
        for build in (lambda: cuforge.op.Gemm(element=cuforge.DataType.f16, kernel_cc=80).compile(),
                      lambda: cuforge.build([{name!r}], progress=False)):
            try:
                build()
            except cuforge.CompilationError as e:
                import os
                kept = e.source_path.endswith("kernel.cu") and os.path.isfile(e.source_path)
                print(type(e).__name__, "\\ufffd\\ufffd in Latin-1" in e.log, kept)
    """, CUFORGE_CACHE_DIR=str(tmp_path / "cache"), CUDA_INSTALL_PATH=cuda)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["CompilationError True True"] * 2, (r.stdout, r.stderr)


@no_gpu  # the run reaches the GPU check: on a GPU it would run
def test_torch_blocked_in_sys_modules_leaves_runs_to_the_python_layer(tmp_path):
    """sys.modules["torch"] = None (how torch is blocked): the core reads no torch, and a NumPy run goes on
    (to the GPU check here), where it once failed on None's missing Tensor."""
    r = run_python("""
        import sys
        sys.modules["torch"] = None
        import numpy as np, cuforge
        A = np.ones((64, 64), np.float16)
        try:
            cuforge.op.Gemm(element=np.float16).run(A, A, A, A.copy())
        except cuforge.Error as e:
            print(type(e).__name__)
    """)
    assert r.stdout.strip() == "DeviceError", (r.stdout, r.stderr)


def test_the_cores_messages_from_threads_without_the_gil_reach_the_logger(tmp_path):
    """A build lets the GIL go; its threads' messages (here: a damaged cache entry found under the key's lock)
    are queued, not delivered by taking the GIL from a thread that may hold a lock of the core's which the GIL's
    holder waits for. The call delivers them once it has the GIL again, before it returns: in the main thread,
    and in a worker thread while the main thread waits in join() (where the interpreter's own delivery, from
    the main thread alone, could not)."""
    cache = tmp_path / "cache"
    r = run_python(f"""
        import logging, pathlib, threading, cuforge
        seen = []
        logging.getLogger("cuforge").addHandler(logging.Handler())
        logging.getLogger("cuforge").handlers[-1].emit = lambda record: seen.append(record.getMessage())
        name = cuforge.list_gemms(80)[0]
        cuforge.build([name], progress=False)
        (library,) = pathlib.Path({str(cache)!r}).glob("v1/kernels/*/kernel.so")

        def damaged_build():
            seen.clear()
            library.write_bytes(library.read_bytes() + b"damage")
            cuforge.build([name], progress=False)
            return any("does not match its recorded checksum" in m for m in seen)

        print(damaged_build())
        out = []
        worker = threading.Thread(target=lambda: out.append(damaged_build()))
        worker.start()
        worker.join()
        print(out)
    """, CUFORGE_CACHE_DIR=str(cache), CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"))
    assert r.stdout.split("\n")[:2] == ["True", "[True]"], (r.stdout, r.stderr)


def test_a_convolution_output_size_of_stride_zero_is_refused():
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^stride: expected 1 or more, got \(0, 1\)"):
        cuforge._core.conv_output_size((1, 8, 8, 8, 8, 3, 3), (0, 1), (0, 0), (1, 1))


def test_entry_json_of_the_wrong_types_is_reported_and_rebuilt(tmp_path):
    """A cache entry whose entry.json is valid JSON with wrong-typed fields once aborted the process
    (an escaped nlohmann::type_error) in verify, build and compile, every time."""
    env = dict(CUFORGE_CACHE_DIR=str(tmp_path / "cache"), CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"))
    name = cuforge.list_gemms(80)[0]
    r = run_python(f"import cuforge; print(cuforge.build([{name!r}], progress=False)[0]['key'])", **env)
    assert r.returncode == 0, r.stderr
    entry = tmp_path / "cache" / "v1" / "kernels" / r.stdout.split()[-1] / "entry.json"
    for field, value in [("library_bytes", "1056952"), ("key", 5), ("name", [1]), ("library_xxh3", None)]:
        doc = json.loads(entry.read_text())
        doc[field] = value
        entry.write_text(json.dumps(doc))
        v = run(CLI + ["cache", "verify"], **env)
        assert v.returncode == 1 and "BAD" in v.stdout and field in v.stdout, (field, v.stdout, v.stderr)
        b = run_python(f"import cuforge; print(cuforge.build([{name!r}], progress=False)[0]['cache_hit'])", **env)
        assert b.returncode == 0 and b.stdout.split()[-1] == "False", (field, b.stdout, b.stderr)
        assert "rebuilt" in b.stderr, "the bad entry is reported"
        assert run(CLI + ["cache", "verify"], **env).returncode == 0


@pytest.mark.parametrize("args, says", [
    (["cache", "prune", "--max-bytes", "-5"], "--max-bytes"),
    (["list", "--arch", "75"], "sm80"),
    (["build", "--filter", "["], "never closed"),
    (["build", "-j", "-1", "--filter", "*"], "--jobs"),
    (["build", "--cc", "-5", "--arch", "80", "--filter", "*_64x64x32_*"], "--cc"),
    (["build", "--cc", "91", "--arch", "80", "--filter", "*_64x64x32_*"], "compute capability 91"),
    # Empty values, and --arch 0, once read as the option not given (--preset '' built the whole catalog).
    (["build", "--preset", "", "--dry-run"], "--preset: an empty value names nothing"),
    (["build", "--filter", "", "--dry-run"], "--filter: an empty value names nothing"),
    (["list", "--op", ""], "--op: an empty value names nothing"),
    (["list", "--arch", "0"], "--arch: Value 0 not in range"),
    (["emit", cuforge.list_gemms(90)[0] + "_zzz"], "its suffix 'zzz' is not, in this order, swapab"),
])
def test_cli_refuses_bad_arguments(tmp_path, args, says):
    r = run(CLI + args, CUFORGE_CACHE_DIR=str(tmp_path / "cache"), CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"))
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert says in r.stderr, r.stderr
    assert not (tmp_path / "cache" / "v1" / "kernels").exists() or not any((tmp_path / "cache" / "v1" / "kernels").iterdir())


def test_a_kernels_directory_that_is_a_file_makes_the_cache_unusable_not_empty(tmp_path):
    """cache info and prune said '0 kernels' (exit status 0) where verify and builds call it unusable."""
    (tmp_path / "cache" / "v1").mkdir(parents=True, mode=0o700)
    os.chmod(tmp_path / "cache", 0o700)
    (tmp_path / "cache" / "v1" / "kernels").write_text("not a directory")
    for action in ("info", "prune", "verify"):
        r = run(CLI + ["cache", action], CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
        assert r.returncode == 2 and "kernels is not a directory" in r.stderr, (action, r.stdout, r.stderr)


def test_cache_tuning_of_an_unusable_cache_says_so(tmp_path):
    """As the cache's other listings: not an empty record and exit status 0."""
    (tmp_path / "cache").mkdir(mode=0o700)
    os.chmod(tmp_path / "cache", 0o777)
    r = run(CLI + ["cache", "tuning"], CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 2 and "writable by other users" in r.stderr, (r.stdout, r.stderr)


def test_clear_of_a_read_only_cache_fails_loudly(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere: the C++ suite checks this as another user")
    env = dict(CUFORGE_CACHE_DIR=str(tmp_path / "cache"))
    (tmp_path / "cache" / "v1" / "kernels" / "k").mkdir(parents=True)
    os.chmod(tmp_path / "cache" / "v1", 0o500)
    try:
        r = run(CLI + ["cache", "clear"], **env)
        assert r.returncode == 2 and "cannot remove" in r.stderr, (r.stdout, r.stderr)
    finally:
        os.chmod(tmp_path / "cache" / "v1", 0o700)


_F8 = dict(element_A=cuforge.DataType.e4m3, element_B=cuforge.DataType.e4m3, element_C=cuforge.DataType.bf16,
           element_D=cuforge.DataType.bf16, layout_A=RowMajor, layout_B=cuforge.LayoutType.ColumnMajor,
           layout_C=RowMajor)


_SM90_NAME = "cuforge_sm90_gemm_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x64x64_c1x1x1_s0_coop_tmacoop_default_a8x8x8"


def _gemm(**kwargs):
    return cuforge.op.Gemm(element=np.float16, layout=RowMajor, **kwargs)


def _conv():
    return cuforge.op.Conv2d(kind="fprop", element=np.float16)


def _held_conv(channels):
    """An fprop plan holding x (1, 8, 8, 8), filters (4, 3, 3, channels) and y (1, 6, 6, 4)."""
    x, w, y = (np.ones(shape, np.float16) for shape in ((1, 8, 8, 8), (4, 3, 3, channels), (1, 6, 6, 4)))
    return cuforge.op.Conv2d(kind="fprop", element=np.float16, A=x, B=w, D=y)


def _compile_with_junk_instruction(plan):
    td = plan.tile_descriptions()[0]
    td.math_instruction = "abc"
    return plan.compile(td)


def _run_on(a, **protocol):
    """A GEMM run of `a` (its __cuda_array_interface__'s fields changed by `protocol`) on fake device B and D."""
    a.__cuda_array_interface__.update(protocol)
    b, d = (FakeDeviceArray(a.shape, ptr=BASE[name]) for name in "BD")
    return _gemm().run(a, b, None, d)


@pytest.mark.parametrize("call, says", [
    (lambda: _gemm().run(*[np.ones((8, 8), np.float16)] * 3, np.ones((8, 8), np.float16), alpha=10**400),
     "^alpha: expected a real number"),
    (lambda: setattr(_gemm(), "activation", (cuforge.epilogue.leaky_relu, 10**400)), "leaky_relu's slope"),
    (lambda: cuforge.op.Gemm(**_F8).run(scale_a=10**400), "^scale_a: expected a real number"),
    (lambda: cuforge.op.Gemm(**_F8).run(alpha="x", scale_a=2.0), "^alpha: expected a real number"),
    (lambda: cuforge.op.Gemm(A=5), "^A: expected an array or tensor"),
    (lambda: _conv().run(stride={1, 2}), r"^stride: expected an integer or \(height, width\)"),
    (lambda: _conv().run(padding=np.array(1)), "^padding: expected an integer"),
    (lambda: _conv().run(split_k=np.array(1)), r"^split_k: expected \(mode, slices\)"),
    (lambda: _gemm().compile(problems=[np.array(3)]), r"^problems: expected \(M, N, K\)"),
    (lambda: _gemm().compile(tile_description={"threadblock_shape": np.array(3)}), "expected three integers"),
    (lambda: _gemm(A=np.ones(8, np.float16), B=np.ones((8, 8), np.float16)).compile(),
     "^compile: the plan's A and B size the problem only as matrices"),
    (lambda: cuforge.shape.Conv2DProblemSize(1, 8, 8, 8, 8, 3, 3, 8, 2**62, 0, 1, 1, 1, 1),
     "^pad_h: 4611686018427387904 exceeds the 32-bit range the kernels index"),
    # Accepted before, as Python's own bool and complex were not: NumPy's (the imaginary part dropped).
    (lambda: _gemm().run(alpha=np.bool_(True)), "^alpha: expected a real number"),
    (lambda: _gemm().run(beta=np.complex64(1)), "^beta: expected a real number"),
    (lambda: setattr(_gemm(), "activation", (cuforge.epilogue.leaky_relu, np.complex64(0.1 + 1j))),
     "leaky_relu's slope must be a real number"),
    # Found by a fault probe: nanobind's own TypeErrors (naming no argument), a value taken through bool(),
    # a geometry ignored (and a build started), a protocol's malformed fields as KeyError or TypeError.
    (lambda: cuforge.emit.kernel_source(5), "^name: expected a kernel's name"),
    # Strings UTF-8 cannot hold (os.fsdecode's lone surrogates) met nanobind's "incompatible function arguments".
    (lambda: cuforge.emit.kernel_source("cuforge_\udc80"), r"^name: 'cuforge_\\udc80' is not Unicode text .a lone surrogate at position 8"),
    (lambda: cuforge.list_gemms(glob="*\ud800"), "^glob: .* is not Unicode text"),
    (lambda: cuforge.build(["x", "\udc80"], progress=False), "^names: .* is not Unicode text"),
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m\udc80"), "^name: .* is not Unicode text"),
    (lambda: _gemm().profile(64, 64, 64, filter="\udc80"), "^filter: .* is not Unicode text"),
    (lambda: _gemm().construct().pytorch_binding("m\udc80"), "^module: .* is not Unicode text"),
    (lambda: cuforge.build(["x"], jobs=2**40, progress=False), "^jobs: expected 0 .one per core. to"),
    (lambda: cuforge.build(["x"], cc="x", progress=False), "^cc: expected an integer"),
    # An SM90 kernel's own target is 9.0: a cc given otherwise was ignored (and the kernel built).
    (lambda: cuforge.build([_SM90_NAME], cc=80, progress=False), "run on compute capability 9.0 only, not 80"),
    (lambda: cuforge.build([_SM90_NAME], cc=12345, progress=False), "^compute capability 12345 is not a GPU"),
    (lambda: _gemm().construct().pytorch_binding(5), "^module: expected a module name"),
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m", cc=2**40), "^cc: 1099511627776 is not a compute"),
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m", sourcedir=5), "^sourcedir: expected a directory path"),
    (lambda: _gemm().select(128, 128, 128, 1, "x"), "^bias: expected True or False"),
    (lambda: _conv().compile(stride=0), "^stride: expected 1 or more"),
    (lambda: _conv().compile(problems=[((1, 8, 8, 8, 8, 3, 3), 1, 0, 1)], padding=1),
     "^stride, padding, dilation: each of problems gives its own"),
    (lambda: _gemm().run(type("Cai", (), {"__cuda_array_interface__": {}})(), None, None, None),
     "^A: its __cuda_array_interface__ is not the protocol's .* KeyError"),
    # Found by a second fault probe: operands a plan held (IndexError, AttributeError, TypeError from inside the
    # plan), a held convolution's tensors that disagree, flags and fields taken unchecked.
    (lambda: cuforge.op.Gemm(element=np.float16, A=type("Odd", (), {"shape": "ab"})()),
     "^A: expected an array or tensor, whose shape is a sequence of integers"),
    (lambda: cuforge.op.GroupedGemm(element=np.float16, A=[None], B=[None]), r"^A\[0\]: expected a tensor, got None"),
    (lambda: cuforge.op.GroupedGemm(element=np.float16, A=[np.ones(8, np.float16)],
                                    B=[np.ones((8, 8), np.float16)]).compile(),
     "^compile: the plan's A and B lists size the problem only as matrices"),
    (lambda: _held_conv(channels=4).compile(), r"^the plan's tensors: the filters' channels \(4\) must equal the"),
    (lambda: _held_conv(channels=8).compile(padding=1), r"^the plan's tensors: D \(the output\) is \(1, 6, 6, 4\)"),
    (lambda: _gemm().run(alpha=np.array(True)), "^alpha: expected a real number.*its element is bool"),
    (lambda: _gemm().run(*[np.ones((8, 8), np.float16)] * 2, None, np.ones((8, 8), np.float16), print_module="yes"),
     "^print_module: expected True or False"),
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m", jit="yes"), "^jit: expected True or False"),
    (lambda: _compile_with_junk_instruction(_gemm()), "^tile_description.math_instruction: expected a cuforge"),
    (lambda: _compile_with_junk_instruction(cuforge.op.Conv2d(kind="fprop", element=np.float16, cc=90)),
     "^tile_description.math_instruction: expected a cuforge"),
    (lambda: setattr(_gemm(), "B", type("Odd", (), {"shape": (2, -1)})()), r"^B: extents are never negative"),
    (lambda: cuforge.op.Gemm(A=np.ones((8, 8), np.float16), B=np.ones((8, 8), np.float16),
                             D=np.ones((8, 8), np.complex64)), r"^D's dtype \(for element_C\): cuforge has no"),
    (lambda: _gemm(element_accumulator="x"), "^element_accumulator: cuforge has no element type for 'x'"),
    (lambda: _conv().construct(problem={1, 2, 3, 4, 5, 6, 7}), r"^problem: expected \(N, H, W, C, K, R, S\)"),
    (lambda: copy.deepcopy(_gemm()), "^a Gemm plan is not copied or pickled"),
    (lambda: pickle.dumps(_conv()), "^a Conv2d plan is not copied or pickled"),
    (lambda: _run_on(FakeDeviceArray((64, 64), device="0")), "^A: its __cuda_array_interface__ is not the protocol"),
    (lambda: _run_on(FakeDeviceArray((64, 64)), shape=(64.7, 64)), "^A: .*'float' object cannot be interpreted"),
    (lambda: _run_on(FakeDeviceArray((64, 64)), strides=(128,)), "^A: its __cuda_array_interface__ gives 1 strides"),
    (lambda: _run_on(FakeDeviceArray((64, 64)), mask=object()), "^A: its __cuda_array_interface__ has a mask"),
    (lambda: _run_on(FakeDeviceArray((-2, -3, 64, 64), strides=(-12288, 4096, 64, 1))),
     r"^A: extents are never negative, got shape \(-2, -3, 64, 64\)"),
], ids=["alpha-huge", "slope-huge", "scale-huge", "alpha-str-with-scale", "A-int", "stride-set", "padding-0d",
        "split-k-0d", "problem-0d", "tile-0d", "construct-1d", "conv-pad-huge", "alpha-numpy-bool", "beta-complex",
        "slope-complex", "kernel-source-int", "kernel-source-surrogate", "glob-surrogate", "build-surrogate",
        "pytorch-name-surrogate", "profile-filter-surrogate", "binding-module-surrogate", "build-jobs-huge", "build-cc-str", "build-sm90-cc-80",
        "build-cc-unknown", "binding-module-int",
        "pytorch-cc-huge", "pytorch-sourcedir-int", "select-bias-str", "conv-compile-stride-0",
        "conv-compile-geometry-twice", "cai-empty", "held-shape-str", "held-group-none", "held-groups-1d",
        "held-conv-channels", "held-conv-geometry", "alpha-0d-bool", "print-module-str", "pytorch-jit-str",
        "tile-math-instruction-str", "conv-tile-math-instruction-str", "held-set-negative", "dtype-of-d-for-c",
        "accumulator-str", "conv-problem-set", "plan-deepcopy", "plan-pickle", "cai-device-str", "cai-shape-float", "cai-strides-short", "cai-mask",
        "cai-negative-extents"])
def test_odd_arguments_are_errors_of_cuforge_not_of_python(call, says):
    with pytest.raises(cuforge.Error, match=says):
        call()


@pytest.mark.parametrize("plan, arguments", [
    (_gemm, dict(problems="bad")), (_gemm, dict(alignment_A=16)),
    (lambda: cuforge.op.GroupedGemm(element=np.float16, layout=RowMajor), dict(problems=[(1, 2)])),
    (_conv, dict(problems=[((1, 2, 3), 1, 0, 1)])),
], ids=["gemm-problems", "gemm-alignment", "grouped-problems", "conv-problems"])
def test_a_refused_compile_leaves_the_tile_unpinned(plan, arguments):
    p = plan()
    with pytest.raises(cuforge.InvalidArgumentError):
        p.compile(p.tile_descriptions()[0], **arguments)
    assert p.tile_description is None


def test_a_tile_description_compares_unequal_to_other_types():
    td = cuforge.TileDescription()
    assert td != None and td != 5 and not (td == "128x128x64")  # noqa: E711
    assert td in [None, td] and td == cuforge.TileDescription()


@no_gpu  # a fake toolkit's empty library: on a GPU, compile() would load it
def test_a_refused_compile_keeps_what_the_plan_compiled(tmp_path):
    """compile() with arguments the core refuses once put the plan's settings back even with no tile
    pinned, and new settings drop every kernel compiled: later runs chose (and built) afresh."""
    r = run_python("""
        import numpy as np, cuforge
        plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor, cc=90)
        small = plan.compile(M=128, N=128, K=128).name
        print(plan.select(4096, 4096, 4096) == small)  # a compiled kernel that serves the class is chosen
        try:
            plan.compile(M=128, N=128, K=128, alignment_A=3)
        except cuforge.InvalidArgumentError:
            print(plan.select(4096, 4096, 4096) == small)
    """, CUFORGE_CACHE_DIR=str(tmp_path / "cache"), CUDA_INSTALL_PATH=fake_toolkit(tmp_path / "cuda"))
    assert r.stdout.split() == ["True", "True"], (r.stdout, r.stderr)


def test_an_integer_python_will_not_print_is_refused_by_its_size():
    """Python refuses str() of an int past 4300 digits: the refusals that showed the value raised that ValueError."""
    huge = 10**5000
    plan = cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor)
    calls = {"split_k_slices: an integer of 16610 bits is beyond": lambda: setattr(plan, "split_k_slices", huge),
             "split_k_slices: a negative integer of 16610 bits is beyond":
                 lambda: setattr(plan, "split_k_slices", -huge),
             "M: an integer of 16610 bits": lambda: plan.select(huge, 4, 4),
             "opclass: .*got an integer of 16610 bits": lambda: setattr(plan, "opclass", huge),
             "threadblock_shape: expected three integers of 32 bits, got a list":
                 lambda: cuforge.TileDescription([huge, 1, 1], 3, [1, 1, 1]),
             r"cluster_shape\[7\]: list assignment index out of range":
                 lambda: plan.tile_descriptions()[0].cluster_shape.__setitem__(7, 1),
             "stream: expected a stream handle .*got an integer of 16610 bits":
                 lambda: current_stream([], huge),
             "use_rmm: expected initial to be a number of bytes below 2\\*\\*64": lambda: cuforge.use_rmm(huge)}
    for says, call in calls.items():
        with pytest.raises(cuforge.InvalidArgumentError, match=says):
            call()
    assert shown("x" * 1000).endswith("... (1002 characters)")


class _Raising:
    """An operand or stream whose protocol code raises (a property, __dlpack__)."""

    def __init__(self, attribute, error):
        setattr(type(self), attribute, property(lambda self: (_ for _ in ()).throw(error)))


def _raising(attribute, error):
    return type(f"Raising_{attribute}", (_Raising,), {})(attribute, error)


def test_an_operands_own_code_raising_is_that_operands_error():
    """A property of an operand's array protocol, its __dlpack__ or its shape that raises (RuntimeError,
    NotImplementedError) escaped as that exception; a stream's protocol alike."""
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A, B, D = (FakeDeviceArray((64, 64), np.float16, ptr=BASE[n]) for n in "ABD")
    for attribute, error in (("__cuda_array_interface__", RuntimeError("device lost")),
                             ("__dlpack__", NotImplementedError("no export"))):
        with pytest.raises(cuforge.InvalidArgumentError,
                           match=f"^A: reading it raised {type(error).__name__} in its own code"):
            plan.run(_raising(attribute, error), B, None, D)
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: reading it raised ValueError in its own code: 'lazy'"):
        operand_extents(_raising("shape", ValueError("lazy")), "A")  # a plan built of operands reads their shapes
    for attribute in ("__cuda_stream__", "cuda_stream"):
        with pytest.raises(cuforge.InvalidArgumentError, match="^stream: reading it raised RuntimeError"):
            current_stream([A], _raising(attribute, RuntimeError("closed")))


def test_an_array_of_a_module_named_like_cupy_is_not_taken_for_cupys():
    """type(x).__module__.startswith("cupy") took cuPyNumeric's arrays for CuPy's (a KeyError without CuPy)."""
    Like = type("ndarray", (FakeDeviceArray,), {"__module__": "cupynumeric._array"})
    assert current_stream([Like((4, 4))], None) == 0


def test_build_progress_without_a_usable_stderr(monkeypatch):
    """cuforge.build's progress read sys.stderr.isatty(): None (pythonw, a daemon) or a closed stderr raised
    AttributeError or ValueError before any build."""
    import io

    from cuforge.build import progress_line

    closed = io.StringIO()
    closed.close()
    for stderr in (None, closed):
        monkeypatch.setattr(sys, "stderr", stderr)
        progress_line()(1, 2, 0, "cuforge_sm90_gemm")
    shown_to = io.StringIO()
    monkeypatch.setattr(sys, "stderr", shown_to)
    report = progress_line()
    report(1, 2, 0, "first")
    report(2, 2, 1, "second")
    assert shown_to.getvalue().splitlines()[-1].startswith("build [" + "#" * 30 + "] 2/2 1 failed")


def test_compile_refuses_an_array_for_batch():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match="^batch: expected an integer"):
        plan.compile(batch=np.array([1, 2]))  # `batch == 1` of an array raised NumPy's ambiguous-truth ValueError


def test_scalars_of_text_or_time_are_refused():
    plan = cuforge.op.Gemm(element=np.float16, layout=RowMajor)
    A, B, D = (FakeDeviceArray((64, 64), np.float16, ptr=BASE[n]) for n in "ABD")
    for alpha in (np.array(["2"]), np.timedelta64(5), np.datetime64("2026-12-07")):
        with pytest.raises(cuforge.InvalidArgumentError, match="^alpha: expected a real number, got .* of dtype"):
            plan.run(A, B, None, D, alpha=alpha)


def test_negative_tile_values_are_refused():
    """TileDescription([-128, 128, 64], -3, [-4, 1, 1]) was made, with num_threads -128 and a name of
    '1x1x1_-128x128_64x-3'."""
    for args, says in ((([-128, 128, 64], 3, [4, 1, 1]), "threadblock_shape: expected three integers of 32 bits of 0 "
                                                         "or more, got \\[-128, 128, 64\\]"),
                       (([128, 128, 64], -3, [4, 1, 1]), "stages: expected an integer of 32 bits of 0 or more, got -3"),
                       (([128, 128, 64], 3, [-4, 1, 1]), "warp_count: expected three integers")):
        with pytest.raises(cuforge.InvalidArgumentError, match=f"^TileDescription.{says}"):
            cuforge.TileDescription(*args)


def test_an_array_protocol_of_bool_extents_is_refused():
    A = FakeDeviceArray((4, 4))
    A.__cuda_array_interface__["shape"] = (True, True)  # read as 1 x 1
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: its __cuda_array_interface__ is not the protocol's.*"
                                                           "True is a bool, not an integer"):
        cuforge.arrays.describe(A, "A")
