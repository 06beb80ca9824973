"""Where kernel workspaces come from, on the GPU: torch's caching allocator once torch is imported
(a workspace of more than 256 KiB shows in torch's statistics and goes back after the run), none
asked for a run without a workspace, graph capture still the graph's own allocations, two streams,
an allocator's failures as cuforge errors with nothing launched, and an RMM (a fake over torch's
allocator: RMM is not installed here) driven through real kernels. Every result is exact
(exact.py)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import types

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import cuforge  # noqa: E402
from exact import ROW, assert_exact, rand_int, reference  # noqa: E402
from prebuild import build_selected  # noqa: E402

DTYPE = torch.float16  # the sums of exact.py's data stay below 2048: exact in f16 too
# Few output tiles and a long K: every decomposition divides K, and the workspaces exceed the 256
# KiB that always come from cuforge's pool (runtime/scratch.hpp; test_grouped_gpu.py runs one below).
SHAPE = (384, 272, 8192)
WITH_WORKSPACE = {
    "parallel_split_k8": dict(split_k_slices=8, decomposition=cuforge.Decomposition.ParallelSplitK),
    "stream_k": dict(decomposition=cuforge.Decomposition.StreamK),
}
NO_WORKSPACE = dict(decomposition=cuforge.Decomposition.DataParallel)
SPLIT = WITH_WORKSPACE["parallel_split_k8"]
raw_alloc = torch._C._cuda_cudaCachingAllocator_raw_alloc
raw_delete = torch._C._cuda_cudaCachingAllocator_raw_delete


def plan(kernel_cc=None, **settings):
    p = cuforge.op.Gemm(element=DTYPE, layout=cuforge.LayoutType.RowMajor, kernel_cc=kernel_cc)
    for name, value in settings.items():
        setattr(p, name, value)
    return p


@pytest.fixture(scope="module", autouse=True)
def prebuilt():
    build_selected([lambda cc=cc, s=s: plan(cc, **s).select(*SHAPE)
                    for cc in (None, 80) for s in [*WITH_WORKSPACE.values(), NO_WORKSPACE]])


@pytest.fixture(autouse=True)
def default_source():
    cuforge.memory._use_default()
    yield
    cuforge.memory._use_default()


def operands(seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    m, n, k = SHAPE
    A, B, C = (rand_int(m, k, DTYPE, ROW, gen), rand_int(k, n, DTYPE, ROW, gen), rand_int(m, n, DTYPE, ROW, gen))
    return A, B, C, reference(A, B, C, 1.0, 1.0, DTYPE)


class Counting:
    """torch's caching allocator, counting what the core asks of it."""

    def __init__(self, fail_free=False):
        self.allocated, self.freed, self.fail_free = [], [], fail_free

    def allocate(self, device, nbytes, stream):
        address = raw_alloc(nbytes, stream)
        self.allocated.append((device, nbytes, stream, address))
        return address

    def free(self, address, device, nbytes, stream):
        self.freed.append((address, device, nbytes, stream))
        if self.fail_free:
            raise RuntimeError("this free fails")
        raw_delete(address)

    def install(self):
        cuforge._core.set_workspace_allocator(self.allocate, self.free)
        return self


@pytest.mark.parametrize("kernel_cc", [None, 80], ids=["sm90", "sm80"])
@pytest.mark.parametrize("name", WITH_WORKSPACE)
def test_the_workspace_comes_from_torch_and_goes_back(kernel_cc, name):
    assert cuforge.get_memory_pool().source == "torch"
    p = plan(kernel_cc, **WITH_WORKSPACE[name])
    A, B, C, ref = operands(1)
    D = torch.full_like(C, float("nan"))
    p.run(A, B, C, D, beta=1.0)  # loads the kernel
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    allocations = torch.cuda.memory_stats()["allocation.all.allocated"]
    torch.cuda.reset_peak_memory_stats()
    D.fill_(float("nan"))
    p.run(A, B, C, D, beta=1.0)
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated() > before, "the run's workspace did not come from torch"
    assert torch.cuda.memory_stats()["allocation.all.allocated"] > allocations
    assert torch.cuda.memory_allocated() == before  # given back once the launch was queued
    assert_exact(D, ref)
    if name == "parallel_split_k8":
        m, n, _ = SHAPE
        assert torch.cuda.max_memory_allocated() - before >= m * n * 4  # f32 partial products


def test_a_run_without_a_workspace_asks_no_allocator():
    counting = Counting().install()
    A, B, C, ref = operands(2)
    D = torch.empty_like(C)
    plan(**NO_WORKSPACE).run(A, B, C, D, beta=1.0)
    assert counting.allocated == []
    plan(**SPLIT).run(A, B, C, D, beta=1.0)
    assert len(counting.allocated) == 1 and len(counting.freed) == 1
    device, nbytes, stream, address = counting.allocated[0]
    assert nbytes > 256 << 10
    assert counting.freed[0] == (address, device, nbytes, stream)
    assert (device, stream) == (torch.cuda.current_device(), torch.cuda.current_stream().cuda_stream)
    assert_exact(D, ref)


