"""Kernels exported as PyTorch operators (cuforge.emit.pytorch) and cuforge.ops, on the GPU: exact
on integer data against a float64 reference (GEMM, column-major D, grouped lists and offsets,
Conv2d fprop/dgrad/wgrad), torch's current stream, torch.compile(fullgraph=True), CUDA graphs,
bad arguments as exceptions naming them, the jit=False source directory built by pip, and host time
beside torch.matmul.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
from exact import ROW, assert_exact, rand_int, reference  # noqa: E402
from timing import host_times_us  # noqa: E402

F16, BF16 = torch.float16, torch.bfloat16
L = cuforge.LayoutType


def _gemm_plan(dtype=BF16, lc=L.RowMajor, activation=None, kernel_cc=None):
    plan = cuforge.op.Gemm(element=dtype, layout_A=L.RowMajor, layout_B=L.RowMajor, layout_C=lc, kernel_cc=kernel_cc)
    if activation:
        plan.activation = activation
    return plan


# A 1x1 fprop the model runs on a GEMM kernel (64x64 ping-pong; smaller ones take a convolution tile).
POINTWISE = (8, 14, 14, 1024, 256, 1, 1)
# name -> the operation exported under it
EXPORTS = {
    "cf_gemm": lambda: _gemm_plan().construct(M=512, N=512, K=512),
    "cf_gemm_t": lambda: _gemm_plan(F16, lc=L.ColumnMajor).construct(M=512, N=512, K=512),
    "cf_gemm_relu80": lambda: _gemm_plan(F16, activation="relu", kernel_cc=80).construct(M=512, N=512, K=512),
    "cf_grouped": lambda: cuforge.op.GroupedGemm(element=BF16, layout=L.RowMajor).construct(),
    "cf_fprop": lambda: cuforge.op.Conv2d("fprop", element=F16).construct(),
    "cf_dgrad": lambda: cuforge.op.Conv2d("dgrad", element=F16).construct(
        problem=(4, 16, 16, 64, 32, 3, 3), stride=(2, 2), padding=(1, 1)),
    "cf_wgrad": lambda: cuforge.op.Conv2d("wgrad", element=F16).construct(),
    "cf_pointwise": lambda: cuforge.op.Conv2d("fprop", element=F16).construct(problem=POINTWISE),
}


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    """Every export built (jit=True) at once: the kernels in one parallel cuforge.build, the
    bindings side by side."""
    ops = {name: make() for name, make in EXPORTS.items()}
    cuforge.build({op.name for op in ops.values()})
    out = tmp_path_factory.mktemp("exports")
    with ThreadPoolExecutor(len(ops)) as pool:
        futures = {name: pool.submit(cuforge.emit.pytorch, op, name, jit=True, sourcedir=str(out / name))
                   for name, op in ops.items()}
        return {name: f.result() for name, f in futures.items()}


def test_gemm_module_runs_the_seed_snippet_exactly(modules):
    mod = modules["cf_gemm"]
    A, B = rand_int(300, 136, BF16, ROW), rand_int(136, 200, BF16, ROW)
    assert_exact(mod.run(A, B), reference(A, B, None, 1.0, 0.0, BF16))
    C = rand_int(300, 200, BF16, ROW)
    assert_exact(mod.run(A, B, C, 2.0, -1.0), reference(A, B, C, 2.0, -1.0, BF16))
    assert_exact(mod.run(A, B, C=C, alpha=1.0, beta=1.0), reference(A, B, C, 1.0, 1.0, BF16))
    Ab, Bb = rand_int(128, 64, BF16, ROW, batch=3), rand_int(64, 96, BF16, ROW, batch=3)
    assert_exact(mod.run(Ab, Bb), reference(Ab, Bb, None, 1.0, 0.0, BF16))
    assert mod.run is torch.ops.cf_gemm.run.default


def test_a_module_named_as_a_macro_is_refused_by_its_build(modules):
    """torch's registration macros expand a namespace that is a macro (a module named NULL: torch.ops.NULL had no
    run, H100, 2026-12-06): the build refuses the name, saying why."""
    with pytest.raises(cuforge.CompilationError, match="the module's name NULL is a macro of the C.. headers"):
        cuforge.emit.pytorch(EXPORTS["cf_gemm"](), "NULL", jit=True)


def test_transposed_and_sm80_relu_modules(modules):
    A, B = rand_int(264, 128, F16, ROW), rand_int(128, 200, F16, ROW)
    D = modules["cf_gemm_t"].run(A, B)
    assert D.stride() == (1, 264)  # column-major, as the plan's C
    assert_exact(D, reference(A, B, None, 1.0, 0.0, F16))
    D = modules["cf_gemm_relu80"].run(A, B)
    assert_exact(D, torch.relu(reference(A, B, None, 1.0, 0.0, F16)))


def test_grouped_module_lists_and_offsets(modules):
    mod = modules["cf_grouped"]
    sizes = [(264, 200, 136), (8, 136, 64), (96, 8, 256)]
    As = [rand_int(m, k, BF16, ROW) for m, n, k in sizes]
    Bs = [rand_int(k, n, BF16, ROW) for m, n, k in sizes]
    for A, B, D in zip(As, Bs, mod.run(As, Bs)):
        assert_exact(D, reference(A, B, None, 1.0, 0.0, BF16))
    groups, n, k = 4, 256, 128
    rows = [100, 0, 37, 211]
    A = rand_int(sum(rows), k, BF16, ROW)
    B = torch.randint(-3, 4, (groups, k, n), device="cuda").to(BF16)
    offsets = torch.tensor(rows, device="cuda", dtype=torch.int32).cumsum(0).to(torch.int32)
    D = mod.run_offsets(A, B, offsets)
    start = 0
    for g, m in enumerate(rows):
        assert_exact(D[start:start + m], reference(A[start:start + m], B[g], None, 1.0, 0.0, BF16))
        start += m


def _nchw(n, c, h, w):
    return torch.randint(-2, 3, (n, c, h, w), device="cuda").to(F16).to(memory_format=torch.channels_last)


def test_conv_modules_match_torch_in_float64(modules):
    F = torch.nn.functional
    x, w = _nchw(32, 64, 56, 56), _nchw(64, 64, 3, 3)
    y = modules["cf_fprop"].run(x, w, None, (1, 1), (1, 1))
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(y, F.conv2d(x.double(), w.double(), padding=1).to(F16))
    x, w = _nchw(4, 64, 16, 16), _nchw(32, 64, 3, 3)
    dy = _nchw(4, 32, 8, 8)
    dx = modules["cf_dgrad"].run(list(x.shape), dy, w, None, (2, 2), (1, 1))
    ref = torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), stride=2, padding=1)
    assert torch.equal(dx, ref.to(F16))
    # The interface's modules' keyword for the size (pybind's result_size).
    dx = modules["cf_dgrad"].run(result_size=list(x.shape), A=dy, B=w, stride=(2, 2), padding=(1, 1))
    assert torch.equal(dx, ref.to(F16))
    x, dy = _nchw(32, 64, 56, 56), _nchw(32, 64, 56, 56)
    dw = modules["cf_wgrad"].run([64, 64, 3, 3], dy, x, None, (1, 1), (1, 1), split_k_slices=4)
    ref = torch.nn.grad.conv2d_weight(x.double(), (64, 64, 3, 3), dy.double(), padding=1)
    assert torch.allclose(dw.double(), ref, rtol=1e-3, atol=1.0)  # f16 dw of sums up to ~1e5: rounded
    # The plan chose parallel split-K for this layer: the module's defaults are its mode and slices.
    wgrad_kernel = cuforge.op.Conv2d("wgrad", element=F16).construct().name
    assert "_splitk" in wgrad_kernel
    dw = modules["cf_wgrad"].run([64, 64, 3, 3], dy, x, None, (1, 1), (1, 1))
    assert torch.allclose(dw.double(), ref, rtol=1e-3, atol=1.0)
    # Splits the kernel cannot run go to a cuforge plan (the interface's modules took every split); the
    # operator alone refuses them.
    for mode, slices in (("serial", 2), ("parallel", 33)):
        dw = modules["cf_wgrad"].run([64, 64, 3, 3], dy, x, None, (1, 1), (1, 1), split_k_mode=mode,
                                     split_k_slices=slices)
        assert dw.is_contiguous(memory_format=torch.channels_last)
        assert torch.allclose(dw.double(), ref, rtol=1e-3, atol=1.0), (mode, slices)
    with pytest.raises(RuntimeError, match="split_k_mode: the kernel splits K into f32 slices"):
        modules["cf_wgrad"].run.operator([64, 64, 3, 3], dy, x, None, (1, 1), (1, 1), split_k_mode="serial",
                                         split_k_slices=2)
    if "_sm90_" in wgrad_kernel:
        with pytest.raises(RuntimeError, match="splits K between the images, into at most N = 32 slices; got 33"):
            modules["cf_wgrad"].run.operator([64, 64, 3, 3], dy, x, None, (1, 1), (1, 1), split_k_slices=33)


def test_conv_modules_run_the_seeds_export_test():
    """The CUTLASS Python interface's own export test (emit/pytorch.py): fprop with relu and wgrad of one image,
    each run by default, with serial split-K in 3 and parallel split-K in 7, all equal; dgrad of stride 3 (the
    default plan's kernel is SM90's, of unit stride: the run goes to a plan's SM80 kernel)."""
    problem = dict(stride=(3, 3), padding=(0, 0))
    x, w = _nchw(1, 16, 4, 4), _nchw(8, 16, 3, 3)
    plan = cuforge.op.Conv2d(kind="fprop", element=F16, element_accumulator=torch.float32)
    plan.activation = "relu"
    fprop = cuforge.emit.pytorch(plan.construct(), name="cf_seed_fprop", cc=plan.cc, jit=True)
    C = _nchw(1, 8, 1, 1)
    ref = torch.relu(torch.nn.functional.conv2d(x.double(), w.double(), **problem) + 0.5 * C.double()).to(F16)
    for split in ({}, {"split_k_mode": "serial", "split_k_slices": 3}, {"split_k_mode": "parallel", "split_k_slices": 7}):
        assert torch.equal(fprop.run(x, w, C, (3, 3), (0, 0), alpha=1.0, beta=0.5, **split), ref), split
    plan = cuforge.op.Conv2d(kind="wgrad", element=F16, element_accumulator=torch.float32)
    wgrad = cuforge.emit.pytorch(plan.construct(), name="cf_seed_wgrad", cc=plan.cc, jit=True)
    dy, C = _nchw(1, 8, 1, 1), _nchw(8, 16, 3, 3)
    ref = (torch.nn.grad.conv2d_weight(x.double(), (8, 16, 3, 3), dy.double(), **problem) + 0.5 * C.double()).to(F16)
    for split in ({}, {"split_k_mode": "serial", "split_k_slices": 3}, {"split_k_mode": "parallel", "split_k_slices": 7}):
        assert torch.equal(wgrad.run((8, 16, 3, 3), dy, x, C, (3, 3), (0, 0), alpha=1.0, beta=0.5, **split), ref), split
    plan = cuforge.op.Conv2d(kind="dgrad", element=F16, element_accumulator=torch.float32)
    dgrad = cuforge.emit.pytorch(plan.construct(), name="cf_seed_dgrad", cc=plan.cc, jit=True)
    C = _nchw(1, 16, 4, 4)
    ref = (torch.nn.grad.conv2d_input((1, 16, 4, 4), w.double(), dy.double(), **problem) + 0.5 * C.double()).to(F16)
    assert torch.equal(dgrad.run((1, 16, 4, 4), dy, w, C, (3, 3), (0, 0), alpha=1.0, beta=0.5), ref)


def test_a_pointwise_module_takes_1x1_filters(modules):
    """A 1x1 fprop exported on its GEMM kernel; torch gives the (256, 1024, 1, 1) filters strides of 1
    along the extents of 1, which the module reads as dense NHWC."""
    assert "_pointwise" in cuforge.op.Conv2d("fprop", element=F16).construct(problem=POINTWISE).name
    x, w = _nchw(8, 1024, 14, 14), _nchw(256, 1024, 1, 1)
    y = modules["cf_pointwise"].run(x, w, None, (1, 1), (0, 0))
    assert torch.equal(y, torch.nn.functional.conv2d(x.double(), w.double()).to(F16))


def test_runs_on_torch_current_stream(modules):
    mod = modules["cf_gemm"]
    A, B = torch.zeros(2048, 2048, device="cuda", dtype=BF16), rand_int(2048, 2048, BF16, ROW)
    src = rand_int(2048, 2048, BF16, ROW)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # A is written late on the side stream...
        A.copy_(src)
        D = mod.run(A, B)  # ...and read after it on the same stream
    side.synchronize()
    assert_exact(D, reference(src, B, None, 1.0, 0.0, BF16))


def test_torch_compile_fullgraph_and_cuda_graph(modules):
    mod = modules["cf_gemm"]
    A, B, C = rand_int(256, 128, BF16, ROW), rand_int(128, 192, BF16, ROW), rand_int(256, 192, BF16, ROW)

    def f(a, b, c):
        return mod.run(a, b) + cuforge.ops.gemm(a, b, c, 1.0, 1.0)

    eager = f(A, B, C)
    compiled = torch.compile(f, fullgraph=True)(A, B, C)
    assert torch.equal(compiled, eager)
    assert_exact(eager, (reference(A, B, None, 1.0, 0.0, BF16).double() + reference(A, B, C, 1.0, 1.0, BF16).double()
                         ).to(BF16))

    static_a = A.clone()
    outs = []
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up outside the capture (kernels loaded, workspace pools grown)
        mod.run(static_a, B)
        cuforge.ops.gemm(static_a, B)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(10):
            outs.append(mod.run(static_a, B) if i % 2 else cuforge.ops.gemm(static_a, B))
    new_a = rand_int(256, 128, BF16, ROW)
    static_a.copy_(new_a)
    graph.replay()
    torch.cuda.synchronize()
    ref = reference(new_a, B, None, 1.0, 0.0, BF16)
    for D in outs:
        assert_exact(D, ref)


@pytest.mark.parametrize("call, message", [
    (lambda m, A, B: m.run(A.float(), B), "A: expected BFloat16"),
    (lambda m, A, B: m.run(A, B.cpu()), "B: expected a tensor on cuda"),
    (lambda m, A, B: m.run(A, B[:100]), "B: expected 128 rows"),
    (lambda m, A, B: m.run(A.t().contiguous().t(), B), "A: the kernel reads it row-major"),
    (lambda m, A, B: m.run(A[:, 1:], B[1:]), "A: the kernel reads it 8 elements at a time"),
    (lambda m, A, B: m.run(A, B, None, 1.0, 1.0), "C: beta is 1"),
    (lambda m, A, B: m.run(A, B, torch.zeros(3, 3, device="cuda", dtype=BF16), 1.0, 1.0), "C: expected 256 x 192"),
    (lambda m, A, B: m.run(A[0], B), "A: expected a matrix"),
])
def test_bad_arguments_are_exceptions_naming_them(modules, call, message):
    A, B = rand_int(256, 128, BF16, ROW), rand_int(128, 192, BF16, ROW)
    with pytest.raises(RuntimeError, match=message):
        call(modules["cf_gemm"], A, B)
    torch.cuda.synchronize()  # nothing was launched that faults


def test_conv_bad_arguments(modules):
    x, w = _nchw(2, 64, 8, 8), _nchw(64, 64, 3, 3)
    with pytest.raises(RuntimeError, match="dense tensor in torch.channels_last memory format"):
        modules["cf_fprop"].run(x.contiguous(), w, None, (1, 1), (1, 1))
    with pytest.raises(RuntimeError, match="filters have 32 channels"):
        modules["cf_fprop"].run(x, _nchw(64, 32, 3, 3), None, (1, 1), (1, 1))
    with pytest.raises(RuntimeError, match="split_k_mode"):  # the operator alone: its kernel's split only
        modules["cf_fprop"].run.operator(x, w, None, (1, 1), (1, 1), split_k_mode="parallel", split_k_slices=2)
    # Past 32 bits, refused: the kernel took int(stride) = 1 and wrote a 6 x 6 output into a 1 x 1 one.
    for args in (dict(stride=(2**32 + 1, 2**32 + 1), padding=(0, 0)), dict(stride=(1, 1), padding=(2**31, 0))):
        for run in (modules["cf_fprop"].run, modules["cf_fprop"].run.operator):
            with pytest.raises(RuntimeError, match="exceeds the 32-bit range the kernels index"):
                run(x, w, None, **args)
    with pytest.raises(RuntimeError, match=r"weight_size: expected extents of 0 to 2147483647"):
        modules["cf_wgrad"].run.operator([64, 64, 2**32 + 3, 3], _nchw(2, 64, 8, 8), x, None, (1, 1), (1, 1))


def test_a_new_process_imports_the_built_module_without_building(modules, tmp_path):
    script = textwrap.dedent("""
        import time, torch, cuforge
        op = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor).construct(M=512, N=512, K=512)
        t = time.perf_counter()
        mod = cuforge.emit.pytorch(op, "cf_gemm", jit=True)
        seconds = time.perf_counter() - t
        A = torch.ones(64, 64, device="cuda", dtype=torch.bfloat16)
        assert torch.equal(mod.run(A, A), torch.full((64, 64), 64.0, device="cuda", dtype=torch.bfloat16))
        print(seconds, cuforge.compile_statistics()["builds"])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    seconds, builds = out.stdout.split()
    assert int(builds) == 0 and float(seconds) < 5.0, out.stdout


def test_a_damaged_built_module_is_rebuilt(modules):
    """A built module that no longer imports (a truncated file) is rebuilt by the next process that asks for it,
    as a damaged kernel entry is."""
    built = sorted(pathlib.Path(cuforge.cache_dir(), "torch").glob("cf_gemm-*/cf_gemm*.so"))
    assert built, "the fixture's cf_gemm is built in the cache"
    for path in built:  # a truncated copy put in its place: this process keeps its own mapping of the module
        damaged = path.with_name(path.name + ".damaged")
        damaged.write_bytes(path.read_bytes()[:100])
        os.replace(damaged, path)
    script = textwrap.dedent("""
        import torch, cuforge
        op = cuforge.op.Gemm(element=torch.bfloat16, layout=cuforge.LayoutType.RowMajor).construct(M=512, N=512, K=512)
        mod = cuforge.emit.pytorch(op, "cf_gemm", jit=True)
        A = torch.ones(64, 64, device="cuda", dtype=torch.bfloat16)
        assert torch.equal(mod.run(A, A), torch.full((64, 64), 64.0, device="cuda", dtype=torch.bfloat16))
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr
    assert "cannot be imported" in out.stderr and "rebuilding it" in out.stderr, out.stderr


def test_sourcedir_builds_with_pip_and_imports(tmp_path):
    op = _gemm_plan(F16, kernel_cc=80).construct(M=512, N=512, K=512)
    src = cuforge.emit.pytorch(op, "cf_gemm_aot", cc=cuforge.device_cc(), sourcedir=str(tmp_path / "out"))
    target = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
                            "--target", str(target), str(src)], capture_output=True, text=True, timeout=540)
    assert build.returncode == 0, build.stdout + build.stderr
    script = textwrap.dedent("""
        import torch, cf_gemm_aot
        A = torch.randint(-3, 4, (300, 136), device="cuda").half()
        B = torch.randint(-3, 4, (136, 200), device="cuda").half()
        assert torch.equal(cf_gemm_aot.run(A, B), (A.double() @ B.double()).half())
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_exported_run_host_time_beside_torch_matmul(modules):
    mod = modules["cf_gemm"]
    A, B = rand_int(64, 64, BF16, ROW), rand_int(64, 64, BF16, ROW)
    mod.run(A, B)
    times = host_times_us({"exported": lambda: mod.run(A, B), "matmul": lambda: torch.matmul(A, B)})
    exported, matmul = times["exported"], times["matmul"]
    print(f"host time per call, 64^3 bf16: exported run {exported:.2f} us, torch.matmul {matmul:.2f} us")
    assert exported <= 1.25 * matmul, (exported, matmul)
