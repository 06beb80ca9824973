"""What a hostile user or a bad disk can do, on the CPU: each case of the fault probe (issue 17) and
what cuforge does now — a cuforge.Error subclass naming the cause, a CLI exit status with the
message, never a dead interpreter. Cases that need nvcc use a fake toolkit (a script that writes a
library of an ELF header alone at once), so that nothing here compiles a real kernel; odd arguments of the Python
API are test_argument_faults.py's."""

from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cuforge
from fake_arrays import no_gpu

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
    from cuforge.arguments import scalar

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