def test_graph_capture_keeps_workspaces_in_the_graph():
    counting = Counting().install()
    p = plan(**SPLIT)
    A, B, C, ref = operands(3)
    outputs = [torch.full_like(C, float("nan")) for _ in range(4)]
    p.run(A, B, C, outputs[0], beta=1.0)
    asked = len(counting.allocated)
    stream, graph = torch.cuda.Stream(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for D in outputs:
            p.run(A, B, C, D, beta=1.0, sync=False)
    assert len(counting.allocated) == asked  # captured workspaces are nodes of the graph
    for _ in range(2):
        for D in outputs:
            D.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        for D in outputs:
            assert_exact(D, ref)


def test_two_streams_share_torchs_allocator():
    assert cuforge.get_memory_pool().source == "torch"
    p = plan(**SPLIT)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    data = [operands(4), operands(5)]
    outputs = [[torch.full_like(data[i][2], float("nan")) for _ in range(10)] for i in range(2)]
    torch.cuda.synchronize()
    for r in range(10):  # interleaved: each stream's freed workspace is torch's to hand out again
        for i, s in enumerate(streams):
            A, B, C, _ = data[i]
            with torch.cuda.stream(s):
                p.run(A, B, C, outputs[i][r], beta=1.0, sync=False)
    torch.cuda.synchronize()
    for i in range(2):
        for D in outputs[i]:
            assert_exact(D, data[i][3])


def failing_allocator(allocate, free=lambda *args: None):
    cuforge._core.set_workspace_allocator(allocate, free)


def raises(device, nbytes, stream):
    raise RuntimeError("no memory here")


def not_an_address(device, nbytes, stream):
    return "an address"


@pytest.mark.parametrize("allocate, message", [
    (raises, r"allocating a kernel workspace of \d+ bytes: RuntimeError\('no memory here'\)"),
    (not_an_address, "returned something other than an address"),
])
def test_an_allocator_failure_is_a_device_error_and_launches_nothing(allocate, message):
    failing_allocator(allocate)
    A, B, C, _ = operands(6)
    D = torch.full_like(C, float("nan"))
    with pytest.raises(cuforge.DeviceError, match=message):
        plan(**SPLIT).run(A, B, C, D, beta=1.0)
    torch.cuda.synchronize()
    assert torch.isnan(D).all()


def test_a_misaligned_workspace_is_given_back_and_refused():
    freed = []

    def allocate(device, nbytes, stream):
        return raw_alloc(nbytes + 256, stream) + 16

    def free(address, device, nbytes, stream):
        freed.append(address)
        raw_delete(address - 16)

    failing_allocator(allocate, free)
    A, B, C, _ = operands(7)
    D = torch.full_like(C, float("nan"))
    with pytest.raises(cuforge.DeviceError, match="expected an address aligned to 256 bytes"):
        plan(**SPLIT).run(A, B, C, D, beta=1.0)
    assert len(freed) == 1
    torch.cuda.synchronize()
    assert torch.isnan(D).all()


def test_a_failing_free_is_a_warning(caplog):
    counting = Counting(fail_free=True).install()
    A, B, C, ref = operands(8)
    D = torch.empty_like(C)
    with caplog.at_level(logging.WARNING, logger="cuforge"):
        plan(**SPLIT).run(A, B, C, D, beta=1.0)
    assert_exact(D, ref)
    assert "giving a kernel workspace" in caplog.text and "this free fails" in caplog.text
    raw_delete(counting.allocated[0][3])


def test_rmm_pools_serve_real_kernels(monkeypatch):
    log = []

    class Pool:  # an RMM pool over torch's allocator
        def __init__(self, upstream, initial_pool_size, maximum_pool_size):
            log.append(("pool", torch.cuda.current_device()))

        def allocate(self, nbytes, stream):
            log.append(("allocate", nbytes, stream.handle))
            return raw_alloc(nbytes, stream.handle)

        def deallocate(self, address, nbytes, stream):
            log.append(("deallocate", nbytes, stream.handle))
            raw_delete(address)

        def pool_size(self):
            return 0

    rmm = types.ModuleType("rmm")
    rmm.mr = types.SimpleNamespace(CudaMemoryResource=object, PoolMemoryResource=Pool,
                                   set_per_device_resource=lambda device, mr: None)
    stream_module = types.ModuleType("rmm.pylibrmm.stream")
    stream_module.Stream = lambda obj: types.SimpleNamespace(handle=obj.__cuda_stream__()[1])
    monkeypatch.setitem(sys.modules, "rmm", rmm)
    monkeypatch.setitem(sys.modules, "rmm.pylibrmm.stream", stream_module)
    assert cuforge.use_rmm().source == "rmm"
    A, B, C, ref = operands(9)
    D = torch.empty_like(C)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        plan(**SPLIT).run(A, B, C, D, beta=1.0)
    assert_exact(D, ref)
    assert [entry[0] for entry in log] == ["pool", "allocate", "deallocate"]
    assert log[0][1] == torch.cuda.current_device()
    assert log[1][2] == log[2][2] == s.cuda_stream and log[1][1] == log[2][1] > 0


def test_torch_imported_after_cuforge_takes_the_next_workspace():
    code = textwrap.dedent(f"""
        import cuforge
        assert cuforge.get_memory_pool().source == "cuforge"
        import torch
        p = cuforge.op.Gemm(element=torch.float16, layout=cuforge.LayoutType.RowMajor)
        p.split_k_slices, p.decomposition = 8, cuforge.Decomposition.ParallelSplitK
        m, n, k = {SHAPE}
        A, B = (torch.ones(r, c, device="cuda", dtype=torch.float16) for r, c in ((m, k), (k, n)))
        C = torch.zeros(m, n, device="cuda", dtype=torch.float16)
        D = torch.empty_like(C)
        held = torch.cuda.memory_allocated()
        p.run(A, B, C, D, beta=1.0)
        assert cuforge.get_memory_pool().source == "torch"
        assert torch.cuda.max_memory_allocated() > held, "the workspace did not come from torch"
        assert torch.equal(D, torch.full_like(D, k))  # 8192: exact in f16
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
